//! N-Queens: counts the solutions (and search-tree nodes) of placing N
//! non-attacking queens, row by row. The candidate columns of a row are split
//! in halves (every task spawns zero or two subtasks).

use clap::Parser;
use serde_json::json;
use uat_bench::{Common, Fork, Harness, Kernel, ModelArg, RayonArg, VsSeq};

/// Counts N-Queens solutions; verified against OEIS A000170 (and the
/// search-tree node counts for N = 12, 13, 14). Prints one JSON line.
#[derive(Parser, Debug)]
#[command(name = "nqueens", version)]
struct Options {
    /// Board size.
    #[arg(value_parser = clap::value_parser!(u32).range(1..=20))]
    n: u32,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    vs_seq: VsSeq,
    #[command(flatten)]
    rayon: RayonArg,
    #[command(flatten)]
    model: ModelArg,
}

#[path = "nqueens_board.rs"]
mod nqueens_board;
use nqueens_board::Board;

#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Counts {
    solutions: u64,
    nodes: u64,
}

impl Kernel for Board {
    type Output = Counts;
    fn run<F: Fork>(self) -> Counts {
        solve::<F>(self)
    }
}

/// This node (a non-attacking partial placement) and its subtree.
fn solve<F: Fork>(b: Board) -> Counts {
    if b.row == b.n {
        return Counts { solutions: 1, nodes: 1 };
    }
    let free = b.free();
    let below = if free == 0 {
        Counts::default()
    } else {
        try_columns::<F>(b, free)
    };
    Counts {
        solutions: below.solutions,
        nodes: below.nodes + 1,
    }
}

/// Places a queen in each column of `cands` (a set of free columns).
fn try_columns<F: Fork>(b: Board, cands: u32) -> Counts {
    let k = cands.count_ones();
    if k == 1 {
        return solve::<F>(b.place(cands));
    }
    // The lowest k/2 candidates go left, the rest right.
    let mut low = 0u32;
    let mut rest = cands;
    for _ in 0..k / 2 {
        let bit = rest & rest.wrapping_neg();
        low |= bit;
        rest &= !bit;
    }
    let (a, c) = F::join(move || try_columns::<F>(b, low), move || try_columns::<F>(b, rest));
    Counts {
        solutions: a.solutions + c.solutions,
        nodes: a.nodes + c.nodes,
    }
}

/// OEIS A000170, N = 1..=20.
const SOLUTIONS: [u64; 20] = [
    1,
    0,
    0,
    2,
    10,
    4,
    40,
    92,
    352,
    724,
    2_680,
    14_200,
    73_712,
    365_596,
    2_279_184,
    14_772_512,
    95_815_104,
    666_090_624,
    4_968_057_848,
    39_029_188_884,
];

/// Published search-tree node counts (shared/reference/UTS.md).
fn expected_nodes(n: u32) -> Option<u64> {
    match n {
        12 => Some(856_189),
        13 => Some(4_674_890),
        14 => Some(27_358_553),
        _ => None,
    }
}

fn main() {
    let (gasnet, o) = uat::cli::start::<Options>("nqueens");
    let board = Board {
        n: o.n,
        row: 0,
        cols: 0,
        diag_l: 0,
        diag_r: 0,
    };
    // SAFETY: the benchmark's tasks keep only plain values (tree nodes,
    // board masks, depths, global-memory handles) across spawn and join,
    // and `gasnet` serves only for its rank and to end the job from here on.
    let h = unsafe { Harness::start_system(gasnet, o.common.clone(), o.rayon, o.model.model_child) };
    let (outcome, mut extra) = h.measure_kernel(o.vs_seq, board);
    if let Some(out) = &outcome {
        extra.insert("nodes".into(), json!(out.value.nodes));
        if let Some(want) = expected_nodes(o.n) {
            if want != out.value.nodes {
                eprintln!(
                    "error: nqueens {} visited {} nodes, expected {want}",
                    o.n, out.value.nodes
                );
                gasnet.exit(1);
            }
        }
    }
    let outcome = outcome.map(|x| uat_bench::Outcome {
        value: x.value.solutions,
        time_s: x.time_s,
    });
    h.finish(
        "nqueens",
        json!({"n": o.n}),
        outcome,
        Some(SOLUTIONS[o.n as usize - 1]),
        extra,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_boards_match_oeis_and_the_node_counts() {
        for n in 1..=10u32 {
            let c = solve::<uat_bench::Serial>(Board {
                n,
                row: 0,
                cols: 0,
                diag_l: 0,
                diag_r: 0,
            });
            assert_eq!(c.solutions, SOLUTIONS[n as usize - 1], "n={n}");
        }
        let c = solve::<uat_bench::Serial>(Board {
            n: 12,
            row: 0,
            cols: 0,
            diag_l: 0,
            diag_r: 0,
        });
        assert_eq!((c.solutions, Some(c.nodes)), (14_200, expected_nodes(12)));
    }
}
