//! Barriers and the events of non-blocking operations.

use crate::{raw, Gasnet};

/// A pending non-blocking operation (`gex_Event_t`). Completes once; dropping
/// an unfinished event waits for it (GASNet requires every event be synced).
#[must_use = "an event must be tested or waited for"]
pub struct Event(Option<raw::gex_Event_t>);

impl Event {
    /// Wraps an event GASNet returned (`GEX_EVENT_INVALID`, a null pointer,
    /// for an operation complete at initiation).
    pub(crate) fn started(ev: raw::gex_Event_t) -> Event {
        Event((!ev.is_null()).then_some(ev))
    }

    /// Polls until the operation has completed, with the thread's
    /// [`crate::wait`] patience.
    pub(crate) fn complete(mut self, gasnet: Gasnet) {
        crate::wait::until(gasnet, || self.test());
    }

    /// Whether the operation has completed (polls nothing itself).
    pub fn test(&mut self) -> bool {
        match self.0 {
            None => true,
            Some(ev) => {
                // SAFETY: a live event of this process; a successful test
                // consumes it, so it is forgotten.
                let done = unsafe { raw::uat_event_test(ev) } != 0;
                if done {
                    self.0 = None;
                }
                done
            }
        }
    }

    /// Blocks (polling) until the operation has completed.
    pub fn wait(mut self) {
        if let Some(ev) = self.0.take() {
            // SAFETY: a live event, consumed here.
            unsafe { raw::uat_event_wait(ev) }
        }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if let Some(ev) = self.0.take() {
            // SAFETY: as in wait.
            unsafe { raw::uat_event_wait(ev) }
        }
    }
}

impl Gasnet {
    /// Starts a barrier over all ranks.
    pub fn barrier_nb(self) -> Event {
        // SAFETY: init succeeded.
        Event(Some(unsafe { raw::uat_barrier_nb() }))
    }

    /// A barrier over all ranks; polls (runs handlers) while waiting.
    pub fn barrier(self) {
        self.barrier_nb().wait()
    }

    /// Rank `root`'s `data` into every rank's `data` (the same length on
    /// every rank). Collective: every rank calls it, in the same order.
    /// Needs no segment: it may run before one is attached.
    pub fn broadcast(self, root: u32, data: &mut [u8]) {
        assert!(
            root < self.size(),
            "broadcast from rank {root} of a {}-rank job",
            self.size()
        );
        let src = data.to_vec();
        // SAFETY: init succeeded; dst and src are valid local buffers of
        // data.len() bytes that outlive the operation, completed below.
        let ev =
            unsafe { raw::uat_broadcast_nb(root, data.as_mut_ptr() as *mut _, src.as_ptr() as *const _, data.len()) };
        Event(Some(ev)).wait();
    }

    /// The largest of every rank's `value`, on every rank. Collective;
    /// needs no segment.
    pub fn max_over_ranks(self, value: u64) -> u64 {
        self.max_over_ranks_each(&[value])[0]
    }

    /// Element by element, the largest of every rank's `values` (the same
    /// length on every rank), on every rank. Collective; needs no segment.
    /// With every rank writing its own slot and zeros elsewhere, this is an
    /// all-gather.
    pub fn max_over_ranks_each(self, values: &[u64]) -> Vec<u64> {
        let mut max = vec![0u64; values.len()];
        // SAFETY: init succeeded; both buffers hold values.len() u64s and
        // outlive the operation, completed below.
        let ev = unsafe { raw::uat_max_u64_nb(max.as_mut_ptr(), values.as_ptr(), values.len()) };
        Event(Some(ev)).wait();
        max
    }
}
