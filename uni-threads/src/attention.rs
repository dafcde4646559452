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
//!   mechanism; else every 64): its own mark [`ATTENTION_PERIODIC`] keeps
//!   the word non-zero, and a raised request is served at once.
//!
//! - Idle ranks raise it when they register on this rank's lifelines
//!   (`crate::lifeline`): the spawn that sees it wakes them.
//!
//! The worker clears the word with a swap (a full fence) *before* it polls
//! and looks at its deque, so a request raised after a message was queued
//! is never lost: either the swap sees it, or the poll sees the message.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use am_fad::{ATTENTION_PERIODIC, ATTENTION_REQUEST};

use crate::arena::ATTENTION_WORD;

/// This rank's attention word and polling countdown (worker thread only).
pub struct Attention {
    /// Poll every this many spawns anyway (0: only when raised).
    interval: u32,
    countdown: Cell<u32>,
    /// [`ATTENTION_MEMORY`] while global memory needs the next spawn (a
    /// checkout is active, or cached bytes are dirty), else 0.
    memory: Cell<u64>,
}

/// The owner's mark for "global memory needs the next spawn": a spawn
/// inside a checkout is refused, dirty cached bytes are written back
/// (`crate::global`). Set with an atomic or (not a store), so that a
/// thief's request is not lost.
pub const ATTENTION_MEMORY: u64 = 4;

#[inline(always)]
fn word() -> &'static AtomicU64 {
    // SAFETY: a control word of the mapped arena (the Attention exists only
    // once it is mapped), written whole by other ranks and swapped here.
    unsafe { ATTENTION_WORD.local() }
}

impl Attention {
    /// Starts with the word clear, or marked periodic.
    ///
    /// # Safety
    /// The arena must be mapped.
    pub unsafe fn new(interval: u32) -> Attention {
        word().store(Self::idle_value(interval), Ordering::Release);
        Attention {
            interval,
            countdown: Cell::new(interval.max(1)),
            memory: Cell::new(0),
        }
    }

    fn idle_value(interval: u32) -> u64 {
        if interval == 0 {
            0
        } else {
            ATTENTION_PERIODIC
        }
    }

    pub fn interval(&self) -> u32 {
        self.interval
    }

    /// Whether the word is set: the spawn path's one load.
    #[inline(always)]
    pub fn raised() -> bool {
        word().load(Ordering::Relaxed) != 0
    }

    /// The word is set: whether to act now. Periodic polling with nothing
    /// raised counts down instead (inline: the common case on such jobs).
    #[inline(always)]
    pub fn due(&self) -> bool {
        if self.interval != 0 && word().load(Ordering::Relaxed) == ATTENTION_PERIODIC {
            let left = self.countdown.get();
            if left > 1 {
                self.countdown.set(left - 1);
                return false;
            }
        }
        true
    }

    /// Raises this rank's own word, as another rank would (lifelines still
    /// waiting for work it does not have yet).
    pub fn raise_own() {
        word().store(ATTENTION_REQUEST, Ordering::Relaxed);
    }

    /// Sets or clears the global-memory mark.
    pub fn mark_memory(&self, on: bool) {
        if on {
            self.memory.set(ATTENTION_MEMORY);
            word().fetch_or(ATTENTION_MEMORY, Ordering::Relaxed);
        } else {
            self.memory.set(0);
            word().fetch_and(!ATTENTION_MEMORY, Ordering::Relaxed);
        }
    }

    /// Whether the global-memory mark is set.
    #[inline]
    pub fn memory_marked(&self) -> bool {
        self.memory.get() != 0
    }

    /// Acting on the word: clears it (a full fence, before the caller
    /// polls) and says whether a thief asked for work.
    pub fn take(&self) -> bool {
        self.countdown.set(self.interval.max(1));
        word().swap(Self::idle_value(self.interval) | self.memory.get(), Ordering::SeqCst) == ATTENTION_REQUEST
    }
}
