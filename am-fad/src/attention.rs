//! The *attention word*, owned here: one u64 per rank, at the same offset
//! of every rank's segment, that other ranks set to make its worker look up
//! from its task (checked with one load at every spawn;
//! `uni_threads::attention` is the owner's side). This module holds the
//! word's format, the allocation of its bits, its offset and the raise.
//!
//! The word is a set of [`AttentionBits`]:
//! - [`AttentionBits::REQUEST`], this crate's and set by other ranks: a
//!   thief found nothing shared (expose work), an `am`-mode fetch-and-add
//!   request waits to be served, an idle rank registered on a lifeline;
//! - every other bit is an *owner's mark*, which a layer above takes with
//!   [`AttentionBits::owner_bit`] (a const: no cost at a spawn) and
//!   registers with [`claim`] when it starts, which refuses a bit another
//!   layer claimed. The scheduler (uni-threads) claims its periodic-polling
//!   mark, the mark of the layer above it (global memory) and its hooks'
//!   mark (see `uni_threads::attention`).
//!
//! Other ranks *store* [`AttentionBits::REQUEST`] whole (across the network
//! a put, which cannot or; in shared memory the same, for one rule): a
//! raise may clear the owner's marks. The owner keeps its marks' truth
//! elsewhere and writes them back each time it acts on the word, so a
//! cleared mark only makes it act sooner; a request is never lost, because
//! the owner clears the word with one swap and tests the bit in the value
//! it swapped out.
//!
//! Orderings: a raise stores with Release (what the raiser wrote before,
//! such as a lifeline registration, is seen by the owner's swap, which is
//! SeqCst); the owner's one load at a spawn and its marks' updates are
//! Relaxed (a late look only delays the service by a spawn); the word's
//! offset is set once at start, before any rank raises, and read Relaxed.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use gasnet_sys::Gasnet;

/// A value of the attention word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttentionBits(u64);

/// The bit of [`AttentionBits::REQUEST`].
const REQUEST_BIT: u32 = 1;

impl AttentionBits {
    /// Nothing to do.
    pub const NONE: AttentionBits = AttentionBits(0);
    /// Another rank's: look now.
    pub const REQUEST: AttentionBits = AttentionBits(1 << REQUEST_BIT);

    /// Bit `n` as an owner's mark of a layer above: any bit but
    /// [`AttentionBits::REQUEST`]'s (checked when evaluated: the layers
    /// declare theirs as consts). Register it with [`claim`].
    pub const fn owner_bit(n: u32) -> AttentionBits {
        assert!(
            n < 64 && n != REQUEST_BIT,
            "an owner's mark is a bit of the word other than REQUEST's"
        );
        AttentionBits(1 << n)
    }

    /// The bits of a word's value (bits no one defines are kept, and mean
    /// "look", as any non-zero word does).
    #[inline(always)]
    pub const fn from_word(word: u64) -> AttentionBits {
        AttentionBits(word)
    }

    /// The word's value.
    #[inline(always)]
    pub const fn word(self) -> u64 {
        self.0
    }

    /// Both sets.
    #[inline(always)]
    pub const fn with(self, other: AttentionBits) -> AttentionBits {
        AttentionBits(self.0 | other.0)
    }

    /// Whether every bit of `other` is set.
    #[inline(always)]
    pub const fn has(self, other: AttentionBits) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether another rank asked the owner to look.
    #[inline(always)]
    pub const fn requested(self) -> bool {
        self.has(AttentionBits::REQUEST)
    }

    /// Whether the word holds no bit but those of `marks`.
    #[inline(always)]
    pub const fn only(self, marks: AttentionBits) -> bool {
        self.0 & !marks.0 == 0
    }
}

/// Who claimed each bit of the word (REQUEST is this crate's).
static CLAIMS: Mutex<[Option<&'static str>; 64]> = Mutex::new({
    let mut c = [None; 64];
    c[REQUEST_BIT as usize] = Some("am-fad (another rank's request)");
    c
});

/// Registers `bits` as `owner`'s marks (a layer, when it starts; again by
/// the same owner is no change). Panics if another owner claimed one of
/// them: two layers would read each other's marks as their own.
pub fn claim(bits: AttentionBits, owner: &'static str) {
    let mut claims = CLAIMS.lock().unwrap_or_else(|e| e.into_inner());
    for n in (0..64).filter(|&n| bits.0 & (1 << n) != 0) {
        match claims[n] {
            Some(other) if other != owner => {
                panic!("attention word: bit {n} is claimed by {other} and by {owner}")
            }
            _ => claims[n] = Some(owner),
        }
    }
}

/// Segment offset of every rank's attention word (0 before it is set).
static OFFSET: AtomicUsize = AtomicUsize::new(0);

/// Sets the word's segment offset, the same on every rank (at start, before
/// any rank raises another's word: the service's requests raise it).
pub fn set_offset(offset: usize) {
    OFFSET.store(offset, Ordering::Relaxed);
}

/// The word's segment offset ([`set_offset`]).
#[inline]
pub fn offset() -> usize {
    OFFSET.load(Ordering::Relaxed)
}

/// Raises `rank`'s attention word (at `segment_offset` in its segment). In
/// shared memory (the target's segment is mapped here) a plain store, which
/// the target sees at its next spawn; otherwise a put, which completes only
/// when the target polls (it then polls on a countdown, its periodic mark)
/// and is not waited for here. Stores [`AttentionBits::REQUEST`] whole (the
/// module's documentation says why that is enough).
pub fn raise_attention(gasnet: Gasnet, rank: u32, segment_offset: usize) {
    let seg = gasnet.segment(rank);
    match seg.local {
        Some(local) => {
            // SAFETY: the target's segment is mapped here (PSHM) and the
            // offset names an aligned word of it that every writer accesses
            // atomically (the owner swaps it, requesters store to it).
            let word = unsafe { &*((local + segment_offset) as *const AtomicU64) };
            word.store(AttentionBits::REQUEST.word(), Ordering::Release);
        }
        // Not waited for: the put completes when the target polls (a
        // requester must not spin on a target that computes), at this
        // thread's next wait_nbi.
        // SAFETY: REQUEST_WORD is a static, valid and unchanged for ever.
        None => unsafe {
            gasnet.put_nbi(
                rank,
                seg.base + segment_offset,
                &REQUEST_WORD as *const u64 as *const u8,
                8,
            )
        },
    }
}

/// The source of a remote raise's put (it must outlive the put).
static REQUEST_WORD: u64 = AttentionBits::REQUEST.word();

#[cfg(test)]
mod tests {
    use super::AttentionBits as B;
    use super::*;

    #[test]
    fn every_combination_of_bits_says_what_it_holds() {
        let (periodic, layer) = (B::owner_bit(0), B::owner_bit(2));
        for word in 0..16u64 {
            let b = B::from_word(word);
            assert_eq!(b.word(), word);
            assert_eq!(b.requested(), word & 2 != 0, "{word}");
            assert_eq!(b.only(periodic.with(B::owner_bit(3))), word & 6 == 0, "{word}");
            assert_eq!(b.has(layer), word & 4 != 0, "{word}");
            assert_eq!(b.has(periodic), word & 1 != 0, "{word}");
            assert!(b.has(B::NONE));
            assert_eq!(b.with(B::REQUEST).word(), word | 2);
        }
    }

    #[test]
    fn two_owners_cannot_claim_one_bit() {
        claim(B::owner_bit(40).with(B::owner_bit(41)), "a");
        claim(B::owner_bit(40), "a");
        let twice = std::panic::catch_unwind(|| claim(B::owner_bit(41), "b"));
        assert!(twice.is_err(), "bit 41 is a's");
        let request = std::panic::catch_unwind(|| claim(B::REQUEST, "b"));
        assert!(request.is_err(), "REQUEST is this crate's");
    }
}
