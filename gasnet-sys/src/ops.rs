//! Counts of the remote operations this thread has started, kept by the
//! wrappers of this crate (so a protocol's cost is measured where the
//! operations are issued, not reported by the protocol itself).
//!
//! A *round trip* is an operation the caller waits for: a blocking get or
//! put, an atomic (every `gex_AD` operation here blocks for its result), or
//! an Active Message request whose reply the caller waits for (the caller
//! says so: [`count_round_trip_request`]). Non-blocking RMA is counted apart:
//! its caller goes on before it completes.

use std::cell::Cell;

/// Operations started by one thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCounts {
    /// Blocking gets and puts.
    pub blocking_rma: u64,
    /// Non-blocking (implicit-handle) gets and puts.
    pub nbi_rma: u64,
    /// Remote atomics (`gex_AD` operations).
    pub atomics: u64,
    /// Active Message requests.
    pub am_requests: u64,
    /// Of those, requests whose sender waits for the reply.
    pub am_round_trips: u64,
}

impl OpCounts {
    /// Operations the caller waited for, one after another.
    pub fn round_trips(&self) -> u64 {
        self.blocking_rma + self.atomics + self.am_round_trips
    }

    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &OpCounts) -> OpCounts {
        OpCounts {
            blocking_rma: self.blocking_rma - earlier.blocking_rma,
            nbi_rma: self.nbi_rma - earlier.nbi_rma,
            atomics: self.atomics - earlier.atomics,
            am_requests: self.am_requests - earlier.am_requests,
            am_round_trips: self.am_round_trips - earlier.am_round_trips,
        }
    }
}

thread_local! {
    static COUNTS: Cell<OpCounts> = const {
        Cell::new(OpCounts { blocking_rma: 0, nbi_rma: 0, atomics: 0, am_requests: 0, am_round_trips: 0 })
    };
}

/// The calling thread's counts so far.
pub fn counts() -> OpCounts {
    COUNTS.with(Cell::get)
}

#[inline(always)]
pub(crate) fn count(f: impl FnOnce(&mut OpCounts)) {
    COUNTS.with(|c| {
        let mut v = c.get();
        f(&mut v);
        c.set(v);
    })
}

/// Marks the AM request just sent as one whose reply the caller waits for
/// (a request-reply round trip, e.g. a fetch-and-add by Active Message).
pub fn count_round_trip_request() {
    count(|c| c.am_round_trips += 1)
}
