//! The work-stealing deque on the arena: the protocol's steps are
//! `uat_protocol::deque`'s (the split protocol and the paper's THE, their
//! invariants and memory orderings); this module places their words in a
//! rank's control page and reaches them by GASNet-EX ([`ArenaOwnWords`],
//! [`RemoteDeque`]).

pub(crate) use uat_protocol::deque::*;

/// Where the deque's words are: byte offsets from the control page, each
/// word on its own cache line except the atomic ones, which are
/// consecutive (the AM service allows exactly that range).
pub(crate) mod words {
    use crate::arena::ControlWord;

    /// The paper's lock (atomic).
    pub(crate) const LOCK: ControlWord = ControlWord::at(0);
    /// A spare atomic word remote fetch-and-adds may target (benchmarks,
    /// through the `testing` feature).
    #[cfg(feature = "testing")]
    pub(crate) const FAD_BENCH: ControlWord = ControlWord::at(8);
    /// The split protocol's packed `(head, split)` (atomic).
    pub(crate) const HEAD_SPLIT: ControlWord = ControlWord::at(16);
    /// How many consecutive atomic words start at [`LOCK`].
    pub(crate) const ATOMIC_WORDS: usize = 3;
    /// The paper's `head`.
    pub(crate) const HEAD: ControlWord = ControlWord::at(64);
    /// `tail` (both protocols; the owner's, read by the paper's thieves).
    pub(crate) const TAIL: ControlWord = ControlWord::at(128);
}

mod arena_words;

pub(crate) use arena_words::{ArenaOwnWords, RemoteDeque};
