//! UTS, the Unbalanced Tree Search benchmark (Olivier et al., LCPC 2006),
//! implemented from the specification in shared/reference/UTS.md.
//!
//! Every node's state is a SHA-1 digest; a child's state is the SHA-1 of its
//! parent's state and its index, so the tree is the same however it is
//! traversed. The children of a node are visited by binary splitting of their
//! index range (every task spawns zero or two subtasks).

use clap::Parser;
use serde_json::json;
use sha1::{Digest, Sha1};
use std::arch::x86_64::{__m128i, _mm_set_epi32, _mm_setzero_si128};
use uat_bench::{Common, Fork, Harness, Kernel, ModelArg, RayonArg, VsSeq};

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

/// The tree's parameters, as plain data every task can copy.
#[derive(Clone, Copy, Debug)]
struct Tree {
    kind: u32,
    b0: f64,
    shape: u32,
    depth: u32,
    q: f64,
    m: u32,
    f: f64,
}

#[derive(Clone, Copy)]
struct Node {
    /// The node's SHA-1 digest as its five 32-bit words (the digest's bytes
    /// are these words, big-endian).
    state: [u32; 5],
    height: u32,
}

/// Nodes, leaves and the deepest height seen in a subtree.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Counts {
    nodes: u64,
    leaves: u64,
    depth: u64,
}

impl Counts {
    fn add(self, o: Counts) -> Counts {
        Counts {
            nodes: self.nodes + o.nodes,
            leaves: self.leaves + o.leaves,
            depth: self.depth.max(o.depth),
        }
    }
}

/// SHA-1's initial state (FIPS 180-4, 5.3.1).
const SHA1_INIT: [u32; 5] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0];

fn root(seed: u32) -> Node {
    let mut msg = [0u8; 20];
    msg[16..].copy_from_slice(&seed.to_be_bytes());
    let digest: [u8; 20] = Sha1::digest(msg).into();
    Node {
        state: std::array::from_fn(|k| u32::from_be_bytes(digest[4 * k..4 * k + 4].try_into().unwrap())),
        height: 0,
    }
}

/// The child's state: SHA-1 of the parent's 20-byte digest and the index
/// (big-endian), 24 bytes, which is one padded 64-byte block.
fn child(parent: &Node, i: u32) -> Node {
    let mut state = SHA1_INIT;
    sha1::compress(&mut state, &[message_block(&parent.state, i).into()]);
    Node {
        state,
        height: parent.height + 1,
    }
}

/// The one SHA-1 block of a child's message: the parent's digest, the
/// index, the 0x80 that ends the message, zeros, and its length (192 bits),
/// all big-endian.
///
/// Each 16-byte quarter is built in a register and stored whole, because
/// SHA-1 loads the block a quarter at a time: a quarter written in pieces
/// (as copying the digest bytes and padding into a buffer does) makes each
/// of those loads span several stores still in the store buffer, which
/// cannot be forwarded, and the load waits for all of them to reach the
/// cache: 29% of the serial time of T1 (docs/results/2026-11-25-dev2core-uts-block/).
fn message_block(digest: &[u32; 5], i: u32) -> [u8; 64] {
    // Lane 0 of _mm_set_epi32 is the lowest address: each lane holds one
    // big-endian word, i.e. the native word byte-swapped.
    let be = |w: u32| w.swap_bytes() as i32;
    let [d0, d1, d2, d3, d4] = *digest;
    // SAFETY: SSE2 is part of x86-64, the only platform uat supports.
    let quarters: [__m128i; 4] = unsafe {
        [
            _mm_set_epi32(be(d3), be(d2), be(d1), be(d0)),
            _mm_set_epi32(0, be(0x8000_0000), be(i), be(d4)),
            _mm_setzero_si128(),
            _mm_set_epi32(be(24 * 8), 0, 0, 0),
        ]
    };
    // SAFETY: [__m128i; 4] and [u8; 64] have the same size, and every bit
    // pattern is a valid [u8; 64].
    unsafe { std::mem::transmute::<[__m128i; 4], [u8; 64]>(quarters) }
}

fn rand(state: &[u32; 5]) -> u32 {
    state[4] & 0x7fff_ffff
}

impl Tree {
    fn children(&self, node: &Node) -> u32 {
        let h = node.height;
        let binomial = match self.kind {
            0 => true,
            1 => false,
            _ => (h as f64) >= self.f * self.depth as f64,
        };
        if binomial {
            if h == 0 {
                return self.b0.floor() as u32; // the root draws nothing
            }
            let u = rand(&node.state) as f64 / 2147483648.0;
            return if u < self.q { self.m } else { 0 };
        }
        let (b0, d, hf) = (self.b0, self.depth as f64, h as f64);
        let bh = if h == 0 {
            b0
        } else {
            match self.shape {
                0 => b0 * (1.0 - hf / d),
                1 => b0 * hf.powf(-b0.ln() / d.ln()),
                2 => {
                    if hf > 5.0 * d {
                        0.0
                    } else {
                        b0.powf((2.0 * std::f64::consts::PI * hf / d).sin())
                    }
                }
                _ => {
                    if h < self.depth {
                        b0
                    } else {
                        0.0
                    }
                }
            }
        };
        if bh <= 0.0 {
            return 0;
        }
        let p = 1.0 / (1.0 + bh);
        let u = rand(&node.state) as f64 / 2147483648.0;
        let n = ((1.0 - u).ln() / (1.0 - p).ln()).floor();
        n.clamp(0.0, 100.0) as u32
    }
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

/// Visits `node` and its subtree.
fn visit<F: Fork>(t: Tree, node: Node) -> Counts {
    let n = t.children(&node);
    if n == 0 {
        return Counts {
            nodes: 1,
            leaves: 1,
            depth: node.height as u64,
        };
    }
    let below = visit_children::<F>(t, node, 0, n);
    Counts {
        nodes: below.nodes + 1,
        leaves: below.leaves,
        depth: below.depth.max(node.height as u64),
    }
}

/// Visits children `lo..hi` of `parent`, splitting the range in halves.
fn visit_children<F: Fork>(t: Tree, parent: Node, lo: u32, hi: u32) -> Counts {
    if hi - lo == 1 {
        return visit::<F>(t, child(&parent, lo));
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = F::join(
        move || visit_children::<F>(t, parent, lo, mid),
        move || visit_children::<F>(t, parent, mid, hi),
    );
    a.add(b)
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
    use super::*;

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
