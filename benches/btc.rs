//! Binary Task Creation (the IPSJ 2016 paper's BTC): a task of depth d > 0
//! repeats `iter` times "spawn two children of depth d − 1 and join them".
//! It measures task creation, steals and joins with no other work.
//! `--join` is the shape rayon's `join` has: one child spawned, the other
//! run in the continuation.

use clap::Parser;
use serde_json::json;
use uat_bench::{Common, Fork, Harness, Kernel, ModelArg, RayonArg, VsSeq};

/// Binary Task Creation: counts the tasks of the tree (verified against
/// ((2k)^(d+1) − 1) / (2k − 1)). Prints one JSON line.
#[derive(Parser, Debug)]
#[command(name = "btc", version)]
struct Options {
    /// Depth of the task tree.
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=63))]
    depth: u32,
    /// Spawn-two-and-join rounds per task (k).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    iter: u32,
    /// Each round spawns one child and runs the other in the continuation
    /// (`uat::join`; with --rayon, `rayon::join`) instead of spawning both
    /// (the paper's form). JSON params.form: "join" | "spawn".
    #[arg(long)]
    join: bool,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    vs_seq: VsSeq,
    #[command(flatten)]
    rayon: RayonArg,
    #[command(flatten)]
    model: ModelArg,
}

/// The task tree: `iter` rounds of two children and their join per task,
/// in the paper's form (both spawned) or, with `join`, rayon's.
#[derive(Clone, Copy)]
struct Btc {
    depth: u32,
    iter: u32,
    join: bool,
}

impl Kernel for Btc {
    type Output = u64;
    fn run<F: Fork>(self) -> u64 {
        btc::<F>(self.depth, self.iter, self.join)
    }
}

fn btc<F: Fork>(depth: u32, iter: u32, join: bool) -> u64 {
    // black_box: without it the compiler folds the serial elision's pure
    // recursion into a closed form, and it would create no tasks at all.
    let depth = std::hint::black_box(depth);
    if depth == 0 {
        return 1;
    }
    let mut tasks = 1;
    for _ in 0..iter {
        let child = move || btc::<F>(depth - 1, iter, join);
        let (a, b) = if join {
            F::join(child, child)
        } else {
            F::spawn_both(child, child)
        };
        tasks += a + b;
    }
    tasks
}

/// ((2k)^(d+1) − 1) / (2k − 1), or None when it overflows u64.
fn expected_tasks(depth: u32, iter: u32) -> Option<u64> {
    let r = 2 * iter as u128;
    let num = r.checked_pow(depth + 1)? - 1;
    u64::try_from(num / (r - 1)).ok()
}

fn main() {
    let (gasnet, o) = uat::cli::start::<Options>("btc");
    let k = Btc {
        depth: o.depth,
        iter: o.iter,
        join: o.join,
    };
    // SAFETY: the benchmark's tasks keep only plain values (tree nodes,
    // board masks, depths, global-memory handles) across spawn and join,
    // and `gasnet` serves only for its rank and to end the job from here on.
    let h = unsafe { Harness::start_system(gasnet, o.common.clone(), o.rayon, o.model.model_child) };
    let (outcome, extra) = h.measure_kernel(o.vs_seq, k);
    let form = if o.join { "join" } else { "spawn" };
    let params = json!({"depth": k.depth, "iter": k.iter, "form": form});
    h.finish("btc", params, outcome, expected_tasks(k.depth, k.iter), extra)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_task_formula_matches_the_paper_and_the_serial_count() {
        assert_eq!(expected_tasks(20, 1), Some((1 << 21) - 1));
        assert_eq!(
            expected_tasks(19, 2),
            Some(366_503_875_925),
            "the paper's k = 2, d = 19"
        );
        for (d, k) in [(0, 1), (5, 1), (4, 2), (3, 3)] {
            for join in [false, true] {
                let tree = Btc {
                    depth: d,
                    iter: k,
                    join,
                };
                assert_eq!(
                    expected_tasks(d, k),
                    Some(tree.run::<uat_bench::Serial>()),
                    "d={d} k={k}"
                );
                assert_eq!(tree.run::<uat_bench::CallModel>(), tree.run::<uat_bench::FrameModel>());
            }
        }
        assert_eq!(expected_tasks(63, 1000), None);
    }
}
