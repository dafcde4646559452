//! Lifelines (Saraswat et al., PPoPP'11) for continuation stealing: an idle
//! rank stops stealing and sleeps, and wakes when work appears near it.
//!
//! **The graph.** Ranks are numbers of `z` digits in radix `h`, the smallest
//! with `h^z ≥ P` (the paper's cyclic hypercube). A rank's lifeline of
//! dimension `d` goes to the next rank of the cycle it lies on in that
//! dimension (digit `d` incremented modulo `h`, skipping numbers that are
//! not ranks); a dimension whose cycle holds only the rank itself has no
//! lifeline. In each dimension every rank has exactly one predecessor, so
//! a lifeline of dimension `d` ending at rank `b` owns `b`'s slot `d`
//! ([`crate::arena::LIFELINE_SLOTS`]): registrations never collide.
//!
//! **A thief** (its uni-address region empty, so it holds no work) that
//! failed `w` steal attempts in a row quiesces:
//!
//! 1. it stores `QUIESCENT` in its own sleep word (SeqCst) — from here on a
//!    wake-up cannot be lost: every waker sets the word back to `AWAKE`;
//! 2. it registers on each lifeline buddy `b` of dimension `d`: writes its
//!    rank into `b`'s slot `d`, then raises `b`'s attention word (a request
//!    to expose work: the split protocol's expose and the wake-up below);
//! 3. it tries one steal from each buddy (work may have appeared there
//!    before the registration was seen) and leaves on success;
//! 4. it sleeps until its sleep word is `AWAKE`, the run is finished, or a
//!    thread suspended here can resume; while it sleeps it polls GASNet at
//!    most [`SLEEP_PERIOD`] apart (Active Messages: remote frees, the
//!    barrier, `am` mode's fetch-and-adds, a dead peer's exit). In shared
//!    memory it also looks at its buddies' deques then (one load each): an
//!    entry pushed in the instant between a buddy's look at its attention
//!    word and the registration, under a task that neither spawns nor
//!    polls, would otherwise never be offered to it.
//!
//! **A worker with work** sees registrations through its attention word,
//! which it already loads at every spawn: nobody waiting costs nothing more.
//! When the word was raised it scans its slots (after the swap that clears
//! the word, so a registration whose raise it saw is in a slot), and for
//! each waiting rank clears the slot, writes its own rank into the waiting
//! rank's `WOKEN_BY` word and wakes it — at a spawn (it is about to push a
//! continuation) or when its deque holds entries. A woken rank steals from
//! its waker first; the waker pushes the work (the steal stays one-sided).
//!
//! Across the network (a rank whose segment is not mapped here) the
//! registration and the wake-up are Active Messages
//! ([`LIFELINE_REGISTER`], [`LIFELINE_WAKE`]) whose handlers do the same
//! stores: the sender does not wait for them (a put would block until the
//! target polls — a sleeping rank every [`SLEEP_PERIOD`], a busy root maybe
//! never before its next spawn).
//!
//! **Waiting**, the cheapest correct way per conduit:
//! - every rank in one shared-memory neighbourhood (smp; udp and mpi with
//!   PSHM): `futex(FUTEX_WAIT)` on the sleep word in the shared segment,
//!   with a [`SLEEP_PERIOD`] timeout for what arrives by message; a waker
//!   swaps the word and calls `FUTEX_WAKE` only when the sleeper slept
//!   (no syscall otherwise). `am` mode's fetch-and-add requester wakes a
//!   sleeping target to serve it (`am_fad::sleep::Wake::Service`).
//! - across the network (udp `--real-udp`, mpi without shared memory, ibv):
//!   a wake-up is a put that arrives only when the sleeper polls, and
//!   GASNet offers no portable blocking poll; the sleeper polls on a
//!   back-off schedule from [`FIRST_BACKOFF`] to [`SLEEP_PERIOD`].
//!
//! Thieves skip victims that sleep where that costs a load (shared memory):
//! a sleeping rank has no work (counted as `steal_attempts_saved`).
//!
//! A sleeping rank still serves its memory: across the network another
//! rank's get, put or atomic on it completes only at its polls, so a rank
//! whose operations waited for them asks it to poll without sleeping for a
//! while ([`keep_polling`], [`KEEP_POLLING`]).
//!
//! The steps on the words, with the argument that no wake-up is lost:
//! `uat_protocol::lifeline`; their model test: `tests.rs`.

pub(crate) mod keep_polling;
pub(crate) use uat_protocol::lifeline as protocol;
#[cfg(test)]
mod tests;

pub(crate) use protocol::{default_dimensions, graph, incoming};
use protocol::{OwnWord, Words};

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

pub(crate) use keep_polling::{KeepPolling, KEEP_POLLING};

use am_fad::sleep::AWAKE;
use gasnet_sys::am::{join_u64, Arg, Handler, Token};
use gasnet_sys::wait::Patience;

use crate::arena::{ControlWord, LIFELINE_SLOTS, SLEEP_WORD, WOKEN_BY_WORD};
pub(crate) use protocol::MAX_LIFELINES;

/// The longest a sleeping rank goes without polling GASNet: the latency
/// bound for what reaches it only by message.
pub(crate) const SLEEP_PERIOD: Duration = Duration::from_millis(1);
/// The same while a thread suspended here waits for a child elsewhere (its
/// completion is not signalled: the rank looks).
pub(crate) const SLEEP_PERIOD_WITH_WAITERS: Duration = Duration::from_micros(100);
/// The first sleep of the back-off across the network.
pub(crate) const FIRST_BACKOFF: Duration = Duration::from_micros(20);
/// How long a thief spins on a victim's answer before it sleeps between
/// polls: many round trips of any conduit (a GET over UDP on loopback takes
/// ~12 µs), so a victim that polls answers within it and a steal costs what
/// it did.
pub(crate) const THIEF_SPIN: Duration = Duration::from_micros(200);
/// How a thief waits for a victim's answer with lifelines on (the steal
/// path's remote operations, [`gasnet_sys::wait`]): a victim that computes
/// without polling answers only at its next poll, perhaps seconds later;
/// the thief sleeps meanwhile, polling on the sleep's back-off schedule.
pub(crate) const THIEF_PATIENCE: Patience = Patience {
    spin: THIEF_SPIN,
    first_sleep: FIRST_BACKOFF,
    max_sleep: SLEEP_PERIOD,
};

pub(crate) use gasnet_sys::am::ids::{LIFELINE_REGISTER, LIFELINE_WAKE};

/// The handlers of the lifeline messages (registered at start-up).
pub(crate) fn handlers() -> [Handler; 3] {
    let register: for<'a> extern "C" fn(Token<'a>, Arg) = on_register;
    let wake: for<'a> extern "C" fn(Token<'a>, Arg, Arg) = on_wake;
    let keep_polling: for<'a> extern "C" fn(Token<'a>, Arg) = keep_polling::on_keep_polling;
    [
        Handler::new(LIFELINE_REGISTER, register),
        Handler::new(LIFELINE_WAKE, wake),
        Handler::new(KEEP_POLLING, keep_polling),
    ]
}

/// Slot `d`'s owner plus one (0: no lifeline of dimension `d` ends at this
/// rank): the rank whose lifeline of that dimension ends here, the only
/// one the registration handler accepts for the slot. Set by
/// [`Lifelines::new`], before start's final barrier (peers register only
/// after it), and read by the handler.
static SLOT_OWNERS: [AtomicU32; MAX_LIFELINES] = [const { AtomicU32::new(0) }; MAX_LIFELINES];

/// Refused LIFELINE_REGISTER and LIFELINE_WAKE messages (the first few
/// reported in full).
static REFUSED_REGISTRATIONS: am_fad::refusals::Refusals = am_fad::refusals::Refusals::new("lifeline registrations");
static REFUSED_WAKES: am_fad::refusals::Refusals = am_fad::refusals::Refusals::new("lifeline wake-ups");

extern "C" fn on_register(token: Token, dim: Arg) {
    let owner = SLOT_OWNERS.get(dim as usize).map_or(0, |o| o.load(Ordering::Acquire));
    if owner != token.source() + 1 {
        REFUSED_REGISTRATIONS.refuse(format_args!(
            "refused a lifeline registration from rank {} for dimension {dim}: {}",
            token.source(),
            match owner {
                0 => "no lifeline of that dimension ends here".to_string(),
                o => format!("that slot belongs to rank {}", o - 1),
            }
        ));
        return;
    }
    protocol::accept_registration(&ThisRank, dim, token.source());
}

extern "C" fn on_wake(token: Token, lo: Arg, hi: Arg) {
    let tag = join_u64(lo, hi);
    if protocol::waker_field(tag) != token.source() as u64 + 1 {
        REFUSED_WAKES.refuse(format_args!(
            "refused a lifeline wake-up from rank {} naming another waker ({tag:#x})",
            token.source()
        ));
        return;
    }
    protocol::accept_wake(&ThisRank, tag);
}

/// This rank's lifeline state (worker thread only).
pub(crate) struct Lifelines {
    pub(crate) on: bool,
    /// Failed steal attempts in a row before quiescing (`w`).
    pub(crate) attempts: u32,
    pub(crate) buddies: Vec<(u32, u32)>,
    /// The dimensions whose lifelines end here (the slots in use).
    pub(crate) slots: Vec<u32>,
    /// Steal attempts failed since the last success or wake-up.
    pub(crate) failures: Cell<u32>,
    /// Every rank shares memory with this one: sleep on a futex.
    pub(crate) futex: bool,
    /// This host's ranks (a waker's TSC means something only there).
    pub(crate) host: Vec<bool>,
    /// Asking ranks whose memory answers slowly to keep polling.
    pub(crate) keep_polling: KeepPolling,
}

/// A word of this rank's control page.
pub(crate) fn own(word: ControlWord) -> &'static AtomicU64 {
    // SAFETY: every caller runs after Runtime::start mapped the arena: the
    // worker's Lifelines is made after the mapping, and the message
    // handlers run only for messages that peers send after start's final
    // barrier. Control words are accessed whole and atomically by everyone.
    unsafe { word.local() }
}

pub(crate) fn slot(d: u32) -> ControlWord {
    ControlWord::at(LIFELINE_SLOTS.offset() + 8 * d as usize)
}

impl Lifelines {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        on: bool,
        keep_polling: Duration,
        attempts: u32,
        dims: u32,
        rank: u32,
        ranks: u32,
        all_shared: bool,
        host_ranks: &[u32],
    ) -> Lifelines {
        let dims = if on { dims } else { 0 };
        // Release: the handler may run on the polling thread (its Acquire
        // load; peers register only after start's barrier, which follows).
        for owner in &SLOT_OWNERS {
            owner.store(0, Ordering::Release);
        }
        let incoming = incoming(rank, ranks, dims);
        for &(d, r) in &incoming {
            SLOT_OWNERS[d as usize].store(r + 1, Ordering::Release);
        }
        let mut host = vec![false; ranks as usize];
        for &r in host_ranks {
            host[r as usize] = true;
        }
        let keep_polling = KeepPolling::new(on && ranks > 1, keep_polling, ranks);
        Lifelines {
            on: on && ranks > 1,
            attempts: attempts.max(1),
            buddies: graph(rank, ranks, dims),
            slots: incoming.iter().map(|&(d, _)| d).collect(),
            failures: Cell::new(0),
            futex: all_shared,
            host,
            keep_polling,
        }
    }

    pub(crate) fn on(&self) -> bool {
        self.on
    }

    /// Clears this rank's words (the start of a run, before its barrier).
    pub(crate) fn reset(&self) {
        own(SLEEP_WORD).store(AWAKE, Ordering::SeqCst);
        own(WOKEN_BY_WORD).store(0, Ordering::SeqCst);
        for d in 0..MAX_LIFELINES as u32 {
            own(slot(d)).store(0, Ordering::SeqCst);
        }
        self.failures.set(0);
    }

    /// A steal attempt failed: whether it is time to quiesce.
    #[inline]
    pub(crate) fn failed_attempt(&self) -> bool {
        let n = self.failures.get() + 1;
        self.failures.set(n);
        self.on && n >= self.attempts
    }

    /// A steal succeeded.
    #[inline]
    pub(crate) fn stole(&self) {
        self.failures.set(0);
    }
}

/// This rank's words, for a message handler (which may run on the polling
/// thread): its own words only.
pub(crate) struct ThisRank;

impl Words for ThisRank {
    fn own(&self, word: OwnWord) -> &AtomicU64 {
        own(control_word(word))
    }
    fn register_at(&self, _: u32, _: u32, _: u32) {
        unreachable!("a handler does not register")
    }
    fn wake(&self, _: u32, _: u64) {
        unreachable!("a handler does not wake")
    }
    fn raise_own_attention(&self) {
        crate::attention::Attention::raise_own();
    }
    fn buddy_has_work(&self, _: u32) -> bool {
        false
    }
}

pub(crate) fn control_word(word: OwnWord) -> ControlWord {
    match word {
        OwnWord::Sleep => SLEEP_WORD,
        OwnWord::WokenBy => WOKEN_BY_WORD,
        OwnWord::Slot(d) => slot(d),
    }
}
