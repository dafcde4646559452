//! [`AtomicOp`]: the operations on a global atomic word, and their codes in
//! a `GLOBAL_ATOMIC` request (shared by the words' owner, `global`, and the
//! AM service that applies them for other ranks, `service`).

use std::sync::atomic::{AtomicU64, Ordering};

/// An operation on a global atomic word. Min and max compare unsigned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    /// Adds `a` (wrapping).
    FetchAdd,
    /// `a`: the expected value, `b`: the new one.
    CompareSwap,
    /// Keeps the smaller of the word and `a`.
    FetchMin,
    /// Keeps the larger of the word and `a`.
    FetchMax,
    /// Reads the word.
    Load,
    /// Returns the old value (a swap).
    Store,
}

impl AtomicOp {
    const ALL: [AtomicOp; 6] = [
        AtomicOp::FetchAdd,
        AtomicOp::CompareSwap,
        AtomicOp::FetchMin,
        AtomicOp::FetchMax,
        AtomicOp::Load,
        AtomicOp::Store,
    ];

    /// Its code in a GLOBAL_ATOMIC message.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// The operation a message names, if any.
    pub fn from_code(code: u32) -> Option<AtomicOp> {
        Self::ALL.get(code as usize).copied()
    }

    /// Applies the operation to a word every accessor reaches with CPU
    /// atomics; returns the old value.
    pub fn apply(self, word: &AtomicU64, a: u64, b: u64) -> u64 {
        use Ordering::{AcqRel, Acquire};
        match self {
            AtomicOp::FetchAdd => word.fetch_add(a, AcqRel),
            AtomicOp::CompareSwap => match word.compare_exchange(a, b, AcqRel, Acquire) {
                Ok(v) | Err(v) => v,
            },
            AtomicOp::FetchMin => word.fetch_min(a, AcqRel),
            AtomicOp::FetchMax => word.fetch_max(a, AcqRel),
            AtomicOp::Load => word.load(Acquire),
            AtomicOp::Store => word.swap(a, AcqRel),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_round_trip_through_their_codes_and_apply() {
        for op in AtomicOp::ALL {
            assert_eq!(AtomicOp::from_code(op.code()), Some(op));
        }
        assert_eq!(AtomicOp::from_code(6), None);
        let w = AtomicU64::new(10);
        assert_eq!(AtomicOp::FetchAdd.apply(&w, 5, 0), 10);
        assert_eq!(AtomicOp::FetchMin.apply(&w, 3, 0), 15);
        assert_eq!(AtomicOp::FetchMax.apply(&w, 2, 0), 3);
        assert_eq!(AtomicOp::CompareSwap.apply(&w, 3, 9,), 3);
        assert_eq!(AtomicOp::CompareSwap.apply(&w, 3, 1), 9);
        assert_eq!(AtomicOp::Store.apply(&w, 7, 0), 9);
        assert_eq!(AtomicOp::Load.apply(&w, 0, 0), 7);
    }
}
