//! Stealing a continuation from another rank (IPSJ 2016 §5.3): claim the
//! victim's oldest entry by its deque protocol ([`crate::deque`]), copy the
//! frames with one GET from the victim's segment into this rank's own
//! segment, where they appear at the same arena address, release the entry,
//! resume.
//!
//! Only a worker whose uni-address region is empty steals (the scheduler
//! calls [`try_steal`] only then), so any stolen frames fit.

use crate::deque::{self, Entry, Miss, RemoteDeque};
use crate::tsc;
use crate::worker::worker_in_task;
use uat_trace::Outcome;

/// One steal attempt from the rank that woke this one (lifelines), else
/// from a random victim. On success the stolen frames are in place in this
/// rank's stack region and the entry is returned, ready to resume.
pub(crate) fn try_steal() -> Option<Entry> {
    let w = worker_in_task();
    if w.ranks < 2 {
        return None;
    }
    let victim = match w.lifelines.take_waker(w) {
        Some(waker) => waker,
        None => w.victims.pick(),
    };
    let entry = try_steal_from(victim);
    w.victims.outcome(entry.is_some());
    match entry {
        Some(_) => w.lifelines.stole(),
        None => {
            if w.lifelines.failed_attempt() {
                let entry = w.lifelines.quiesce(w);
                // Woken, or it stole on its way to sleep: a new search.
                w.victims.reset();
                return entry;
            }
        }
    }
    entry
}

/// One steal attempt from `victim` (not this rank). With lifelines on, a
/// victim that sleeps is not asked where one load tells: it has no work,
/// and the thief waits for a victim that does not answer at once (it
/// computes without polling) asleep between polls
/// ([`crate::lifeline::THIEF_PATIENCE`]), so that an idle rank is quiet
/// whatever its victims do.
pub(crate) fn try_steal_from(victim: u32) -> Option<Entry> {
    let w = worker_in_task();
    if !w.lifelines.on() {
        return traced_attempt(victim);
    }
    let before = gasnet_sys::wait::counts();
    let entry = gasnet_sys::wait::patiently(w.lifelines.thief_patience(w), || traced_attempt(victim));
    let after = gasnet_sys::wait::counts();
    if after.slept_waits != before.slept_waits {
        w.run.counters.update(|c| {
            c.unanswered_steal_waits += 1;
            c.unanswered_steal_wait_ns += (after.slept - before.slept).as_nanos() as u64;
        });
    }
    entry
}

/// [`attempt`], recorded in the trace with its outcome.
#[inline]
fn traced_attempt(victim: u32) -> Option<Entry> {
    let w = worker_in_task();
    if !w.trace.on() {
        return attempt(victim).ok();
    }
    let start = tsc::now();
    let result = attempt(victim);
    w.trace.steal(
        victim,
        start,
        result.as_ref().err().copied().unwrap_or(Outcome::Success),
    );
    result.ok()
}

/// One steal attempt; on failure, how it ended.
fn attempt(victim: u32) -> Result<Entry, Outcome> {
    let w = worker_in_task();
    let (g, me) = (w.gasnet, w.rank);
    let c = &w.run.counters;
    if w.lifelines.on() && crate::sleep_word::sleeping(g, victim) {
        c.update(|c| c.steal_attempts_saved += 1);
        return Err(Outcome::Asleep);
    }
    // The releases of earlier steals (non-blocking puts) are complete
    // before this rank starts another.
    g.wait_nbi();
    let across = !g.hosts().is_local(victim);
    c.update(|c| {
        c.steals_attempted += 1;
        c.steal_attempts_across_hosts += across as u64;
    });
    let protocol = w.deque.protocol();
    let v = RemoteDeque::new(g, victim, w.deque.words().atomics());
    // Remote operations are counted by the gasnet-sys wrappers; phase
    // timestamps (TSC) are kept for successful steals.
    let ops = gasnet_sys::ops::counts();
    let t0 = tsc::now();
    let mut times = deque::ClaimTimes::default();
    let claimed = match deque::claim(&v, protocol, w.config.empty_check, tsc::now, &mut times) {
        Ok(claimed) => claimed,
        Err(Miss::Empty) => {
            c.update(|c| c.empty_check_aborts += 1);
            return Err(Outcome::Empty);
        }
        Err(Miss::ClaimFailed) => {
            c.update(|c| c.claim_failures += 1);
            return Err(Outcome::ClaimFailed);
        }
        Err(Miss::Lost) => return Err(Outcome::Lost),
    };
    let entry = claimed.entry;
    let t_entry = tsc::now();
    if !(entry.ctx as usize >= w.layout.stack_lo()
        && entry.top as usize <= w.layout.stack_top()
        && entry.ctx < entry.top)
    {
        crate::fatal::fatal(format_args!(
            "stole a malformed entry {entry:?} from rank {victim}: ranks disagree about the arena layout"
        ));
    }
    let len = (entry.top - entry.ctx) as usize;
    // The frames go straight to their address in our (empty) stack region,
    // through our segment's own mapping of it (the same pages as the arena
    // alias; on ibv, memory GASNet has registered, so no bounce buffer). The
    // victim does not reuse them before the release below.
    let dst = crate::arena::remote(g, me, entry.ctx as usize);
    // SAFETY: dst is our own segment's mapping of [ctx, top), which lies in
    // our stack region; the region is empty (we are in the scheduler, on its
    // own stack), so nothing else uses that memory.
    unsafe {
        g.get_raw(
            dst as *mut u8,
            victim,
            crate::arena::remote(g, victim, entry.ctx as usize),
            len,
        )
    };
    let t_copied = tsc::now();
    deque::release(&v, protocol, &claimed);
    let t_released = tsc::now();
    let ops = gasnet_sys::ops::counts().since(&ops);
    c.update(|c| {
        c.steal_empty_check_cycles += times.empty_checked - t0;
        c.steal_claim_cycles += times.claimed - times.empty_checked;
        c.steal_entry_cycles += t_entry - times.claimed;
        c.steal_transfer_cycles += t_copied - t_entry;
        c.steal_release_cycles += t_released - t_copied;
        c.steal_round_trips += ops.round_trips();
        c.steals_succeeded += 1;
        if across {
            c.steals_across_hosts += 1;
            c.steal_across_hosts_cycles += t_released - t0;
        } else {
            c.steals_within_host += 1;
            c.steal_within_host_cycles += t_released - t0;
        }
        c.frame_bytes_stolen += len as u64;
    });
    Ok(entry)
}
