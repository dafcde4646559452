//! [`GlobalAtomicU64`]: a u64 word in global memory reached only by remote
//! atomics (never through a checkout or the cache), in every fetch-and-add
//! mode (`am_fad::global`).

use am_fad::AtomicOp;

use super::heap;
use crate::arena::remote;
use crate::worker::{worker_for_thread, Worker};

/// A u64 in the global heap of one rank that every rank updates with
/// atomic operations (a best-so-far bound, a counter). `Copy + Send +
/// 'static`: pass it to tasks. Every operation is atomic with respect to
/// the others and orders the caller's other accesses (acquire-release).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GlobalAtomicU64 {
    rank: u32,
    addr: usize,
}

impl GlobalAtomicU64 {
    /// A new word holding `value`, on the calling task's rank.
    pub fn new(value: u64) -> GlobalAtomicU64 {
        let w = worker_for_thread("GlobalAtomicU64::new");
        let addr = heap::alloc_local(w, 8);
        let a = GlobalAtomicU64 { rank: w.rank, addr };
        a.op(w, AtomicOp::Store, value, 0);
        a
    }

    fn op(&self, w: &Worker, op: AtomicOp, a: u64, b: u64) -> u64 {
        w.memory
            .atomics
            .apply(self.rank, remote(w.gasnet, self.rank, self.addr), op, a, b)
    }

    fn with(&self, what: &'static str, op: AtomicOp, a: u64, b: u64) -> u64 {
        let w = worker_for_thread(what);
        self.op(w, op, a, b)
    }

    /// Adds `value` (wrapping); returns the old value.
    pub fn fetch_add(&self, value: u64) -> u64 {
        self.with("GlobalAtomicU64::fetch_add", AtomicOp::FetchAdd, value, 0)
    }

    /// Stores `new` if the word holds `current`: `Ok(current)` then, else
    /// `Err(what it holds)`.
    pub fn compare_exchange(&self, current: u64, new: u64) -> Result<u64, u64> {
        let old = self.with("GlobalAtomicU64::compare_exchange", AtomicOp::CompareSwap, current, new);
        if old == current {
            Ok(old)
        } else {
            Err(old)
        }
    }

    /// Keeps the smaller of the word and `value`; returns the old value.
    pub fn fetch_min(&self, value: u64) -> u64 {
        self.with("GlobalAtomicU64::fetch_min", AtomicOp::FetchMin, value, 0)
    }

    /// Keeps the larger of the word and `value`; returns the old value.
    pub fn fetch_max(&self, value: u64) -> u64 {
        self.with("GlobalAtomicU64::fetch_max", AtomicOp::FetchMax, value, 0)
    }

    pub fn load(&self) -> u64 {
        self.with("GlobalAtomicU64::load", AtomicOp::Load, 0, 0)
    }

    /// Stores `value`; returns the old value.
    pub fn swap(&self, value: u64) -> u64 {
        self.with("GlobalAtomicU64::swap", AtomicOp::Store, value, 0)
    }

    /// Frees the word (once).
    pub fn free(self) {
        let w = worker_for_thread("GlobalAtomicU64::free");
        heap::free(w, self.rank, self.addr, false);
    }
}
