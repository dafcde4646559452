//! The bits of a rank's *attention word*: one u64 per rank that other ranks
//! set to make its worker look up from its task (checked with one load at
//! every spawn; `uni_threads::attention` is the owner's side).
//!
//! The word is a set of [`AttentionBits`]:
//! - [`AttentionBits::REQUEST`], set by other ranks: a thief found nothing
//!   shared (expose work), an `am`-mode fetch-and-add request waits to be
//!   served, an idle rank registered on a lifeline;
//! - [`AttentionBits::PERIODIC`], the owner's: poll on a countdown anyway;
//! - [`AttentionBits::LAYER`], the owner's: the layer above the scheduler (global memory) needs the next
//!   spawn;
//! - [`AttentionBits::HOOKS`], the owner's: per-task hooks are on (a
//!   trace, work/span), so that a spawn looks for them only where the word
//!   is set (behind the branch it takes anyway).
//!
//! Other ranks *store* [`AttentionBits::REQUEST`] whole (across the network
//! a put, which cannot or; in shared memory the same, for one rule): a
//! raise may clear the owner's bits. The owner keeps its own bits' truth
//! elsewhere and writes them back each time it acts on the word, so a
//! cleared owner bit only makes it act sooner; a request is never lost,
//! because the owner clears the word with one swap and tests the bit in the
//! value it swapped out.

/// A value of the attention word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttentionBits(u64);

impl AttentionBits {
    /// Nothing to do.
    pub const NONE: AttentionBits = AttentionBits(0);
    /// The owner's: it polls every `poll_interval` spawns anyway (the
    /// paper's mechanism, and jobs whose ranks do not all share memory).
    pub const PERIODIC: AttentionBits = AttentionBits(1);
    /// Another rank's: look now.
    pub const REQUEST: AttentionBits = AttentionBits(2);
    /// The owner's: the layer above the scheduler needs the next spawn or
    /// poll point (global memory: a checkout is active, or cached bytes are
    /// dirty).
    pub const LAYER: AttentionBits = AttentionBits(4);
    /// The owner's: its per-task hooks are on. Asks for nothing by itself:
    /// it keeps the word non-zero, so that "the word is clear" means "no
    /// hooks" too.
    pub const HOOKS: AttentionBits = AttentionBits(8);

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

    /// Whether the word holds only the owner's passive marks
    /// ([`AttentionBits::PERIODIC`], [`AttentionBits::HOOKS`]): nothing to
    /// act on now (the periodic mark counts down instead).
    #[inline(always)]
    pub const fn passive(self) -> bool {
        self.0 & !(AttentionBits::PERIODIC.0 | AttentionBits::HOOKS.0) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::AttentionBits as B;

    #[test]
    fn every_combination_of_bits_says_what_it_holds() {
        for word in 0..16u64 {
            let b = B::from_word(word);
            assert_eq!(b.word(), word);
            assert_eq!(b.requested(), word & 2 != 0, "{word}");
            assert_eq!(b.passive(), word & 6 == 0, "{word}");
            assert_eq!(b.has(B::LAYER), word & 4 != 0, "{word}");
            assert_eq!(b.has(B::PERIODIC), word & 1 != 0, "{word}");
            assert_eq!(b.has(B::HOOKS), word & 8 != 0, "{word}");
            assert!(b.has(B::NONE));
            assert_eq!(b.with(B::REQUEST).word(), word | 2);
        }
        // The bits are distinct.
        assert_eq!(B::PERIODIC.with(B::REQUEST).with(B::LAYER).with(B::HOOKS).word(), 15);
    }
}
