//! The attention word: how other ranks make a busy worker look up from its
//! task. One word per rank in the arena's control page, checked at every
//! spawn (and `poll_point`) with one local load.
//!
//! - Thieves raise it (`am_fad::raise_attention`) when they find nothing
//!   shared in the split protocol (a request to expose work) and, in `am`
//!   mode, after sending a fetch-and-add request (which the worker serves
//!   only when it polls). In shared memory (PSHM) raising is a store into
//!   the target's mapped segment, so the target sees it at its next spawn.
//! - Across the network (udp, mpi without shared memory, ibv) a put to raise
//!   it is itself carried by an Active Message that the target must poll
//!   for. And on every conduit but smp, GASNet's own traffic (a failing
//!   rank's exit among it) arrives only when a rank polls. So there the
//!   worker also polls on a countdown (`poll_interval` spawns: every spawn
//!   in `am` mode when some rank is outside shared memory, the paper's
//!   mechanism; else every 64): its own mark [`PERIODIC`] keeps
//!   the word non-zero, and a raised request is served at once.
//!
//! The word's format, the allocation of its bits and the raise are
//! [`am_fad::attention`]'s; this module holds the owner's side and the
//! owner's marks, which it claims there when the worker starts
//! ([`PERIODIC`], [`LAYER`], [`HOOKS`]).
//!
//! - Idle ranks raise it when they register on this rank's lifelines
//!   (`crate::lifeline`): the spawn that sees it wakes them.
//!
//! The worker clears the word with a swap (a full fence) *before* it polls
//! and looks at its deque, so a request raised after a message was queued
//! is never lost: either the swap sees it, or the poll sees the message.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use am_fad::AttentionBits;

use crate::arena::ATTENTION_WORD;

/// The owner's mark: it polls every `poll_interval` spawns anyway (the
/// paper's mechanism, and jobs whose ranks do not all share memory).
pub(crate) const PERIODIC: AttentionBits = AttentionBits::owner_bit(0);
/// The owner's mark: the layer above the scheduler needs the next spawn or
/// poll point (global memory: a checkout is active, or cached bytes are
/// dirty; [`crate::layer::Here::mark`]).
pub(crate) const LAYER: AttentionBits = AttentionBits::owner_bit(2);
/// The owner's mark: its per-task hooks are on (a trace, work/span). Asks
/// for nothing by itself: it keeps the word non-zero, so that "the word is
/// clear" means "no hooks" too, and a spawn looks for hooks only behind the
/// branch it takes anyway.
pub(crate) const HOOKS: AttentionBits = AttentionBits::owner_bit(3);
/// The marks that ask for nothing now (the periodic one counts down).
const PASSIVE: AttentionBits = PERIODIC.with(HOOKS);
/// The name the marks are claimed under in `am_fad::attention`.
const OWNER: &str = "uni-threads (the worker's marks)";

/// This rank's attention word and polling countdown (worker thread only).
///
/// The owner's bits' truth lives here (`interval`, `layer`), not in the
/// word: another rank's raise stores [`AttentionBits::REQUEST`] whole and
/// may clear them, and [`Attention::take`] writes them back.
pub(crate) struct Attention {
    word: &'static AtomicU64,
    /// Poll every this many spawns anyway (0: only when raised).
    interval: u32,
    countdown: Cell<u32>,
    /// [`LAYER`] while the layer above needs the next spawn
    /// or poll point ([`crate::layer::Here::mark`]), else none.
    layer: Cell<AttentionBits>,
    /// [`HOOKS`] when the per-task hooks are on (a trace,
    /// work/span), else none.
    hooks: AttentionBits,
}

#[inline(always)]
fn word() -> &'static AtomicU64 {
    // SAFETY: a control word of the mapped arena (the Attention exists only
    // once it is mapped), written whole by other ranks and swapped here.
    unsafe { ATTENTION_WORD.local() }
}

impl Attention {
    /// Starts with this rank's word clear, or holding the owner's marks
    /// (periodic polling, hooks).
    ///
    /// # Safety
    /// The arena must be mapped.
    pub(crate) unsafe fn new(interval: u32, hooks: bool) -> Attention {
        am_fad::attention::claim(PERIODIC.with(LAYER).with(HOOKS), OWNER);
        Attention::over(word(), interval, hooks)
    }

    /// An attention over `word` (the arena's, or a test's).
    fn over(word: &'static AtomicU64, interval: u32, hooks: bool) -> Attention {
        let a = Attention {
            word,
            interval,
            countdown: Cell::new(interval.max(1)),
            layer: Cell::new(AttentionBits::NONE),
            hooks: if hooks { HOOKS } else { AttentionBits::NONE },
        };
        word.store(a.own_bits().word(), Ordering::Release);
        a
    }

    /// The owner's bits as they should stand in the word.
    #[inline(always)]
    fn own_bits(&self) -> AttentionBits {
        let periodic = if self.interval == 0 {
            AttentionBits::NONE
        } else {
            PERIODIC
        };
        periodic.with(self.layer.get()).with(self.hooks)
    }

    pub(crate) fn interval(&self) -> u32 {
        self.interval
    }

    /// Whether this rank's word is set: the spawn path's one load.
    #[inline(always)]
    pub(crate) fn raised() -> bool {
        word().load(Ordering::Relaxed) != 0
    }

    /// The word is set: whether to act now. With only the owner's passive
    /// marks set, periodic polling counts down instead (inline: the common
    /// case on such jobs), and the hooks mark alone asks for nothing.
    #[inline(always)]
    pub(crate) fn due(&self) -> bool {
        let bits = AttentionBits::from_word(self.word.load(Ordering::Relaxed));
        if bits.only(PASSIVE) {
            if !bits.has(PERIODIC) {
                return false;
            }
            if self.interval != 0 {
                let left = self.countdown.get();
                if left > 1 {
                    self.countdown.set(left - 1);
                    return false;
                }
            }
        }
        true
    }

    /// Raises this rank's own word, as another rank would (lifelines still
    /// waiting for work it does not have yet; a registration's handler,
    /// which may run on the polling thread); keeps the owner's bits.
    pub(crate) fn raise_own() {
        // Release: the raise publishes what the caller wrote before it (a
        // lifeline registration's slot) to the owner's swap (an acquire).
        word().fetch_or(AttentionBits::REQUEST.word(), Ordering::Release);
    }

    /// Sets or clears the layer's mark ([`crate::layer::Here::mark`]; an
    /// atomic or/and: a request raised meanwhile stays).
    pub(crate) fn mark_layer(&self, on: bool) {
        let m = LAYER.word();
        if on {
            self.layer.set(LAYER);
            self.word.fetch_or(m, Ordering::Relaxed);
        } else {
            self.layer.set(AttentionBits::NONE);
            self.word.fetch_and(!m, Ordering::Relaxed);
        }
    }

    /// Whether the layer's mark is set.
    #[inline]
    pub(crate) fn layer_marked(&self) -> bool {
        self.layer.get() != AttentionBits::NONE
    }

    /// Acting on the word: clears it to the owner's bits (one swap, a full
    /// fence, before the caller polls) and says whether another rank asked
    /// (its bit in the value swapped out, whatever else was set).
    pub(crate) fn take(&self) -> bool {
        self.countdown.set(self.interval.max(1));
        AttentionBits::from_word(self.word.swap(self.own_bits().word(), Ordering::SeqCst)).requested()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attention(interval: u32) -> Attention {
        Attention::over(Box::leak(Box::new(AtomicU64::new(u64::MAX))), interval, false)
    }

    #[test]
    fn take_sees_a_request_whatever_else_the_word_holds() {
        for interval in [0, 1, 64] {
            for memory in [false, true] {
                for word in 0..8u64 {
                    let a = attention(interval);
                    a.mark_layer(memory);
                    a.word.store(word, Ordering::Relaxed);
                    assert_eq!(
                        a.take(),
                        word & 2 != 0,
                        "interval {interval} memory {memory} word {word}"
                    );
                    let own = (interval != 0) as u64 | if memory { 4 } else { 0 };
                    assert_eq!(a.word.load(Ordering::Relaxed), own, "the owner's bits written back");
                    assert!(!a.take(), "a request is taken once");
                }
            }
        }
    }

    #[test]
    fn only_the_passive_marks_count_down_or_ask_for_nothing() {
        for word in 0..16u64 {
            let a = attention(64);
            a.word.store(word, Ordering::Relaxed);
            // The countdown starts at 64: 63 spawns pass with the periodic
            // mark (and the hooks mark) alone; the hooks mark alone is never
            // due; anything else is due at once.
            let passed = (0..63).filter(|_| !a.due()).count();
            let (passive, periodic) = (word & 6 == 0, word & 1 != 0);
            assert_eq!(passed, if passive { 63 } else { 0 }, "word {word}");
            assert_eq!(a.due(), !passive || periodic, "word {word}");
        }
        let a = attention(0);
        a.word.store(1, Ordering::Relaxed);
        assert!(a.due(), "without periodic polling any bit is due");
        a.word.store(HOOKS.word(), Ordering::Relaxed);
        assert!(!a.due(), "the hooks mark asks for nothing");
    }

    #[test]
    fn the_hooks_mark_stays_in_the_word() {
        for interval in [0, 64] {
            let a = Attention::over(Box::leak(Box::new(AtomicU64::new(0))), interval, true);
            assert!(AttentionBits::from_word(a.word.load(Ordering::Relaxed)).has(HOOKS));
            a.word.store(AttentionBits::REQUEST.word(), Ordering::Relaxed);
            assert!(a.take());
            assert!(AttentionBits::from_word(a.word.load(Ordering::Relaxed)).has(HOOKS));
            a.mark_layer(true);
            a.mark_layer(false);
            assert_ne!(a.word.load(Ordering::Relaxed), 0, "a clear word means no hooks");
        }
    }

    #[test]
    fn the_owners_marks_keep_a_request_raised_meanwhile() {
        let a = attention(0);
        a.word.store(AttentionBits::REQUEST.word(), Ordering::Relaxed);
        a.mark_layer(true);
        a.mark_layer(false);
        a.word.fetch_or(AttentionBits::REQUEST.word(), Ordering::Relaxed);
        assert_eq!(a.word.load(Ordering::Relaxed), 2);
        a.mark_layer(true);
        assert!(a.take(), "a request under the layer's mark (value 6) is seen");
        assert_eq!(a.word.load(Ordering::Relaxed), 4);
    }
}
