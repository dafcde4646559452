//! This process's global-memory state ([`Memory`]): its heap, its cache,
//! the checkouts active on this thread, and what each ordering point does
//! with them.

use std::cell::{Cell, RefCell};

use uni_threads::layer::{fatal, Here};

use crate::active::Active;
use crate::{cache, heap};

/// This process's global-memory state ([`Layer::attach`](uni_threads::layer::Layer::attach)'s).
pub(crate) fn mem(w: Here) -> &'static Memory {
    w.state::<Memory>()
}

/// This process's global-memory state (a part of the worker).
pub(crate) struct Memory {
    pub heap: heap::Heap,
    cache: RefCell<cache::Cache>,
    active: RefCell<Vec<Active>>,
    /// Whether a checkout is active or dirty bytes wait: the attention word
    /// carries the owner's mark while this is set.
    marked: Cell<bool>,
}

impl Memory {
    pub(crate) fn new(
        heap: heap::Heap,
        config: &crate::Config,
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
        self.cache.borrow_mut().release(w, &self.active.borrow());
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
        self.cache.borrow_mut().acquire(w, &[]);
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
    pub(crate) fn refuse_join_in_checkout(&self) {
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
    pub(crate) fn update_mark(&self, w: Here) {
        let need = !self.active.borrow().is_empty() || self.cache.borrow().is_dirty();
        if need != self.marked.get() {
            self.marked.set(need);
            w.mark(need);
        }
    }

    /// Registers a checkout of `[lo, hi)` on `rank`, refusing an overlap
    /// with an active one unless both read.
    pub(crate) fn begin(&self, w: Here, a: Active) {
        self.refuse_overlap(a);
        self.active.borrow_mut().push(a);
        self.update_mark(w);
    }

    /// Ends the job if `a` overlaps an active checkout on this thread and
    /// one of them writes (a `&mut` would alias).
    pub(crate) fn refuse_overlap(&self, a: Active) {
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

    pub(crate) fn end(&self, w: Here, a: Active) {
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
    pub(crate) fn mapped(w: Here, rank: u32, addr: usize) -> Option<usize> {
        w.mapped(rank, addr)
    }

    /// A view of `len` bytes at `rank`'s `addr` for a checkout (pinned in
    /// the cache when not mapped); end it with [`Memory::unview`].
    /// `registered`: the caller's checkout of exactly these bytes is in the
    /// active list already (a checkout's; an element access registers
    /// nothing).
    pub(crate) fn view(&self, w: Here, rank: u32, addr: usize, len: usize, fetch: bool, registered: bool) -> *mut u8 {
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
            let mut this_one = !registered;
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

    pub(crate) fn unview(&self, w: Here, rank: u32, addr: usize, len: usize, wrote: bool) {
        if Self::mapped(w, rank, addr).is_none() {
            self.cache.borrow_mut().finish(w, rank, addr, len, wrote);
        }
    }

    /// Drops this process's cached copies of `[addr, addr + len)` on `rank`
    /// (memory just allocated, `zeroed` at its home, or about to be freed;
    /// see `Cache::drop_range`).
    pub(crate) fn forget_range(&self, w: Here, rank: u32, addr: usize, len: usize, zeroed: bool) {
        if Self::mapped(w, rank, addr).is_none() {
            self.cache.borrow_mut().drop_range(rank, addr, len, zeroed);
            self.update_mark(w);
        }
    }

    /// Ends the job if `[lo, hi)` of `rank`'s heap, about to be freed, is
    /// inside a checkout active on this thread: the checkout's `&[T]` or
    /// `&mut [T]` would outlive its memory, which the next allocation hands
    /// out again (and zeroes).
    pub(crate) fn refuse_free_in_checkout(&self, what: &str, rank: u32, lo: usize, hi: usize) {
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

    /// A release point, possibly inside a checkout (a collective, an atomic
    /// with a release ordering): dirty bytes are written back, except those
    /// under this thread's active write checkouts.
    pub(crate) fn release_point(&self, w: Here) {
        self.release(w);
    }

    /// An acquire point where a checkout may be active (an atomic with an
    /// acquire ordering inside one): dirty bytes are written back, the
    /// blocks no checkout holds forgotten, and the bytes of pinned blocks
    /// outside every active checkout refetched (a checkout's own view stays
    /// as it was when it began).
    pub(crate) fn acquire_point(&self, w: Here) {
        if self.cache.borrow().holds_blocks() {
            self.cache.borrow_mut().acquire(w, &self.active.borrow());
            self.update_mark(w);
        }
    }

    /// At the end of a run: everything written back and forgotten.
    pub(crate) fn end_of_run(&self, w: Here) {
        self.cache.borrow_mut().acquire(w, &self.active.borrow());
        self.update_mark(w);
    }

    /// Ends the job if `[lo, hi)` of `rank`'s heap lies under a checkout
    /// active on this thread: `what` is about to change those bytes (a new
    /// block's header and zeroing, an atomic's word), so the checkout is of
    /// freed memory handed out again, and its `&[T]` would see them change.
    /// Called before any byte (at home, or in this process's mirror) moves.
    pub(crate) fn refuse_reuse(&self, what: &str, rank: u32, lo: usize, hi: usize) {
        let active = self.active.borrow();
        if let Some(b) = active.iter().find(|b| b.rank == rank && b.lo < hi && lo < b.hi) {
            fatal(format_args!(
                "{what} would change {} bytes of rank {rank} at {lo:#x} that a checkout active on this thread covers \
                 ({} bytes at {:#x}): a checkout of freed memory (a copy of a GlobalSlice or GlobalAtomicU64 used \
                 after its free, the memory handed out again). Rule: never use global memory after freeing it (the \
                 contract of uat::launch and Runtime::start); end the checkout first",
                hi - lo,
                b.hi - b.lo,
                b.lo
            ));
        }
    }
}
