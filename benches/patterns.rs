//! Parallel patterns over global memory against a plain loop over a `Vec`
//! and against rayon, on the same keys: one operation per run, timed alone
//! (generation before, verification after). The operations:
//!
//! - `for-each-mut`: `x = 3x + 1` on every element (`for_each_mut` /
//!   `par_iter_mut().for_each`);
//! - `map-reduce`: the sum of `x >> 32` (`map_reduce(.., Sum)` /
//!   `par_iter().map().sum()`);
//! - `scan`: the inclusive prefix sums of `x >> 40` into a second array
//!   (`inclusive_scan`; rayon has none: its side is a two-pass scan over
//!   chunks, as the pattern does);
//! - `histogram`: 256 buckets of the top byte (`map_reduce(.., Histogram)`
//!   / `fold` + `reduce` of arrays);
//! - `filter`: the elements divisible by 4, in order, into a new array
//!   (`filter` / `par_iter().filter().collect()`);
//! - `sort`: `sort_unstable` / `par_sort_unstable`.
//!
//! The answer of every run is a checksum of the operation's output, checked
//! against the same checksum of a serial computation on rank 0 (made before
//! the clock starts). `op_s` is the operation alone; `gbps` its bytes
//! (read plus written, 8 per element each) over `op_s`. `--loop` runs the
//! serial loop over a `Vec` on rank 0; `--rayon THREADS` runs rayon over a
//! `Vec` in a pool of that many threads (one rank); `--seq` runs the
//! pattern's serial elision (`Policy::sequential`).

use std::time::Instant;

use clap::{Parser, ValueEnum};
use rayon::prelude::*;
use serde_json::{json, Map};
use uat::global::GlobalSlice;
use uat::pattern::{self, Histogram, Policy, Sum};
use uat_bench::{Common, Harness, RayonArg};

/// What to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Op {
    /// x = 3x + 1 on every element.
    ForEachMut,
    /// The sum of x >> 32.
    MapReduce,
    /// Inclusive prefix sums of x >> 40 into a second array.
    Scan,
    /// 256 buckets of the top byte.
    Histogram,
    /// The elements divisible by 4, in order.
    Filter,
    /// Sort ascending.
    Sort,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::ForEachMut => "for-each-mut",
            Op::MapReduce => "map-reduce",
            Op::Scan => "scan",
            Op::Histogram => "histogram",
            Op::Filter => "filter",
            Op::Sort => "sort",
        }
    }

    /// Bytes the operation reads and writes per element.
    fn bytes_per_element(self) -> u64 {
        match self {
            Op::ForEachMut | Op::Scan => 16,
            Op::MapReduce | Op::Histogram => 8,
            // Read once, and a quarter written.
            Op::Filter => 10,
            // Read and written at each of log4(n) merge levels: counted once.
            Op::Sort => 16,
        }
    }
}

/// One pattern over N pseudo-random u64 in global memory, against a plain
/// loop and rayon.
#[derive(Parser, Debug)]
#[command(name = "patterns", version)]
struct Options {
    /// The operation.
    #[arg(long, value_enum, default_value_t = Op::MapReduce)]
    op: Op,
    /// Number of elements.
    #[arg(short, default_value_t = 1 << 24, value_parser = clap::value_parser!(u64).range(1..=(1u64 << 32)))]
    n: u64,
    /// Seed of the keys.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Elements per leaf task (0: the pattern's default).
    #[arg(long, default_value_t = 0)]
    grain: u64,
    /// Bytes per checkout (0: the pattern's default).
    #[arg(long, default_value_t = 0)]
    checkout: u64,
    /// The plain serial loop over a `Vec` on rank 0 instead (the baseline).
    #[arg(long = "loop")]
    plain_loop: bool,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    rayon: RayonArg,
}

fn key(seed: u64, i: u64) -> u64 {
    uat_bench::splitmix(seed, i)
}

fn fold(sum: u64, x: u64) -> u64 {
    sum.rotate_left(5) ^ x.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The checksum of an output array in order.
fn ordered(xs: &[u64]) -> u64 {
    xs.iter().fold(xs.len() as u64, |s, &x| fold(s, x))
}

fn histogram_checksum(h: &[u64; 256]) -> u64 {
    ordered(h)
}

/// An operation's input from the keys (before the clock): the scan sums
/// `x >> 40` (no wrap-around at 2^32 elements).
fn prepare(op: Op, keys: &mut [u64]) {
    if op == Op::Scan {
        keys.iter_mut().for_each(|x| *x >>= 40);
    }
}

/// What an operation left: a value, or its output in the keys or in `out`.
enum Left {
    Value(u64),
    Keys,
    Out,
}

/// The checksum of what an operation left (after the clock).
fn checksum(left: Left, keys: &[u64], out: &[u64]) -> u64 {
    match left {
        Left::Value(v) => v,
        Left::Keys => ordered(keys),
        Left::Out => ordered(out),
    }
}

/// The serial loop over a `Vec` (the `--loop` system and the expected
/// answer). `out` is as long as `keys`.
fn serial(op: Op, keys: &mut [u64], out: &mut Vec<u64>) -> Left {
    match op {
        Op::ForEachMut => {
            keys.iter_mut().for_each(|x| *x = x.wrapping_mul(3).wrapping_add(1));
            Left::Keys
        }
        Op::MapReduce => Left::Value(keys.iter().map(|&x| x >> 32).sum()),
        Op::Scan => {
            let mut acc = 0u64;
            for (o, &x) in out.iter_mut().zip(keys.iter()) {
                acc += x;
                *o = acc;
            }
            Left::Out
        }
        Op::Histogram => {
            let mut h = [0u64; 256];
            keys.iter().for_each(|&x| h[(x >> 56) as usize] += 1);
            Left::Value(histogram_checksum(&h))
        }
        Op::Filter => {
            // A new vector, as the pattern makes a new array.
            *out = keys.iter().copied().filter(|x| x % 4 == 0).collect();
            Left::Out
        }
        Op::Sort => {
            keys.sort_unstable();
            Left::Keys
        }
    }
}

/// The same on rayon, in the current pool, written as a rayon user would.
fn rayon_op(op: Op, keys: &mut [u64], out: &mut Vec<u64>) -> Left {
    match op {
        Op::ForEachMut => {
            keys.par_iter_mut().for_each(|x| *x = x.wrapping_mul(3).wrapping_add(1));
            Left::Keys
        }
        Op::MapReduce => Left::Value(keys.par_iter().map(|&x| x >> 32).sum()),
        Op::Scan => {
            // Two passes over chunks (rayon has no scan): chunk totals, their
            // serial prefix, then each chunk's sums from its offset.
            let chunk = (keys.len() / (4 * rayon::current_num_threads())).max(4096);
            let totals: Vec<u64> = keys.par_chunks(chunk).map(|c| c.iter().sum()).collect();
            let mut offsets = Vec::with_capacity(totals.len());
            let mut acc = 0u64;
            for t in &totals {
                offsets.push(acc);
                acc += t;
            }
            out.par_chunks_mut(chunk)
                .zip(keys.par_chunks(chunk))
                .zip(offsets.par_iter())
                .for_each(|((o, k), &off)| {
                    let mut acc = off;
                    for (o, &x) in o.iter_mut().zip(k) {
                        acc += x;
                        *o = acc;
                    }
                });
            Left::Out
        }
        Op::Histogram => {
            let h = keys
                .par_chunks(1 << 14)
                .map(|c| {
                    let mut h = [0u64; 256];
                    c.iter().for_each(|&x| h[(x >> 56) as usize] += 1);
                    h
                })
                .reduce(
                    || [0u64; 256],
                    |mut a, b| {
                        a.iter_mut().zip(b.iter()).for_each(|(a, b)| *a += b);
                        a
                    },
                );
            Left::Value(histogram_checksum(&h))
        }
        Op::Filter => {
            *out = keys.par_iter().copied().filter(|x| x % 4 == 0).collect();
            Left::Out
        }
        Op::Sort => {
            keys.par_sort_unstable();
            Left::Keys
        }
    }
}

/// Runs `op` on `Vec`s with `run` (the loop or rayon): keys generated and
/// prepared before the clock, the checksum after it.
fn run_vec(op: Op, n: usize, seed: u64, run: impl FnOnce(Op, &mut [u64], &mut Vec<u64>) -> Left) -> Found {
    let mut keys = keys_vec(n, seed);
    prepare(op, &mut keys);
    // Every page of the output written before the clock (as the patterns'
    // prefaulted global arrays).
    let mut out = Vec::with_capacity(n);
    out.resize(n, 1u64);
    std::hint::black_box(&mut out);
    let start = Instant::now();
    let left = run(op, &mut keys, &mut out);
    let op_s = start.elapsed().as_secs_f64();
    Found {
        checksum: checksum(left, &keys, &out),
        op_s,
    }
}

/// The checksum of an output array in global memory, in order (serially:
/// only the answer's check, after the clock).
fn ordered_global(a: GlobalSlice<u64>) -> u64 {
    let mut s = a.len() as u64;
    let step = 1 << 13;
    let mut i = 0;
    while i < a.len() {
        let end = (i + step).min(a.len());
        s = a.slice(i..end).read(|xs| xs.iter().fold(s, |s, &x| fold(s, x)));
        i = end;
    }
    s
}

/// What one pattern run found: the output's checksum and the operation's
/// seconds.
#[derive(Clone, Copy)]
struct Found {
    checksum: u64,
    op_s: f64,
}

/// Generates the keys into `keys`, runs `op` under `policy` (timed), and
/// returns the output's checksum. `scratch` is as long as `keys` (the
/// scan's output).
fn run_pattern(op: Op, keys: GlobalSlice<u64>, scratch: GlobalSlice<u64>, seed: u64, policy: Policy) -> Found {
    policy.for_each_chunk_mut(keys, move |start, c: &mut [u64]| {
        for (j, x) in c.iter_mut().enumerate() {
            *x = key(seed, (start + j) as u64);
        }
    });
    if op == Op::Scan {
        policy.for_each_mut(keys, |x: &mut u64| *x >>= 40);
    }
    let start = Instant::now();
    let out = match op {
        Op::ForEachMut => {
            policy.for_each_mut(keys, |x: &mut u64| *x = x.wrapping_mul(3).wrapping_add(1));
            None
        }
        Op::MapReduce => Some(policy.map_reduce(keys, |x: u64| x >> 32, Sum::new())),
        Op::Scan => {
            policy.inclusive_scan(keys, scratch, Sum::new());
            None
        }
        Op::Histogram => {
            let h = policy.map_reduce(keys, |x: u64| (x >> 56) as usize, Histogram::<256>::new());
            Some(histogram_checksum(&h))
        }
        Op::Filter => {
            let kept = policy.filter(keys, |x: &u64| x.is_multiple_of(4));
            let op_s = start.elapsed().as_secs_f64();
            let checksum = ordered_global(kept);
            kept.free();
            return Found { checksum, op_s };
        }
        Op::Sort => {
            policy.sort_unstable_in(keys, scratch);
            None
        }
    };
    let op_s = start.elapsed().as_secs_f64();
    let checksum = match (op, out) {
        (_, Some(v)) => v,
        (Op::Scan, None) => ordered_global(scratch),
        (_, None) => ordered_global(keys),
    };
    Found { checksum, op_s }
}

/// A vector of the keys (every page written).
fn keys_vec(n: usize, seed: u64) -> Vec<u64> {
    (0..n as u64).map(|i| key(seed, i)).collect()
}

fn micros(s: f64) -> f64 {
    (s * 1e6).round() / 1e6
}

fn main() {
    let (gasnet, mut o) = uat::cli::start::<Options>("patterns");
    o.common.seq |= o.plain_loop;
    let (n, seed, op) = (o.n as usize, o.seed, o.op);
    let mut policy = Policy::default();
    if o.grain != 0 {
        policy = policy.with_grain(o.grain as usize);
    }
    if o.checkout != 0 {
        policy = policy.with_checkout(o.checkout as usize);
    }
    // SAFETY: the benchmark's tasks keep only plain values and global-memory
    // handles across spawn and join; `gasnet` serves only for its rank.
    let h = unsafe { Harness::start_system(gasnet, o.common.clone(), o.rayon, None) };
    let rank0 = h.rank() == 0;
    // The expected answer: the serial loop on rank 0, before any clock.
    let expected = rank0.then(|| run_vec(op, n, seed, serial).checksum);
    // What the measured run fetched and wrote across the network, and the
    // cache's hit rate (the pattern's run only).
    let mut memory = Map::new();
    let outcome = if o.plain_loop {
        let never = || -> Found { unreachable!("--loop runs the serial path") };
        h.measure(never, move || run_vec(op, n, seed, serial))
    } else if let Some(pool) = h.rayon_pool() {
        Some(h.measure_here(|| pool.install(|| run_vec(op, n, seed, rayon_op))))
    } else {
        // Block-distributed arrays, mapped on every rank before the clock
        // (as cilksort's).
        let slice = || {
            let s = if o.common.seq {
                h.runtime.run(move || GlobalSlice::<u64>::alloc(n))
            } else {
                h.runtime.run(move || GlobalSlice::<u64>::alloc_distributed(n))
            };
            let s = h.runtime.broadcast_value(s);
            s.prefault();
            s
        };
        let (keys, scratch) = (slice(), slice());
        let seq_policy = policy.sequential();
        let outcome = h.measure(
            move || run_pattern(op, keys, scratch, seed, policy),
            move || run_pattern(op, keys, scratch, seed, seq_policy),
        );
        // Collective: every rank, before the next run resets the counters.
        memory = uat_bench::memory_fields(&h.runtime.stats());
        h.runtime.run(move || {
            keys.free();
            scratch.free();
        });
        outcome
    };
    // What the leaves are: sorting cuts at its own default unless a grain
    // was set.
    let grain = if op == Op::Sort && o.grain == 0 {
        pattern::sort::SORT_CUTOFF
    } else {
        policy.grain()
    };
    let mut extra = Map::new();
    extra.extend(memory);
    let solver = if o.plain_loop {
        "loop"
    } else if o.rayon.rayon.is_some() {
        "rayon"
    } else {
        "pattern"
    };
    extra.insert("solver".into(), json!(solver));
    extra.insert("op".into(), json!(op.name()));
    if let Some(out) = &outcome {
        let bytes = op.bytes_per_element() * o.n;
        extra.insert("op_s".into(), json!(micros(out.value.op_s)));
        extra.insert("bytes".into(), json!(bytes));
        extra.insert(
            "gbps".into(),
            json!((bytes as f64 / out.value.op_s.max(1e-9) / 1e9 * 1000.0).round() / 1000.0),
        );
    }
    let outcome = outcome.map(|x| uat_bench::Outcome {
        value: x.value.checksum,
        time_s: x.time_s,
    });
    h.finish(
        "patterns",
        json!({"n": o.n, "seed": seed, "op": op.name(), "grain": grain, "checkout": policy.checkout()}),
        outcome,
        expected,
        extra,
    )
}
