//! [`GlobalSlice`]: elements in global memory, on one rank or
//! block-distributed, reached by scoped checkouts.

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

use bytemuck::Pod;

use uni_threads::layer::{fatal, Here};

use crate::active::Active;
use crate::heap;
use crate::net::net;
use crate::state::{mem, Memory};

/// How an allocation's elements are placed.
const BLOCK_FLAG: u64 = 1 << 63;
/// Where a one-rank allocation's generation (its header's) sits in `place`,
/// above the rank.
const GENERATION_SHIFT: u32 = 32;
/// Where a distributed allocation's generation sits in `place`, above its
/// elements per rank (the bits below).
const BLOCK_GENERATION_SHIFT: u32 = 47;
const PER_RANK_MASK: u64 = (1 << BLOCK_GENERATION_SHIFT) - 1;
/// The low 48 bits of a word (addresses, lengths in a raw handle).
const LOW48: u64 = (1 << 48) - 1;

/// A slice of `T` in global memory: valid on every rank, `Copy + Send +
/// 'static`, five words. See [`crate`] for the model.
pub struct GlobalSlice<T> {
    /// Arena address of the allocation's first element (on its rank, or on
    /// every rank for a distributed one).
    base: usize,
    /// The rank holding it and the allocation's generation (`rank |
    /// generation << GENERATION_SHIFT`), or `BLOCK_FLAG | generation <<
    /// BLOCK_GENERATION_SHIFT | elements per rank`.
    place: u64,
    /// This slice: elements `[start, start + len)` of the allocation.
    start: usize,
    len: usize,
    /// Elements of the allocation.
    total: usize,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for GlobalSlice<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for GlobalSlice<T> {}

impl<T> std::fmt::Debug for GlobalSlice<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GlobalSlice")
            .field("base", &format_args!("{:#x}", self.base))
            .field("start", &self.start)
            .field("len", &self.len)
            .finish()
    }
}

/// What a checkout does with the elements.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Read,
    Update,
    Write,
}

impl<T: Pod> GlobalSlice<T> {
    const CHECK: () = assert!(
        std::mem::size_of::<T>() > 0 && std::mem::align_of::<T>() <= heap::HEADER,
        "a global slice's elements must have a size and an alignment of at most 64"
    );

    fn bytes(n: usize) -> usize {
        n.checked_mul(std::mem::size_of::<T>())
            .unwrap_or_else(|| fatal(format_args!("a global allocation of {n} elements overflows")))
    }

    /// `len` zeroed elements on the calling task's rank (its heap's local
    /// zone). In a task, or on the runtime's thread between runs.
    pub fn alloc(len: usize) -> GlobalSlice<T> {
        #[allow(clippy::let_unit_value)]
        let () = Self::CHECK;
        let w = Here::for_thread("GlobalSlice::alloc");
        let (rank, bytes) = (w.rank(), Self::bytes(len));
        let (base, generation) = mem(w).heap.alloc_local(w, bytes, |data| {
            mem(w).refuse_reuse("GlobalSlice::alloc", rank, data - heap::HEADER, data + bytes)
        });
        let s = GlobalSlice {
            base,
            place: u64::from(w.rank()) | u64::from(generation) << GENERATION_SHIFT,
            start: 0,
            len,
            total: len,
            _t: PhantomData,
        };
        s.zero(w);
        s
    }

    /// `len` zeroed elements on `rank` (at an offset reserved on every rank).
    pub fn alloc_on(rank: u32, len: usize) -> GlobalSlice<T> {
        #[allow(clippy::let_unit_value)]
        let () = Self::CHECK;
        let w = Here::for_thread("GlobalSlice::alloc_on");
        if rank >= w.ranks() {
            fatal(format_args!(
                "GlobalSlice::alloc_on({rank}, ..): the job has {} ranks",
                w.ranks()
            ));
        }
        let bytes = Self::bytes(len);
        let (base, generation) = mem(w).heap.alloc_symmetric(w, bytes, |data| {
            // The header is rank 0's, the data `rank`'s.
            mem(w).refuse_reuse("GlobalSlice::alloc_on", 0, data - heap::HEADER, data);
            mem(w).refuse_reuse("GlobalSlice::alloc_on", rank, data - heap::HEADER, data + bytes);
        });
        let s = GlobalSlice {
            base,
            place: u64::from(rank) | u64::from(generation) << GENERATION_SHIFT,
            start: 0,
            len,
            total: len,
            _t: PhantomData,
        };
        s.zero(w);
        s
    }

    /// `len` zeroed elements block-distributed over all ranks: rank `r`
    /// holds elements `[r·b, (r+1)·b)`, `b = ⌈len / ranks⌉`.
    pub fn alloc_distributed(len: usize) -> GlobalSlice<T> {
        #[allow(clippy::let_unit_value)]
        let () = Self::CHECK;
        let w = Here::for_thread("GlobalSlice::alloc_distributed");
        let per_rank = len.div_ceil(w.ranks() as usize).max(1);
        let bytes = Self::bytes(per_rank);
        assert!(
            per_rank as u64 <= PER_RANK_MASK,
            "GlobalSlice::alloc_distributed: {per_rank} elements per rank are too many"
        );
        let (base, generation) = mem(w).heap.alloc_symmetric(w, bytes, |data| {
            for rank in 0..w.ranks() {
                mem(w).refuse_reuse(
                    "GlobalSlice::alloc_distributed",
                    rank,
                    data - heap::HEADER,
                    data + bytes,
                );
            }
        });
        let s = GlobalSlice {
            base,
            place: BLOCK_FLAG | u64::from(generation) << BLOCK_GENERATION_SHIFT | per_rank as u64,
            start: 0,
            len,
            total: len,
            _t: PhantomData,
        };
        s.zero(w);
        s
    }

    /// Zeroes every element (a new allocation) and forgets cached copies.
    fn zero(&self, w: Here) {
        static ZEROS: [u8; 1 << 16] = [0; 1 << 16];
        for (rank, addr, _, n) in self.pieces(w.ranks()) {
            let len = n * std::mem::size_of::<T>();
            match Memory::mapped(w, rank, addr) {
                // SAFETY: a fresh block of the heap (mapped here), which no
                // one else knows yet.
                Some(p) => unsafe { std::ptr::write_bytes(p as *mut u8, 0, len) },
                None => {
                    // Cached copies of the range (a previous allocation's
                    // bytes) are dropped, or zeroed where a checkout pins
                    // their block.
                    mem(w).forget_range(w, rank, addr, len, true);
                    for at in (0..len).step_by(ZEROS.len()) {
                        let n = ZEROS.len().min(len - at);
                        net(w).put(rank, w.remote(rank, addr + at), &ZEROS[..n]);
                    }
                }
            }
        }
    }

    /// Frees the allocation. Only a whole allocation (what `alloc*`
    /// returned) can be freed, once; a second free ends the job.
    pub fn free(self) {
        let w = Here::for_thread("GlobalSlice::free");
        if self.start != 0 || self.len != self.total {
            fatal(format_args!(
                "GlobalSlice::free of a part ({} of {} elements from {}): free the whole slice alloc returned",
                self.len, self.total, self.start
            ));
        }
        let (header_rank, size_word) = self.header(w);
        // The header changes too (its tag cleared): refused under a
        // checkout like the data.
        let header = self.base - heap::HEADER;
        mem(w).refuse_free_in_checkout("GlobalSlice::free", header_rank, header, self.base);
        for (rank, addr, _, n) in self.pieces(w.ranks()) {
            let len = n * std::mem::size_of::<T>();
            mem(w).refuse_free_in_checkout("GlobalSlice::free", rank, addr, addr + len);
            mem(w).forget_range(w, rank, addr, len, false);
        }
        let (rank, symmetric) = if self.place & BLOCK_FLAG != 0 {
            (0, true)
        } else {
            (self.place as u32, self.symmetric(w))
        };
        mem(w).heap.free(w, rank, self.base, symmetric, Some(size_word));
    }

    /// Whether this one-rank allocation is in the symmetric zone
    /// (`alloc_on`'s). Symmetric data lies past the zone's start (its
    /// control word and a header); a local block of no bytes in the local
    /// zone's last header has its data exactly at that start.
    fn symmetric(&self, w: Here) -> bool {
        self.base > mem(w).heap.zones().symmetric.0
    }

    /// The allocation's generation (drawn at `alloc*`, in its header).
    fn generation(&self) -> u16 {
        if self.place & BLOCK_FLAG != 0 {
            (self.place >> BLOCK_GENERATION_SHIFT) as u16
        } else {
            (self.place >> GENERATION_SHIFT) as u16
        }
    }

    /// Elements per rank of a distributed allocation.
    fn per_rank(&self) -> usize {
        (self.place & PER_RANK_MASK) as usize
    }

    /// The rank holding the allocation's header (rank 0 for the symmetric
    /// zone's), and the size word it holds while the allocation is live.
    #[inline]
    fn header(&self, w: Here) -> (u32, u64) {
        // The allocation's byte count (checked when it was made).
        let (rank, elements) = if self.place & BLOCK_FLAG != 0 {
            (0, self.per_rank())
        } else if self.symmetric(w) {
            (0, self.total)
        } else {
            (self.place as u32, self.total)
        };
        let bytes = elements.wrapping_mul(std::mem::size_of::<T>());
        (rank, heap::size_word(bytes, self.generation()))
    }

    /// Ends the job if the allocation is not live (freed, or freed and
    /// handed out again: another generation) where its header is mapped in
    /// this process: one load of the header's check word there. Elsewhere
    /// nothing is checked (a round trip per checkout would cost more than
    /// the checkout); this thread's own reuse of the memory under a checkout
    /// is refused at the allocation (`Memory::refuse_reuse`).
    #[inline]
    fn refuse_if_freed(&self, w: Here, what: &'static str) {
        let (header_rank, size_word) = self.header(w);
        if mem(w).heap.freed_here(w, header_rank, self.base, size_word) {
            self.refuse_freed(what, header_rank);
        }
    }

    #[cold]
    #[inline(never)]
    fn refuse_freed(&self, what: &'static str, header_rank: u32) -> ! {
        fatal(format_args!(
            "{what}: a checkout of freed memory ({} elements at {:#x}, the allocation's header on rank \
             {header_rank}): the slice's allocation was freed, and perhaps handed out again, before this \
             checkout. Rule: never use a GlobalSlice, or any copy of it, after freeing it (the contract of \
             uat::launch and Runtime::start)",
            self.len, self.base
        ))
    }

    /// This slice as two words of plain data, to keep in global memory
    /// (e.g. a tree's links to its children, each node its own
    /// allocation): only a whole allocation on one rank (what
    /// [`alloc`](Self::alloc) or [`alloc_on`](Self::alloc_on) returned)
    /// has this form; anything else panics.
    /// [`from_raw_checked`](Self::from_raw_checked) makes the slice again,
    /// on any rank ([`from_raw`](Self::from_raw) unchecked). The words are
    /// the address and rank, and the length and the allocation's
    /// generation.
    pub fn to_raw(&self) -> [u64; 2] {
        assert!(
            self.place & BLOCK_FLAG == 0 && self.start == 0 && self.len == self.total,
            "GlobalSlice::to_raw: only a whole allocation on one rank (alloc, alloc_on) has a raw form"
        );
        let (rank, generation) = (self.place & 0xffff_ffff, self.place >> GENERATION_SHIFT);
        // Arena addresses are user-space addresses (below 2^47); ranks are
        // GASNet ranks of one job (checked: below 2^16).
        assert!(
            (self.base as u64) <= LOW48 && rank < 1 << 16 && self.len as u64 <= LOW48,
            "GlobalSlice::to_raw: rank, address or length too large"
        );
        [self.base as u64 | rank << 48, self.len as u64 | generation << 48]
    }

    /// The slice whose [`to_raw`](Self::to_raw) gave `raw`, if `raw` names
    /// a live allocation of exactly this many bytes (`len` of this `T`'s
    /// size) in the global heap of a rank of this job, of the generation
    /// the handle recorded (checked: the rank, the zone's bounds, and the
    /// block's header — two atomic loads on the rank holding it, rank 0 for
    /// `alloc_on`'s); `None` for anything else, such as words read back
    /// after their allocation was freed, even where the address was handed
    /// out again (unless the two 16-bit generations collide). A handle kept
    /// in global memory (a list's links, a tree's children) is safe to read
    /// back with it: it names a whole live allocation or nothing.
    pub fn from_raw_checked(raw: [u64; 2]) -> Option<GlobalSlice<T>> {
        #[allow(clippy::let_unit_value)]
        let () = Self::CHECK;
        let w = Here::for_thread("GlobalSlice::from_raw_checked");
        let (base, rank) = ((raw[0] & LOW48) as usize, raw[0] >> 48);
        let (len, generation) = ((raw[1] & LOW48) as usize, (raw[1] >> 48) as u16);
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        if rank >= u64::from(w.ranks()) || !mem(w).heap.is_live_block(w, rank as u32, base, bytes, generation) {
            return None;
        }
        Some(GlobalSlice {
            base,
            place: rank | u64::from(generation) << GENERATION_SHIFT,
            start: 0,
            len,
            total: len,
            _t: PhantomData,
        })
    }

    /// The slice whose [`to_raw`](Self::to_raw) gave `raw`, unchecked (see
    /// [`from_raw_checked`](Self::from_raw_checked)).
    ///
    /// # Safety
    ///
    /// `raw` is the raw form of a `GlobalSlice<T>` of this same `T`, and
    /// its allocation is live (not freed) while the slice is used: a
    /// made-up or stale `raw` names memory the slice does not own.
    pub unsafe fn from_raw(raw: [u64; 2]) -> GlobalSlice<T> {
        let len = (raw[1] & LOW48) as usize;
        GlobalSlice {
            base: (raw[0] & LOW48) as usize,
            place: raw[0] >> 48 | (raw[1] >> 48) << GENERATION_SHIFT,
            start: 0,
            len,
            total: len,
            _t: PhantomData,
        }
    }

    /// Whether this slice and `other` share a byte of global memory (parts
    /// of one allocation whose byte ranges meet; different allocations
    /// never do). Patterns refuse a destination that overlaps a source.
    pub fn overlaps<U: Pod>(&self, other: &GlobalSlice<U>) -> bool {
        if self.base != other.base || self.place != other.place || self.len == 0 || other.len == 0 {
            return false;
        }
        let (a, b) = (std::mem::size_of::<T>(), std::mem::size_of::<U>());
        let (lo1, hi1) = (self.start * a, (self.start + self.len) * a);
        let (lo2, hi2) = (other.start * b, (other.start + other.len) * b);
        lo1 < hi2 && lo2 < hi1
    }

    /// Elements in this slice.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether this slice has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A part of this slice (`range` of its elements). Panics when out of
    /// bounds.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> GlobalSlice<T> {
        // Checked: `..=usize::MAX` and `(Excluded(usize::MAX), _)` name a
        // bound past usize::MAX, which must panic, not wrap.
        let lo = match range.start_bound() {
            Bound::Included(&x) => Some(x),
            Bound::Excluded(&x) => x.checked_add(1),
            Bound::Unbounded => Some(0),
        };
        let hi = match range.end_bound() {
            Bound::Included(&x) => x.checked_add(1),
            Bound::Excluded(&x) => Some(x),
            Bound::Unbounded => Some(self.len),
        };
        let (Some(lo), Some(hi)) = (lo, hi) else {
            panic!("a range bound past usize::MAX, out of a global slice of {}", self.len);
        };
        assert!(
            lo <= hi && hi <= self.len,
            "range {lo}..{hi} out of a global slice of {}",
            self.len
        );
        GlobalSlice {
            start: self.start + lo,
            len: hi - lo,
            ..*self
        }
    }

    /// The two halves at `mid`.
    pub fn split_at(&self, mid: usize) -> (GlobalSlice<T>, GlobalSlice<T>) {
        (self.slice(..mid), self.slice(mid..))
    }

    /// The rank holding element `i` of this slice.
    pub fn home(&self, i: usize) -> u32 {
        assert!(i < self.len, "index {i} out of a global slice of {}", self.len);
        if self.place & BLOCK_FLAG != 0 {
            ((self.start + i) / self.per_rank()) as u32
        } else {
            self.place as u32
        }
    }

    /// This slice's parts, one per rank: (rank, arena address, first
    /// element of the part in this slice, elements).
    fn pieces(&self, ranks: u32) -> Vec<(u32, usize, usize, usize)> {
        let size = std::mem::size_of::<T>();
        if self.place & BLOCK_FLAG == 0 {
            return vec![(self.place as u32, self.base + self.start * size, 0, self.len)];
        }
        let b = self.per_rank();
        let (lo, hi) = (self.start, self.start + self.len);
        let mut out = Vec::new();
        let mut i = lo;
        while i < hi {
            let rank = i / b;
            let end = ((rank + 1) * b).min(hi);
            debug_assert!((rank as u32) < ranks);
            out.push((rank as u32, self.base + (i - rank * b) * size, i - lo, end - i));
            i = end;
        }
        out
    }

    fn checkout<R>(&self, mode: Mode, what: &'static str, f: impl FnOnce(*mut T, usize) -> R) -> R {
        let w = Here::for_thread(what);
        let size = std::mem::size_of::<T>();
        if self.len == 0 {
            return f(std::ptr::NonNull::<T>::dangling().as_ptr(), 0);
        }
        self.refuse_if_freed(w, what);
        let fetch = mode != Mode::Write;
        let write = mode != Mode::Read;
        if let Some((rank, addr)) = self.single_part() {
            // The common case, without allocating.
            let a = Active {
                rank,
                lo: addr,
                hi: addr + self.len * size,
                write,
            };
            mem(w).begin(w, a);
            let p = mem(w).view(w, rank, addr, self.len * size, fetch, true);
            let r = f(p as *mut T, self.len);
            // The closure may have moved nothing (no spawn inside a
            // checkout); the worker is the same.
            mem(w).unview(w, rank, addr, self.len * size, write);
            mem(w).end(w, a);
            return r;
        }
        let pieces = self.pieces(w.ranks());
        let actives: Vec<Active> = pieces
            .iter()
            .map(|&(rank, addr, _, n)| Active {
                rank,
                lo: addr,
                hi: addr + n * size,
                write,
            })
            .collect();
        for &a in &actives {
            mem(w).begin(w, a);
        }
        let result = if let [(rank, addr, _, n)] = pieces[..] {
            let p = mem(w).view(w, rank, addr, n * size, fetch, true);
            let r = f(p as *mut T, n);
            // The closure may have moved nothing (no spawn inside a
            // checkout); the worker is the same.
            mem(w).unview(w, rank, addr, n * size, write);
            r
        } else {
            // Parts on several ranks: a contiguous copy here.
            let mut buf: Vec<T> = vec![T::zeroed(); self.len];
            for &(rank, addr, at, n) in &pieces {
                if fetch {
                    let p = mem(w).view(w, rank, addr, n * size, true, true);
                    // SAFETY: `p` holds n elements of the part; buf has room.
                    unsafe { std::ptr::copy_nonoverlapping(p as *const T, buf.as_mut_ptr().add(at), n) };
                    mem(w).unview(w, rank, addr, n * size, false);
                }
            }
            let r = f(buf.as_mut_ptr(), self.len);
            if write {
                for &(rank, addr, at, n) in &pieces {
                    let p = mem(w).view(w, rank, addr, n * size, false, true);
                    // SAFETY: as above, the other way.
                    unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr().add(at), p as *mut T, n) };
                    mem(w).unview(w, rank, addr, n * size, true);
                }
            }
            r
        };
        for &a in &actives {
            mem(w).end(w, a);
        }
        result
    }

    /// Checks the elements out for reading: `f` gets them as a slice.
    pub fn read<R>(&self, f: impl FnOnce(&[T]) -> R) -> R {
        self.checkout(Mode::Read, "GlobalSlice::read", |p, n| {
            // SAFETY: `p` is n initialised elements (Pod: any bytes are
            // valid) that no &mut covers: the checkout registry refused
            // overlapping writers on this thread, and the Runtime::start
            // contract excludes concurrent writers elsewhere.
            f(unsafe { std::slice::from_raw_parts(p, n) })
        })
    }

    /// Checks the elements out for reading and writing.
    pub fn update<R>(&self, f: impl FnOnce(&mut [T]) -> R) -> R {
        self.checkout(Mode::Update, "GlobalSlice::update", |p, n| {
            // SAFETY: as in `read`; no other checkout on this thread covers
            // them at all.
            f(unsafe { std::slice::from_raw_parts_mut(p, n) })
        })
    }

    /// Checks the elements out for overwriting: their contents when `f`
    /// starts are unspecified (but valid values), and `f` must write every
    /// element.
    pub fn write<R>(&self, f: impl FnOnce(&mut [T]) -> R) -> R {
        self.checkout(Mode::Write, "GlobalSlice::write", |p, n| {
            // SAFETY: as in `update`.
            f(unsafe { std::slice::from_raw_parts_mut(p, n) })
        })
    }

    /// Element `i`. No user code runs inside, so this is no registered
    /// checkout (a binary search over a global slice costs a load where the
    /// memory is mapped); it only refuses to read what an active write
    /// checkout on this thread covers.
    pub fn get(&self, i: usize) -> T {
        self.element_access(i, false, "GlobalSlice::get", |p| {
            // SAFETY: `p` holds element i (aligned: allocations are aligned
            // to the header, elements to T), which no `&mut` covers
            // (refused by element_access; other tasks' writers excluded by
            // the Runtime::start contract); Pod, so any bytes are a valid T.
            unsafe { (p as *const T).read() }
        })
    }

    /// Maps this slice's pages into this process's page tables now; no
    /// element changes (a hint). The first touch of a page of shared
    /// memory costs a page fault in *every* process that touches it, also
    /// when another rank's process wrote it first (its own rank's memory,
    /// and on smp every rank's); in this virtual machine that is about
    /// 1–3 µs per 4 KiB page. `prefault` takes those faults here, e.g. on
    /// every rank before a timed region, with one
    /// `madvise(MADV_POPULATE_WRITE)` per part. Parts this process reaches
    /// through the cache are left alone; a kernel without that advice
    /// (Linux < 5.14) ignores it.
    pub fn prefault(&self) {
        const PAGE: usize = 4096;
        let w = Here::for_thread("GlobalSlice::prefault");
        for (rank, addr, _, n) in self.pieces(w.ranks()) {
            let Some(p) = Memory::mapped(w, rank, addr) else {
                continue;
            };
            let lo = p & !(PAGE - 1);
            let hi = (p + n * std::mem::size_of::<T>()).next_multiple_of(PAGE);
            // SAFETY: the pages around a heap block of a mapped segment,
            // which is mapped page-aligned and shared; MADV_POPULATE_WRITE
            // only faults them in and changes no byte. An error (an old
            // kernel) leaves everything as it was.
            unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_POPULATE_WRITE) };
        }
    }

    /// The index of the first element for which `pred` is false, the slice
    /// being partitioned by it (true first, then false), like
    /// [`slice::partition_point`]: e.g. where a key would go in a sorted
    /// slice. Where the slice lies on one rank in memory this process maps
    /// (on smp, any one rank's part), one read checkout and rounds of
    /// seven independent probes; elsewhere a binary search fetching one
    /// element per probe (about log2(len) of them), so a search never
    /// moves the whole slice.
    pub fn partition_point(&self, mut pred: impl FnMut(&T) -> bool) -> usize {
        let w = Here::for_thread("GlobalSlice::partition_point");
        let mapped = self
            .single_part()
            .is_some_and(|(rank, addr)| Memory::mapped(w, rank, addr).is_some());
        if mapped {
            return self.read(|s| partition_point_wide(s, pred));
        }
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self.get(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Sets element `i` (like [`GlobalSlice::get`], no registered checkout;
    /// refused where any active checkout on this thread covers it).
    pub fn set(&self, i: usize, value: T) {
        // SAFETY: as in `get`; no reference of any kind covers the element.
        self.element_access(i, true, "GlobalSlice::set", |p| unsafe { (p as *mut T).write(value) })
    }

    /// Runs `f` on a pointer to element `i` (fetched unless `write`),
    /// after refusing an overlap with this thread's active checkouts.
    fn element_access<R>(&self, i: usize, write: bool, what: &'static str, f: impl FnOnce(*mut u8) -> R) -> R {
        let w = Here::for_thread(what);
        let (rank, addr) = self.element(i);
        let size = std::mem::size_of::<T>();
        mem(w).refuse_overlap(Active {
            rank,
            lo: addr,
            hi: addr + size,
            write,
        });
        let p = mem(w).view(w, rank, addr, size, !write, false);
        let r = f(p);
        mem(w).unview(w, rank, addr, size, write);
        if write {
            // Dirty cached bytes raise the mark, so the next release point
            // writes them back.
            mem(w).update_mark(w);
        }
        r
    }

    /// (rank, arena address) of element `i`. Panics when out of bounds.
    fn element(&self, i: usize) -> (u32, usize) {
        let rank = self.home(i);
        let size = std::mem::size_of::<T>();
        let at = if self.place & BLOCK_FLAG != 0 {
            self.start + i - rank as usize * self.per_rank()
        } else {
            self.start + i
        };
        (rank, self.base + at * size)
    }

    /// (rank, arena address of the first element) when the slice lies on
    /// one rank.
    fn single_part(&self) -> Option<(u32, usize)> {
        let last = self.len.checked_sub(1)?;
        (self.home(0) == self.home(last)).then(|| self.element(0))
    }

    /// Copies the elements into a new `Vec` here (e.g. a task's result, on
    /// its caller).
    pub fn to_vec(&self) -> Vec<T> {
        self.read(|s| s.to_vec())
    }

    /// Copies the elements into a `Vec` here and frees the allocation.
    pub fn into_vec(self) -> Vec<T> {
        let v = self.to_vec();
        self.free();
        v
    }

    /// Overwrites the elements with `src` (of the same length).
    pub fn copy_from_slice(&self, src: &[T]) {
        assert_eq!(src.len(), self.len, "copy_from_slice: lengths differ");
        self.write(|s| s.copy_from_slice(src))
    }
}

/// [`slice::partition_point`] in rounds of seven independent probes (an
/// eighth of the range each) while the range is long: a binary search's
/// probes each wait for the one before, and out of cache each is a miss
/// (about 1 µs per search of 2^20 keys here); seven at once overlap their
/// misses and cut the rounds to log8 of the length.
fn partition_point_wide<T>(s: &[T], mut pred: impl FnMut(&T) -> bool) -> usize {
    let (mut lo, mut hi) = (0, s.len());
    while hi - lo > 64 {
        let step = (hi - lo) / 8;
        // The probes' trues come first (s is partitioned): count them.
        let trues: usize = (1..8).map(|t| pred(&s[lo + t * step]) as usize).sum();
        // Every index below lo + trues * step holds a true; the first false
        // is at or before the first false probe.
        let next_lo = lo + trues * step;
        hi = if trues < 7 { lo + (trues + 1) * step } else { hi };
        lo = next_lo;
    }
    lo + s[lo..hi].partition_point(pred)
}

#[cfg(test)]
mod tests {
    use std::ops::Bound::{Excluded, Included, Unbounded};

    use super::{partition_point_wide, GlobalSlice, PhantomData, BLOCK_FLAG, BLOCK_GENERATION_SHIFT, GENERATION_SHIFT};

    /// A slice value of `len` elements at `base` (no runtime needed).
    fn slice<T>(base: usize, place: u64, len: usize) -> GlobalSlice<T> {
        GlobalSlice {
            base,
            place,
            start: 0,
            len,
            total: len,
            _t: PhantomData,
        }
    }

    #[test]
    fn overlaps_compares_bytes_of_one_allocation() {
        let a = slice::<u64>(1 << 20, 0, 100);
        // Sub-slices of one allocation: bytes [80, 160) and [152, 240) meet.
        assert!(a.slice(10..20).overlaps(&a.slice(19..30)));
        assert!(!a.slice(10..20).overlaps(&a.slice(20..30)));
        // Another element type over the same bytes: u32 elements 39..41 are
        // bytes [156, 164), inside u64 element 19.
        let b = slice::<u32>(1 << 20, 0, 200);
        assert!(a.slice(19..20).overlaps(&b.slice(39..41)));
        assert!(!a.slice(19..20).overlaps(&b.slice(40..41)));
        // Empty slices and other allocations never overlap.
        assert!(!a.slice(5..5).overlaps(&a));
        assert!(!a.overlaps(&slice::<u64>(1 << 21, 0, 100)));
        // The same address in another generation is another allocation.
        assert!(!a.overlaps(&slice::<u64>(1 << 20, 1 << GENERATION_SHIFT, 100)));
        // A distributed slice: parts of one allocation.
        let d = slice::<u64>(1 << 22, BLOCK_FLAG | 50, 100);
        assert!(d.slice(40..60).overlaps(&d.slice(59..61)));
        assert!(!d.slice(40..60).overlaps(&d.slice(60..61)));
    }

    #[test]
    fn a_distributed_place_carries_its_generation_beside_the_elements_per_rank() {
        let d = slice::<u64>(1 << 22, BLOCK_FLAG | 0xbeef << BLOCK_GENERATION_SHIFT | 50, 100);
        assert_eq!((d.per_rank(), d.generation()), (50, 0xbeef));
        assert_eq!((d.home(49), d.home(50), d.home(99)), (0, 1, 1));
        assert_eq!(d.element(60), (1, (1 << 22) + 10 * 8));
        // Another generation at the same address is another allocation.
        let e = slice::<u64>(1 << 22, BLOCK_FLAG | 0xbef0 << BLOCK_GENERATION_SHIFT | 50, 100);
        assert!(d.overlaps(&d.slice(10..20)) && !d.overlaps(&e));
        let one = slice::<u64>(1 << 20, 3 | 0x1234 << GENERATION_SHIFT, 8);
        assert_eq!((one.generation(), one.home(7)), (0x1234, 3));
    }

    #[test]
    fn raw_handles_carry_rank_address_length_and_generation() {
        let s = slice::<u64>(0x1000_0000_1040, 3 | 0xbeef << GENERATION_SHIFT, 77);
        let raw = s.to_raw();
        // SAFETY: a raw form made just above, of this T; never used for
        // memory (only its fields are compared).
        let back = unsafe { GlobalSlice::<u64>::from_raw(raw) };
        assert_eq!((back.base, back.place, back.len, back.total), (s.base, s.place, 77, 77));
        assert_eq!(raw[1] >> 48, 0xbeef);
        assert!(std::panic::catch_unwind(|| slice::<u64>(1 << 20, BLOCK_FLAG | 5, 10).to_raw()).is_err());
    }

    #[test]
    fn ranges_past_usize_max_panic_instead_of_wrapping() {
        // Range arithmetic needs no runtime: a slice value is enough.
        let s = GlobalSlice::<u64> {
            base: 1 << 20,
            place: 0,
            start: 0,
            len: 10,
            total: 10,
            _t: PhantomData,
        };
        assert_eq!(s.slice(2..=4).len(), 3);
        assert_eq!(s.slice((Excluded(2), Unbounded)).len(), 7);
        assert_eq!(s.slice((Excluded(9), Included(9))).len(), 0);
        for bad in [
            std::panic::catch_unwind(|| s.slice(..=usize::MAX)),
            std::panic::catch_unwind(|| s.slice((Excluded(usize::MAX), Unbounded))),
            std::panic::catch_unwind(|| s.slice(3..11)),
            std::panic::catch_unwind(|| s.slice((Excluded(5), Excluded(5)))),
        ] {
            assert!(bad.is_err());
        }
    }

    #[test]
    fn the_wide_search_agrees_with_the_binary_one() {
        let mut x = 1u64;
        for len in (0..300).chain([1000, 4095, 4096, 65537, 1 << 20]) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let v: Vec<u64> = (0..len as u64).map(|i| i / (1 + x % 5)).collect();
            for probe in [0, 1, len as u64 / 3, len as u64 / 2, len as u64, x % (len as u64 + 1)] {
                let want = v.partition_point(|&k| k < probe);
                assert_eq!(
                    partition_point_wide(&v, |&k| k < probe),
                    want,
                    "len {len} probe {probe}"
                );
            }
        }
    }
}
