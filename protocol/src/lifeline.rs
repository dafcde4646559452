//! The lifeline protocol's steps on its words, written once over [`Words`]:
//! the runtime runs them on the arena's control words (stores where a
//! rank's segment is mapped, Active Messages elsewhere; the protocol in
//! words is in `uni-threads`' lifeline module, steps 1–4), its model test on
//! in-process atomics with a scheduler that interleaves ranks between any
//! two word accesses, and the simulator on simulated ranks.
//!
//! **The claim**: a rank
//! never stays asleep while a lifeline buddy holds work it could steal.
//!
//! **Why it holds.** A sleeper `s` and its buddy `b`, both through SeqCst
//! accesses (one total order):
//! - `s` stores `QUIESCENT` in its sleep word *before* it writes its slot
//!   at `b` and raises `b`'s attention word ([`announce`]); any later
//!   [`wake`](Words::wake) sets the word back to `AWAKE`, and `s` reads the
//!   word before every wait ([`look`]), so a wake-up that lands after the
//!   announcement is never lost, whenever it lands;
//! - `b` clears its attention word with a swap *before* it reads its slots
//!   ([`serve_waiting`]): if `b`'s swap came before `s`'s raise in the
//!   word's order, the raise stays in the word and `b`'s next spawn serves
//!   `s`; if after, the swap read the raise (a release store after the
//!   slot write; the swap acquires), so `b`'s read of the slot sees `s`. A
//!   registration `b` cannot serve (no work) raises `b`'s word again, so it
//!   is served at the first spawn that has work;
//! - work `b` pushed before its look at the word, under a task that neither
//!   spawns nor polls, is not offered to `s` by `b`: `s` tries one steal
//!   from each buddy after announcing (step 3), and in shared memory it
//!   looks at its buddies' deques after every wait ([`buddy_to_steal_from`]).
//!   Across the network the entry waits for `b`'s next spawn or poll (what
//!   any message to `b` waits for there).

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

use crate::mutation::{active, Mutation};

mod graph;

pub use graph::{default_dimensions, graph, incoming};

/// The most lifeline dimensions (slots per rank).
pub const MAX_LIFELINES: usize = 32;

/// A sleep word's value: the rank is awake (or was woken for work).
pub const AWAKE: u64 = 0;
/// A sleep word's value: the rank announced itself and sleeps.
pub const QUIESCENT: u64 = 1;
/// A sleep word's value: a message waits for the sleeping rank to poll.
pub const SERVE: u64 = 2;

/// A word of the rank's own lifeline state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnWord {
    /// [`AWAKE`], [`QUIESCENT`] or [`SERVE`]: the word the rank sleeps on.
    Sleep,
    /// The rank (plus one) that woke this one and the low bits of its TSC
    /// at the wake-up ([`WAKER_BITS`]); 0: none since read.
    WokenBy,
    /// The rank (plus one) waiting on this rank's lifeline of that
    /// dimension; 0: none.
    Slot(u32),
}

/// Low bits of a `WokenBy` word: the waker's rank plus one (the high bits
/// hold the low bits of the waker's TSC at the wake-up).
pub const WAKER_BITS: u32 = 20;

/// The waker field of a `WokenBy` word: its rank plus one (0: none).
pub fn waker_field(word: u64) -> u64 {
    word & ((1 << WAKER_BITS) - 1)
}

/// The words one rank's protocol steps touch.
///
/// Each step reads or writes the word that one call of [`Words::own`]
/// returns exactly once (a model scheduler runs other ranks between
/// calls); every access to those words is SeqCst. The implementations'
/// raises of an attention word are release operations (a store of
/// `REQUEST` by `am_fad::raise_attention`, a `fetch_or` by
/// `Attention::raise_own`) that the owner's swap acquires.
pub trait Words {
    /// One of this rank's words.
    fn own(&self, word: OwnWord) -> &AtomicU64;
    /// Puts `me` in `buddy`'s slot `d`, then raises `buddy`'s attention
    /// word: two stores where `buddy`'s segment is mapped, else one
    /// message whose handler does [`accept_registration`].
    fn register_at(&self, buddy: u32, d: u32, me: u32);
    /// Wakes `thief` for work, naming this rank by `tag`: stores its
    /// woken-by word, then sets its sleep word `AWAKE` (and wakes its futex
    /// if it slept), or one message whose handler does [`accept_wake`].
    fn wake(&self, thief: u32, tag: u64);
    /// Raises this rank's own attention word, keeping the owner's bits
    /// (its next spawn looks at its slots).
    fn raise_own_attention(&self);
    /// Whether `buddy` is awake and holds a claimable entry, where one
    /// look tells (its segment is mapped here); false elsewhere.
    fn buddy_has_work(&self, buddy: u32) -> bool;
}

/// Steps 1–2 of quiescing: from here on a wake-up cannot be lost.
pub fn announce(words: &impl Words, me: u32, buddies: &[(u32, u32)]) {
    words.own(OwnWord::Sleep).store(QUIESCENT, SeqCst);
    for &(d, b) in buddies {
        words.register_at(b, d, me);
    }
}

/// The end of a sleep, whatever ended it.
pub fn awake(words: &impl Words) {
    words.own(OwnWord::Sleep).store(AWAKE, SeqCst);
}

/// A registration of `source` for slot `d`, arrived by message (the
/// caller checked that `source` owns the slot): what
/// [`Words::register_at`]'s stores do where the segment is mapped.
pub fn accept_registration(words: &impl Words, d: u32, source: u32) {
    words.own(OwnWord::Slot(d)).store(source as u64 + 1, SeqCst);
    words.raise_own_attention();
}

/// A wake-up arrived by message: what [`Words::wake`]'s stores do where
/// the segment is mapped.
pub fn accept_wake(words: &impl Words, tag: u64) {
    words.own(OwnWord::WokenBy).store(tag, SeqCst);
    words.own(OwnWord::Sleep).store(AWAKE, SeqCst);
}

/// What [`serve_waiting`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Served {
    /// Ranks woken.
    pub woken: u32,
    /// Some rank waits but could not be served (no work to offer): the
    /// caller raises its own word to look again at its next spawn.
    pub pending: bool,
}

/// This rank's attention word was raised by another rank (and cleared by
/// the caller's swap): wake every rank waiting on its lifelines when it has
/// work to offer (`can_serve`: it is about to push a continuation, or its
/// deque holds entries). `slots`: the dimensions whose lifelines end at
/// this rank (the others' slots stay empty); `tag` names this rank in a
/// wake-up.
pub fn serve_waiting(words: &impl Words, slots: &[u32], ranks: u32, can_serve: bool, tag: impl Fn() -> u64) -> Served {
    let mut served = Served::default();
    for &d in slots {
        if words.own(OwnWord::Slot(d)).load(SeqCst) == 0 {
            continue;
        }
        if !can_serve {
            served.pending = true;
            continue;
        }
        let v = words.own(OwnWord::Slot(d)).swap(0, SeqCst);
        let Some(thief) = v.checked_sub(1).map(|r| r as u32).filter(|&r| r < ranks) else {
            continue;
        };
        if active(Mutation::WakeDropped) {
            continue;
        }
        words.wake(thief, tag());
        served.woken += 1;
    }
    served
}

/// What a sleeping rank's word says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Look {
    /// Woken for work.
    Awake,
    /// A message waits: poll once, then [`served`].
    Serve,
    /// Sleep on.
    Asleep,
}

/// Step 4's look at the sleep word, before every wait.
pub fn look(words: &impl Words) -> Look {
    match words.own(OwnWord::Sleep).load(SeqCst) {
        AWAKE => Look::Awake,
        SERVE => Look::Serve,
        _ => Look::Asleep,
    }
}

/// Polled for [`Look::Serve`]: sleep on (unless woken meanwhile).
pub fn served(words: &impl Words) {
    let _ = words
        .own(OwnWord::Sleep)
        .compare_exchange(SERVE, QUIESCENT, SeqCst, SeqCst);
}

/// After a wait in shared memory, still asleep: a buddy with work that
/// nobody will wake this rank for (see the module docs), recorded as its
/// waker so that it is stolen from first.
pub fn buddy_to_steal_from(words: &impl Words, buddies: &[(u32, u32)]) -> Option<u32> {
    if words.own(OwnWord::Sleep).load(SeqCst) != QUIESCENT {
        return None;
    }
    let b = buddies.iter().map(|&(_, b)| b).find(|&b| words.buddy_has_work(b))?;
    words.own(OwnWord::WokenBy).store(b as u64 + 1, SeqCst);
    Some(b)
}

/// The rank that woke this one, once: another rank of the job, stolen
/// from first.
pub fn take_waker(words: &impl Words, me: u32, ranks: u32) -> Option<u32> {
    if words.own(OwnWord::WokenBy).load(SeqCst) == 0 {
        return None;
    }
    let v = words.own(OwnWord::WokenBy).swap(0, SeqCst);
    let waker = waker_field(v) as u32;
    waker.checked_sub(1).filter(|&r| r < ranks && r != me)
}
