//! The work-stealing deque of ready continuations: the layout of its words,
//! the owner's push and pop, a thief's claim and release, and the two
//! protocols that can run them (run-time switch `UAT_STEAL_PROTOCOL`).
//!
//! Entries are parents whose child is running: the newest at `tail - 1`
//! (lowest stack addresses), the oldest at the bottom. The owner pushes and
//! pops at the tail; thieves (other ranks, by RMA and remote atomics) take
//! the oldest entry. An entry is `{ctx, top}`: its frames are `[ctx, top)`
//! of the uni-address stack region.
//!
//! # The split protocol (default)
//!
//! After Lace (van Dijk & van de Pol: a split deque whose owner works on a
//! private part) and Itoyori (a thief claims an entry with one remote
//! fetch-and-add). One atomic word packs `head` (low [`HEAD_BITS`] bits) and
//! `split` (the bits above): entries `[head, split)` are *shared* (thieves
//! may claim them), `[split, tail)` are *private* (only the owner touches
//! them). The owner keeps its own copy of `split`; only it moves `split`.
//!
//! Owner:
//! 1. **push**: write the entry at `tail`, then `tail + 1`. No atomics —
//!    except for the bottom entry (`tail` was 0), which is exposed at once
//!    (step 4): the oldest continuation is the most work, and a thief can
//!    take it even while the owner runs a long task that neither spawns
//!    nor polls (which it could not, had it to wait for the owner to expose
//!    it). One atomic store (step 4, `s == 0`) each time the deque fills
//!    from empty, and one fetch-and-add when that entry is popped back
//!    (step 3): in a divide-and-conquer run a few per run (the root
//!    thread's spawns), not per spawn. In a one-rank job there is no thief
//!    ([`Thieves::None`]) and the bottom entry stays private too.
//! 2. **pop**, while `tail > split` (the newest entry is private): `tail - 1`
//!    and take it. No atomics, no fence: no thief can claim an index at or
//!    above `split`, and only the owner moves `split`.
//! 3. **pop** when `tail == split > 0` (the newest entry is shared): one
//!    atomic fetch-and-add that lowers `split` by one and returns the old
//!    `(head, split) = (h, s)`. If `h < s`, entry `s - 1` was not claimed and
//!    now is private: take it. Otherwise every entry is claimed: wait until
//!    each thief has copied its frames (its entry's `top` is zero), then
//!    reset `(head, split) = (0, 0)`, `tail = 0`: the deque is empty.
//! 4. **expose**, when a thief has asked (its request raised the owner's
//!    attention word, which the owner checks at every spawn): if an entry is
//!    private, compare-and-swap `(h, s)` into `(min(h, s), s + 1)`, with
//!    release ordering (the entry's write happens before). One entry per
//!    request: the oldest private one, the biggest piece of work. When
//!    `s == 0` (the bottom push, or a request to a rank whose entries are
//!    all private from the bottom) the new word is `(0, 1)` whatever `h` is,
//!    so an atomic store (release) writes it: the claims it overwrites saw
//!    `split == 0` and failed, and failed claims are only counted by the
//!    excess of `head` over `split`, which the store resets as the
//!    compare-and-swap would.
//!
//! Thief:
//! 1. (empty check, optional) read `(h, s)`; if `h >= s` nothing is shared:
//!    raise the owner's attention (a request to expose) and give up.
//! 2. **claim**: remote fetch-and-add of 1 on the packed word, returning
//!    `(h, s)`. If `h < s` entry `h` is this thief's; otherwise give up
//!    (and raise the owner's attention). A failed claim is not undone.
//! 3. read the entry (one GET) and its frames (one GET, into the thief's own
//!    stack region at the same address).
//! 4. **release**: zero the entry's `top` (a non-blocking put): the owner
//!    may now reuse the frames' stack region.
//!
//! Round trips on a successful steal's critical path: empty check, claim,
//! entry, frames — 4 (3 without the empty check); the release is not waited
//! for.
//!
//! **Why an entry is taken once.** All changes to the packed word are
//! atomic and totally ordered. Between two owner operations `split` is
//! fixed and thieves only add 1 to `head`, so the claims succeed for the
//! indices `h, h + 1, ..., s - 1` in turn and every later one fails. Hence
//! the invariant: *if `head <= split` the claimed entries are those below
//! `head`; if `head > split` every entry below `split` is claimed* (the
//! excess counts failed claims). Expose keeps it (it sets `head` to
//! `min(h, s)`, which names the claimed entries exactly, before growing
//! `split`); so does step 3 (`h < s`: nothing at `s - 1` is claimed and no
//! thief can claim it once `split` is `s - 1`; `h >= s`: all entries are
//! claimed). The owner's fast pops touch only indices `>= split`, which no
//! claim returns. A failed claim is never undone, so an index cannot be
//! handed out twice (undoing with `-1` could hand the same index to a later
//! thief after an expose). `head` has 40 bits: 10^12 failed claims between
//! two exposes.
//!
//! **Frames before reuse.** The owner reuses stack memory only after the
//! deque empties (step 3), and waits there for every claimed entry's
//! release; a claimed entry's slot is not rewritten before that either.
//!
//! # The paper's protocol (`UAT_STEAL_PROTOCOL=paper`)
//!
//! THE (Frigo et al., PLDI'98) as the IPSJ 2016 paper runs it: `head` and
//! `tail` words and a lock taken by remote fetch-and-add. The owner's pop
//! publishes `tail - 1`, fences, reads `head`; on a possible conflict it
//! takes the lock. A thief locks, reads head and tail, writes `head + 1`,
//! fences, re-reads `tail` (rolling back if they crossed), reads the entry
//! and the frames, unlocks: 7 round trips and an unlock.
//!
//! # Memory orderings
//!
//! In every fetch-and-add mode the packed word and the lock are *atomic
//! words* (`am_fad::DequeAtomics`): `native` mode reaches them only
//! through the GASNet-EX atomic domain (the owner too), the AM modes by CPU
//! atomics at the owner (the request handler included). Their operations
//! have acquire-release ordering, so a thief's claim (acquire) sees the
//! entry written before the expose (release); a thief's reads of an entry
//! and frames complete before its release is issued.

use std::cell::Cell;
use std::sync::atomic::{fence, AtomicU64, Ordering};

use crate::mutation::{active, Mutation};

/// A suspended parent: its context record and the top of its frames.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The address of the parent's context record (where its frames start).
    pub ctx: u64,
    /// The end of its frames; a thief zeroes it once it has copied them.
    pub top: u64,
}

/// Bytes of one entry.
pub const ENTRY_BYTES: usize = std::mem::size_of::<Entry>();

/// Bits of `head` in the packed word; `split` has the rest.
pub const HEAD_BITS: u32 = 40;
const HEAD_MASK: u64 = (1 << HEAD_BITS) - 1;
/// The largest deque capacity the packed word can index.
pub const MAX_CAPACITY: usize = (1 << (64 - HEAD_BITS)) - 1;
/// Added to the packed word: `split - 1` (two's complement).
const SPLIT_DECREMENT: u64 = (1u64 << HEAD_BITS).wrapping_neg();

/// `(head, split)` of a packed word.
#[inline]
pub fn unpack(word: u64) -> (u64, u64) {
    (word & HEAD_MASK, word >> HEAD_BITS)
}

/// The packed word of `(head, split)`.
#[inline]
pub fn pack(head: u64, split: u64) -> u64 {
    debug_assert!(head <= HEAD_MASK && split <= MAX_CAPACITY as u64);
    head | (split << HEAD_BITS)
}

/// How thieves and owners share a deque (`UAT_STEAL_PROTOCOL`; the same on
/// every rank). This module states both protocols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StealProtocol {
    /// Private/shared split, claims by one fetch-and-add (the default).
    Split,
    /// The IPSJ 2016 paper's THE protocol with a remote lock.
    Paper,
}

impl StealProtocol {
    /// The name in `UAT_STEAL_PROTOCOL`, `--steal-protocol` and the JSON.
    pub const fn name(self) -> &'static str {
        match self {
            StealProtocol::Split => "split",
            StealProtocol::Paper => "paper",
        }
    }

    /// The protocol named `text` (`split` or `paper`).
    pub fn parse(text: &str) -> Option<StealProtocol> {
        match text {
            "split" => Some(StealProtocol::Split),
            "paper" => Some(StealProtocol::Paper),
            _ => None,
        }
    }
}

/// Which protocol the owner and the thieves follow (short name).
pub use StealProtocol as Protocol;

// ---------------------------------------------------------------------------
// The words
// ---------------------------------------------------------------------------

/// The owner's access to its own deque's words.
pub trait OwnWords {
    /// The `tail` word (plain memory).
    fn tail(&self) -> &AtomicU64;
    /// The paper's `head` word (plain memory).
    fn head(&self) -> &AtomicU64;
    /// Slot `i` of the entries (plain memory).
    fn slot(&self, i: u64) -> *mut Entry;
    /// Atomic fetch-and-add on the packed word, acquire-release.
    fn split_fetch_add(&self, value: u64) -> u64;
    /// Atomic load of the packed word (acquire).
    fn split_load(&self) -> u64;
    /// Atomic compare-and-swap of the packed word (acquire-release); returns
    /// the word it found.
    fn split_compare_swap(&self, current: u64, new: u64) -> u64;
    /// Atomic store of the packed word (release).
    fn split_store(&self, value: u64);
    /// Takes the paper's lock (spins until it is free).
    fn lock(&self);
    /// Releases the paper's lock.
    fn unlock(&self);
    /// Called while the owner waits for thieves (serve the network).
    fn wait(&self);
}

/// A thief's access to one victim's deque words.
pub trait VictimWords {
    /// Reads the victim's packed word (the empty check).
    fn split_load(&self) -> u64;
    /// Remote fetch-and-add on the victim's packed word (the claim).
    fn split_fetch_add(&self, value: u64) -> u64;
    /// Asks the victim to expose work (raises its attention word).
    fn request(&self);
    /// Reads the victim's entry `i`.
    fn entry(&self, i: u64) -> Entry;
    /// Tells the victim the frames of entry `i` are copied.
    fn release_entry(&self, i: u64);
    /// One remote attempt at the victim's lock.
    fn try_lock(&self) -> bool;
    /// Releases the victim's lock.
    fn unlock(&self);
    /// `(head, tail)` in one read.
    fn head_and_tail(&self) -> (u64, u64);
    /// Writes the victim's `head` (paper).
    fn put_head(&self, head: u64);
    /// Reads the victim's `tail` (paper).
    fn get_tail(&self) -> u64;
    /// The victim answered the attempt's first operation: the rest of the
    /// attempt goes at full speed (a thief that may hold a claim or the
    /// victim's lock must not sleep; see `gasnet_sys::wait`).
    fn answered(&self) {}
}

// ---------------------------------------------------------------------------
// The owner
// ---------------------------------------------------------------------------

/// Whether other processes can steal from this deque at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Thieves {
    /// Other ranks exist: the split protocol shares the bottom entry at its
    /// push (owner, 1.).
    Possible,
    /// A one-rank job: nothing is ever claimed, so nothing is shared unless
    /// asked (and no one asks). Every push and pop is private.
    None,
}

/// The owner's view of its deque.
pub struct Deque<W> {
    words: W,
    capacity: u64,
    protocol: Protocol,
    thieves: Thieves,
    /// The owner's copy of `split`: pops above it need no atomics. Under the
    /// paper's protocol `u64::MAX`, so that every pop takes its THE path.
    split: Cell<u64>,
}

impl<W: OwnWords> Deque<W> {
    /// A deque over `words`, which must be zeroed (empty).
    pub fn new(words: W, capacity: usize, protocol: Protocol, thieves: Thieves) -> Deque<W> {
        assert!(capacity <= MAX_CAPACITY, "deque capacity above {MAX_CAPACITY}");
        Deque {
            words,
            capacity: capacity as u64,
            protocol,
            thieves,
            split: Cell::new(match protocol {
                Protocol::Split => 0,
                Protocol::Paper => u64::MAX,
            }),
        }
    }

    /// The words the deque works on.
    pub fn words(&self) -> &W {
        &self.words
    }

    /// The protocol the owner follows.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// Entries the deque can hold.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Pushes the newest entry. Returns false when the deque is full.
    #[inline(always)]
    #[must_use]
    pub fn push(&self, e: Entry) -> bool {
        self.push_at(self.words.tail().load(Ordering::Relaxed), e)
    }

    /// Pushes the continuation at `ctx` of the running thread when the
    /// deque is not empty: the newest entry is then the running thread's
    /// parent, whose record is where the thread's frames end
    /// (`Worker::thread_top`), so that `ctx` is the new entry's `top`. One
    /// load of `tail` for both. Returns false when the deque is full.
    ///
    /// # Safety
    /// The deque must not be empty (`!is_empty()`).
    #[inline(always)]
    #[must_use]
    pub unsafe fn push_above_newest(&self, ctx: u64) -> bool {
        let t = self.words.tail().load(Ordering::Relaxed);
        debug_assert!(t > 0, "push_above_newest on an empty deque");
        // SAFETY: t > 0 (the caller's contract): slot t-1 holds a pushed
        // entry.
        let top = unsafe { self.slot_ctx(t - 1) };
        self.push_at(t, Entry { ctx, top })
    }

    /// Writes `e` to slot `t` (the current tail) and publishes it.
    #[inline(always)]
    fn push_at(&self, t: u64, e: Entry) -> bool {
        if t >= self.capacity {
            return false;
        }
        // SAFETY: t < capacity; slot t is the owner's until it is exposed
        // (split) or published by tail (paper).
        unsafe { self.words.slot(t).write(e) };
        // Release: a paper thief that sees the new tail sees the entry.
        self.words.tail().store(t + 1, Ordering::Release);
        true
    }

    /// Pushes the bottom entry (the deque is empty), which the split
    /// protocol shares at once (1.) where thieves are possible. Returns
    /// false when the deque is full.
    #[must_use]
    pub fn push_bottom(&self, e: Entry) -> bool {
        debug_assert!(self.is_empty());
        if !self.push(e) {
            return false;
        }
        if self.thieves == Thieves::Possible {
            self.expose();
        }
        true
    }

    /// Pops the newest entry, unless a thief took it (or the deque is empty).
    #[inline(always)]
    pub fn pop(&self) -> Option<Entry> {
        let t = self.words.tail().load(Ordering::Relaxed);
        if t > self.split.get() {
            // Private: no thief can claim index t - 1 (split protocol, 2.).
            self.words.tail().store(t - 1, Ordering::Relaxed);
            // SAFETY: a slot the owner pushed and still owns.
            return Some(unsafe { self.words.slot(t - 1).read() });
        }
        self.pop_shared(t)
    }

    #[inline(never)]
    fn pop_shared(&self, t: u64) -> Option<Entry> {
        if t == 0 {
            return None;
        }
        match self.protocol {
            Protocol::Split => self.pop_split(t),
            Protocol::Paper => self.pop_paper(t),
        }
    }

    /// Split protocol, 3.: the newest entry is shared.
    fn pop_split(&self, t: u64) -> Option<Entry> {
        debug_assert_eq!(t, self.split.get());
        let (h, s) = unpack(self.words.split_fetch_add(SPLIT_DECREMENT));
        debug_assert_eq!(s, t, "only the owner moves split");
        if h < s {
            self.split.set(s - 1);
            self.words.tail().store(s - 1, Ordering::Relaxed);
            // SAFETY: unclaimed (h < s), and private again.
            return Some(unsafe { self.words.slot(s - 1).read() });
        }
        self.wait_released(s);
        self.words.split_store(0);
        self.split.set(0);
        self.words.tail().store(0, Ordering::Relaxed);
        None
    }

    /// Waits until the thieves of entries `0..claimed` have copied their
    /// frames (they zero the entry's `top`).
    fn wait_released(&self, claimed: u64) {
        for i in 0..claimed {
            // SAFETY: a pushed slot; thieves write its `top` word whole (an
            // aligned 8-byte put), so it is read atomically.
            let top = unsafe { &*(std::ptr::addr_of_mut!((*self.words.slot(i)).top) as *const AtomicU64) };
            while top.load(Ordering::Acquire) != 0 {
                self.words.wait();
                std::hint::spin_loop();
            }
        }
    }

    /// Split protocol, 4.: a thief asked for work. Exposes the oldest
    /// private entry; returns whether there was one.
    pub fn expose(&self) -> bool {
        let s = self.split.get();
        if self.protocol != Protocol::Split || self.words.tail().load(Ordering::Relaxed) <= s {
            return false;
        }
        if s == 0 {
            // The new word does not depend on the old one (min(h, 0) = 0):
            // one atomic store instead of a load and a compare-and-swap.
            // Claims before it saw split 0 and failed; their head
            // increments are dropped with them (step 4).
            self.words.split_store(pack(0, 1));
            self.split.set(1);
            return true;
        }
        let mut old = self.words.split_load();
        loop {
            let (h, s0) = unpack(old);
            debug_assert_eq!(s0, s, "only the owner moves split");
            let now = self.words.split_compare_swap(old, pack(h.min(s), s + 1));
            if now == old {
                break;
            }
            old = now;
        }
        self.split.set(s + 1);
        true
    }

    /// The paper's pop: publish `tail - 1`, fence, read `head`.
    fn pop_paper(&self, t: u64) -> Option<Entry> {
        // The swap is a full fence: tail is published before head is read.
        self.words.tail().swap(t - 1, Ordering::SeqCst);
        let h = self.words.head().load(Ordering::SeqCst);
        if h < t {
            // No thief got past head == t-1 before we published tail: one
            // that increments head now will see our tail and roll back.
            // SAFETY: slot t-1 was pushed by us and is ours (see above).
            return Some(unsafe { self.words.slot(t - 1).read() });
        }
        // A thief may be taking the same last entry: decide under the lock;
        // reset the indices when the deque is empty.
        self.words.tail().store(t, Ordering::SeqCst);
        self.words.lock();
        let h = self.words.head().load(Ordering::SeqCst);
        let result = if h < t {
            self.words.tail().store(t - 1, Ordering::SeqCst);
            // SAFETY: under the lock no thief moves head; slot t-1 is ours.
            Some(unsafe { self.words.slot(t - 1).read() })
        } else {
            self.words.head().store(0, Ordering::SeqCst);
            self.words.tail().store(0, Ordering::SeqCst);
            None
        };
        self.words.unlock();
        result
    }

    /// The newest entry's `ctx`, if any, stolen or not (its frames are in
    /// place or being copied: either way nothing may overwrite them).
    #[inline(always)]
    pub fn newest_ctx(&self) -> Option<u64> {
        let t = self.words.tail().load(Ordering::Relaxed);
        // SAFETY: t > 0: slot t-1 is a pushed entry.
        (t > 0).then(|| unsafe { self.slot_ctx(t - 1) })
    }

    /// The `ctx` of pushed slot `i`, read alone: thieves write only an
    /// entry's `top` (their release), never its `ctx`.
    ///
    /// # Safety
    /// `i` must be below `tail`.
    #[inline(always)]
    unsafe fn slot_ctx(&self, i: u64) -> u64 {
        // SAFETY: the caller's contract; the slot is in the arena.
        unsafe { std::ptr::addr_of!((*self.words.slot(i)).ctx).read() }
    }

    /// The number of entries pushed and not popped (stolen ones included).
    pub fn len(&self) -> u64 {
        self.words.tail().load(Ordering::Relaxed)
    }

    /// The index the newest push went to, if any (owner's view; the entry
    /// may have been stolen since).
    pub fn newest_pushed(&self) -> Option<u64> {
        self.words.tail().load(Ordering::Relaxed).checked_sub(1)
    }

    /// Whether entry `i` (pushed by the owner, who has not popped it since)
    /// has been stolen, for certain. Split: claims are final. Paper: a claim
    /// seen (head past `i`) can still be rolled back by a thief racing the
    /// owner's pop, but only while it holds the lock, so it is confirmed
    /// under the lock.
    pub fn stolen(&self, i: u64) -> bool {
        match self.protocol {
            Protocol::Split => {
                let (h, s) = unpack(self.words.split_load());
                h.min(s) > i
            }
            Protocol::Paper => {
                if self.words.head().load(Ordering::Acquire) <= i {
                    return false;
                }
                self.words.lock();
                let taken = self.words.head().load(Ordering::SeqCst) > i;
                self.words.unlock();
                taken
            }
        }
    }

    /// Whether no entry is in the deque (owner's view: after a pop found
    /// nothing, both protocols have reset to empty).
    pub fn is_empty(&self) -> bool {
        self.words.tail().load(Ordering::Relaxed) == 0
    }
}

// ---------------------------------------------------------------------------
// The thief
// ---------------------------------------------------------------------------

/// Why a steal attempt got nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// The empty check (or, in the paper's protocol, the read under the
    /// lock) found nothing to take.
    Empty,
    /// Another thief held the lock (paper) or the claim found nothing
    /// shared (split).
    ClaimFailed,
    /// The owner popped the entry first (paper's rollback).
    Lost,
}

/// An entry this thief now owns; [`release`] it once its frames are copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claimed {
    /// The entry's index in the victim's deque.
    pub index: u64,
    /// The entry as read from the victim.
    pub entry: Entry,
}

/// When the phases of a claim ended (from `now`): after the empty check,
/// after the claim.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClaimTimes {
    /// When the empty check ended (or the claim began, without one).
    pub empty_checked: u64,
    /// When the claim succeeded.
    pub claimed: u64,
}

/// Whether the victim has an entry a thief could claim now: the empty
/// check (one read), asking nothing of the victim. A claim starts with it;
/// a sleeping rank looks at its lifeline buddies with it.
pub fn has_shared<V: VictimWords>(v: &V, protocol: Protocol) -> bool {
    let shared = match protocol {
        Protocol::Split => {
            let (h, s) = unpack(v.split_load());
            h < s
        }
        Protocol::Paper => {
            let (h, t) = v.head_and_tail();
            h < t
        }
    };
    shared != active(Mutation::EmptyCheckInverted)
}

/// Claims the victim's oldest entry and reads it.
pub fn claim<V: VictimWords>(
    v: &V,
    protocol: Protocol,
    empty_check: bool,
    now: impl Fn() -> u64,
    times: &mut ClaimTimes,
) -> Result<Claimed, Miss> {
    match protocol {
        Protocol::Split => {
            if empty_check {
                let shared = has_shared(v, protocol);
                v.answered();
                if !shared {
                    v.request();
                    return Err(Miss::Empty);
                }
            }
            times.empty_checked = now();
            let word = if active(Mutation::ClaimSkipsFetchAdd) {
                v.split_load()
            } else {
                v.split_fetch_add(1)
            };
            let (h, s) = unpack(word);
            v.answered();
            if h >= s {
                v.request();
                return Err(Miss::ClaimFailed);
            }
            times.claimed = now();
            Ok(Claimed {
                index: h,
                entry: v.entry(h),
            })
        }
        Protocol::Paper => {
            if empty_check {
                let shared = has_shared(v, protocol);
                v.answered();
                if !shared {
                    return Err(Miss::Empty);
                }
            }
            times.empty_checked = now();
            let locked = active(Mutation::ClaimSkipsFetchAdd) || v.try_lock();
            v.answered();
            if !locked {
                return Err(Miss::ClaimFailed);
            }
            let (h, t) = v.head_and_tail();
            if h >= t {
                v.unlock();
                return Err(Miss::Empty);
            }
            // THE: claim the oldest entry, then check the owner did not pop it.
            v.put_head(h + 1);
            fence(Ordering::SeqCst);
            if h + 1 > v.get_tail() {
                v.put_head(h);
                v.unlock();
                return Err(Miss::Lost);
            }
            times.claimed = now();
            Ok(Claimed {
                index: h,
                entry: v.entry(h),
            })
        }
    }
}

/// The claimed entry's frames are copied: the victim may reuse their stack
/// memory (split: the entry's release; paper: the unlock).
pub fn release<V: VictimWords>(v: &V, protocol: Protocol, claimed: &Claimed) {
    match protocol {
        Protocol::Split if active(Mutation::ReleaseSkipped) => {}
        Protocol::Split => v.release_entry(claimed.index),
        Protocol::Paper if active(Mutation::UnlockSkipped) => {}
        Protocol::Paper => v.unlock(),
    }
}

#[cfg(test)]
mod tests;
