//! Every parallel pattern of `uat::pattern` (also the tests' program), on
//! sizes 0, 1, 5, 4099, 100003 and 2^20 (distributed, many leaves and chunks),
//! under the default policy and under small grains and checkout bounds,
//! each result checked against a serial computation on a `Vec`. Prints one
//! JSON line with a boolean per pattern; exit 1 if any is false.
//!
//!     scripts/run.sh -n 4 -- target/smp-native/release/examples/patterns
//!
//! The task model applies here too: the root task may continue on another
//! rank after any pattern (they spawn), so no `Vec` is held across one —
//! each check runs the pattern first and builds its serial reference after.

use std::sync::atomic::Ordering::Relaxed;

use uat::global::{GlobalAtomicU64, GlobalSlice};
use uat::pattern::{
    self as pattern, enumerate, Collect, Count, GlobalVec, Histogram, Max, Min, MinMax, Op, Policy, Sum,
};
use uat::testing::splitmix as mix;

/// The patterns checked, in the JSON line's order.
const NAMES: [&str; 46] = [
    "for_each",
    "for_each_mut",
    "for_each_chunk",
    "for_each_chunk_mut",
    "fill",
    "copy",
    "transform",
    "enumerate",
    "reduce_sum",
    "map_reduce",
    "min_reducer",
    "max_reducer",
    "minmax_reducer",
    "count",
    "histogram_small",
    "histogram_large",
    "op",
    "collect",
    "filter",
    "filter_map",
    "global_vec",
    "inclusive_scan",
    "exclusive_scan",
    "scan_large_elements",
    "sort_unstable_u64",
    "sort_unstable_generic",
    "sort_unstable_signed",
    "sort_unstable_few_distinct",
    "sort_unstable_skewed",
    "sort_unstable_by_key",
    "sort_unstable_by",
    "sort_unstable_by_equal_not_copies",
    "sort_unstable_in",
    "merge",
    "is_sorted",
    "partition_point",
    "position",
    "find",
    "min",
    "max",
    "min_by_key",
    "max_by_key",
    "equal",
    "zip3",
    "checkout_bound",
    "index_range",
];

/// Failures: bit `k` set when check `NAMES[k]` failed somewhere.
#[derive(Clone, Copy, Default)]
struct Failed(u64);

impl Failed {
    fn check(&mut self, name: &str, ok: bool, n: usize, p: &Policy) {
        if !ok {
            let k = NAMES.iter().position(|&x| x == name).expect("a known check");
            self.0 |= 1 << k;
            eprintln!("patterns: {name} failed at n={n}, policy {p:?}");
        }
    }
}

/// Element `i` of the u64 input: 40 bits (sums fit), with ties.
fn va(i: usize) -> u64 {
    mix(1, i as u64) >> 24
}
/// Element `i` of the u32 input (few distinct values: many ties).
fn vb(i: usize) -> u32 {
    (mix(2, i as u64) % 1000) as u32
}

fn sorted<T: Ord + Clone>(v: &[T]) -> Vec<T> {
    let mut w = v.to_vec();
    w.sort();
    w
}

/// Every check at one size and policy.
fn check_all(n: usize, p: Policy, f: &mut Failed) {
    let a = GlobalSlice::<u64>::alloc_distributed(n);
    let b = GlobalSlice::<u32>::alloc_distributed(n);
    let d = GlobalSlice::<u64>::alloc_distributed(n);
    let acc = GlobalAtomicU64::new(0);
    let bad = GlobalAtomicU64::new(0);
    let bound = p.checkout();

    // Inputs, by for_each_chunk_mut (checked against the generators).
    p.for_each_chunk_mut(a, move |start, c: &mut [u64]| {
        if c.len() * 8 > bound.max(8) {
            bad.fetch_add(1, Relaxed);
        }
        for (k, x) in c.iter_mut().enumerate() {
            *x = va(start + k)
        }
    });
    p.for_each_chunk_mut(b, |start, c: &mut [u32]| {
        for (k, x) in c.iter_mut().enumerate() {
            *x = vb(start + k)
        }
    });
    let ok = a.to_vec() == (0..n).map(va).collect::<Vec<_>>() && b.to_vec() == (0..n).map(vb).collect::<Vec<_>>();
    f.check("for_each_chunk_mut", ok, n, &p);

    // for_each over a zip: the sum of x ^ y through an atomic.
    p.for_each((a, b), move |(x, y)| {
        acc.fetch_add(x ^ y as u64, Relaxed);
    });
    let want = (0..n).fold(0u64, |s, i| s.wrapping_add(va(i) ^ vb(i) as u64));
    f.check("for_each", acc.swap(0, Relaxed) == want, n, &p);

    // for_each_chunk: index-weighted sum, chunks within the bound.
    p.for_each_chunk((a, b), move |start, (x, y): (&[u64], &[u32])| {
        if x.len() * 12 > bound.max(12) || x.len() != y.len() {
            bad.fetch_add(1, Relaxed);
        }
        let s = x
            .iter()
            .enumerate()
            .fold(0u64, |s, (k, &v)| s.wrapping_add(v.wrapping_mul((start + k) as u64)));
        acc.fetch_add(s, Relaxed);
    });
    let want = (0..n).fold(0u64, |s, i| s.wrapping_add(va(i).wrapping_mul(i as u64)));
    f.check("for_each_chunk", acc.swap(0, Relaxed) == want, n, &p);

    // fill, then for_each_mut over a zip of three.
    p.fill(d, 7);
    f.check("fill", d.to_vec().iter().all(|&x| x == 7), n, &p);
    p.for_each_mut((d, a, b), |(x, y, z)| *x += y + z as u64);
    let ok = d.to_vec() == (0..n).map(|i| 7 + va(i) + vb(i) as u64).collect::<Vec<_>>();
    f.check("for_each_mut", ok, n, &p);
    p.for_each_mut(d, |x| *x *= 2);
    let ok = d.to_vec() == (0..n).map(|i| 2 * (7 + va(i) + vb(i) as u64)).collect::<Vec<_>>();
    f.check("for_each_mut", ok, n, &p);

    // copy, transform, enumerate.
    p.copy(a, d);
    f.check("copy", d.to_vec() == a.to_vec(), n, &p);
    p.transform((a, b), d, |(x, y)| x.wrapping_mul(3) ^ y as u64);
    let ok = d.to_vec() == (0..n).map(|i| va(i).wrapping_mul(3) ^ vb(i) as u64).collect::<Vec<_>>();
    f.check("transform", ok, n, &p);
    p.transform(enumerate(b), d, |(i, y)| i as u64 * 1000 + y as u64);
    let ok = d.to_vec() == (0..n).map(|i| i as u64 * 1000 + vb(i) as u64).collect::<Vec<_>>();
    f.check("enumerate", ok, n, &p);
    let c = GlobalSlice::<u64>::alloc_distributed(n);
    p.transform((a, b, d), c, |(x, y, z)| x + y as u64 + z);
    let ok = c.to_vec()
        == (0..n)
            .map(|i| va(i) + vb(i) as u64 + i as u64 * 1000 + vb(i) as u64)
            .collect::<Vec<_>>();
    f.check("zip3", ok, n, &p);
    c.free();

    // An index range as the source: the items are the indices.
    p.for_each(0..n, move |i| {
        acc.fetch_add(va(i), Relaxed);
    });
    let mut ok = acc.swap(0, Relaxed) == (0..n).map(va).sum::<u64>();
    ok &= p.map_reduce(0..n, |i| i as u64, Sum::new()) == (0..n as u64).sum::<u64>();
    ok &= uat::map_reduce(0..n, |i| vb(i) as u64, Sum::new()) == (0..n).map(|i| vb(i) as u64).sum::<u64>();
    ok &= p.reduce(n / 2..n, Min::new()) == (n > n / 2).then_some(n / 2);
    ok &= p.position(0..n, move |i| i == n / 3) == (n > 0).then_some(n / 3);
    p.transform(enumerate(5..5 + n), d, |(k, i)| (i - k) as u64 * va(k));
    ok &= d.to_vec() == (0..n).map(|i| 5 * va(i)).collect::<Vec<_>>();
    f.check("index_range", ok, n, &p);

    // Reductions.
    let s = p.reduce(a, Sum::new());
    f.check("reduce_sum", s == (0..n).map(va).sum::<u64>(), n, &p);
    let s = p.map_reduce((a, b), |(x, y)| x * 2 + y as u64, Sum::new());
    f.check(
        "map_reduce",
        s == (0..n).map(|i| va(i) * 2 + vb(i) as u64).sum::<u64>(),
        n,
        &p,
    );
    let m = p.reduce(b, Min::new());
    f.check("min_reducer", m == (0..n).map(vb).min(), n, &p);
    let m = p.reduce(a, Max::new());
    f.check("max_reducer", m == (0..n).map(va).max(), n, &p);
    let m = p.reduce(b, MinMax::new());
    let want = (n > 0).then(|| ((0..n).map(vb).min().unwrap(), (0..n).map(vb).max().unwrap()));
    f.check("minmax_reducer", m == want, n, &p);
    let k = p.reduce(b, Count::new(|y: u32| y.is_multiple_of(3)));
    let k2 = p.map_reduce(a, |x| x % 2 == 0, Count::of_true());
    let ok = k == (0..n).filter(|&i| vb(i).is_multiple_of(3)).count() as u64
        && k2 == (0..n).filter(|&i| va(i).is_multiple_of(2)).count() as u64;
    f.check("count", ok, n, &p);
    let h = p.map_reduce(b, |y| (y % 4) as usize, Histogram::<4>::new());
    let mut want = [0u64; 4];
    (0..n).for_each(|i| want[(vb(i) % 4) as usize] += 1);
    f.check("histogram_small", h == want, n, &p);
    // 100 buckets: 800 bytes, through global memory.
    let h = p.map_reduce(b, |y| (y % 100) as usize, Histogram::<100>::new());
    let mut want = [0u64; 100];
    (0..n).for_each(|i| want[(vb(i) % 100) as usize] += 1);
    f.check("histogram_large", h == want, n, &p);
    let x = p.reduce(a, Op::new(0u64, |x, y| x ^ y));
    f.check("op", x == (0..n).fold(0, |s, i| s ^ va(i)), n, &p);

    // Collect, filter, filter_map, GlobalVec.
    let v = p.reduce(b, Collect::new(|y: u32| y.is_multiple_of(7).then_some(y as u64 * 3)));
    let len = v.len();
    let got = p.into_slice(v);
    let want: Vec<u64> = (0..n).map(vb).filter(|y| y % 7 == 0).map(|y| y as u64 * 3).collect();
    f.check("collect", len == want.len() && got.to_vec() == want, n, &p);
    drop(want);
    got.free();
    let got = p.filter(a, |x| x % 3 == 1);
    let want: Vec<u64> = (0..n).map(va).filter(|x| x % 3 == 1).collect();
    f.check("filter", got.to_vec() == want, n, &p);
    drop(want);
    got.free();
    let got = p.filter_map((a, b), |(x, y)| (y < 500).then_some(x + y as u64));
    let want: Vec<u64> = (0..n).filter(|&i| vb(i) < 500).map(|i| va(i) + vb(i) as u64).collect();
    f.check("filter_map", got.to_vec() == want, n, &p);
    drop(want);
    got.free();
    let v = gather(0, n, p.grain().max(3));
    let (len, chunks) = (v.len(), v.chunks());
    let got = v.into_slice();
    let ok = len == n && chunks == n.div_ceil(p.grain().max(3)) && got.to_vec() == (0..n).map(va).collect::<Vec<_>>();
    f.check("global_vec", ok, n, &p);
    got.free();

    // Scans.
    p.inclusive_scan(a, d, Sum::new());
    let ok = d.to_vec()
        == (0..n)
            .scan(0u64, |s, i| {
                *s += va(i);
                Some(*s)
            })
            .collect::<Vec<_>>();
    f.check("inclusive_scan", ok, n, &p);
    let total = p.exclusive_scan(a, d, Sum::new());
    let ok = total == (0..n).map(va).sum::<u64>()
        && d.to_vec()
            == (0..n)
                .scan(0u64, |s, i| {
                    let o = *s;
                    *s += va(i);
                    Some(o)
                })
                .collect::<Vec<_>>();
    f.check("exclusive_scan", ok, n, &p);
    // 64-byte elements: the leaf totals are larger than a join's result.
    let w = GlobalSlice::<[u64; 8]>::alloc_distributed(n);
    let ws = GlobalSlice::<[u64; 8]>::alloc_distributed(n);
    p.transform(a, w, |x| std::array::from_fn(|k| x >> k));
    let add = Op::new([0u64; 8], |x: [u64; 8], y: [u64; 8]| {
        std::array::from_fn(|k| x[k] + y[k])
    });
    let total = p.exclusive_scan(w, ws, add);
    let mut run = [0u64; 8];
    let mut ok = true;
    let got = ws.to_vec();
    for (i, g) in got.iter().enumerate() {
        ok &= *g == run;
        run = std::array::from_fn(|k| run[k] + (va(i) >> k));
    }
    f.check("scan_large_elements", ok && total == run, n, &p);
    drop(got);
    w.free();
    ws.free();

    // Sorts and merges.
    p.copy(a, d);
    p.sort_unstable(d);
    f.check("sort_unstable_u64", d.to_vec() == sorted(&a.to_vec()), n, &p);
    let sorted_now = p.is_sorted(d);
    let unsorted_input = p.is_sorted(a);
    let ok = sorted_now && unsorted_input == a.to_vec().windows(2).all(|w| w[0] <= w[1]);
    f.check("is_sorted", ok, n, &p);
    let key = if n > 0 { va(n / 3) } else { 5 };
    let pp = pattern::partition_point(d, |&x| x < key);
    f.check("partition_point", pp == d.to_vec().partition_point(|&x| x < key), n, &p);
    let e = GlobalSlice::<u32>::alloc_distributed(n);
    p.copy(b, e);
    p.sort_unstable(e);
    f.check("sort_unstable_generic", e.to_vec() == sorted(&b.to_vec()), n, &p);
    // Signed keys (negative ones too), and sixteen distinct u64 keys by
    // their order and by a comparison (equality buckets).
    // (No vector of this process lives across a pattern: the task may
    // continue on another rank.)
    let si = GlobalSlice::<i64>::alloc_distributed(n);
    p.transform(a, si, |x| x as i64 - (1 << 39));
    p.sort_unstable(si);
    let want = sorted(&a.to_vec().iter().map(|&x| x as i64 - (1 << 39)).collect::<Vec<_>>());
    f.check("sort_unstable_signed", si.to_vec() == want, n, &p);
    drop(want);
    si.free();
    let few = |d: GlobalSlice<u64>| d.to_vec() == sorted(&a.to_vec().iter().map(|x| x % 16).collect::<Vec<_>>());
    p.transform(a, d, |x| x % 16);
    p.sort_unstable(d);
    let ok = few(d);
    p.transform(a, d, |x| x % 16);
    p.sort_unstable_by(d, |x: &u64, y: &u64| x.cmp(y));
    f.check("sort_unstable_few_distinct", ok && few(d), n, &p);
    // Three in four keys below 16, the rest spread: buckets far over their
    // target, sorted by further levels.
    let skew = |x: u64| if x.is_multiple_of(4) { x } else { x % 16 };
    let skewed = |d: GlobalSlice<u64>| d.to_vec() == sorted(&a.to_vec().into_iter().map(skew).collect::<Vec<_>>());
    p.transform(a, d, skew);
    p.sort_unstable(d);
    let ok = skewed(d);
    p.transform(a, d, skew);
    p.sort_unstable_by(d, |x: &u64, y: &u64| x.cmp(y));
    f.check("sort_unstable_skewed", ok && skewed(d), n, &p);
    p.copy(a, d);
    p.sort_unstable_by(d, |x: &u64, y: &u64| y.cmp(x));
    let mut want = a.to_vec();
    want.sort_by(|x, y| y.cmp(x));
    f.check("sort_unstable_by", d.to_vec() == want, n, &p);
    drop(want);
    // Pairs (value, index) by the value's low byte only: many ties.
    let pairs = GlobalSlice::<[u64; 2]>::alloc_distributed(n);
    p.transform(enumerate(a), pairs, |(i, x)| [x, i as u64]);
    p.sort_unstable_by_key(pairs, |q: &[u64; 2]| q[0] & 0xff);
    let got = pairs.to_vec();
    let ok = got.windows(2).all(|w| w[0][0] & 0xff <= w[1][0] & 0xff)
        && sorted(&got) == sorted(&(0..n).map(|i| [va(i), i as u64]).collect::<Vec<_>>());
    f.check("sort_unstable_by_key", ok, n, &p);
    drop(got);
    // Sixteen distinct first words, and one pair whose second word alone
    // differs: equal to others by the comparison, but no copy of them (the
    // counting pass of the few-distinct path finds it, unless a sample
    // did, and the level distributes).
    let odd = n / 2 + 1;
    let pair = move |i: usize| [va(i) % 16, u64::from(i == odd)];
    p.transform(enumerate(a), pairs, move |(i, _)| pair(i));
    p.sort_unstable_by(pairs, |x: &[u64; 2], y: &[u64; 2]| x[0].cmp(&y[0]));
    let got = pairs.to_vec();
    let ok =
        got.windows(2).all(|w| w[0][0] <= w[1][0]) && sorted(&got) == sorted(&(0..n).map(pair).collect::<Vec<_>>());
    f.check("sort_unstable_by_equal_not_copies", ok, n, &p);
    drop(got);
    p.transform(enumerate(a), pairs, |(i, x)| [x, i as u64]);
    p.sort_unstable_by(pairs, |x: &[u64; 2], y: &[u64; 2]| y.cmp(x));
    let got = pairs.to_vec();
    let mut want: Vec<[u64; 2]> = (0..n).map(|i| [va(i), i as u64]).collect();
    want.sort_by(|x, y| y.cmp(x));
    f.check("sort_unstable_by", got == want, n, &p);
    drop((got, want));
    pairs.free();
    let scratch = GlobalSlice::<u64>::alloc_distributed(n + 3);
    p.copy(a, d);
    p.sort_unstable_in(d, scratch);
    f.check("sort_unstable_in", d.to_vec() == sorted(&a.to_vec()), n, &p);
    scratch.free();
    // Merge the sorted halves of b (sorted separately) into e.
    let (b1, b2) = b.split_at(n / 3);
    let (x1, x2) = (GlobalSlice::<u32>::alloc(b1.len()), GlobalSlice::<u32>::alloc(b2.len()));
    p.copy(b1, x1);
    p.copy(b2, x2);
    p.sort_unstable(x1);
    p.sort_unstable(x2);
    p.merge(x1, x2, e);
    f.check("merge", e.to_vec() == sorted(&b.to_vec()), n, &p);
    x1.free();
    x2.free();
    e.free();

    // Searches.
    let pos = p.position((a, b), |(x, y)| (x ^ y as u64) % 1000 == 7);
    let want = (0..n).position(|i| (va(i) ^ vb(i) as u64) % 1000 == 7);
    let none = p.position(b, |y| y > 5000);
    f.check("position", pos == want && none.is_none(), n, &p);
    let found = p.find(b, |y| y % 97 == 3);
    let want = (0..n).map(vb).enumerate().find(|&(_, y)| y % 97 == 3);
    f.check("find", found == want, n, &p);
    let m = p.min(b);
    let want = b.to_vec().into_iter().enumerate().min_by_key(|&(_, y)| y);
    f.check("min", m == want, n, &p);
    let m = p.max(b);
    let want = b.to_vec().into_iter().enumerate().max_by_key(|&(_, y)| y);
    f.check("max", m == want, n, &p);
    let m = p.min_by_key(a, |&x| x % 100);
    let want = a.to_vec().into_iter().enumerate().min_by_key(|&(_, x)| x % 100);
    f.check("min_by_key", m == want, n, &p);
    let m = p.max_by_key(a, |&x| x % 100);
    let want = a.to_vec().into_iter().enumerate().max_by_key(|&(_, x)| x % 100);
    f.check("max_by_key", m == want, n, &p);
    p.copy(a, d);
    let same = p.equal(a, d);
    if n > 0 {
        d.set(n - 1, d.get(n - 1) + 1);
    }
    let differ = !p.equal(a, d) || n == 0;
    let shorter = n == 0 || !p.equal(a, d.slice(1..));
    f.check("equal", same && differ && shorter, n, &p);

    f.check("checkout_bound", bad.load(Relaxed) == 0, n, &p);
    acc.free();
    bad.free();
    a.free();
    b.free();
    d.free();
}

/// A tree traversal gathering `va(lo..hi)` without knowing counts first:
/// each leaf makes a chunk, the results are appended in order.
fn gather(lo: usize, hi: usize, leaf: usize) -> GlobalVec<u64> {
    if hi - lo <= leaf {
        let v: Vec<u64> = (lo..hi).map(va).collect();
        return GlobalVec::from_slice(&v);
    }
    let mid = lo + (hi - lo).div_ceil(leaf) / 2 * leaf;
    let (x, y) = uat::join(move || gather(lo, mid, leaf), move || gather(mid, hi, leaf));
    x.append(y)
}

#[derive(clap::Parser, Debug)]
#[command(name = "patterns")]
struct Options {
    /// Only sizes up to this many elements.
    #[arg(long, default_value_t = 1 << 20)]
    max_n: usize,
    /// The small policies (tiny grains and checkouts) only on sizes up to
    /// this many elements (the default policy and its serial elision run
    /// on every size).
    #[arg(long, default_value_t = usize::MAX)]
    small_max_n: usize,
    /// Misuse to commit instead (the job must end with the pattern's
    /// message): zipped slices of unequal lengths, a destination too short.
    #[arg(long, value_parser = ["unequal-lengths", "short-destination", "overlap", "impure-filter", "stale-list", "stale-list-reused"])]
    misuse: Option<String>,
    /// Instead of the checks: this many rounds of the patterns that take
    /// scratch memory (sort, filter, a 256-bucket histogram, scan) on one
    /// live distributed array; with a small UAT_GLOBAL_HEAP they fit only if
    /// their scratch is reused. Prints the rounds run.
    #[arg(long)]
    scratch_rounds: Option<u32>,
}

fn root(o: uat::Cli<Options>) -> (u64, u32) {
    let max_n = o.max_n;
    match o.misuse.as_deref() {
        Some("unequal-lengths") => {
            let (a, b) = (GlobalSlice::<u64>::alloc(10), GlobalSlice::<u32>::alloc(9));
            pattern::for_each((a, b), |_| ());
            unreachable!("for_each refused slices of unequal lengths");
        }
        Some("short-destination") => {
            let (a, b) = (GlobalSlice::<u64>::alloc(10), GlobalSlice::<u64>::alloc(9));
            pattern::transform(a, b, |x| x);
            unreachable!("transform refused a short destination");
        }
        Some("overlap") => {
            // Shifted by more than a leaf: no one checkout would see it.
            let s = GlobalSlice::<u64>::alloc(1 << 17);
            pattern::transform(s.slice(..1 << 16), s.slice(50_000..50_000 + (1 << 16)), |x| x);
            unreachable!("transform refused a destination overlapping its source");
        }
        Some("impure-filter") => {
            let s = GlobalSlice::<u64>::alloc(1 << 16);
            let calls = GlobalAtomicU64::new(0);
            // Keeps every item on its first call and none on its second.
            let kept = pattern::filter_map(s, move |x| (calls.fetch_add(1, Relaxed) < 1 << 16).then_some(x));
            unreachable!("filter_map refused an impure f ({} kept)", kept.len());
        }
        Some("stale-list") => {
            let v = GlobalVec::from_slice(&[1u64, 2]);
            let w = v.append(GlobalVec::from_slice(&[3]));
            v.free();
            let flat = w.into_slice();
            unreachable!("a list used after free was refused ({} elements)", flat.len());
        }
        Some("stale-list-reused") => {
            let v = GlobalVec::from_slice(&[1u64, 2]);
            let w = v.append(GlobalVec::from_slice(&[3]));
            v.free();
            // The same sizes again: the free list hands the same addresses
            // out; only the generations differ.
            let again = GlobalVec::from_slice(&[4u64, 5]).append(GlobalVec::from_slice(&[6]));
            let flat = w.into_slice();
            unreachable!(
                "a list used after free was refused ({} and {})",
                flat.len(),
                again.len()
            );
        }
        _ => {}
    }
    if let Some(rounds) = o.scratch_rounds {
        let n = 1 << 16;
        let a = GlobalSlice::<u64>::alloc_distributed(n);
        for round in 0..rounds {
            pattern::for_each_chunk_mut(a, move |start, xs: &mut [u64]| {
                for (j, x) in xs.iter_mut().enumerate() {
                    *x = va(start + j + round as usize);
                }
            });
            pattern::sort_unstable(a);
            let kept = pattern::filter(a, |x| x % 3 == 0);
            kept.free();
            let h = pattern::map_reduce(a, |x| (x % 256) as usize, Histogram::<256>::new());
            let b = GlobalSlice::<u64>::alloc_distributed(n);
            pattern::inclusive_scan(a, b, Op::new(0u64, |x: u64, y: u64| x ^ y));
            b.free();
            assert!(
                pattern::is_sorted(a) && h.iter().sum::<u64>() == n as u64,
                "round {round}"
            );
        }
        a.free();
        return (0, rounds);
    }
    let mut f = Failed::default();
    let mut runs = 0;
    for n in [0usize, 1, 5, 4099, 100003, 1 << 20] {
        if n > max_n {
            continue;
        }
        let small = if n > 5000 {
            Policy::new().with_grain(1000).with_checkout(1024)
        } else {
            Policy::new().with_grain(7).with_checkout(40)
        };
        let policies = if n <= o.small_max_n {
            [Policy::default(), small, small.sequential()]
        } else {
            [
                Policy::default(),
                Policy::default().sequential(),
                Policy::default().with_grain(4096),
            ]
        };
        for p in policies {
            check_all(n, p, &mut f);
            runs += 1;
        }
    }
    (f.0, runs)
}

fn main() {
    // SAFETY: the tasks keep only global slices, atomics, policies and
    // numbers across spawn and join; checkouts end before them; every Vec
    // lives between two patterns, never across one.
    unsafe {
        uat::launch_then(root, |(failed, runs): (u64, u32)| {
            let fields: Vec<String> = NAMES
                .iter()
                .enumerate()
                .map(|(k, name)| format!("\"{name}\":{}", failed >> k & 1 == 0))
                .collect();
            println!("{{{},\"runs\":{runs},\"ok\":{}}}", fields.join(","), failed == 0);
            i32::from(failed != 0)
        })
    }
}
