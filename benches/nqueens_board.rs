//! An NQueens partial placement, shared by the benchmark (`nqueens.rs`)
//! and the simulator (`uat-sim`), which walks the same search tree.

/// A partial placement: occupied columns and diagonals as bit masks.
#[derive(Clone, Copy)]
pub(crate) struct Board {
    pub(crate) n: u32,
    pub(crate) row: u32,
    pub(crate) cols: u32,
    pub(crate) diag_l: u32,
    pub(crate) diag_r: u32,
}

impl Board {
    pub(crate) fn free(&self) -> u32 {
        !(self.cols | self.diag_l | self.diag_r) & ((1u32 << self.n) - 1)
    }

    pub(crate) fn place(&self, bit: u32) -> Board {
        Board {
            n: self.n,
            row: self.row + 1,
            cols: self.cols | bit,
            diag_l: (self.diag_l | bit) << 1,
            diag_r: (self.diag_r | bit) >> 1,
        }
    }
}
