//! Remote atomics on u64 words: GASNet-EX atomic domains (`gex_AD`).
//!
//! The GASNet-EX rule (see docs/design/fetch-and-add.md, "Remote atomics rules"): while atomic
//! domain operations may target a word, *every* access to that word must go
//! through the same domain: no CPU loads, stores or atomics and no RMA on it,
//! not even by its owner. Targets are segment addresses of the target rank.
//!
//! Where a conduit cannot do the operation in shared memory (udp, mpi, ibv in
//! GASNet-EX 2021.3, for targets outside the PSHM neighbourhood) GASNet
//! carries it by Active Messages: the target must poll for it to complete.

use crate::{raw, Gasnet};

/// The operations a domain is created for (a `GEX_OP_*` mask).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ops(u32);

impl Ops {
    /// `GEX_OP_FADD`.
    pub const FETCH_ADD: Ops = Ops(raw::UAT_OP_FADD);
    /// `GEX_OP_FCAS`.
    pub const COMPARE_SWAP: Ops = Ops(raw::UAT_OP_FCAS);
    /// `GEX_OP_SET`.
    pub const SET: Ops = Ops(raw::UAT_OP_SET);
    /// `GEX_OP_GET`.
    pub const GET: Ops = Ops(raw::UAT_OP_GET);
    /// `GEX_OP_FMIN`.
    pub const FETCH_MIN: Ops = Ops(raw::UAT_OP_FMIN);
    /// `GEX_OP_FMAX`.
    pub const FETCH_MAX: Ops = Ops(raw::UAT_OP_FMAX);
    /// Everything [`AtomicDomain`] offers.
    pub const ALL: Ops = Ops(raw::UAT_OP_FADD
        | raw::UAT_OP_FCAS
        | raw::UAT_OP_SET
        | raw::UAT_OP_GET
        | raw::UAT_OP_FMIN
        | raw::UAT_OP_FMAX);
}

impl std::ops::BitOr for Ops {
    type Output = Ops;
    fn bitor(self, rhs: Ops) -> Ops {
        Ops(self.0 | rhs.0)
    }
}

/// How an atomic operation orders the calling thread's other memory
/// accesses (GASNet-EX's `GEX_FLAG_AD_ACQ`/`GEX_FLAG_AD_REL`). Without a
/// flag the specification orders nothing around the operation: a lock taken
/// with a fetch-and-add needs `Acquire` so that reads of the data it guards
/// come after it, and its release needs `Release`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// No ordering beyond the operation's own atomicity.
    Relaxed,
    /// Later loads and stores of the caller happen after the operation.
    Acquire,
    /// Earlier loads and stores of the caller happen before the operation.
    Release,
    /// Both.
    AcqRel,
}

impl Order {
    fn flags(self) -> u32 {
        match self {
            Order::Relaxed => 0,
            Order::Acquire => raw::UAT_FLAG_AD_ACQ,
            Order::Release => raw::UAT_FLAG_AD_REL,
            Order::AcqRel => raw::UAT_FLAG_AD_ACQ | raw::UAT_FLAG_AD_REL,
        }
    }
}

/// An atomic domain over u64 words of every rank's segment.
pub struct AtomicDomain {
    ad: raw::gex_AD_t,
    ops: u32,
    gasnet: Gasnet,
}

// SAFETY: GASNet-EX in PAR mode allows any thread to use a domain.
unsafe impl Send for AtomicDomain {}
// SAFETY: as above; operations take &self and GASNet synchronises them.
unsafe impl Sync for AtomicDomain {}

impl Gasnet {
    /// Creates a u64 atomic domain for `ops`. Collective: every rank calls it,
    /// in the same order as its other domain creations.
    pub fn atomic_domain(self, ops: Ops) -> AtomicDomain {
        let mut ad = std::ptr::null_mut();
        // SAFETY: init succeeded; ad is a valid out pointer.
        let code = unsafe { raw::uat_ad_create_u64(&mut ad, ops.0 as _, 0) };
        assert_eq!(code, 0, "gex_AD_Create failed");
        AtomicDomain {
            ad,
            ops: ops.0,
            gasnet: self,
        }
    }
}

impl AtomicDomain {
    #[inline]
    #[track_caller]
    fn op(&self, op: u32, rank: u32, addr: usize, a: u64, b: u64, order: Order) -> u64 {
        assert!(
            self.ops & op != 0,
            "operation {op:#x} was not requested when this atomic domain was created"
        );
        assert!(
            rank < self.gasnet.size(),
            "atomic on rank {rank} of a {}-rank job",
            self.gasnet.size()
        );
        let seg = self.gasnet.segment(rank);
        assert!(
            addr.is_multiple_of(8) && seg.contains(addr, 8),
            "atomic on {addr:#x}: not an aligned u64 in rank {rank}'s segment"
        );
        crate::ops::count(|c| c.atomics += 1);
        crate::hosts::before_op_to(rank);
        if seg.local.is_some() {
            // SAFETY: a live domain; the target is an aligned word inside the
            // target's segment (checked above).
            return unsafe { raw::uat_ad_op_u64(self.ad, rank, addr as *mut _, op as _, a, b, order.flags() as _) };
        }
        // Outside shared memory GASNet carries the operation by Active
        // Message: wait for it with the thread's patience (crate::wait).
        let mut result = 0u64;
        // SAFETY: as above; `result` outlives the operation, which completes
        // before this function returns.
        let ev = unsafe {
            raw::uat_ad_op_nb_u64(
                self.ad,
                &mut result,
                rank,
                addr as *mut _,
                op as _,
                a,
                b,
                order.flags() as _,
            )
        };
        crate::coll::Event::started(ev).complete(self.gasnet);
        result
    }

    /// Atomically adds `value` to the word at `rank`:`addr`; returns the old value.
    #[inline]
    #[track_caller]
    pub fn fetch_add(&self, rank: u32, addr: usize, value: u64, order: Order) -> u64 {
        self.op(raw::UAT_OP_FADD, rank, addr, value, 0, order)
    }

    /// Atomically replaces the word with `new` if it equals `current`;
    /// returns the old value (equal to `current` on success).
    #[inline]
    #[track_caller]
    pub fn compare_swap(&self, rank: u32, addr: usize, current: u64, new: u64, order: Order) -> u64 {
        self.op(raw::UAT_OP_FCAS, rank, addr, current, new, order)
    }

    /// Atomically replaces the word with the smaller of it and `value`
    /// (unsigned); returns the old value.
    #[inline]
    #[track_caller]
    pub fn fetch_min(&self, rank: u32, addr: usize, value: u64, order: Order) -> u64 {
        self.op(raw::UAT_OP_FMIN, rank, addr, value, 0, order)
    }

    /// Atomically replaces the word with the larger of it and `value`
    /// (unsigned); returns the old value.
    #[inline]
    #[track_caller]
    pub fn fetch_max(&self, rank: u32, addr: usize, value: u64, order: Order) -> u64 {
        self.op(raw::UAT_OP_FMAX, rank, addr, value, 0, order)
    }

    /// Atomically stores `value`.
    #[inline]
    #[track_caller]
    pub fn set(&self, rank: u32, addr: usize, value: u64, order: Order) {
        self.op(raw::UAT_OP_SET, rank, addr, value, 0, order);
    }

    /// Atomically loads the word.
    #[inline]
    #[track_caller]
    pub fn get(&self, rank: u32, addr: usize, order: Order) -> u64 {
        self.op(raw::UAT_OP_GET, rank, addr, 0, 0, order)
    }
}

impl Drop for AtomicDomain {
    fn drop(&mut self) {
        // SAFETY: the domain is live and dropped once. (Destroy is
        // collective in the spec; GASNet 2021.3 frees local state only.)
        unsafe { raw::uat_ad_destroy(self.ad) }
    }
}
