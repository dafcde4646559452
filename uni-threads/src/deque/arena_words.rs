//! The deque's words where they really are: the owner's in this process's
//! arena (plain memory, and the atomic words through
//! [`am_fad::DequeAtomics`]); a victim's in its segment, reached by GASNet
//! RMA and remote atomics. Every remote operation goes through the
//! gasnet-sys wrappers, which count them (`gasnet_sys::ops`).

use std::sync::atomic::AtomicU64;

use am_fad::DequeAtomics;
use gasnet_sys::Gasnet;

use super::{words, Entry, OwnWords, VictimWords, ENTRY_BYTES};
use crate::arena::{self, ControlWord, Layout, ATTENTION_WORD, DEQUE_OFFSET};

/// Arena address of entry slot `i` (the same in every process).
#[inline(always)]
fn slot_addr(i: u64) -> usize {
    Layout::addr(DEQUE_OFFSET) + i as usize * ENTRY_BYTES
}

/// This rank's deque words.
pub(crate) struct ArenaOwnWords {
    gasnet: Gasnet,
    atomics: DequeAtomics,
    /// Segment addresses of the atomic words (for the atomic domain).
    lock_segment: usize,
    split_segment: usize,
}

impl ArenaOwnWords {
    /// Zeroes this rank's deque words and registers its atomic words.
    /// Collective (the atomic domain is created here in `native` mode).
    ///
    /// # Safety
    /// The arena must be mapped, and this must be the only owner-side
    /// handle of it.
    pub(crate) unsafe fn new(gasnet: Gasnet, atomics: DequeAtomics) -> ArenaOwnWords {
        let me = gasnet.rank();
        let lock_segment = words::LOCK.on(gasnet, me);
        // SAFETY: the deque's atomic words, the attention word and the sleep
        // word are aligned control words of the mapped arena (this
        // function's contract), which stays mapped for the process and
        // whose atomic words are only accessed atomically.
        unsafe {
            atomics.init_own(
                lock_segment,
                words::LOCK.addr() as *const u64,
                words::ATOMIC_WORDS,
                ATTENTION_WORD.segment_offset(),
                crate::arena::SLEEP_WORD.segment_offset(),
            )
        };
        let own = ArenaOwnWords {
            gasnet,
            atomics,
            lock_segment,
            split_segment: words::HEAD_SPLIT.on(gasnet, me),
        };
        own.head().store(0, std::sync::atomic::Ordering::Relaxed);
        own.tail().store(0, std::sync::atomic::Ordering::Relaxed);
        own
    }

    pub(crate) fn atomics(&self) -> &DequeAtomics {
        &self.atomics
    }

    #[inline(always)]
    fn local(word: ControlWord) -> *const u64 {
        word.addr() as *const u64
    }
}

impl OwnWords for ArenaOwnWords {
    #[inline(always)]
    fn tail(&self) -> &AtomicU64 {
        // SAFETY: a control word of the mapped arena (new's contract), read
        // by thieves with whole-word RMA.
        unsafe { words::TAIL.local() }
    }
    #[inline(always)]
    fn head(&self) -> &AtomicU64 {
        // SAFETY: as in tail().
        unsafe { words::HEAD.local() }
    }
    #[inline(always)]
    fn slot(&self, i: u64) -> *mut Entry {
        slot_addr(i) as *mut Entry
    }
    fn split_fetch_add(&self, value: u64) -> u64 {
        // SAFETY: HEAD_SPLIT is one of the words `new` gave to init_own,
        // seen at its arena address; split_segment is its segment address.
        unsafe {
            self.atomics
                .own_fetch_add(self.split_segment, Self::local(words::HEAD_SPLIT), value)
        }
    }
    fn split_load(&self) -> u64 {
        // SAFETY: HEAD_SPLIT is one of the words `new` gave to init_own,
        // seen at its arena address; split_segment is its segment address.
        unsafe {
            self.atomics
                .own_load(self.split_segment, Self::local(words::HEAD_SPLIT))
        }
    }
    fn split_compare_swap(&self, current: u64, new: u64) -> u64 {
        // SAFETY: HEAD_SPLIT is one of the words `new` gave to init_own,
        // seen at its arena address; split_segment is its segment address.
        unsafe {
            self.atomics
                .own_compare_swap(self.split_segment, Self::local(words::HEAD_SPLIT), current, new)
        }
    }
    fn split_store(&self, value: u64) {
        // SAFETY: HEAD_SPLIT is one of the words `new` gave to init_own,
        // seen at its arena address; split_segment is its segment address.
        unsafe {
            self.atomics
                .own_store(self.split_segment, Self::local(words::HEAD_SPLIT), value)
        }
    }
    fn lock(&self) {
        // SAFETY: LOCK is one of the words `new` gave to init_own, seen at
        // its arena address; lock_segment is its segment address.
        unsafe { self.atomics.lock_own(self.lock_segment, Self::local(words::LOCK)) }
    }
    fn unlock(&self) {
        // SAFETY: LOCK is one of the words `new` gave to init_own, seen at
        // its arena address; lock_segment is its segment address.
        unsafe { self.atomics.unlock_own(self.lock_segment, Self::local(words::LOCK)) }
    }
    fn wait(&self) {
        self.gasnet.poll()
    }
}

/// Another rank's deque words, as a thief reaches them.
pub(crate) struct RemoteDeque<'a> {
    gasnet: Gasnet,
    rank: u32,
    atomics: &'a DequeAtomics,
}

/// The value a release writes (a put's source must outlive it).
static ZERO: u64 = 0;

impl<'a> RemoteDeque<'a> {
    pub(crate) fn new(gasnet: Gasnet, rank: u32, atomics: &'a DequeAtomics) -> RemoteDeque<'a> {
        RemoteDeque { gasnet, rank, atomics }
    }

    /// The victim's segment address of arena address `addr`.
    #[inline]
    fn at(&self, addr: usize) -> usize {
        arena::remote(self.gasnet, self.rank, addr)
    }

    fn word(&self, word: ControlWord) -> usize {
        word.on(self.gasnet, self.rank)
    }
}

impl VictimWords for RemoteDeque<'_> {
    fn split_load(&self) -> u64 {
        self.atomics.load(self.rank, self.word(words::HEAD_SPLIT))
    }
    fn split_fetch_add(&self, value: u64) -> u64 {
        let word = self.word(words::HEAD_SPLIT);
        self.atomics.fetch_add(self.rank, word, value).unwrap_or_else(|| {
            self.gasnet.fail(format_args!(
                "rank {} refused a fetch-and-add on its deque word {word:#x}: the ranks disagree about the arena layout",
                self.rank
            ))
        })
    }
    fn request(&self) {
        am_fad::raise_attention(self.gasnet, self.rank, ATTENTION_WORD.segment_offset())
    }
    fn entry(&self, i: u64) -> Entry {
        let mut raw = [0u8; ENTRY_BYTES];
        self.gasnet.get(&mut raw, self.rank, self.at(slot_addr(i)));
        Entry {
            ctx: u64::from_ne_bytes(raw[..8].try_into().unwrap()),
            top: u64::from_ne_bytes(raw[8..].try_into().unwrap()),
        }
    }
    fn release_entry(&self, i: u64) {
        let top = self.at(slot_addr(i) + 8);
        // SAFETY: ZERO is a static: valid and unchanged until the put
        // completes (the thief waits for its puts before its next steal).
        unsafe { self.gasnet.put_nbi(self.rank, top, &ZERO as *const u64 as *const u8, 8) }
    }
    fn try_lock(&self) -> bool {
        self.atomics.try_lock(self.rank, self.word(words::LOCK))
    }
    fn unlock(&self) {
        self.atomics.unlock(self.rank, self.word(words::LOCK))
    }
    fn head_and_tail(&self) -> (u64, u64) {
        const SPAN: usize = words::TAIL.offset() + 8 - words::HEAD.offset();
        let mut buf = [0u8; SPAN];
        self.gasnet.get(&mut buf, self.rank, self.word(words::HEAD));
        let word = |at: usize| u64::from_ne_bytes(buf[at..at + 8].try_into().unwrap());
        (word(0), word(words::TAIL.offset() - words::HEAD.offset()))
    }
    fn put_head(&self, head: u64) {
        self.gasnet.put_u64(self.rank, self.word(words::HEAD), head)
    }
    fn get_tail(&self) -> u64 {
        self.gasnet.get_u64(self.rank, self.word(words::TAIL))
    }
    fn answered(&self) {
        gasnet_sys::wait::end_patience()
    }
}
