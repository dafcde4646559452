//! A sleeping rank serves its memory: it polls without sleeping while
//! others' one-sided operations on its memory wait for its polls.
//!
//! Across the network (udp, mpi) a get, put or atomic on rank `R`'s memory
//! completes only when `R` polls, and `R` asleep on its lifelines polls at
//! most [`SLEEP_PERIOD`](super::SLEEP_PERIOD) apart: each such operation
//! would wait up to a millisecond. `R` cannot see that traffic (GASNet
//! serves it inside the poll), so the rank that waits says so:
//!
//! - **The origin.** After each blocking operation of the layer above (the
//!   global memory's gets, puts, atomics and waits for non-blocking ones,
//!   reported through `layer::Here::served`) on a rank whose segment is
//!   not mapped here, it asks that rank to keep polling
//!   ([`KEEP_POLLING`], carrying the window `UAT_KEEP_POLLING` in µs) when
//!   the operation took longer than [`SLOW_ANSWER`] — many round trips,
//!   so the target was not polling — or, to renew a window it asked for,
//!   when that was between half a window and a window ago. At most one
//!   request per target per half window; none at all while operations are
//!   answered promptly and no window is open, so nothing is sent to ranks
//!   that poll, and nothing when nobody touches a rank's memory.
//! - **The target.** The handler moves this process's deadline
//!   ([`asked`]) to now + the window, if that is later. The lifelines'
//!   sleep polls without sleeping until the deadline (`idle.rs`), and a
//!   thief's patient wait sleeps at most `FIRST_BACKOFF` between polls
//!   meanwhile; after it the sleep backs off from `FIRST_BACKOFF` again.
//!
//! The first slow operation of a burst costs what it did (up to one sleep
//! period), and so may the next (the request arrives with it, at the same
//! poll); the rest are answered at the target's polling speed.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use gasnet_sys::am::{Arg, Token};

pub(crate) use gasnet_sys::am::ids::KEEP_POLLING;

/// An operation answered later than this waited for its target's poll: a
/// GET over real UDP on loopback takes ~12 µs, mpi and ibv less.
pub(crate) const SLOW_ANSWER: Duration = Duration::from_micros(100);

/// The longest window a rank grants (`UAT_KEEP_POLLING`'s bound).
pub(crate) const MAX_WINDOW: Duration = Duration::from_secs(1);

/// The time until which this process polls without sleeping, in ns of
/// [`now`] (0: never asked). Written by the handler (perhaps on a polling
/// thread), read by the worker; Relaxed: a hint about time, ordering
/// nothing else.
static POLL_UNTIL: AtomicU64 = AtomicU64::new(0);

/// Nanoseconds since this process first asked (the monotonic clock: the
/// TSC's rate is measured only when a trace or the statistics need it).
fn now() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Whether another rank asked this one to keep polling, and the window
/// has not ended.
#[inline]
pub(crate) fn asked() -> bool {
    let until = POLL_UNTIL.load(Ordering::Relaxed);
    until != 0 && now() < until
}

pub(crate) extern "C" fn on_keep_polling(_: Token, micros: Arg) {
    let window = Duration::from_micros(u64::from(micros)).min(MAX_WINDOW);
    POLL_UNTIL.fetch_max(now() + window.as_nanos() as u64, Ordering::Relaxed);
}

/// The asking side: this rank's window and when it last asked each rank
/// (worker thread only).
pub(crate) struct KeepPolling {
    /// The window asked for (zero: never ask; at most `MAX_WINDOW`, so
    /// its µs fit the message's 32-bit argument).
    window: Duration,
    /// Per rank: when it was last asked ([`now`]; 0: never). Ranks whose
    /// segments are mapped here (this one among them) are never asked:
    /// their memory needs no poll.
    last: Vec<Cell<u64>>,
}

impl KeepPolling {
    /// `on`: lifelines are on (else nobody sleeps and nothing is asked).
    pub(crate) fn new(on: bool, window: Duration, ranks: u32) -> KeepPolling {
        now();
        POLL_UNTIL.store(0, Ordering::Relaxed);
        let window = if on { window.min(MAX_WINDOW) } else { Duration::ZERO };
        KeepPolling {
            window,
            last: (0..ranks).map(|_| Cell::new(0)).collect(),
        }
    }

    /// A blocking operation on `rank`'s memory that began at `since`
    /// completed: asks `rank` to keep polling if it answered slowly or a
    /// window asked for is to be renewed (the module docs). Returns whether
    /// it asked.
    #[inline]
    pub(crate) fn served(&self, gasnet: gasnet_sys::Gasnet, rank: u32, since: Instant) -> bool {
        if self.window.is_zero() {
            return false;
        }
        let Some(last) = self.last.get(rank as usize) else {
            return false;
        };
        if gasnet.segment(rank).local.is_some() {
            return false;
        }
        let last_asked = last.get();
        let slow = since.elapsed() > SLOW_ANSWER;
        let t = now().max(1);
        let age = Duration::from_nanos(t.saturating_sub(last_asked));
        let renew = last_asked != 0 && age < self.window;
        if (last_asked != 0 && age < self.window / 2) || !(slow || renew) {
            return false;
        }
        last.set(t);
        gasnet.request(rank, KEEP_POLLING, &[self.window.as_micros() as u32]);
        true
    }
}
