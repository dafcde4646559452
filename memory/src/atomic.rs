//! [`GlobalAtomicU64`]: a u64 word in global memory reached only by remote
//! atomics (never through a checkout or the cache), in every fetch-and-add
//! mode (`am_fad::global`).

use std::sync::atomic::Ordering;

use am_fad::AtomicOp;

use uni_threads::layer::Here;

use crate::heap;
use crate::state::mem;

/// A u64 in the global heap of one rank that every rank updates with
/// atomic operations (a best-so-far bound, a counter, a flag). It is
/// `Copy + Send + 'static`: pass it to tasks. Every operation is atomic with respect to
/// the others and takes an [`Ordering`] as `std::sync::atomic` does, which
/// orders it against the caller's accesses to *global memory*:
///
/// - `Release` (and `AcqRel`, `SeqCst`): this process's dirty cached bytes
///   are written back (complete at their home) before the operation;
/// - `Acquire` (and `AcqRel`, `SeqCst`): this process's cached blocks are
///   forgotten after it, so later checkouts fetch what releases before it
///   wrote (a checkout active across the operation keeps its view);
/// - `Relaxed`: the operation alone, at no cost beyond it (atomic: every
///   rank sees one order of the word's modifications).
///
/// A releasing operation happens before an acquiring one that reads its
/// value (directly or through read-modify-writes), and all `SeqCst`
/// operations lie in one total order: the consistency model of
/// docs/design/global-memory.md, the same on every conduit, cache on and
/// off. A word is its own allocation: an operation on a word that one of
/// this thread's checkouts covers (an atomic or a slice used after its
/// free) ends the job.
///
/// So `data.set(i, v); flag.swap(1, Release)` on one rank and
/// `while flag.load(Acquire) == 0 {}; data.get(i)` on another reads `v`,
/// across the network too. Where memory is shared (every rank of a
/// shared-memory neighbourhood) checkouts are the memory itself and the
/// operation's own fences order them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GlobalAtomicU64 {
    rank: u32,
    addr: usize,
}

impl GlobalAtomicU64 {
    /// A new word holding `value`, on the calling task's rank.
    pub fn new(value: u64) -> GlobalAtomicU64 {
        let w = Here::for_thread("GlobalAtomicU64::new");
        let rank = w.rank();
        let (addr, _) = mem(w).heap.alloc_local(w, 8, |data| {
            mem(w).refuse_reuse("GlobalAtomicU64::new", rank, data - heap::HEADER, data + 8)
        });
        let a = GlobalAtomicU64 { rank, addr };
        a.op(w, "GlobalAtomicU64::new", AtomicOp::Store, value, 0);
        a
    }

    /// The operation on the word, after refusing a word under one of this
    /// thread's checkouts (an atomic or a slice used after its free: the
    /// checkout's `&[T]` would see the word change).
    fn op(&self, w: Here, what: &'static str, op: AtomicOp, a: u64, b: u64) -> u64 {
        mem(w).refuse_reuse(what, self.rank, self.addr, self.addr + 8);
        let apply = || {
            mem(w)
                .heap
                .atomics
                .apply(self.rank, w.remote(self.rank, self.addr), op, a, b)
        };
        crate::net::on_rank(w, self.rank, apply)
    }

    /// The operation with `before`'s release and `after`'s acquire.
    fn ordered(&self, what: &'static str, before: Ordering, after: Ordering, op: AtomicOp, a: u64, b: u64) -> u64 {
        let w = Here::for_thread(what);
        if matches!(before, Ordering::Release | Ordering::AcqRel | Ordering::SeqCst) {
            mem(w).release_point(w);
        }
        let old = self.op(w, what, op, a, b);
        if matches!(after, Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst) {
            mem(w).acquire_point(w);
        }
        old
    }

    fn rmw(&self, what: &'static str, order: Ordering, op: AtomicOp, a: u64, b: u64) -> u64 {
        self.ordered(what, order, order, op, a, b)
    }

    /// Adds `value` (wrapping); returns the old value.
    pub fn fetch_add(&self, value: u64, order: Ordering) -> u64 {
        self.rmw("GlobalAtomicU64::fetch_add", order, AtomicOp::FetchAdd, value, 0)
    }

    /// Stores `new` if the word holds `current`: `Ok(current)` then, else
    /// `Err(what it holds)`. `success` orders a store that happened,
    /// `failure` a load that did not store (it cannot release, as in std).
    pub fn compare_exchange(&self, current: u64, new: u64, success: Ordering, failure: Ordering) -> Result<u64, u64> {
        assert!(
            !matches!(failure, Ordering::Release | Ordering::AcqRel),
            "GlobalAtomicU64::compare_exchange: a failure ordering cannot release (Release, AcqRel)"
        );
        let w = Here::for_thread("GlobalAtomicU64::compare_exchange");
        if matches!(success, Ordering::Release | Ordering::AcqRel | Ordering::SeqCst) {
            mem(w).release_point(w);
        }
        let old = self.op(
            w,
            "GlobalAtomicU64::compare_exchange",
            AtomicOp::CompareSwap,
            current,
            new,
        );
        let after = if old == current { success } else { failure };
        if matches!(after, Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst) {
            mem(w).acquire_point(w);
        }
        if old == current {
            Ok(old)
        } else {
            Err(old)
        }
    }

    /// Keeps the smaller of the word and `value`; returns the old value.
    pub fn fetch_min(&self, value: u64, order: Ordering) -> u64 {
        self.rmw("GlobalAtomicU64::fetch_min", order, AtomicOp::FetchMin, value, 0)
    }

    /// Keeps the larger of the word and `value`; returns the old value.
    pub fn fetch_max(&self, value: u64, order: Ordering) -> u64 {
        self.rmw("GlobalAtomicU64::fetch_max", order, AtomicOp::FetchMax, value, 0)
    }

    /// The word's value (`Relaxed`, `Acquire` or `SeqCst`: a load cannot
    /// release, as in std).
    pub fn load(&self, order: Ordering) -> u64 {
        assert!(
            !matches!(order, Ordering::Release | Ordering::AcqRel),
            "GlobalAtomicU64::load: a load cannot release (Release, AcqRel)"
        );
        self.ordered("GlobalAtomicU64::load", Ordering::Relaxed, order, AtomicOp::Load, 0, 0)
    }

    /// Stores `value`; returns the old value.
    pub fn swap(&self, value: u64, order: Ordering) -> u64 {
        self.rmw("GlobalAtomicU64::swap", order, AtomicOp::Store, value, 0)
    }

    /// Frees the word (once).
    pub fn free(self) {
        let w = Here::for_thread("GlobalAtomicU64::free");
        // The word and its header: refused under a checkout of this thread
        // (free clears the header's tag).
        mem(w).refuse_free_in_checkout(
            "GlobalAtomicU64::free",
            self.rank,
            self.addr - heap::HEADER,
            self.addr + 8,
        );
        mem(w).heap.free(w, self.rank, self.addr, false, None);
    }
}
