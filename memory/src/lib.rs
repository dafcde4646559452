//! Global memory: data of any size that every rank can reach
//! ([`GlobalSlice`], [`GlobalAtomicU64`]), in the GASNet-EX segments, with a
//! software cache where a rank's memory is across the network.
//!
//! # The model
//!
//! A [`GlobalSlice<T>`] names elements of plain data (`T:`
//! [`bytemuck::Pod`]: no pointers, every bit pattern valid) in some rank's
//! global heap, or block-distributed over all ranks. It is `Copy + Send +
//! 'static` and five words, so it passes through `spawn` and comes back as
//! a task's result: that is how a task returns a result of any size.
//!
//! A task reaches the elements by *checking them out* for a scope:
//! [`GlobalSlice::read`] hands the closure a `&[T]`, [`GlobalSlice::update`]
//! a `&mut [T]` with the current contents, [`GlobalSlice::write`] a `&mut
//! [T]` the closure must overwrite. A checkout must not span a `spawn`, or a
//! `join` that has to wait (the thread may move to another process there;
//! the checked-out memory does not): both end the job with a message.
//! Overlapping checkouts on one thread are refused unless both read.
//!
//! # Coherence (fork-join, as Itoyori documents it)
//!
//! What a task wrote is visible to whoever joins it and to a thief that
//! steals a continuation after the write. Where a rank's segment is mapped
//! in this process (its own, and every rank of its shared-memory
//! neighbourhood: all of them on smp) a checkout is the memory itself —
//! loads and stores, no copies; the deque's and the future cells' atomics
//! order them. Across the network the [`cache`] holds blocks; *release*
//! points write dirty bytes back (a `spawn`, before its continuation can be
//! stolen; a task's end whose parent was stolen, before its result is
//! published; the end of the root task and of every run), *acquire* points
//! forget every block (a steal, before the stolen continuation resumes; a
//! join whose task finished on another process; the start of every run).
//! Release is lazy: a write checkout only marks bytes dirty and raises this
//! rank's attention word, so the next spawn — which loads that word anyway
//! — writes them back; with nothing dirty and no checkout the spawn path
//! pays nothing more.
//!
//! Programs must not let two tasks that may run at the same time (neither
//! joined the other) check out overlapping memory when one of them writes,
//! nor free memory another such task may have checked out: the contract
//! taken on at `Runtime::start`. Freeing memory inside this thread's own
//! checkout of it is refused (the job ends with a message).

mod atomic;
mod cache;
mod heap;
mod slice;

use std::any::Any;
use std::cell::{Cell, RefCell};

pub use atomic::GlobalAtomicU64;
pub use bytemuck::{Pod, Zeroable};
use gasnet_sys::Gasnet;
pub use slice::GlobalSlice;
use uni_threads::layer::{fatal, Acquire, FuzzDraw, Here, Layer, Release};

/// The layer the runtime calls at its ordering points (`uat::Runtime::start`
/// passes it to `uni_threads::Runtime::start_with_layer`).
pub static LAYER: GlobalMemory = GlobalMemory;

/// Global memory as a layer above the scheduler (see [`LAYER`]).
pub struct GlobalMemory;

/// This process's global-memory state ([`Layer::attach`]'s).
fn mem(w: Here) -> &'static Memory {
    w.state::<Memory>()
}

/// The GASNet-EX handle, for this crate's RMA and Active Messages.
fn net(w: Here) -> Gasnet {
    // SAFETY: this crate reaches only the layer's zone of any segment (the
    // global heap: every address it puts, gets or frees is one of its
    // allocations, checked against the zone) and ends the job only through
    // `fatal`.
    unsafe { w.gasnet() }
}

impl Layer for GlobalMemory {
    fn handlers(&self) -> Vec<gasnet_sys::am::Handler> {
        heap::handlers().into()
    }

    fn attach(&self, w: Here) -> Box<dyn Any> {
        let g = net(w);
        let (heap_lo, heap_size) = w.zone();
        let atomics = am_fad::GlobalAtomics::new(g);
        // SAFETY: the zone is mapped at heap_lo for the rest of the process
        // (the arena is never unmapped), is this rank's segment range
        // [lo, hi), and its atomic words are only accessed atomically
        // (Memory's rule: headers and the symmetric control word).
        unsafe { atomics.init(w.remote(w.rank(), heap_lo), w.remote(w.rank(), heap_lo + heap_size), heap_lo) };
        // One heap per process, for the rest of it: the GLOBAL_FREE handler
        // reaches it from then on.
        let heap: &'static heap::LocalHeap =
            Box::leak(Box::new(heap::LocalHeap::new(heap::Zones::new(heap_lo, heap_size))));
        heap.publish();
        let memory = Memory::new(atomics, heap, w.config(), heap_lo, heap_size, w.ranks());
        Box::new(memory)
    }

    fn release(&self, w: Here, at: Release) {
        let m = mem(w);
        match at {
            Release::Spawn => m.at_attention(w, true),
            Release::Poll => m.at_attention(w, false),
            Release::TaskEnd | Release::Collective => m.release(w),
        }
    }

    fn acquire(&self, w: Here, at: Acquire) {
        let m = mem(w);
        match at {
            Acquire::Join => {
                m.refuse_join_in_checkout();
                m.acquire(w)
            }
            Acquire::Steal | Acquire::RunStart => m.acquire(w),
            Acquire::Collective => m.acquire_point(w),
            Acquire::RunEnd => m.end_of_run(w),
        }
    }

    fn before_suspend(&self, w: Here) {
        mem(w).before_wait();
    }

    fn fuzz(&self, w: Here, target: u32, count: u32, draw: &mut dyn FuzzDraw, request: &mut dyn FnMut(u8, &[u32])) {
        heap::fuzz(w, target, count, draw, request);
    }
}

/// An active checkout: `[lo, hi)` of `rank`'s heap (arena addresses).
#[derive(Clone, Copy, Debug)]
struct Active {
    rank: u32,
    lo: usize,
    hi: usize,
    write: bool,
}

/// This process's global-memory state (a part of the worker).
pub(crate) struct Memory {
    pub atomics: am_fad::GlobalAtomics,
    pub heap: &'static heap::LocalHeap,
    cache: RefCell<cache::Cache>,
    active: RefCell<Vec<Active>>,
    /// Whether a checkout is active or dirty bytes wait: the attention word
    /// carries the owner's mark while this is set.
    marked: Cell<bool>,
}

impl Memory {
    fn new(
        atomics: am_fad::GlobalAtomics,
        heap: &'static heap::LocalHeap,
        config: &uni_threads::Config,
        heap_lo: usize,
        heap_size: usize,
        ranks: u32,
    ) -> Memory {
        let cache = cache::Cache::new(
            config.get_cache(),
            config.get_cache_fault(),
            config.get_cache_block(),
            config.get_cache_size(),
            heap_lo,
            heap_size,
            ranks,
        );
        Memory {
            atomics,
            heap,
            cache: RefCell::new(cache),
            active: RefCell::new(Vec::new()),
            marked: Cell::new(false),
        }
    }

    /// A release point: dirty cached bytes are written back.
    #[inline]
    pub(crate) fn release(&self, w: Here) {
        if self.marked.get() {
            self.release_slow(w);
        }
    }

    #[cold]
    #[inline(never)]
    fn release_slow(&self, w: Here) {
        self.cache.borrow_mut().release(w);
        self.update_mark(w);
    }

    /// An acquire point: cached blocks are forgotten (after a write-back).
    #[inline]
    pub(crate) fn acquire(&self, w: Here) {
        if self.cache.borrow().holds_blocks() {
            self.acquire_slow(w);
        }
    }

    #[cold]
    #[inline(never)]
    fn acquire_slow(&self, w: Here) {
        // A steal resumes a continuation pushed outside any checkout (a
        // spawn inside one is refused), and a run starts outside tasks; a
        // join inside one was refused before (`refuse_join_in_checkout`).
        debug_assert!(self.active.borrow().is_empty(), "an acquire point inside a checkout");
        self.cache.borrow_mut().acquire(w);
        self.update_mark(w);
    }

    /// What the attention word's owner mark asks of a spawn (`pushing`) or
    /// a poll point: a spawn inside a checkout ends the job; dirty bytes
    /// are written back.
    #[cold]
    #[inline(never)]
    pub(crate) fn at_attention(&self, w: Here, pushing: bool) {
        if pushing && !self.active.borrow().is_empty() {
            fatal(format_args!(
                "uat::spawn was called inside a checkout of global memory (GlobalSlice::read/update/write). Rule: \
                 a checkout must not span a spawn or a join (the task may continue on another process, where the \
                 checked-out memory is not); end the checkout first"
            ));
        }
        self.release_slow(w);
    }

    /// A join took the result of a task that ended on another process: on
    /// every conduit (whether or not this process caches anything, so that
    /// a program refused over the network is refused on one host too), a
    /// checkout must not span it.
    fn refuse_join_in_checkout(&self) {
        if !self.active.borrow().is_empty() {
            fatal(format_args!(
                "JoinHandle::join was called inside a checkout of global memory, and the joined task ran on another \
                 process. Rule: a checkout (GlobalSlice::read/update/write) must not span a spawn or a join"
            ));
        }
    }

    /// A join is about to wait (and the worker to run other tasks).
    #[inline]
    pub(crate) fn before_wait(&self) {
        if !self.active.borrow().is_empty() {
            fatal(format_args!(
                "JoinHandle::join had to wait inside a checkout of global memory (GlobalSlice::read/update/write). \
                 Rule: a checkout must not span a spawn or a join; end the checkout first"
            ));
        }
    }

    /// Sets or clears the owner's mark in the attention word.
    fn update_mark(&self, w: Here) {
        let need = !self.active.borrow().is_empty() || self.cache.borrow().is_dirty();
        if need != self.marked.get() {
            self.marked.set(need);
            w.mark(need);
        }
    }

    /// Registers a checkout of `[lo, hi)` on `rank`, refusing an overlap
    /// with an active one unless both read.
    fn begin(&self, w: Here, a: Active) {
        self.refuse_overlap(a);
        self.active.borrow_mut().push(a);
        self.update_mark(w);
    }

    /// Ends the job if `a` overlaps an active checkout on this thread and
    /// one of them writes (a `&mut` would alias).
    fn refuse_overlap(&self, a: Active) {
        for b in self.active.borrow().iter() {
            if b.rank == a.rank && b.lo < a.hi && a.lo < b.hi && (a.write || b.write) {
                fatal(format_args!(
                    "a checkout of global memory overlaps one that is still active on this thread ({} bytes of rank \
                     {} at {:#x}, and {} bytes at {:#x}), and one of them writes: Rust allows one &mut or many &, \
                     never both",
                    a.hi - a.lo,
                    a.rank,
                    a.lo,
                    b.hi - b.lo,
                    b.lo
                ));
            }
        }
    }

    fn end(&self, w: Here, a: Active) {
        {
            let mut active = self.active.borrow_mut();
            let i = active
                .iter()
                .rposition(|b| b.rank == a.rank && b.lo == a.lo && b.hi == a.hi && b.write == a.write)
                .expect("an active checkout ends once");
            active.swap_remove(i);
        }
        self.update_mark(w);
    }

    /// Where this process reaches `rank`'s arena address `addr` with loads
    /// and stores, if it does.
    fn mapped(w: Here, rank: u32, addr: usize) -> Option<usize> {
        w.mapped(rank, addr)
    }

    /// A view of `len` bytes at `rank`'s `addr` for a checkout (pinned in
    /// the cache when not mapped); end it with [`Memory::unview`].
    fn view(&self, w: Here, rank: u32, addr: usize, len: usize, fetch: bool) -> *mut u8 {
        if let Some(p) = Self::mapped(w, rank, addr) {
            return p as *mut u8;
        }
        let mut cache = self.cache.borrow_mut();
        if fetch && !cache.is_on() {
            // With the cache off a checkout is fetched into its place in the
            // mirror. Bytes another active checkout of this thread already
            // covers (a read: overlaps with a write are refused) are there,
            // under that checkout's live `&[T]`: fetch only the rest.
            let mut covered: Vec<(usize, usize)> = Vec::new();
            let mut this_one = false;
            for b in self.active.borrow().iter().filter(|b| b.rank == rank) {
                if !this_one && b.lo == addr && b.hi == addr + len {
                    this_one = true;
                } else if b.lo < addr + len && addr < b.hi {
                    covered.push((b.lo.max(addr), b.hi.min(addr + len)));
                }
            }
            if !covered.is_empty() {
                covered.sort_unstable();
                let mut at = addr;
                for (lo, hi) in covered.into_iter().chain([(addr + len, addr + len)]) {
                    if lo > at {
                        cache.view(w, rank, at, lo - at, true);
                    }
                    at = at.max(hi);
                }
                return cache.view(w, rank, addr, len, false);
            }
        }
        cache.view(w, rank, addr, len, fetch)
    }

    fn unview(&self, w: Here, rank: u32, addr: usize, len: usize, wrote: bool) {
        if Self::mapped(w, rank, addr).is_none() {
            self.cache.borrow_mut().finish(w, rank, addr, len, wrote);
        }
    }

    /// Drops this process's cached copies of `[addr, addr + len)` on `rank`
    /// (memory just allocated, `zeroed` at its home, or about to be freed;
    /// see `Cache::drop_range`).
    fn forget_range(&self, w: Here, rank: u32, addr: usize, len: usize, zeroed: bool) {
        if Self::mapped(w, rank, addr).is_none() {
            self.cache.borrow_mut().drop_range(w, rank, addr, len, zeroed);
            self.update_mark(w);
        }
    }

    /// Ends the job if `[lo, hi)` of `rank`'s heap, about to be freed, is
    /// inside a checkout active on this thread: the checkout's `&[T]` or
    /// `&mut [T]` would outlive its memory, which the next allocation hands
    /// out again (and zeroes).
    fn refuse_free_in_checkout(&self, what: &str, rank: u32, lo: usize, hi: usize) {
        for b in self.active.borrow().iter() {
            if b.rank == rank && b.lo < hi && lo < b.hi {
                fatal(format_args!(
                    "{what} inside a checkout of the same memory ({} bytes of rank {rank} at {:#x} are checked out): \
                     the checkout's reference would outlive the memory. Rule: end the checkout \
                     (GlobalSlice::read/update/write) before freeing what it covers",
                    b.hi - b.lo,
                    b.lo
                ));
            }
        }
    }

    /// A release point outside any checkout (a collective, an atomic with
    /// a release ordering): dirty bytes are written back.
    pub(crate) fn release_point(&self, w: Here) {
        self.release(w);
    }

    /// An acquire point where a checkout may be active (an atomic with an
    /// acquire ordering inside one): the blocks no checkout holds are
    /// written back and forgotten (a checkout's own view stays as it was
    /// when it began).
    pub(crate) fn acquire_point(&self, w: Here) {
        if self.cache.borrow().holds_blocks() {
            self.cache.borrow_mut().acquire(w);
            self.update_mark(w);
        }
    }

    /// At the end of a run: everything written back and forgotten.
    pub(crate) fn end_of_run(&self, w: Here) {
        self.cache.borrow_mut().acquire(w);
        self.update_mark(w);
    }
}
