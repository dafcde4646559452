//! One-sided get and put, checked against the target's segment bounds.
//!
//! Remote addresses are addresses in the *target's* segment (its
//! [`Segment::base`](crate::Segment)); local buffers may be anywhere in this
//! process. On udp and mpi the target's CPU carries RMA for us: it completes
//! only while the target polls. A blocking operation on a rank whose segment
//! is mapped here is a copy; on any other rank it is started non-blocking
//! and completed by [`crate::wait`] (spinning, or with the thread's
//! patience).

use crate::coll::Event;
use crate::ops::count;
use crate::{raw, Gasnet};

impl Gasnet {
    #[inline]
    #[track_caller]
    fn check_remote(self, rank: u32, addr: usize, len: usize) {
        assert!(rank < self.size(), "RMA to rank {rank} of a {}-rank job", self.size());
        let seg = self.segment(rank);
        assert!(
            seg.contains(addr, len),
            "RMA of {len} bytes at {addr:#x} is outside rank {rank}'s segment [{:#x}, +{:#x})",
            seg.base,
            seg.size
        );
    }

    /// Reads `dst.len()` bytes at `rank`'s address `src`.
    #[track_caller]
    pub fn get(self, dst: &mut [u8], rank: u32, src: usize) {
        // SAFETY: dst is a valid exclusive buffer of its length.
        unsafe { self.get_raw(dst.as_mut_ptr(), rank, src, dst.len()) }
    }

    /// Writes `src` to `rank`'s address `dst`.
    #[track_caller]
    pub fn put(self, rank: u32, dst: usize, src: &[u8]) {
        self.check_remote(rank, dst, src.len());
        count(|c| c.blocking_rma += 1);
        crate::hosts::before_op_to(rank);
        if self.segment(rank).local.is_some() {
            // SAFETY: remote range checked; src valid for its length.
            let code = unsafe { raw::uat_put_blocking(rank, dst as *mut _, src.as_ptr() as *const _, src.len()) };
            assert_eq!(code, 0, "gex_RMA_PutBlocking failed");
        } else {
            // SAFETY: remote range checked; src is borrowed, valid and
            // unchanged until the put completes below.
            let ev = unsafe { raw::uat_put_nb(rank, dst as *mut _, src.as_ptr() as *const _, src.len()) };
            Event::started(ev).complete(self);
        }
    }

    /// Reads the u64 at `rank`'s address `src`.
    #[inline]
    #[track_caller]
    pub fn get_u64(self, rank: u32, src: usize) -> u64 {
        let mut v = [0u8; 8];
        self.get(&mut v, rank, src);
        u64::from_ne_bytes(v)
    }

    /// Writes the u64 `value` at `rank`'s address `dst`.
    #[inline]
    #[track_caller]
    pub fn put_u64(self, rank: u32, dst: usize, value: u64) {
        self.put(rank, dst, &value.to_ne_bytes())
    }

    /// Reads `len` bytes at `rank`'s address `src` into `dst`, blocking.
    ///
    /// # Safety
    /// `dst` must be valid for writes of `len` bytes, and no Rust reference
    /// may cover that memory during the call.
    #[track_caller]
    pub unsafe fn get_raw(self, dst: *mut u8, rank: u32, src: usize, len: usize) {
        self.check_remote(rank, src, len);
        count(|c| c.blocking_rma += 1);
        crate::hosts::before_op_to(rank);
        if self.segment(rank).local.is_some() {
            // SAFETY: remote range checked; dst per the caller's contract.
            let code = unsafe { raw::uat_get_blocking(dst as *mut _, rank, src as *mut _, len) };
            assert_eq!(code, 0, "gex_RMA_GetBlocking failed");
        } else {
            // SAFETY: remote range checked; dst per the caller's contract,
            // which covers this call, and the get completes below.
            let ev = unsafe { raw::uat_get_nb(dst as *mut _, rank, src as *mut _, len) };
            Event::started(ev).complete(self);
        }
    }

    /// Starts reading `len` bytes at `rank`'s `src` into `dst`; complete after
    /// [`Gasnet::wait_nbi`].
    ///
    /// # Safety
    /// `dst` must stay valid for writes, and untouched, until `wait_nbi`.
    #[track_caller]
    pub unsafe fn get_nbi(self, dst: *mut u8, rank: u32, src: usize, len: usize) {
        self.check_remote(rank, src, len);
        count(|c| c.nbi_rma += 1);
        crate::hosts::note_nbi_op_to(rank);
        // SAFETY: remote range checked; dst per the caller's contract.
        unsafe { raw::uat_get_nbi(dst as *mut _, rank, src as *mut _, len) }
    }

    /// Starts writing `len` bytes from `src` to `rank`'s `dst`; complete (and
    /// `src` reusable) after [`Gasnet::wait_nbi`].
    ///
    /// # Safety
    /// `src` must stay valid and unchanged until `wait_nbi`.
    #[track_caller]
    pub unsafe fn put_nbi(self, rank: u32, dst: usize, src: *const u8, len: usize) {
        self.check_remote(rank, dst, len);
        count(|c| c.nbi_rma += 1);
        crate::hosts::note_nbi_op_to(rank);
        // SAFETY: remote range checked; src per the caller's contract.
        unsafe { raw::uat_put_nbi(rank, dst as *mut _, src as *const _, len) }
    }

    /// Waits for every non-blocking-implicit get and put this thread started
    /// (spinning, or with the thread's [`crate::wait`] patience).
    pub fn wait_nbi(self) {
        crate::hosts::before_nbi_wait();
        // SAFETY: init succeeded; testing the thread's implicit operations
        // syncs those that completed, as gex_NBI_Wait would.
        crate::wait::until(self, || unsafe { raw::uat_test_nbi() } != 0)
    }
}
