//! Sorting in global memory: N u64 keys in a block-distributed global
//! array, sorted by the library's `uat::pattern::Policy::sort_unstable_in`
//! (`--by`: `sort_unstable_by_in` with a comparison closure) with a
//! scratch array allocated before the clock starts. The library sorts parts
//! of up to 2 · 32 · cut-off keys with cilksort (Cilk's structure — split in
//! four, sort the quarters in parallel, merge pairs in parallel into the
//! scratch and back, each merge parallel by binary search — with leaf sorts
//! and serial merges below the cut-off, `--sort-cutoff`, the pattern's
//! grain) and longer ones by distribution (radix buckets for integer keys in
//! their own order, sample splitters otherwise; docs/design/patterns.md).
//! The bench keeps its name: it replaced a hand-written cilksort.
//! `--input random|few-distinct` picks the keys (`few-distinct`: the random
//! keys modulo 16). Verified every run: the
//! output is sorted and has the input's count and checksum (computed from
//! the generator on its own). Prints one JSON line; `time_s` covers the
//! parallel generation, the sort and the parallel check. Memory is
//! allocated and first touched before the clock starts, in both paths
//! (`alloc_s` says how long that took): first-touch page faults cost the
//! same whatever runs next, and a shared-memory page's fault here costs
//! several microseconds (docs/results/2026-11-23-dev2core-global-third/).
//! `sort_s` is the sort alone. `--rayon THREADS` sorts the same keys in a
//! `Vec` with rayon's `par_sort_unstable` (`--by`: `par_sort_unstable_by`)
//! in a pool of that many threads (generated and checked in parallel there
//! too): the peer on one node. `--sort-unstable` sorts them serially with
//! std's `sort_unstable` (`sort_unstable_by`).

use std::time::Instant;

use clap::Parser;
use rayon::prelude::*;
use serde_json::{json, Map};
use uat::global::GlobalSlice;
use uat_bench::{Common, Harness, RayonArg};

use uat::pattern::Policy;

/// Sorts N u64 keys in global memory (the library's parallel sort).
#[derive(Parser, Debug)]
#[command(name = "cilksort", version)]
struct Options {
    /// Number of keys.
    #[arg(short, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..=(1u64 << 32)))]
    n: u64,
    /// Seed of the keys.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Below this many keys a part is sorted, and a merge made, serially
    /// (Cilk's QUICKSIZE and MERGESIZE; the pattern's grain).
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u64).range(4..=2048))]
    sort_cutoff: u64,
    /// Time `slice::sort_unstable` of the same keys instead (generated,
    /// sorted and checked serially on rank 0, in a `Vec`): the baseline.
    #[arg(long)]
    sort_unstable: bool,
    /// The keys: `random` (splitmix of the seed and the index) or
    /// `few-distinct` (the same modulo 16). JSON "input".
    #[arg(long, value_enum, default_value_t = Input::Random)]
    input: Input,
    /// Sort by a comparison closure (`|x, y| x.cmp(y)`): the library's
    /// `sort_unstable_by_in`, rayon's `par_sort_unstable_by`, std's
    /// `sort_unstable_by`; without it by the keys' own order
    /// (`sort_unstable_in`, `par_sort_unstable`, `sort_unstable`). JSON "by".
    #[arg(long)]
    by: bool,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    rayon: RayonArg,
}

/// `--input`: which keys are sorted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Input {
    /// Pseudo-random u64 (every key distinct, as good as).
    Random,
    /// The random keys modulo 16: sixteen distinct keys.
    FewDistinct,
}

impl Input {
    /// The name in the JSON line (as on the command line).
    fn name(self) -> &'static str {
        match self {
            Input::Random => "random",
            Input::FewDistinct => "few-distinct",
        }
    }
}

/// What is generated: the seed and the input kind.
#[derive(Clone, Copy)]
struct Keys {
    seed: u64,
    few: bool,
}

impl Keys {
    fn key(self, i: u64) -> u64 {
        let k = uat_bench::splitmix(self.seed, i);
        if self.few {
            k % 16
        } else {
            k
        }
    }
}

/// The comparison of `--by` (the natural order, through a closure).
fn by(x: &u64, y: &u64) -> std::cmp::Ordering {
    x.cmp(y)
}

/// Runs `a` and `b`, in parallel unless `SEQ`.
fn both<const SEQ: bool, A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send + Copy + 'static,
    B: FnOnce() -> RB + Send + Copy + 'static,
    RA: Send + Copy + 'static,
    RB: Send + Copy + 'static,
{
    if SEQ {
        (a(), b())
    } else {
        uat::join(a, b)
    }
}

fn generate<const SEQ: bool>(a: GlobalSlice<u64>, first: u64, keys: Keys) {
    if a.len() <= 4096 {
        a.write(|x| {
            x.iter_mut()
                .enumerate()
                .for_each(|(i, v)| *v = keys.key(first + i as u64))
        });
        return;
    }
    let mid = a.len() / 2;
    let (l, r) = a.split_at(mid);
    both::<SEQ, _, _, _, _>(
        move || generate::<SEQ>(l, first, keys),
        move || generate::<SEQ>(r, first + mid as u64, keys),
    );
}

/// (sorted, count, checksum, first, last) of `a`.
fn check<const SEQ: bool>(a: GlobalSlice<u64>) -> (bool, u64, u64, u64, u64) {
    if a.len() <= 4096 {
        return a.read(|x| {
            let sorted = x.windows(2).all(|w| w[0] <= w[1]);
            let sum = x.iter().fold(0u64, |s, &v| s.wrapping_add(v));
            (sorted, x.len() as u64, sum, x[0], x[x.len() - 1])
        });
    }
    let (l, r) = a.split_at(a.len() / 2);
    let (p, q) = both::<SEQ, _, _, _, _>(move || check::<SEQ>(l), move || check::<SEQ>(r));
    (p.0 && q.0 && p.4 <= q.3, p.1 + q.1, p.2.wrapping_add(q.2), p.3, q.4)
}

/// The keys and the sort's scratch array (as long).
#[derive(Clone, Copy)]
struct Arrays {
    keys: GlobalSlice<u64>,
    tmp: GlobalSlice<u64>,
}

impl Arrays {
    /// Allocates both on this rank (zeroed, so every page is touched), for
    /// the serial elision; the parallel run's are block-distributed.
    fn alloc_here(n: usize) -> Arrays {
        Arrays {
            keys: GlobalSlice::alloc(n),
            tmp: GlobalSlice::alloc(n),
        }
    }

    fn free(self) {
        self.keys.free();
        self.tmp.free();
    }
}

/// What a run found: the checksum of the output if it is sorted and has
/// every key, else its complement; and how long the sort alone took.
#[derive(Clone, Copy)]
struct Sorted {
    checksum: u64,
    sort_s: f64,
}

fn verdict(sorted: bool, sum: u64) -> u64 {
    if sorted {
        sum
    } else {
        !sum
    }
}

/// Generate, sort, check, free. The sort is timed inside the root task:
/// its continuation may have moved to another rank, whose clock is the
/// same CLOCK_MONOTONIC on one host (`sort_s` is not comparable across
/// hosts).
fn run<const SEQ: bool>(arrays: Arrays, gen: Keys, cut: usize, with_by: bool) -> Sorted {
    let Arrays { keys, tmp } = arrays;
    generate::<SEQ>(keys, 0, gen);
    let start = Instant::now();
    let policy = Policy::default().with_grain(cut);
    let policy = if SEQ { policy.sequential() } else { policy };
    if with_by {
        policy.sort_unstable_by_in(keys, tmp, by);
    } else {
        policy.sort_unstable_in(keys, tmp);
    }
    let sort_s = start.elapsed().as_secs_f64();
    let (sorted, count, sum, _, _) = check::<SEQ>(keys);
    // Freed inside the measured run: its stats are the ones reported.
    arrays.free();
    Sorted {
        checksum: verdict(sorted && count == keys.len() as u64, sum),
        sort_s,
    }
}

/// A vector of `n` keys, every page touched (the baseline's
/// [`Arrays::alloc_here`]).
// `vec![0; n]` would be calloc's untouched pages: the point is to write.
#[allow(clippy::slow_vector_initialization)]
fn resident_vec(n: usize) -> Vec<u64> {
    let mut keys = Vec::with_capacity(n);
    keys.resize(n, 0);
    // The zeros must be written (not left to the first generation's faults).
    std::hint::black_box(&mut keys);
    keys
}

/// The baseline: the same keys generated, sorted by `sort_unstable` and
/// checked in process-local memory; the same result as [`run`].
fn sort_unstable(keys: &mut [u64], gen: Keys, with_by: bool) -> Sorted {
    keys.iter_mut().enumerate().for_each(|(i, v)| *v = gen.key(i as u64));
    let start = Instant::now();
    if with_by {
        keys.sort_unstable_by(by);
    } else {
        keys.sort_unstable();
    }
    let sort_s = start.elapsed().as_secs_f64();
    let sorted = keys.windows(2).all(|w| w[0] <= w[1]);
    let sum = keys.iter().fold(0u64, |s, &v| s.wrapping_add(v));
    Sorted {
        checksum: verdict(sorted, sum),
        sort_s,
    }
}

/// The peer: the same keys generated, sorted by rayon's
/// `par_sort_unstable` and checked, in parallel in the current pool.
fn par_sort_unstable(keys: &mut [u64], gen: Keys, with_by: bool) -> Sorted {
    keys.par_iter_mut()
        .enumerate()
        .for_each(|(i, v)| *v = gen.key(i as u64));
    let start = Instant::now();
    if with_by {
        keys.par_sort_unstable_by(by);
    } else {
        keys.par_sort_unstable();
    }
    let sort_s = start.elapsed().as_secs_f64();
    let sorted = keys.par_windows(2).all(|w| w[0] <= w[1]);
    let sum = keys
        .par_iter()
        .fold(|| 0u64, |s, &v| s.wrapping_add(v))
        .reduce(|| 0, u64::wrapping_add);
    Sorted {
        checksum: verdict(sorted, sum),
        sort_s,
    }
}

/// Seconds to the microsecond, for the JSON line.
fn micros(s: f64) -> f64 {
    (s * 1e6).round() / 1e6
}

fn main() {
    let (gasnet, mut o) = uat::cli::start::<Options>("cilksort");
    // --sort-unstable: the baseline is the timed path, on rank 0.
    o.common.seq |= o.sort_unstable;
    let (n, seed) = (o.n as usize, o.seed);
    let gen = Keys {
        seed,
        few: o.input == Input::FewDistinct,
    };
    let with_by = o.by;
    let cut = o.sort_cutoff as usize;
    // SAFETY: the benchmark's tasks keep only plain values (tree nodes,
    // board masks, depths, global-memory handles) across spawn and join,
    // and `gasnet` serves only for its rank and to end the job from here on.
    let h = unsafe { Harness::start_system(gasnet, o.common.clone(), o.rayon, None) };
    let rank0 = h.rank() == 0;
    let started = Instant::now();
    let (outcome, alloc_s) = if o.sort_unstable {
        let mut keys = if rank0 { resident_vec(n) } else { Vec::new() };
        let alloc_s = started.elapsed().as_secs_f64();
        let never = || -> Sorted { unreachable!("--sort-unstable runs the serial path") };
        (
            h.measure(never, move || sort_unstable(&mut keys, gen, with_by)),
            alloc_s,
        )
    } else if let Some(pool) = h.rayon_pool() {
        // One rank (start_system refused more): this is rank 0.
        let mut keys = resident_vec(n);
        let alloc_s = started.elapsed().as_secs_f64();
        (
            Some(h.measure_here(|| pool.install(|| par_sort_unstable(&mut keys, gen, with_by)))),
            alloc_s,
        )
    } else if o.common.seq {
        let arrays = rank0.then(|| Arrays::alloc_here(n));
        let alloc_s = started.elapsed().as_secs_f64();
        let outcome = h.measure(
            || -> Sorted { unreachable!("--seq runs the serial path") },
            move || run::<true>(arrays.expect("rank 0 allocated"), gen, cut, with_by),
        );
        (outcome, alloc_s)
    } else {
        // One slice per root task (a result fits 48 bytes), allocated and
        // zeroed by rank 0's root, then known on every rank.
        let slice = || {
            let s = h.runtime.run(move || GlobalSlice::<u64>::alloc_distributed(n));
            // Every rank maps every page it may touch (on smp all of
            // them), as rank 0's zeroing did in its own process.
            let s = h.runtime.broadcast_value(s);
            s.prefault();
            s
        };
        let arrays = Arrays {
            keys: slice(),
            tmp: slice(),
        };
        let alloc_s = started.elapsed().as_secs_f64();
        let never = || -> Sorted { unreachable!("the parallel path runs the root task") };
        let outcome = h.measure(move || run::<false>(arrays, gen, cut, with_by), never);
        (outcome, alloc_s)
    };
    let mut extra = Map::new();
    extra.insert("alloc_s".into(), json!(micros(alloc_s)));
    if let Some(out) = &outcome {
        extra.insert("sort_s".into(), json!(micros(out.value.sort_s)));
    }
    let solver = match (o.sort_unstable, o.rayon.rayon.is_some(), with_by) {
        (true, _, false) => "sort_unstable",
        (true, _, true) => "sort_unstable_by",
        (false, true, false) => "par_sort_unstable",
        (false, true, true) => "par_sort_unstable_by",
        (false, false, false) => "cilksort",
        (false, false, true) => "cilksort_by",
    };
    extra.insert("solver".into(), json!(solver));
    let outcome = outcome.map(|x| uat_bench::Outcome {
        value: x.value.checksum,
        time_s: x.time_s,
    });
    let expected = (0..o.n).fold(0u64, |s, i| s.wrapping_add(gen.key(i)));
    h.finish(
        "cilksort",
        json!({"n": o.n, "seed": seed, "sort_cutoff": o.sort_cutoff, "input": o.input.name(), "by": with_by}),
        outcome,
        Some(expected),
        extra,
    )
}
