//! The GASNet-EX handle this crate uses for its RMA and Active Messages,
//! which tells the scheduler how long each blocking operation on another
//! rank's memory waited ([`Here::served`]): across the network a rank
//! asleep on its lifelines answers only at its polls, and one whose memory
//! answers slowly is asked to keep polling while it is used.

use std::cell::RefCell;
use std::ops::Deref;
use std::time::Instant;

use gasnet_sys::Gasnet;
use uni_threads::layer::Here;

/// The GASNet-EX handle, for this crate's RMA and Active Messages: its
/// blocking gets and puts and its `wait_nbi` report to [`Here::served`];
/// everything else is [`Gasnet`]'s (through `Deref`).
#[derive(Clone, Copy)]
pub(crate) struct Net {
    gasnet: Gasnet,
    here: Here,
}

/// The GASNet-EX handle, for this crate's RMA and Active Messages.
pub(crate) fn net(w: Here) -> Net {
    // SAFETY: this crate reaches only the layer's zone of any segment (the
    // global heap: every address it puts, gets or frees is one of its
    // allocations, checked against the zone) and ends the job only through
    // `fatal`.
    let gasnet = unsafe { w.gasnet() };
    Net { gasnet, here: w }
}

/// Runs `op`, a blocking operation on `rank`'s memory (an atomic), and
/// reports how long it waited ([`Here::served`]).
#[inline]
pub(crate) fn on_rank<R>(w: Here, rank: u32, op: impl FnOnce() -> R) -> R {
    let since = Instant::now();
    let r = op();
    w.served(rank, since);
    r
}

thread_local! {
    /// The ranks of this thread's non-blocking gets and puts since its last
    /// `wait_nbi` (each once).
    static PENDING: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

fn note_pending(rank: u32) {
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        if !p.contains(&rank) {
            p.push(rank);
        }
    });
}

impl Deref for Net {
    type Target = Gasnet;
    fn deref(&self) -> &Gasnet {
        &self.gasnet
    }
}

impl Net {
    /// [`Gasnet::get_raw`], reported.
    ///
    /// # Safety
    /// As [`Gasnet::get_raw`]: `dst` valid for writes of `len` bytes, no
    /// Rust reference covering that memory during the call.
    #[track_caller]
    pub(crate) unsafe fn get_raw(self, dst: *mut u8, rank: u32, src: usize, len: usize) {
        // SAFETY: the caller's contract is get_raw's.
        on_rank(self.here, rank, || unsafe { self.gasnet.get_raw(dst, rank, src, len) })
    }

    /// [`Gasnet::put`], reported.
    #[track_caller]
    pub(crate) fn put(self, rank: u32, dst: usize, src: &[u8]) {
        on_rank(self.here, rank, || self.gasnet.put(rank, dst, src))
    }

    /// [`Gasnet::get_nbi`]; its wait is reported at [`Net::wait_nbi`].
    ///
    /// # Safety
    /// As [`Gasnet::get_nbi`]: `dst` valid for writes, and untouched,
    /// until `wait_nbi`.
    #[track_caller]
    pub(crate) unsafe fn get_nbi(self, dst: *mut u8, rank: u32, src: usize, len: usize) {
        note_pending(rank);
        // SAFETY: the caller's contract is get_nbi's.
        unsafe { self.gasnet.get_nbi(dst, rank, src, len) }
    }

    /// [`Gasnet::put_nbi`]; its wait is reported at [`Net::wait_nbi`].
    ///
    /// # Safety
    /// As [`Gasnet::put_nbi`]: `src` valid and unchanged until `wait_nbi`.
    #[track_caller]
    pub(crate) unsafe fn put_nbi(self, rank: u32, dst: usize, src: *const u8, len: usize) {
        note_pending(rank);
        // SAFETY: the caller's contract is put_nbi's.
        unsafe { self.gasnet.put_nbi(rank, dst, src, len) }
    }

    /// [`Gasnet::wait_nbi`], reported for each rank the gets and puts it
    /// waited for went to.
    pub(crate) fn wait_nbi(self) {
        let since = Instant::now();
        self.gasnet.wait_nbi();
        let ranks = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
        for &rank in &ranks {
            self.here.served(rank, since);
        }
        // The list's allocation is kept for the next batch.
        PENDING.with(|p| {
            let mut p = p.borrow_mut();
            if p.is_empty() {
                *p = ranks;
                p.clear();
            }
        });
    }
}
