//! 0/1 knapsack by parallel branch-and-bound, with the best value found so
//! far in global memory: one `GlobalAtomicU64` that every rank raises with a
//! remote atomic max (`fetch_max`) and reads to prune.
//!
//! Instances are Pisinger's usual classes, generated from a seed with the
//! item count and coefficient range fixed per class (`--items`/`--range`
//! override them): uncorrelated, weakly and strongly correlated; capacity
//! half the total weight. Items are sorted by profit/weight. A node either
//! takes or skips the next item; both children are spawned (`uat::join`)
//! unless the bound prunes them. The bound is the one of Cilk's and BOTS's
//! knapsack benchmarks: the value so far plus the remaining capacity filled
//! at the next item's ratio (an upper bound, since later items have no
//! better ratio). It is weaker than Dantzig's, which makes the tree sizes
//! of a class steady across seeds (≥ 10^6 nodes at the defaults).
//!
//! Every rank keeps a copy of the best value (a process-local static) and
//! re-reads the global word every `--bound-refresh` nodes it visits; an
//! improvement goes to the global word at once. A stale copy only prunes
//! less, never wrongly. Verified every run against a dynamic program over
//! the capacity (computed on rank 0, outside the timed region);
//! `--verify-dp` times that dynamic program instead, checked against the
//! branch-and-bound's serial elision. Prints one JSON line whose
//! `throughput` is nodes per second.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

use clap::Parser;
use serde_json::{json, Map};
use uat::global::GlobalAtomicU64;
use uat_bench::{splitmix, Common, Harness, Outcome};

/// Items an instance may have (they live inline in a static: the same
/// address in every rank, no heap pointer for a stolen frame to carry).
const MAX_ITEMS: usize = 128;
/// Largest coefficient range (keeps the dynamic program's table ≤ 52 MB).
const MAX_RANGE: u64 = 100_000;

/// Pisinger's instance classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Class {
    /// Weights and profits independent, uniform in [1, R].
    Uncorrelated,
    /// Profit within R/10 of the weight (at least 1).
    Weak,
    /// Profit = weight + R/10.
    Strong,
}

impl Class {
    /// The class's name on the command line and in the JSON (clap's).
    fn name(self) -> String {
        clap::ValueEnum::to_possible_value(&self)
            .expect("every class has a name")
            .get_name()
            .to_string()
    }

    /// (items, range) of the class: ≥ 10^6 nodes for every seed tried
    /// (docs/design/global-memory.md, "knapsack").
    fn default_size(self) -> (usize, u64) {
        match self {
            Class::Uncorrelated => (58, 10_000),
            Class::Weak => (72, 10_000),
            Class::Strong => (50, 10_000),
        }
    }
}

/// Solves a 0/1 knapsack instance by parallel branch-and-bound, the best
/// value in global memory; verified against dynamic programming. Prints
/// one JSON line.
#[derive(Parser, Debug)]
#[command(name = "knapsack", version)]
struct Options {
    /// Instance class.
    #[arg(long, value_enum, default_value_t = Class::Strong)]
    class: Class,
    /// Seed of the instance.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Items (default per class: uncorrelated 58, weak 72, strong 50).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=MAX_ITEMS as u64))]
    items: Option<u64>,
    /// Coefficient range R (default 10000).
    #[arg(long, value_parser = clap::value_parser!(u64).range(10..=MAX_RANGE))]
    range: Option<u64>,
    /// Nodes a rank visits between two reads of the global best value.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    bound_refresh: u64,
    /// Time the dynamic program (on rank 0) instead of the branch-and-bound;
    /// its answer is checked against the branch-and-bound's serial elision.
    #[arg(long)]
    verify_dp: bool,
    #[command(flatten)]
    common: Common,
}

/// An instance, items sorted by profit/weight (best first).
struct Instance {
    n: usize,
    capacity: u64,
    weight: [u64; MAX_ITEMS],
    profit: [u64; MAX_ITEMS],
}

/// This rank's copy of the instance, generated from the options on every
/// rank before the run (so every rank has the same one).
static INSTANCE: OnceLock<Instance> = OnceLock::new();

fn instance() -> &'static Instance {
    INSTANCE.get().expect("the instance is made before the run")
}

/// Uniform in [lo, hi] (the tiny modulo bias is irrelevant here).
fn uniform(seed: u64, i: u64, lo: u64, hi: u64) -> u64 {
    lo + splitmix(seed, i) % (hi - lo + 1)
}

impl Instance {
    fn generate(class: Class, n: usize, range: u64, seed: u64) -> Instance {
        assert!((1..=MAX_ITEMS).contains(&n) && (10..=MAX_RANGE).contains(&range));
        let mut items: Vec<(u64, u64)> = (0..n as u64)
            .map(|j| {
                let w = uniform(seed, 2 * j, 1, range);
                let p = match class {
                    Class::Uncorrelated => uniform(seed, 2 * j + 1, 1, range),
                    Class::Weak => uniform(seed, 2 * j + 1, w.saturating_sub(range / 10).max(1), w + range / 10),
                    Class::Strong => w + range / 10,
                };
                (w, p)
            })
            .collect();
        // By ratio p/w, best first (cross-multiplied; a stable sort keeps
        // equal ratios in generation order).
        items.sort_by(|a, b| (b.1 * a.0).cmp(&(a.1 * b.0)));
        let mut inst = Instance {
            n,
            capacity: items.iter().map(|x| x.0).sum::<u64>() / 2,
            weight: [0; MAX_ITEMS],
            profit: [0; MAX_ITEMS],
        };
        for (j, (w, p)) in items.into_iter().enumerate() {
            inst.weight[j] = w;
            inst.profit[j] = p;
        }
        inst
    }

    /// The optimum by dynamic programming over the capacity: O(n·C) time,
    /// O(C) memory.
    fn dynamic_program(&self) -> u64 {
        let c = self.capacity as usize;
        let mut best = vec![0u64; c + 1];
        for j in 0..self.n {
            let (w, p) = (self.weight[j] as usize, self.profit[j]);
            for x in (w..=c).rev() {
                best[x] = best[x].max(best[x - w] + p);
            }
        }
        best[c]
    }
}

/// This rank's copy of the best value found so far (never above the
/// global word, which only grows).
static RANK_BEST: AtomicU64 = AtomicU64::new(0);
/// Nodes this rank visited since it last read the global word.
static SINCE_REFRESH: AtomicU64 = AtomicU64::new(0);
/// `--bound-refresh`, set on every rank before the run.
static REFRESH: AtomicU64 = AtomicU64::new(1024);

/// A node of the search: the next item to decide, the capacity left and
/// the value so far. With the global word, 40 bytes: a task's argument.
#[derive(Clone, Copy)]
struct Node {
    item: usize,
    room: u64,
    value: u64,
}

/// Raises the best value to `value` if it is better (the serial elision
/// keeps it in the rank's copy alone).
fn improve<const SEQ: bool>(best: GlobalAtomicU64, value: u64) {
    if value <= RANK_BEST.load(Relaxed) {
        return;
    }
    RANK_BEST.store(value, Relaxed);
    if !SEQ {
        let before = best.fetch_max(value, Relaxed);
        RANK_BEST.fetch_max(before, Relaxed);
    }
}

/// The best value known here, re-read from the global word every
/// `REFRESH` calls on this rank.
fn known_best<const SEQ: bool>(best: GlobalAtomicU64) -> u64 {
    if !SEQ {
        let since = SINCE_REFRESH.load(Relaxed) + 1;
        if since >= REFRESH.load(Relaxed) {
            SINCE_REFRESH.store(0, Relaxed);
            RANK_BEST.fetch_max(best.load(Relaxed), Relaxed);
        } else {
            SINCE_REFRESH.store(since, Relaxed);
        }
    }
    RANK_BEST.load(Relaxed)
}

/// What one node leads to.
enum Branch {
    /// A leaf, or pruned by the bound.
    Done,
    /// Only skipping the item is possible (it does not fit).
    Skip(Node),
    /// Take the item, or skip it.
    Both(Node, Node),
}

impl Instance {
    /// The search's first node: no item decided, all the room left.
    fn root(&self) -> Node {
        Node {
            item: 0,
            room: self.capacity,
            value: 0,
        }
    }

    /// The children of `node` (whose value the caller has already offered
    /// as a best value), given the best value known now.
    fn branch(&self, node: Node, known_best: impl FnOnce() -> u64) -> Branch {
        if node.item == self.n {
            return Branch::Done;
        }
        let (w, p) = (self.weight[node.item], self.profit[node.item]);
        // The rest of the room filled at this item's ratio, the best left.
        if node.value + node.room * p / w <= known_best() {
            return Branch::Done;
        }
        let skip = Node {
            item: node.item + 1,
            ..node
        };
        if w > node.room {
            return Branch::Skip(skip);
        }
        let take = Node {
            item: node.item + 1,
            room: node.room - w,
            value: node.value + p,
        };
        Branch::Both(take, skip)
    }
}

/// Searches below `node`; returns the number of nodes visited.
fn search<const SEQ: bool>(best: GlobalAtomicU64, node: Node) -> u64 {
    improve::<SEQ>(best, node.value);
    // `instance()` again in every call: nothing process-local is held
    // across the join (a stolen continuation runs on another rank).
    match instance().branch(node, || known_best::<SEQ>(best)) {
        Branch::Done => 1,
        Branch::Skip(skip) => 1 + search::<SEQ>(best, skip),
        Branch::Both(take, skip) => {
            let (a, b) = if SEQ {
                (search::<SEQ>(best, take), search::<SEQ>(best, skip))
            } else {
                uat::join(move || search::<SEQ>(best, take), move || search::<SEQ>(best, skip))
            };
            1 + a + b
        }
    }
}

/// (optimum, nodes visited).
fn solve<const SEQ: bool>() -> (u64, u64) {
    let best = GlobalAtomicU64::new(0);
    RANK_BEST.store(0, Relaxed);
    let nodes = search::<SEQ>(best, instance().root());
    let optimum = if SEQ {
        RANK_BEST.load(Relaxed)
    } else {
        best.load(Relaxed)
    };
    best.free();
    (optimum, nodes)
}

fn main() {
    let (gasnet, mut o) = uat::cli::start::<Options>("knapsack");
    let (default_items, default_range) = o.class.default_size();
    let items = o.items.map_or(default_items, |n| n as usize);
    let range = o.range.unwrap_or(default_range);
    let inst = INSTANCE.get_or_init(|| Instance::generate(o.class, items, range, o.seed));
    REFRESH.store(o.bound_refresh, Relaxed);
    // --verify-dp: the dynamic program is the timed path, on rank 0.
    o.common.seq |= o.verify_dp;
    // SAFETY: the benchmark's tasks keep only plain values (tree nodes,
    // board masks, depths, global-memory handles) across spawn and join,
    // and `gasnet` serves only for its rank and to end the job from here on.
    let h = unsafe { Harness::start(gasnet, o.common.clone()) };
    let outcome = if o.verify_dp {
        h.measure(solve::<false>, || (inst.dynamic_program(), 0))
    } else {
        h.measure(solve::<false>, solve::<true>)
    };
    let mut extra = Map::new();
    let mut expected = None;
    let outcome = outcome.map(
        |Outcome {
             value: (optimum, nodes),
             time_s,
         }| {
            // Rank 0, outside the timed region: the other algorithm's answer.
            expected = Some(if o.verify_dp {
                solve::<true>().0
            } else {
                inst.dynamic_program()
            });
            extra.insert(
                "solver".into(),
                json!(if o.verify_dp { "dp" } else { "branch-and-bound" }),
            );
            extra.insert("nodes".into(), json!(nodes));
            extra.insert("throughput".into(), json!((nodes as f64 / time_s.max(1e-9)).round()));
            Outcome { value: optimum, time_s }
        },
    );
    h.finish(
        "knapsack",
        json!({"class": o.class.name(), "seed": o.seed, "items": items, "range": range,
               "capacity": inst.capacity, "bound_refresh": o.bound_refresh}),
        outcome,
        expected,
        extra,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subset, for tiny instances.
    fn brute_force(inst: &Instance) -> u64 {
        (0u32..1 << inst.n)
            .filter_map(|set| {
                let (mut w, mut p) = (0, 0);
                for j in (0..inst.n).filter(|j| set >> j & 1 == 1) {
                    w += inst.weight[j];
                    p += inst.profit[j];
                }
                (w <= inst.capacity).then_some(p)
            })
            .max()
            .unwrap()
    }

    #[test]
    fn classes_have_their_shape_and_items_are_sorted_by_ratio() {
        for class in [Class::Uncorrelated, Class::Weak, Class::Strong] {
            let inst = Instance::generate(class, 40, 1000, 7);
            let total: u64 = inst.weight[..40].iter().sum();
            assert_eq!(inst.capacity, total / 2);
            for j in 0..40 {
                let (w, p) = (inst.weight[j], inst.profit[j]);
                assert!((1..=1000).contains(&w), "{class:?}");
                match class {
                    Class::Uncorrelated => assert!((1..=1000).contains(&p)),
                    Class::Weak => assert!(p >= 1 && p + 100 >= w && p <= w + 100),
                    Class::Strong => assert_eq!(p, w + 100),
                }
                if j > 0 {
                    let (w0, p0) = (inst.weight[j - 1], inst.profit[j - 1]);
                    assert!(p0 * w >= p * w0, "{class:?}: sorted by ratio");
                }
            }
        }
    }

    /// The search's recursion over `Instance::branch` with a plain best
    /// value (unit tests run no GASNet): (optimum, nodes).
    fn serial(inst: &Instance, node: Node, best: &mut u64) -> u64 {
        *best = (*best).max(node.value);
        let known = *best;
        1 + match inst.branch(node, || known) {
            Branch::Done => 0,
            Branch::Skip(skip) => serial(inst, skip, best),
            Branch::Both(take, skip) => serial(inst, take, best) + serial(inst, skip, best),
        }
    }

    #[test]
    fn branch_and_bound_and_dynamic_program_agree_with_brute_force() {
        for class in [Class::Uncorrelated, Class::Weak, Class::Strong] {
            for seed in 1..=20 {
                let inst = Instance::generate(class, 14, 50, seed);
                let want = brute_force(&inst);
                assert_eq!(inst.dynamic_program(), want, "{class:?} seed {seed}: dp");
                let mut best = 0;
                let nodes = serial(&inst, inst.root(), &mut best);
                assert_eq!(best, want, "{class:?} seed {seed}: branch-and-bound");
                assert!(
                    nodes < 1 << 15,
                    "{class:?} seed {seed}: the bound prunes ({nodes} nodes)"
                );
            }
        }
    }

    #[test]
    fn the_default_classes_agree_with_the_dynamic_program() {
        for class in [Class::Uncorrelated, Class::Weak, Class::Strong] {
            let (n, range) = class.default_size();
            let inst = Instance::generate(class, n, range, 3);
            let mut best = 0;
            let nodes = serial(&inst, inst.root(), &mut best);
            assert_eq!(best, inst.dynamic_program(), "{class:?}");
            assert!(nodes >= 1_000_000, "{class:?}: {nodes} nodes");
        }
    }
}
