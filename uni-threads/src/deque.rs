//! The work-stealing deque of ready continuations, in the arena (THE
//! protocol, Frigo et al. PLDI'98, as the IPSJ 2016 paper uses it).
//!
//! Entries `[head, tail)` are parents whose child is running: the newest at
//! `tail - 1` (lowest stack addresses), the oldest at `head`. The owner
//! pushes and pops at the tail without locking; thieves (other ranks, by
//! RMA) lock the deque, advance `head` and take the oldest entry. The owner
//! locks only when its pop may conflict with a thief (`head` crossed `tail`).
//!
//! Memory ordering: the owner's pop must publish its decremented `tail`
//! before reading `head` (store→load): a SeqCst swap is the full fence. A
//! thief writes `head + 1`, fences, then re-reads `tail`; if they crossed it
//! rolls back. Both hold the lock only on the slow paths.

use std::sync::atomic::{AtomicU64, Ordering};

use am_fad::DequeLock;

use crate::arena::{Layout, DEQUE_OFFSET, HEAD_WORD, LOCK_WORD, TAIL_WORD};

/// A suspended parent: its context record and the top of its frames. Its
/// frames are `[ctx, top)` of the uni-address stack region.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub ctx: u64,
    pub top: u64,
}

/// The owner's view of its deque. Its words and entries are at fixed arena
/// addresses (compile-time constants on the hot path).
pub struct Deque {
    capacity: u64,
    lock_word: usize,
    lock_segment_word: usize,
}

impl Deque {
    /// The deque in the mapped arena. `lock_segment_word` is the lock word's
    /// address in this rank's segment (for the atomic domain).
    ///
    /// # Safety
    /// The arena must be mapped with `layout`, and this must be the only
    /// owner-side handle of it.
    pub unsafe fn new(layout: &Layout, lock_segment_word: usize) -> Deque {
        debug_assert_eq!(layout.deque, DEQUE_OFFSET);
        Deque {
            capacity: layout.deque_capacity as u64,
            lock_word: Layout::addr(LOCK_WORD),
            lock_segment_word,
        }
    }

    #[inline(always)]
    fn head(&self) -> &'static AtomicU64 {
        // SAFETY: a control word of the mapped arena (Deque::new's contract),
        // 8-aligned, accessed only atomically (thieves: whole-word RMA).
        unsafe { &*(Layout::addr(HEAD_WORD) as *const AtomicU64) }
    }

    #[inline(always)]
    fn tail(&self) -> &'static AtomicU64 {
        // SAFETY: as in head().
        unsafe { &*(Layout::addr(TAIL_WORD) as *const AtomicU64) }
    }

    #[inline(always)]
    fn slot(&self, i: u64) -> *mut Entry {
        (Layout::addr(DEQUE_OFFSET) as *mut Entry).wrapping_add(i as usize)
    }

    pub fn init(&self, lock: &DequeLock) {
        self.head().store(0, Ordering::Relaxed);
        self.tail().store(0, Ordering::Relaxed);
        lock.init_own(self.lock_segment_word, self.lock_word as *const u64, 1);
    }

    /// Pushes the newest entry. Returns false when the deque is full.
    #[inline(always)]
    #[must_use]
    pub fn push(&self, e: Entry) -> bool {
        let t = self.tail().load(Ordering::Relaxed);
        if t >= self.capacity {
            return false;
        }
        // SAFETY: t < capacity; slot t is owner-private until tail passes it.
        unsafe { self.slot(t).write(e) };
        // Release: a thief that sees the new tail sees the entry.
        self.tail().store(t + 1, Ordering::Release);
        true
    }

    /// Pops the newest entry, unless a thief took it (or the deque is empty).
    #[inline(always)]
    pub fn pop(&self, lock: &DequeLock) -> Option<Entry> {
        let t = self.tail().load(Ordering::Relaxed);
        if t == 0 {
            return None;
        }
        // The swap is a full fence: tail is published before head is read.
        self.tail().swap(t - 1, Ordering::SeqCst);
        let h = self.head().load(Ordering::SeqCst);
        if h < t {
            // No thief got past head == t-1 before we published tail: one
            // that increments head now will see our tail and roll back.
            // SAFETY: slot t-1 was pushed by us and is ours (see above).
            return Some(unsafe { self.slot(t - 1).read() });
        }
        self.pop_conflict(lock, t)
    }

    /// The slow path: a thief may be taking the same last entry. Decide
    /// under the lock; reset the indices when the deque is empty.
    #[cold]
    #[inline(never)]
    fn pop_conflict(&self, lock: &DequeLock, t: u64) -> Option<Entry> {
        self.tail().store(t, Ordering::SeqCst);
        lock.lock_own(self.lock_segment_word, self.lock_word as *const u64);
        let h = self.head().load(Ordering::SeqCst);
        let result = if h < t {
            self.tail().store(t - 1, Ordering::SeqCst);
            // SAFETY: under the lock no thief moves head; slot t-1 is ours.
            Some(unsafe { self.slot(t - 1).read() })
        } else {
            // Empty: everything was stolen. Restart at slot 0.
            self.head().store(0, Ordering::SeqCst);
            self.tail().store(0, Ordering::SeqCst);
            None
        };
        lock.unlock_own(self.lock_segment_word, self.lock_word as *const u64);
        result
    }

    /// The newest entry without removing it (the lowest live frames).
    pub fn newest(&self) -> Option<Entry> {
        let t = self.tail().load(Ordering::Relaxed);
        let h = self.head().load(Ordering::Acquire);
        // SAFETY: slot t-1 is a pushed entry while h < t.
        (h < t).then(|| unsafe { self.slot(t - 1).read() })
    }

    /// The index the newest push went to, if any (owner's view; the entry
    /// may have been stolen since).
    pub fn newest_pushed(&self) -> Option<u64> {
        self.tail().load(Ordering::Relaxed).checked_sub(1)
    }

    /// Whether entry `i` (pushed by the owner, who has not popped it since)
    /// has been stolen, for certain. A thief's claim (head moved past `i`)
    /// is not enough: under THE a thief that races the owner's pop rolls its
    /// claim back, but only while it holds the lock. So a claim seen is
    /// confirmed under the lock: the owner takes it (waiting for a thief that
    /// holds it) and reads head again.
    pub fn stolen(&self, i: u64, lock: &DequeLock) -> bool {
        if self.head().load(Ordering::Acquire) <= i {
            return false;
        }
        lock.lock_own(self.lock_segment_word, self.lock_word as *const u64);
        let taken = self.head().load(Ordering::SeqCst) > i;
        lock.unlock_own(self.lock_segment_word, self.lock_word as *const u64);
        taken
    }

    /// Whether no continuation of this rank is in place (owner's view).
    pub fn is_empty(&self) -> bool {
        self.tail().load(Ordering::Relaxed) <= self.head().load(Ordering::Acquire)
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }
}
