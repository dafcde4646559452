//! Aligning the ranks' clocks for a trace: every rank asks rank 0 for the
//! time a few times by Active Message and keeps the round trip that was
//! shortest (Cristian's method): rank 0's clock read at the round trip's
//! middle, give or take half of it. Ranks on rank 0's host read the same
//! kernel clock (CLOCK_MONOTONIC) and use it as it is; their estimate is
//! kept in the trace as a measure of the method.

use std::sync::atomic::{AtomicU64, Ordering};

use gasnet_sys::am::{join_u64, split_u64, Arg, Handler, Token};
use gasnet_sys::Gasnet;

pub(crate) use gasnet_sys::am::ids::{CLOCK_REPLY, CLOCK_REQUEST};

/// Round trips per rank.
const ROUNDS: u32 = 16;

/// This rank's clock against the job's (rank 0's monotonic clock).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Alignment {
    /// A tick of this rank's TSC ...
    pub(crate) origin_ticks: u64,
    /// ... and the same moment on the job's clock, in ns.
    pub(crate) origin_ns: u64,
    /// Bound on the error of `origin_ns`: half the shortest round trip, in
    /// ns; 0 where this rank reads rank 0's clock itself (same host).
    pub(crate) error_ns: u64,
    /// This rank's CLOCK_MONOTONIC at `origin_ticks`.
    pub(crate) origin_mono_ns: u64,
    /// The round trips' estimate of rank 0's clock minus this rank's, in ns
    /// (on rank 0's host the truth is 0: a measure of the method's error).
    pub(crate) estimate_ns: i64,
    /// Half the shortest round trip, in ns (the estimate's bound).
    pub(crate) estimate_error_ns: u64,
}

/// The answer of the latest round trip (0: none yet).
static REPLY_NS: AtomicU64 = AtomicU64::new(0);

pub(crate) fn handlers() -> [Handler; 2] {
    let request: for<'a> extern "C" fn(Token<'a>) = on_request;
    let reply: for<'a> extern "C" fn(Token<'a>, Arg, Arg) = on_reply;
    [Handler::new(CLOCK_REQUEST, request), Handler::new(CLOCK_REPLY, reply)]
}

extern "C" fn on_request(token: Token) {
    token.reply(CLOCK_REPLY, &split_u64(monotonic_ns().max(1)));
}

extern "C" fn on_reply(_: Token, lo: Arg, hi: Arg) {
    REPLY_NS.store(join_u64(lo, hi), Ordering::Release);
}

/// CLOCK_MONOTONIC in ns.
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec to fill; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Collective: measures this rank's clock against rank 0's (which serves
/// the requests from its barrier).
pub(crate) fn align(gasnet: Gasnet) -> Alignment {
    let mut best: Option<(u64, i128)> = None;
    if gasnet.rank() != 0 {
        for _ in 0..ROUNDS {
            REPLY_NS.store(0, Ordering::Relaxed);
            let t0 = monotonic_ns();
            gasnet.request(0, CLOCK_REQUEST, &[]);
            let theirs = loop {
                let v = REPLY_NS.load(Ordering::Acquire);
                if v != 0 {
                    break v;
                }
                gasnet.poll();
            };
            let t1 = monotonic_ns();
            let rtt = t1.saturating_sub(t0);
            // Rank 0's clock minus ours at the round trip's middle.
            let offset = theirs as i128 - (t0 as i128 + t1 as i128) / 2;
            if best.is_none_or(|(r, _)| rtt < r) {
                best = Some((rtt, offset));
            }
        }
    }
    gasnet.barrier();
    let (rtt, estimate) = best.unwrap_or((0, 0));
    // On rank 0's host both read one kernel clock: the offset is exactly 0
    // (the round trips' estimate is kept, as a measure of the method).
    let same_clock = gasnet.host_ranks().contains(&0);
    let (offset, error_ns) = if same_clock { (0, 0) } else { (estimate, rtt / 2) };
    let (ticks, ns) = (crate::tsc::now(), monotonic_ns());
    Alignment {
        origin_ticks: ticks,
        origin_ns: (ns as i128 + offset).max(0) as u64,
        origin_mono_ns: ns,
        error_ns,
        estimate_ns: estimate.clamp(i64::MIN as i128, i64::MAX as i128) as i64,
        estimate_error_ns: rtt / 2,
    }
}
