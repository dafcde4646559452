//! UTS in global memory (Itoyori's UTS++): the UTS tree of `uts` built as
//! real data — one global allocation per node, made by the task that
//! creates the node, holding the node's SHA-1 state, height, child count
//! and its children's handles — in parallel; then traversed again in
//! parallel from those handles alone (count, max depth, checksum of the
//! stored states); then freed in parallel. Every phase splits a node's
//! children by binary halving (as `uts` does), so every task spawns zero
//! or two subtasks.
//!
//! Verified every run: the node count and depth against the plain UTS
//! count of the same parameters (computed serially on rank 0 after the
//! timed run, outside the clock), and the build's checksum and count
//! against the traversal's and the free's.

use std::time::Instant;

use clap::Parser;
use serde_json::json;
use uat::global::GlobalSlice;
use uat_bench::{splitmix, Common, Fork, Harness, Kernel, Serial, VsSeq};

#[path = "uts_tree.rs"]
mod uts_tree;
use uts_tree::{child, root, visit, Node, Tree};

/// Builds an unbalanced tree (UTS) in global memory, one allocation per
/// node, traverses it and frees it, all in parallel.
///
/// Each node's record (on the rank of the task that created it) holds its
/// SHA-1 state, height, child count and one 16-byte handle per child; a
/// parent allocates its record first, each child task writes its own
/// handle into its slot (possibly across the network). The traversal
/// reads the records alone; the free reads each slot, frees the subtree,
/// then the record. Prints one JSON line: `nodes`, `depth`, `checksum`,
/// `build_s`, `traverse_s`, `free_s`, `fetched_bytes`, `hit_rate` (of the
/// software cache, which serves other hosts' memory: udp --real-udp, mpi
/// without shared memory; null where all memory is mapped) and
/// `verified` (the count and depth equal the plain UTS count's, and
/// build, traversal and free agree). Exits 1 on a wrong answer.
///
/// The default tree (-t 1 -a 3 -b 4 -d 9 -r 19) has 1,031,269 nodes,
/// about 150 MB of records; a node takes 128 + 16·children bytes of the
/// local half of UAT_GLOBAL_HEAP (1G per rank by default): raise it for
/// trees of more than about 3M nodes on one rank.
#[derive(Parser, Debug)]
#[command(name = "uts-mem", version, verbatim_doc_comment)]
struct Options {
    /// Tree type: 0 binomial, 1 geometric, 2 hybrid.
    #[arg(short = 't', default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=2))]
    tree: u32,
    /// Root branching factor (b0).
    #[arg(short = 'b', default_value_t = 4.0)]
    b0: f64,
    /// Root seed.
    #[arg(short = 'r', default_value_t = 19)]
    seed: u32,
    /// Geometric shape: 0 linear, 1 exponential, 2 cyclic, 3 fixed.
    #[arg(short = 'a', default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=3))]
    shape: u32,
    /// Depth parameter D of the geometric tree.
    #[arg(short = 'd', default_value_t = 9)]
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
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    vs_seq: VsSeq,
}

/// Words of a record before the children's handles: the state (5 × u32
/// in words 0–2, with the height in the top half of word 2) and the
/// child count (word 3).
const HEADER: usize = 4;
/// Words of one child's handle (`GlobalSlice::to_raw`).
const LINK: usize = 2;

/// Nodes, the deepest height and the checksum of a subtree.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Sum {
    nodes: u64,
    depth: u64,
    checksum: u64,
}

impl Sum {
    fn one(state: &[u32; 5], height: u32) -> Sum {
        Sum {
            nodes: 1,
            depth: height as u64,
            checksum: node_hash(state, height),
        }
    }

    fn add(self, o: Sum) -> Sum {
        Sum {
            nodes: self.nodes + o.nodes,
            depth: self.depth.max(o.depth),
            checksum: self.checksum.wrapping_add(o.checksum),
        }
    }
}

/// A node's contribution to the checksum: a hash of its state and height.
fn node_hash(state: &[u32; 5], height: u32) -> u64 {
    let a = (state[0] as u64) << 32 | state[1] as u64;
    let b = (state[2] as u64) << 32 | state[3] as u64;
    let c = (state[4] as u64) << 32 | height as u64;
    splitmix(a ^ c.rotate_left(17), b)
}

fn encode(node: &Node, n: u32) -> [u64; HEADER] {
    let s = node.state;
    [
        s[0] as u64 | (s[1] as u64) << 32,
        s[2] as u64 | (s[3] as u64) << 32,
        s[4] as u64 | (node.height as u64) << 32,
        n as u64,
    ]
}

/// (state, height, child count) of a record's header.
fn decode(h: &[u64]) -> ([u32; 5], u32, u32) {
    let state = [
        h[0] as u32,
        (h[0] >> 32) as u32,
        h[1] as u32,
        (h[1] >> 32) as u32,
        h[2] as u32,
    ];
    (state, (h[2] >> 32) as u32, h[3] as u32)
}

/// A node's record, from its handle.
fn record(raw: [u64; 2]) -> GlobalSlice<u64> {
    // SAFETY: every handle in this program is `to_raw` of a record (a
    // `GlobalSlice<u64>`), read back between its build and its free: the
    // traversal runs after the build's join, and the free reads a child's
    // handle before it frees that child's subtree, and frees a record
    // only after every use of it (its children's joins).
    unsafe { GlobalSlice::from_raw(raw) }
}

/// A subtree built: its root's handle and what the build saw.
#[derive(Clone, Copy)]
struct Built {
    raw: [u64; 2],
    sum: Sum,
}

/// Builds `node`'s subtree: allocates its record here, writes the header,
/// then builds the children (each writes its handle into its slot).
fn build<F: Fork>(t: Tree, node: Node) -> Built {
    let n = t.children(&node);
    let rec = GlobalSlice::<u64>::alloc(HEADER + LINK * n as usize);
    let header = encode(&node, n);
    rec.write(|w| {
        w[..HEADER].copy_from_slice(&header);
        w[HEADER..].fill(0);
    });
    let mut sum = Sum::one(&node.state, node.height);
    if n > 0 {
        sum = sum.add(build_children::<F>(t, node, rec, 0, n));
    }
    Built { raw: rec.to_raw(), sum }
}

fn slot(rec: GlobalSlice<u64>, i: u32) -> GlobalSlice<u64> {
    let at = HEADER + LINK * i as usize;
    rec.slice(at..at + LINK)
}

fn build_children<F: Fork>(t: Tree, parent: Node, rec: GlobalSlice<u64>, lo: u32, hi: u32) -> Sum {
    if hi - lo == 1 {
        let b = build::<F>(t, child(&parent, lo));
        slot(rec, lo).write(|s| s.copy_from_slice(&b.raw));
        return b.sum;
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = F::join(
        move || build_children::<F>(t, parent, rec, lo, mid),
        move || build_children::<F>(t, parent, rec, mid, hi),
    );
    a.add(b)
}

/// Traverses the subtree whose root record `raw` names, from memory.
fn traverse<F: Fork>(raw: [u64; 2]) -> Sum {
    let rec = record(raw);
    let (state, height, n) = rec.slice(..HEADER).read(decode);
    let sum = Sum::one(&state, height);
    if n == 0 {
        return sum;
    }
    sum.add(traverse_children::<F>(rec, 0, n))
}

fn traverse_children<F: Fork>(rec: GlobalSlice<u64>, lo: u32, hi: u32) -> Sum {
    if hi - lo == 1 {
        let raw = slot(rec, lo).read(|s| [s[0], s[1]]);
        return traverse::<F>(raw);
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = F::join(
        move || traverse_children::<F>(rec, lo, mid),
        move || traverse_children::<F>(rec, mid, hi),
    );
    a.add(b)
}

/// Frees the subtree whose root record `raw` names; returns its nodes.
fn free<F: Fork>(raw: [u64; 2]) -> u64 {
    let rec = record(raw);
    let n = rec.get(HEADER - 1) as u32;
    let below = if n > 0 { free_children::<F>(rec, 0, n) } else { 0 };
    rec.free();
    below + 1
}

fn free_children<F: Fork>(rec: GlobalSlice<u64>, lo: u32, hi: u32) -> u64 {
    if hi - lo == 1 {
        let raw = slot(rec, lo).read(|s| [s[0], s[1]]);
        return free::<F>(raw);
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = F::join(
        move || free_children::<F>(rec, lo, mid),
        move || free_children::<F>(rec, mid, hi),
    );
    a + b
}

/// What one run found. Equal runs have the same tree, whatever their times.
#[derive(Clone, Copy, Debug)]
struct MemRun {
    /// Nodes and depth counted by the traversal.
    nodes: u64,
    checksum: u64,
    /// 0 when build, traversal and free agree; else which disagreed
    /// (bit 0 checksum, bit 1 count, bit 2 depth, bit 3 freed count).
    mismatch: u64,
    depth: u32,
    /// build, traverse, free (seconds).
    times: [f32; 3],
}

impl PartialEq for MemRun {
    fn eq(&self, o: &MemRun) -> bool {
        (self.nodes, self.checksum, self.mismatch, self.depth) == (o.nodes, o.checksum, o.mismatch, o.depth)
    }
}

/// The benchmark: build, traverse and free the tree of `seed`.
#[derive(Clone, Copy)]
struct UtsMem {
    tree: Tree,
    seed: u32,
}

impl Kernel for UtsMem {
    type Output = MemRun;
    /// The phases are timed inside the root task: its continuation may
    /// move to another rank, whose CLOCK_MONOTONIC is the same on one host
    /// (not comparable across hosts).
    fn run<F: Fork>(self) -> MemRun {
        let t0 = Instant::now();
        let built = build::<F>(self.tree, root(self.seed));
        let t1 = Instant::now();
        let seen = traverse::<F>(built.raw);
        let t2 = Instant::now();
        let freed = free::<F>(built.raw);
        let t3 = Instant::now();
        let (b, s) = (built.sum, seen);
        let mismatch = (b.checksum != s.checksum) as u64
            | ((b.nodes != s.nodes) as u64) << 1
            | ((b.depth != s.depth) as u64) << 2
            | ((freed != s.nodes) as u64) << 3;
        MemRun {
            nodes: s.nodes,
            checksum: s.checksum,
            mismatch,
            depth: s.depth as u32,
            times: [
                (t1 - t0).as_secs_f32(),
                (t2 - t1).as_secs_f32(),
                (t3 - t2).as_secs_f32(),
            ],
        }
    }
}

fn micros(s: f32) -> f64 {
    (s as f64 * 1e6).round() / 1e6
}

fn main() {
    let (gasnet, o) = uat::cli::start::<Options>("uts-mem");
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
    // global-memory handles) across spawn and join, and `gasnet` serves
    // only for its rank and to end the job from here on.
    let h = unsafe { Harness::start(gasnet, o.common.clone()) };
    let (outcome, mut extra) = h.measure_kernel(o.vs_seq, UtsMem { tree, seed: o.seed });
    let stats = h.runtime.stats();
    let mut expected = None;
    if let Some(out) = &outcome {
        let r = out.value;
        // The plain UTS count of the same tree, serially, off the clock.
        let plain = visit::<Serial>(tree, root(o.seed));
        expected = Some(plain.nodes);
        let [build_s, traverse_s, free_s] = r.times;
        extra.insert("nodes".into(), json!(r.nodes));
        extra.insert("depth".into(), json!(r.depth));
        extra.insert("checksum".into(), json!(format!("{:016x}", r.checksum)));
        extra.insert("build_s".into(), json!(micros(build_s)));
        extra.insert("traverse_s".into(), json!(micros(traverse_s)));
        extra.insert("free_s".into(), json!(micros(free_s)));
        extra.insert("plain_nodes".into(), json!(plain.nodes));
        extra.insert("plain_depth".into(), json!(plain.depth));
        extra.insert("mismatch".into(), json!(r.mismatch));
        extra.extend(uat_bench::memory_fields(&stats));
        if r.mismatch != 0 || r.depth as u64 != plain.depth {
            eprintln!(
                "error: uts-mem: WRONG ANSWER: build, traversal and free disagree (mismatch bits {:#b}: 1 checksum, \
                 2 count, 4 depth, 8 freed count) or the depth {} is not the plain count's {}",
                r.mismatch, r.depth, plain.depth
            );
            gasnet.exit(1);
        }
    }
    let params = json!({"t": o.tree, "b": o.b0, "r": o.seed, "a": o.shape, "d": o.depth, "q": o.q, "m": o.m, "f": o.f});
    h.finish(
        "uts-mem",
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

    #[test]
    fn a_record_header_round_trips() {
        let node = child(&root(19), 3);
        let (state, height, n) = decode(&encode(&node, 77));
        assert_eq!((state, height, n), (node.state, node.height, 77));
    }
}
