//! A small task travels from `spawn` to its child in argument registers.
//!
//! A task of at most [`TASK_WORDS`] words, in whole 4-byte pieces, is read
//! by the parent in 4-byte pieces (a word at a time if it is word-aligned),
//! passed through the context switch in registers, and written once into
//! the child's frame. A larger one goes by reference and the child copies
//! it (`spawn::do_spawn`).
//!
//! Why 4-byte pieces: the closure usually copies data the parent has just
//! written (NQueens' board, one 4-byte field at a time). Copied as one
//! wide load, say 16 bytes over four 4-byte stores still in the store
//! buffer, the load cannot be forwarded from them and waits until they
//! reach the cache. Loads no wider than 4 bytes are forwarded from any
//! store of 4 bytes or more.
//!
//! Why the pieces are dealt to the words in turn (see [`slot`]): two
//! neighbouring pieces packed into one word, `p0 | p1 << 32`, are exactly
//! what the compiler fuses back into one 8-byte load. Pieces 12 bytes
//! apart cannot be one load, so the words are built in registers from
//! 4-byte loads with no barrier: no stack slot (as `black_box` costs), and
//! nothing that has to treat a piece as an integer (an `asm!` operand
//! would, and a piece may be padding). Measured on the 2-core dev VM
//! (docs/results/2026-11-24-dev2core-spawn-latency/, "A small task travels in registers"): NQueens 15 at
//! one rank, over its `--seq` time, 1.39 by reference, 1.33 with pieces in
//! order through `black_box`, 1.31 dealt in turn; 8-byte pieces 1.37.
//!
//! Pieces are `MaybeUninit`: a closure may have padding, whose bytes are
//! uninitialized and must never be read as integers. The words are
//! `MaybeUninit` too, and only the context switch's registers hold them.

use std::mem::{align_of, size_of, transmute, MaybeUninit};

use crate::context::Word;

/// The argument registers a task may use (the context switch passes five;
/// the other two carry the thread's top and its result cell).
pub(crate) const TASK_WORDS: usize = 3;

/// A task's bytes, in registers.
pub(crate) type TaskWords = [Word; TASK_WORDS];

/// 4-byte pieces per [`TaskWords`].
const PIECES: usize = TASK_WORDS * size_of::<Word>() / 4;

/// Whether a task of type `F` travels in registers.
pub(crate) const fn fits<F>() -> bool {
    size_of::<F>() <= TASK_WORDS * size_of::<Word>() && size_of::<F>().is_multiple_of(4)
}

/// `f`'s bytes as words. `fits::<F>()` must hold.
#[inline(always)]
pub(crate) fn pack<F: Copy>(f: &F) -> TaskWords {
    debug_assert!(fits::<F>());
    if align_of::<F>() >= size_of::<Word>() {
        // Word-aligned: most likely fields of 8 bytes (a closure of
        // 4-byte fields is 4-aligned), read a word at a time; nothing to
        // merge, so no barrier.
        let mut words = [Word::uninit(); TASK_WORDS];
        // SAFETY: `f` is size_of::<F>() readable bytes, `words` at least
        // that many writable ones (fits); bytes, padding too, copied as
        // they are into MaybeUninit.
        unsafe {
            std::ptr::copy_nonoverlapping(
                f as *const F as *const u8,
                words.as_mut_ptr() as *mut u8,
                size_of::<F>(),
            )
        };
        return words;
    }
    let mut slots = [MaybeUninit::<u32>::uninit(); PIECES];
    let src = f as *const F as *const MaybeUninit<u32>;
    for i in 0..size_of::<F>() / 4 {
        // SAFETY: piece i lies within `f` (size_of::<F>() is a multiple of 4
        // of at most PIECES pieces: fits); unaligned, as F may be aligned to
        // less than 4; any bytes, padding too, are a valid MaybeUninit.
        slots[slot(i)] = unsafe { src.add(i).read_unaligned() };
    }
    // SAFETY: two arrays of MaybeUninit of the same size (PIECES * 4 bytes).
    unsafe { transmute::<[MaybeUninit<u32>; PIECES], TaskWords>(slots) }
}

/// 4-byte pieces per word.
const HALVES: usize = size_of::<Word>() / 4;

/// Where piece `i` of a task travels, as an index of 4-byte slots in
/// [`TaskWords`]: pieces are dealt to the words in turn (word 0 carries
/// pieces 0 and 3, word 1 pieces 1 and 4, word 2 pieces 2 and 5), so the
/// pieces that share a word lie `TASK_WORDS * 4` bytes apart and the
/// compiler cannot fuse their loads into one.
const fn slot(i: usize) -> usize {
    (i % TASK_WORDS) * HALVES + i / TASK_WORDS
}

/// The task that `words` carry.
///
/// # Safety
/// `words` must come from [`pack`] of a value of type `F`. `F: Copy`, so the
/// value packed and the one returned are both owned, with nothing to drop.
#[inline(always)]
pub(crate) unsafe fn unpack<F: Copy>(words: TaskWords) -> F {
    if align_of::<F>() >= size_of::<Word>() {
        // SAFETY: the first size_of::<F>() bytes of `words` are a copy of a
        // valid F, in order (the caller's promise, and pack's word path);
        // unaligned, as F may be aligned to more than a word.
        return unsafe { (words.as_ptr() as *const F).read_unaligned() };
    }
    // SAFETY: two arrays of MaybeUninit of the same size (PIECES * 4 bytes).
    let slots = unsafe { transmute::<TaskWords, [MaybeUninit<u32>; PIECES]>(words) };
    let mut pieces = [MaybeUninit::<u32>::uninit(); PIECES];
    for i in 0..size_of::<F>() / 4 {
        pieces[i] = slots[slot(i)];
    }
    // SAFETY: the first size_of::<F>() / 4 pieces are a copy of a valid F,
    // in order (the caller's promise, and pack's piece path); unaligned, as
    // F may be aligned to more than 4.
    unsafe { (pieces.as_ptr() as *const F).read_unaligned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<F: Copy>(f: F) -> F {
        assert!(fits::<F>());
        // SAFETY: packed from an F just above.
        unsafe { unpack::<F>(pack(&f)) }
    }

    #[test]
    fn tasks_of_every_fitting_size_survive_the_trip() {
        assert_eq!(round_trip(()), ());
        assert_eq!(round_trip(7u32), 7);
        assert_eq!(round_trip([1u8, 2, 3, 4]), [1, 2, 3, 4]);
        assert_eq!(round_trip((1u32, 2u64, 3u32)), (1, 2, 3));
        // Distinct pieces, so that a piece put back in the wrong place
        // shows: every 4-aligned size up to three words.
        assert_eq!(round_trip([1u32, 2]), [1, 2]);
        assert_eq!(round_trip([1u32, 2, 3]), [1, 2, 3]);
        assert_eq!(round_trip([1u32, 2, 3, 4]), [1, 2, 3, 4]);
        assert_eq!(round_trip([1u32, 2, 3, 4, 5]), [1, 2, 3, 4, 5]);
        assert_eq!(round_trip([1u32, 2, 3, 4, 5, 6]), [1, 2, 3, 4, 5, 6]);
        assert_eq!(round_trip([7u16, 8, 9, 10, 11, 12]), [7, 8, 9, 10, 11, 12]);
        let f = round_trip(|| 5u64);
        assert_eq!(f(), 5);
    }

    #[test]
    fn padding_and_references_travel_too() {
        // 4-aligned with a byte of padding: read in 4-byte pieces, one of
        // them partly uninitialized.
        assert_eq!(round_trip((1u8, u32::MAX, 3u16)), (1, u32::MAX, 3));
        // (u8, u64): word-aligned, 7 bytes of padding, copied a word at a
        // time.
        assert_eq!(round_trip((3u8, u64::MAX)), (3, u64::MAX));
        static NAME: &str = "static data";
        let (a, b) = (11u8, 12u16);
        let f = round_trip(move || (NAME.len(), a as u16 + b));
        assert_eq!(f(), (11, 23));
    }

    #[test]
    fn pieces_are_dealt_to_distinct_slots_and_never_share_a_word_with_a_neighbour() {
        let mut taken = [false; PIECES];
        for i in 0..PIECES {
            assert!(!taken[slot(i)], "two pieces in slot {}", slot(i));
            taken[slot(i)] = true;
            if i + 1 < PIECES {
                assert_ne!(
                    slot(i) / HALVES,
                    slot(i + 1) / HALVES,
                    "pieces {i} and {} share a word",
                    i + 1
                );
            }
        }
        // The first TASK_WORDS pieces go one to a word.
        assert_eq!((0..TASK_WORDS).map(slot).collect::<Vec<_>>(), [0, 2, 4]);
    }

    #[test]
    fn only_whole_pieces_up_to_three_words_fit() {
        assert!(fits::<[u8; 24]>());
        assert!(!fits::<[u8; 25]>());
        assert!(!fits::<[u8; 6]>());
        assert!(!fits::<(u64, u64, u64, u64)>());
        assert!(fits::<u128>());
    }
}
