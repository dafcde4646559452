//! Binary Task Creation (the IPSJ 2016 paper's BTC): a task of depth d > 0
//! repeats `iter` times "spawn two children of depth d − 1 and join them".
//! It measures task creation, steals and joins with no other work.

use clap::Parser;
use serde_json::json;
use uat_bench::{Common, Harness, VsSeq};

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
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    vs_seq: VsSeq,
}

/// The paper's task: two spawns, two joins, `iter` times.
fn btc(depth: u32, iter: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut tasks = 1;
    for _ in 0..iter {
        let a = uat::spawn(move || btc(depth - 1, iter));
        let b = uat::spawn(move || btc(depth - 1, iter));
        tasks += a.join() + b.join();
    }
    tasks
}

fn btc_seq(depth: u32, iter: u32) -> u64 {
    // black_box: without it the compiler folds this pure recursion into a
    // closed form, and the serial baseline would create no tasks at all.
    let depth = std::hint::black_box(depth);
    if depth == 0 {
        return 1;
    }
    let mut tasks = 1;
    for _ in 0..iter {
        tasks += btc_seq(depth - 1, iter) + btc_seq(depth - 1, iter);
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
    let (depth, iter) = (o.depth, o.iter);
    let h = Harness::start(gasnet, o.common.clone());
    let (outcome, extra) = h.measure_vs_seq(o.vs_seq, move || btc(depth, iter), || btc_seq(depth, iter));
    let params = json!({"depth": depth, "iter": iter});
    h.finish("btc", params, outcome, expected_tasks(depth, iter), extra)
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
            assert_eq!(expected_tasks(d, k), Some(btc_seq(d, k)), "d={d} k={k}");
        }
        assert_eq!(expected_tasks(63, 1000), None);
    }
}
