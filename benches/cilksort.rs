//! Cilksort in global memory: N pseudo-random u64 keys in a block-
//! distributed global array, sorted with Cilk's structure — split in four,
//! sort the quarters in parallel, merge pairs in parallel into a temporary
//! array and merge back, each merge parallel by binary search — with leaf
//! sorts and serial merges below the cut-offs. Verified every run: the
//! output is sorted and has the input's count and checksum (computed from
//! the generator on its own). Prints one JSON line; `time_s` covers the
//! parallel generation, the sort and the parallel check.

use clap::Parser;
use serde_json::{json, Map};
use uat::global::GlobalSlice;
use uat_bench::{Common, Harness};

/// Sorts N pseudo-random u64 in global memory (cilksort).
#[derive(Parser, Debug)]
#[command(name = "cilksort", version)]
struct Options {
    /// Number of keys.
    #[arg(short, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..=(1u64 << 32)))]
    n: u64,
    /// Seed of the keys.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Below this many keys a part is sorted serially (Cilk's QUICKSIZE).
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u64).range(4..=2048))]
    sort_cutoff: u64,
    /// Below this many keys a merge is serial (Cilk's MERGESIZE).
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u64).range(2..=2048))]
    merge_cutoff: u64,
    #[command(flatten)]
    common: Common,
}

#[derive(Clone, Copy)]
struct Cut {
    sort: usize,
    merge: usize,
}

fn key(seed: u64, i: u64) -> u64 {
    // splitmix64 of (seed, i).
    let mut z = seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(i.wrapping_add(1).wrapping_mul(0xbf58_476d_1ce4_e5b9));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
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

fn generate<const SEQ: bool>(a: GlobalSlice<u64>, first: u64, seed: u64) {
    if a.len() <= 4096 {
        a.write(|x| {
            x.iter_mut()
                .enumerate()
                .for_each(|(i, v)| *v = key(seed, first + i as u64))
        });
        return;
    }
    let mid = a.len() / 2;
    let (l, r) = a.split_at(mid);
    both::<SEQ, _, _, _, _>(
        move || generate::<SEQ>(l, first, seed),
        move || generate::<SEQ>(r, first + mid as u64, seed),
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

/// Merges sorted `a` and `b` into `dest` (`a.len() + b.len()` long).
fn merge<const SEQ: bool>(a: GlobalSlice<u64>, b: GlobalSlice<u64>, dest: GlobalSlice<u64>, cut: Cut) {
    let (a, b) = if a.len() < b.len() { (b, a) } else { (a, b) };
    if a.is_empty() {
        return;
    }
    if a.len() + b.len() <= cut.merge {
        a.read(|x| {
            b.read(|y| {
                dest.write(|d| {
                    let (mut i, mut j) = (0, 0);
                    for slot in d.iter_mut() {
                        if j >= y.len() || (i < x.len() && x[i] <= y[j]) {
                            *slot = x[i];
                            i += 1;
                        } else {
                            *slot = y[j];
                            j += 1;
                        }
                    }
                })
            })
        });
        return;
    }
    // Split the longer at its middle and the shorter where that key goes.
    let split_a = a.len() / 2;
    let pivot = a.get(split_a);
    let (mut lo, mut hi) = (0, b.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if b.get(mid) < pivot {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let split_b = lo;
    let (a1, a2) = a.split_at(split_a);
    let (b1, b2) = b.split_at(split_b);
    let (d1, d2) = dest.split_at(split_a + split_b);
    both::<SEQ, _, _, _, _>(
        move || merge::<SEQ>(a1, b1, d1, cut),
        move || merge::<SEQ>(a2, b2, d2, cut),
    );
}

/// Sorts `a`, using `tmp` (as long) as scratch.
fn cilksort<const SEQ: bool>(a: GlobalSlice<u64>, tmp: GlobalSlice<u64>, cut: Cut) {
    let n = a.len();
    if n <= cut.sort {
        a.update(|x| x.sort_unstable());
        return;
    }
    let q = n / 4;
    let (a12, a34) = a.split_at(2 * q);
    let (a1, a2) = a12.split_at(q);
    let (a3, a4) = a34.split_at(q);
    let (t12, t34) = tmp.split_at(2 * q);
    let (t1, t2) = t12.split_at(q);
    let (t3, t4) = t34.split_at(q);
    both::<SEQ, _, _, _, _>(
        move || {
            both::<SEQ, _, _, _, _>(
                move || cilksort::<SEQ>(a1, t1, cut),
                move || cilksort::<SEQ>(a2, t2, cut),
            )
        },
        move || {
            both::<SEQ, _, _, _, _>(
                move || cilksort::<SEQ>(a3, t3, cut),
                move || cilksort::<SEQ>(a4, t4, cut),
            )
        },
    );
    both::<SEQ, _, _, _, _>(
        move || merge::<SEQ>(a1, a2, t12, cut),
        move || merge::<SEQ>(a3, a4, t34, cut),
    );
    merge::<SEQ>(t12, t34, a, cut);
}

/// Generate, sort, check: the checksum of the output if it is sorted and
/// has every key, else its complement.
fn run<const SEQ: bool>(n: usize, seed: u64, cut: Cut) -> u64 {
    let (a, tmp) = if SEQ {
        (GlobalSlice::<u64>::alloc(n), GlobalSlice::<u64>::alloc(n))
    } else {
        (
            GlobalSlice::<u64>::alloc_distributed(n),
            GlobalSlice::<u64>::alloc_distributed(n),
        )
    };
    generate::<SEQ>(a, 0, seed);
    cilksort::<SEQ>(a, tmp, cut);
    let (sorted, count, sum, _, _) = check::<SEQ>(a);
    a.free();
    tmp.free();
    if sorted && count == n as u64 {
        sum
    } else {
        !sum
    }
}

fn main() {
    let (gasnet, o) = uat::cli::start::<Options>("cilksort");
    let (n, seed) = (o.n as usize, o.seed);
    let cut = Cut {
        sort: o.sort_cutoff as usize,
        merge: o.merge_cutoff as usize,
    };
    let h = Harness::start(gasnet, o.common.clone());
    let outcome = h.measure(move || run::<false>(n, seed, cut), || run::<true>(n, seed, cut));
    let expected = (0..o.n).fold(0u64, |s, i| s.wrapping_add(key(seed, i)));
    h.finish(
        "cilksort",
        json!({"n": o.n, "seed": seed, "sort_cutoff": o.sort_cutoff, "merge_cutoff": o.merge_cutoff}),
        outcome,
        Some(expected),
        Map::new(),
    )
}
