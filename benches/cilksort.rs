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
    /// Time `slice::sort_unstable` of the same keys instead (generated,
    /// sorted and checked serially on rank 0, in a `Vec`): the baseline.
    #[arg(long)]
    sort_unstable: bool,
    #[command(flatten)]
    common: Common,
}

#[derive(Clone, Copy)]
struct Cut {
    sort: usize,
    merge: usize,
}

fn key(seed: u64, i: u64) -> u64 {
    uat_bench::splitmix(seed, i)
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

/// One two-ended serial merge: the front takes the smaller head, the back
/// the larger tail. An exhausted side reads as `u64::MAX` at the front and
/// 0 at the back: it can then only be chosen against an equal key, and
/// writes that key. Branch-free (the comparison selects, it does not jump;
/// a branch on random keys is mispredicted half the time).
struct TwoEnded<'a> {
    x: &'a [u64],
    y: &'a [u64],
    d: &'a mut [u64],
    /// Front heads.
    i: usize,
    j: usize,
    /// Back ends (exclusive).
    ie: usize,
    je: usize,
}

impl<'a> TwoEnded<'a> {
    fn new(x: &'a [u64], y: &'a [u64], d: &'a mut [u64]) -> Self {
        debug_assert_eq!(x.len() + y.len(), d.len());
        let (ie, je) = (x.len(), y.len());
        TwoEnded {
            x,
            y,
            d,
            i: 0,
            j: 0,
            ie,
            je,
        }
    }

    /// Steps the front and the back (step `k` of `d.len() / 2`).
    #[inline(always)]
    fn step(&mut self, k: usize) {
        let (a, b) = self.heads();
        let front_x = a <= b; // ties: x first
        self.d[k] = if front_x { a } else { b };
        self.i += front_x as usize;
        self.j += !front_x as usize;
        let tail = |s: &[u64], e: usize| e.checked_sub(1).map_or(0, |t| s[t]);
        let (a, b) = (tail(self.x, self.ie), tail(self.y, self.je));
        let back_y = b >= a; // ties: y last
        let n = self.d.len();
        self.d[n - 1 - k] = if back_y { b } else { a };
        // Saturating: a phantom 0 chosen at an exhausted end stays there.
        self.je = self.je.saturating_sub(back_y as usize);
        self.ie = self.ie.saturating_sub(!back_y as usize);
    }

    #[inline(always)]
    fn heads(&self) -> (u64, u64) {
        let x = self.x.get(self.i).copied().unwrap_or(u64::MAX);
        (x, self.y.get(self.j).copied().unwrap_or(u64::MAX))
    }

    /// Runs steps `from..` to the end.
    fn finish(mut self, from: usize) {
        let n = self.d.len();
        for k in from..n / 2 {
            self.step(k);
        }
        if n % 2 == 1 {
            let (a, b) = self.heads();
            self.d[n / 2] = a.min(b);
        }
    }
}

/// Merges sorted `x` and `y` into `d` (as long as both): split where the
/// first half of the output ends (a binary search), then both halves'
/// two-ended merges in one loop — four independent chains of dependent
/// loads and compares instead of one (3× the throughput of a plain merge).
fn merge_serial(x: &[u64], y: &[u64], d: &mut [u64]) {
    let h = d.len() / 2;
    // i of x and h - i of y make the first h of the output.
    let (mut lo, mut hi) = (h.saturating_sub(y.len()), h.min(x.len()));
    while lo < hi {
        let i = lo + (hi - lo) / 2;
        if x[i] <= y[h - i - 1] {
            lo = i + 1;
        } else {
            hi = i;
        }
    }
    let (x1, x2) = x.split_at(lo);
    let (y1, y2) = y.split_at(h - lo);
    let both = (h / 2).min((d.len() - h) / 2);
    let (d1, d2) = d.split_at_mut(h);
    let (mut p, mut q) = (TwoEnded::new(x1, y1, d1), TwoEnded::new(x2, y2, d2));
    for k in 0..both {
        p.step(k);
        q.step(k);
    }
    p.finish(both);
    q.finish(both);
}

/// Merges sorted `a` and `b` into `dest` (`a.len() + b.len()` long).
fn merge<const SEQ: bool>(a: GlobalSlice<u64>, b: GlobalSlice<u64>, dest: GlobalSlice<u64>, cut: Cut) {
    let (a, b) = if a.len() < b.len() { (b, a) } else { (a, b) };
    if a.is_empty() {
        return;
    }
    if a.len() + b.len() <= cut.merge {
        a.read(|x| b.read(|y| dest.write(|d| merge_serial(x, y, d))));
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

/// The baseline: the same keys generated, sorted by `sort_unstable` and
/// checked in process-local memory; the same result as [`run`].
fn sort_unstable(n: usize, seed: u64) -> u64 {
    let mut keys: Vec<u64> = (0..n as u64).map(|i| key(seed, i)).collect();
    keys.sort_unstable();
    let sorted = keys.windows(2).all(|w| w[0] <= w[1]);
    let sum = keys.iter().fold(0u64, |s, &v| s.wrapping_add(v));
    if sorted {
        sum
    } else {
        !sum
    }
}

fn main() {
    let (gasnet, mut o) = uat::cli::start::<Options>("cilksort");
    // --sort-unstable: the baseline is the timed path, on rank 0.
    o.common.seq |= o.sort_unstable;
    let (n, seed) = (o.n as usize, o.seed);
    let cut = Cut {
        sort: o.sort_cutoff as usize,
        merge: o.merge_cutoff as usize,
    };
    let h = Harness::start(gasnet, o.common.clone());
    let outcome = if o.sort_unstable {
        h.measure(move || run::<false>(n, seed, cut), || sort_unstable(n, seed))
    } else {
        h.measure(move || run::<false>(n, seed, cut), || run::<true>(n, seed, cut))
    };
    let mut extra = Map::new();
    extra.insert(
        "solver".into(),
        json!(if o.sort_unstable { "sort_unstable" } else { "cilksort" }),
    );
    let expected = (0..o.n).fold(0u64, |s, i| s.wrapping_add(key(seed, i)));
    h.finish(
        "cilksort",
        json!({"n": o.n, "seed": seed, "sort_cutoff": o.sort_cutoff, "merge_cutoff": o.merge_cutoff}),
        outcome,
        Some(expected),
        extra,
    )
}

#[cfg(test)]
mod tests {
    use super::merge_serial;

    #[test]
    fn the_two_ended_merge_merges_every_shape() {
        let mut seed = 1u64;
        let mut next = |m: u64| {
            seed = super::key(seed, 7);
            seed % m
        };
        for _ in 0..2000 {
            let (lx, ly, m) = (next(40) as usize, next(40) as usize, 1 + next(50));
            let mut x: Vec<u64> = (0..lx).map(|_| next(m)).collect();
            let mut y: Vec<u64> = (0..ly).map(|_| next(m)).collect();
            // Keys at the ends of u64 too (the exhausted-side readings).
            if next(4) == 0 {
                x.push(u64::MAX);
                y.insert(0, 0);
            }
            x.sort_unstable();
            y.sort_unstable();
            let mut d = vec![7u64; x.len() + y.len()];
            merge_serial(&x, &y, &mut d);
            let mut want = [x.clone(), y.clone()].concat();
            want.sort_unstable();
            assert_eq!(d, want, "x={x:?} y={y:?}");
        }
    }
}
