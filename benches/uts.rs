//! UTS, the Unbalanced Tree Search benchmark (Olivier et al., LCPC 2006),
//! implemented from the specification in shared/reference/UTS.md.
//!
//! Every node's state is a SHA-1 digest; a child's state is the SHA-1 of its
//! parent's state and its index, so the tree is the same however it is
//! traversed. The children of a node are visited by binary splitting of their
//! index range (every task spawns zero or two subtasks).

use clap::Parser;
use serde_json::json;
use uat_bench::{Common, Fork, Harness, Kernel, ModelArg, RayonArg, VsSeq};

#[path = "uts_tree.rs"]
mod uts_tree;
use uts_tree::{root, visit, Counts, Tree};

/// Counts the nodes of an unbalanced tree (UTS), in parallel with uni-address
/// threads. Prints one JSON line; `verified` compares with the published
/// sample trees (T1..T5, T1L, T3L, T1XXL) or --expect-nodes.
#[derive(Parser, Debug)]
#[command(name = "uts", version)]
struct Options {
    /// Tree type: 0 binomial, 1 geometric, 2 hybrid.
    #[arg(short = 't', default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=2))]
    tree: u32,
    /// Root branching factor (b0).
    #[arg(short = 'b', default_value_t = 4.0)]
    b0: f64,
    /// Root seed.
    #[arg(short = 'r', default_value_t = 0)]
    seed: u32,
    /// Geometric shape: 0 linear, 1 exponential, 2 cyclic, 3 fixed.
    #[arg(short = 'a', default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=3))]
    shape: u32,
    /// Depth parameter D of the geometric tree.
    #[arg(short = 'd', default_value_t = 6)]
    depth: u32,
    /// Binomial probability of a non-leaf.
    #[arg(short = 'q', default_value_t = 0.234375)]
    q: f64,
    /// Binomial number of children of a non-leaf.
    #[arg(short = 'm', default_value_t = 4)]
    m: u32,
    /// Hybrid: fraction of D after which the tree turns binomial.
    #[arg(short = 'f', default_value_t = 0.5)]
    f: f64,
    /// Expected node count (overrides the published table).
    #[arg(long)]
    expect_nodes: Option<u64>,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    vs_seq: VsSeq,
    #[command(flatten)]
    rayon: RayonArg,
    #[command(flatten)]
    model: ModelArg,
}

/// The whole tree from the root of `seed`.
#[derive(Clone, Copy)]
struct Uts {
    tree: Tree,
    seed: u32,
}

impl Kernel for Uts {
    type Output = Counts;
    fn run<F: Fork>(self) -> Counts {
        visit::<F>(self.tree, root(self.seed))
    }
}

/// The published sample trees: (name, t, b, r, a, d, q, m, nodes, depth, leaves).
type Published = (
    &'static str,
    u32,
    f64,
    u32,
    Option<u32>,
    Option<u32>,
    Option<f64>,
    Option<u32>,
    u64,
    u64,
    Option<u64>,
);
const PUBLISHED: [Published; 8] = [
    (
        "T1",
        1,
        4.0,
        19,
        Some(3),
        Some(10),
        None,
        None,
        4_130_071,
        10,
        Some(3_305_118),
    ),
    (
        "T5",
        1,
        4.0,
        34,
        Some(0),
        Some(20),
        None,
        None,
        4_147_582,
        20,
        Some(2_181_318),
    ),
    (
        "T2",
        1,
        6.0,
        502,
        Some(2),
        Some(16),
        None,
        None,
        4_117_769,
        81,
        Some(2_342_762),
    ),
    (
        "T3",
        0,
        2000.0,
        42,
        None,
        None,
        Some(0.124875),
        Some(8),
        4_112_897,
        1_572,
        Some(3_599_034),
    ),
    (
        "T4",
        2,
        6.0,
        1,
        Some(0),
        Some(16),
        Some(0.234375),
        Some(4),
        4_132_453,
        134,
        Some(3_108_986),
    ),
    (
        "T1L",
        1,
        4.0,
        29,
        Some(3),
        Some(13),
        None,
        None,
        102_181_082,
        13,
        Some(81_746_377),
    ),
    (
        "T3L",
        0,
        2000.0,
        7,
        None,
        None,
        Some(0.200014),
        Some(5),
        111_345_631,
        17_844,
        Some(89_076_904),
    ),
    (
        "T1XXL",
        1,
        4.0,
        19,
        Some(3),
        Some(15),
        None,
        None,
        4_230_646_601,
        15,
        None,
    ),
];

/// The published tree these options describe, if any. Parameters a tree
/// type does not use are ignored (binomial: -a -d; geometric: -q -m).
fn published(o: &Options) -> Option<&'static Published> {
    PUBLISHED.iter().find(|p| {
        let same = |want: Option<f64>, have: f64| want.is_none_or(|w| w == have);
        p.1 == o.tree
            && p.2 == o.b0
            && p.3 == o.seed
            && same(p.4.map(f64::from), o.shape as f64)
            && same(p.5.map(f64::from), o.depth as f64)
            && same(p.6, o.q)
            && same(p.7.map(f64::from), o.m as f64)
            && (o.tree != 2 || o.f == 0.5)
    })
}

fn main() {
    let (gasnet, o) = uat::cli::start::<Options>("uts");
    if !(o.b0 > 0.0 && o.q >= 0.0 && o.q <= 1.0 && o.f >= 0.0) || (o.tree != 0 && o.depth == 0) {
        if gasnet.rank() == 0 {
            eprintln!(
                "error: invalid tree: need -b > 0, 0 <= -q <= 1, -f >= 0, and -d >= 1 for geometric and hybrid trees"
            );
        }
        gasnet.exit(2);
    }
    let tree = Tree {
        kind: o.tree,
        b0: o.b0,
        shape: o.shape,
        depth: o.depth,
        q: o.q,
        m: o.m,
        f: o.f,
    };
    // SAFETY: the benchmark's tasks keep only plain values (tree nodes,
    // board masks, depths, global-memory handles) across spawn and join,
    // and `gasnet` serves only for its rank and to end the job from here on.
    let h = unsafe { Harness::start_system(gasnet, o.common.clone(), o.rayon, o.model.model_child) };
    let (outcome, mut extra) = h.measure_kernel(o.vs_seq, Uts { tree, seed: o.seed });
    let reference = published(&o);
    let expected = o.expect_nodes.or(reference.map(|p| p.8));
    if let Some(out) = &outcome {
        extra.insert("leaves".into(), json!(out.value.leaves));
        extra.insert("depth".into(), json!(out.value.depth));
        extra.insert("tree".into(), json!(reference.map(|p| p.0)));
        if let Some(p) = reference {
            // The published depth and leaf counts must match too.
            if out.value.depth != p.9 || p.10.is_some_and(|l| l != out.value.leaves) {
                eprintln!(
                    "error: {} has depth {} and {:?} leaves; computed depth {} and {} leaves",
                    p.0, p.9, p.10, out.value.depth, out.value.leaves
                );
                gasnet.exit(1);
            }
        }
    }
    let params = json!({"t": o.tree, "b": o.b0, "r": o.seed, "a": o.shape, "d": o.depth, "q": o.q, "m": o.m, "f": o.f});
    h.finish(
        "uts",
        params,
        outcome.map(|x| uat_bench::Outcome {
            value: x.value.nodes,
            time_s: x.time_s,
        }),
        expected,
        extra,
    )
}

#[cfg(test)]
mod tests {
    use super::uts_tree::{child, rand};
    use super::*;
    use sha1::{Digest, Sha1};

    fn hex(s: &[u32; 5]) -> String {
        s.iter().map(|w| format!("{w:08x}")).collect()
    }

    #[test]
    fn rng_matches_the_specification_test_vectors() {
        let r0 = root(0);
        assert_eq!(hex(&r0.state), "6768033e216468247bd031a0a2d9876d79818f8f");
        assert_eq!(rand(&r0.state), 2038534031);
        assert_eq!(hex(&root(19).state), "c6988ab70cc9559ae4d6cba254e29a845a85f86b");
        assert_eq!(rand(&root(19).state), 1518729323);
        assert_eq!(hex(&root(42).state), "a11dabbcec7aab309c890ab3dbc256eaeb582782");
        let c0 = child(&r0, 0);
        assert_eq!(hex(&c0.state), "f6b4e21a6db7135e161960a04c6bd6cab35bd8d3");
        assert_eq!(rand(&c0.state), 861657299);
        let c13 = child(&child(&r0, 1), 3);
        assert_eq!(hex(&c13.state), "2a191c070f56124e7f9320dafab1e446b9ed6f9b");
        assert_eq!(rand(&c13.state), 971861915);
    }

    #[test]
    fn a_child_state_is_the_sha1_of_its_parents_digest_and_index() {
        let mut node = root(7);
        for i in [0u32, 1, 3, 99, 0x8000_0000, u32::MAX] {
            let mut msg = [0u8; 24];
            for (k, w) in node.state.iter().enumerate() {
                msg[4 * k..4 * k + 4].copy_from_slice(&w.to_be_bytes());
            }
            msg[20..].copy_from_slice(&i.to_be_bytes());
            let want: [u8; 20] = Sha1::digest(msg).into();
            let got = child(&node, i);
            let got_bytes: Vec<u8> = got.state.iter().flat_map(|w| w.to_be_bytes()).collect();
            assert_eq!(got_bytes, want, "index {i}");
            node = got;
        }
    }

    #[test]
    fn geometric_roots_have_the_specified_branching() {
        let t = Tree {
            kind: 1,
            b0: 4.0,
            shape: 0,
            depth: 6,
            q: 0.0,
            m: 0,
            f: 0.5,
        };
        assert_eq!(t.children(&root(0)), 13);
        assert_eq!(t.children(&root(19)), 5);
    }

    #[test]
    fn a_small_tree_counts_the_same_however_it_is_split() {
        let t = Tree {
            kind: 1,
            b0: 4.0,
            shape: 3,
            depth: 5,
            q: 0.0,
            m: 0,
            f: 0.5,
        };
        let c = visit::<uat_bench::Serial>(t, root(19));
        assert!(c.nodes > 1 && c.leaves < c.nodes && c.depth <= 5, "{c:?}");
    }
}
