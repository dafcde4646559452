//! Every parallel pattern of `uat::pattern` once, each result checked.

use std::sync::atomic::Ordering::Relaxed;

use uat::global::{GlobalAtomicU64, GlobalSlice};
use uat::pattern::{self, enumerate, Collect, Count, GlobalVec, Histogram, MinMax, Policy, Sum};

/// The squares of lo..hi gathered without knowing their count first: each
/// leaf makes a one-chunk list, `append` joins two lists in O(1).
fn squares(lo: u64, hi: u64) -> GlobalVec<u64> {
    if hi - lo <= 1000 {
        let mine: Vec<u64> = (lo..hi).map(|i| i * i).collect();
        return GlobalVec::from_slice(&mine);
    }
    let mid = lo + (hi - lo) / 2;
    let (l, r) = uat::join(move || squares(lo, mid), move || squares(mid, hi));
    l.append(r)
}

/// Every pattern once, each checked against its closed form; returns how
/// many checks passed (a failed one ends the job with its message).
fn tour(n: u64) -> u64 {
    let len = n as usize;
    let (a, b, c) = (
        GlobalSlice::<u64>::alloc_distributed(len),
        GlobalSlice::<u64>::alloc_distributed(len),
        GlobalSlice::<u64>::alloc_distributed(len),
    );
    let mut checks = 0;
    let mut check = |ok: bool, what: &str| {
        assert!(ok, "patterns tour: {what}");
        checks += 1;
    };

    // Element-wise: a[i] = i, b[i] = 2i, c[i] = 3i.
    pattern::for_each_chunk_mut(a, |start, xs: &mut [u64]| {
        for (j, x) in xs.iter_mut().enumerate() {
            *x = (start + j) as u64;
        }
    });
    pattern::fill(b, 2);
    pattern::for_each_mut((b, a), |(y, x): (&mut u64, u64)| *y *= x);
    pattern::transform((a, b), c, |(x, y)| x + y);
    pattern::copy(c, b);
    check(pattern::equal(b, c), "copy");
    pattern::transform(enumerate(a), b, |(i, x)| x + i as u64);
    check(b.get(len - 1) == 2 * (n - 1), "transform with indices");
    let hits = GlobalAtomicU64::new(0);
    pattern::for_each(a, move |x| {
        if x % 100 == 0 {
            hits.fetch_add(1, Relaxed);
        }
    });
    check(hits.load(Relaxed) == n.div_ceil(100), "for_each");
    hits.free();

    // Reductions: any monoid; results over 48 bytes (histograms) too.
    check(pattern::reduce(a, Sum::new()) == n * (n - 1) / 2, "sum");
    let dot = pattern::map_reduce((a, c), |(x, y)| x * y, Sum::new());
    check(dot == (n - 1) * n * (2 * n - 1) / 2, "dot product");
    check(pattern::reduce(c, MinMax::new()) == Some((0, 3 * (n - 1))), "min-max");
    check(
        pattern::reduce(a, Count::new(|x: u64| x.is_multiple_of(2))) == n.div_ceil(2),
        "count",
    );
    let hist = pattern::map_reduce(a, |x| (x % 8) as usize, Histogram::<8>::new());
    check(hist.iter().sum::<u64>() == n && hist[0] == n.div_ceil(8), "histogram");
    check(pattern::min(c) == Some((0, 0)), "min with index");
    check(pattern::max(c) == Some((len - 1, 3 * (n - 1))), "max with index");
    let policy = Policy::default().with_grain(1024).with_checkout(16 << 10);
    check(policy.reduce(a, Sum::new()) == n * (n - 1) / 2, "a policy");

    // Scans: b[i] = a[0] + ... + a[i], then the exclusive form.
    pattern::inclusive_scan(a, b, Sum::new());
    check(b.get(len - 1) == n * (n - 1) / 2, "inclusive scan");
    let total = pattern::exclusive_scan(a, b, Sum::new());
    check(
        total == n * (n - 1) / 2 && b.get(len - 1) == (n - 1) * (n - 2) / 2,
        "exclusive scan",
    );

    // Searches.
    check(pattern::position(a, |x| x == 42) == Some(42), "position");
    check(pattern::find(c, |x| x > 30) == Some((11, 33)), "find");
    check(pattern::partition_point(c, |&x| x < 300) == 100, "partition_point");
    check(pattern::is_sorted(c), "is_sorted");

    // Sort and merge: b = a scrambled, sorted back; two sorted halves merged.
    pattern::transform(a, b, move |x| x.wrapping_mul(0x9e37_79b9_7f4a_7c15) % n);
    let before = pattern::reduce(b, Sum::new());
    pattern::sort_unstable(b);
    check(
        pattern::is_sorted(b) && pattern::reduce(b, Sum::new()) == before,
        "sort_unstable",
    );
    pattern::sort_unstable_by_key(b, |&x| std::cmp::Reverse(x));
    let (largest, smallest) = (pattern::max(b).map(|m| m.1), pattern::min(b).map(|m| m.1));
    check(
        Some(b.get(0)) == largest && Some(b.get(len - 1)) == smallest,
        "sort_unstable_by_key",
    );
    let (low, high) = c.split_at(len / 2);
    pattern::merge(high, low, b);
    check(pattern::equal(b, c), "merge");

    // Results of unknown length.
    let even = pattern::filter(c, |x| x % 2 == 0);
    check(even.len() == len.div_ceil(2), "filter");
    even.free();
    let thirds = pattern::reduce(a, Collect::new(|x: u64| x.is_multiple_of(3).then_some(x))).into_slice();
    check(thirds.len() == len.div_ceil(3), "collect");
    thirds.free();
    let sq = squares(0, n).into_slice();
    check(sq.len() == len && sq.get(len - 1) == (n - 1) * (n - 1), "GlobalVec");
    sq.free();

    a.free();
    b.free();
    c.free();
    checks
}

fn main() {
    // SAFETY: the tasks keep only numbers and global-memory handles across
    // spawn and join (the leaf's Vec in `squares` ends before the join).
    unsafe { uat::launch(|n: u64| tour(n.max(1000))) }
}
