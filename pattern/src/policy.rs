//! [`Policy`]: how finely a pattern splits its work and how much memory a
//! task checks out at once; and the splitting driver every pattern shares.
//!
//! # Splitting
//!
//! A range of `n` elements is cut into *blocks* of `grain` elements (the
//! last one shorter): block `k` is `[k·grain, min((k+1)·grain, n))`. A
//! pattern halves the block range recursively with `uni_threads::join`
//! until one block is left: that leaf is one task's serial work. Numbering
//! leaves by block makes per-leaf scratch slots (reductions of large
//! accumulators, scans) a plain index.
//!
//! # Checkouts
//!
//! A leaf walks its block in *chunks*: at most `checkout` bytes of all the
//! slices it touches together, and never across a rank boundary of any of
//! them (so on memory this process maps, a checkout is the memory itself,
//! never a gathered copy). Each chunk is one checkout (or one per slice,
//! nested), ended before the next, and never across a spawn or a join.

/// The default grain of the element-wise patterns (for_each, transform,
/// reductions, scans, searches, filters): 32768 elements per leaf task. At
/// 8-byte elements a leaf is 256 KiB, tens of microseconds of simple work:
/// a leaf's fixed costs (a spawn and join, its checkouts, a reduction's
/// combine) stay a few percent of it, and 2^24 elements still make 512
/// leaves to balance over the ranks. Set a smaller grain (`with_grain`)
/// where each element is expensive.
pub const DEFAULT_GRAIN: usize = 1 << 15;

/// The default checkout bound: 64 KiB. No task of any pattern checks out
/// more than this many bytes at once (all the slices it has checked out
/// together), with these exceptions: [`GlobalSlice::partition_point`](crate::GlobalSlice::partition_point)'s
/// searches (they read by reference where memory is mapped and element by
/// element elsewhere); a reduction's accumulator larger than the bound
/// (its slot is one checkout); and sort and merge leaves of elements
/// larger than an eighth of the bound (a leaf has at least 4 elements).
/// Across the network a checkout is fetched into (and written back from)
/// the software cache, so this bounds what a leaf pins there.
pub const DEFAULT_CHECKOUT: usize = 64 << 10;

/// How a pattern splits its work: the grain (elements per leaf task), the
/// checkout bound (bytes per checkout) and whether it runs serially.
///
/// Every pattern is also a method of `Policy`, with the free function's
/// name and arguments, run under this policy (the free function is the
/// method of `Policy::new()`): `p.reduce(a, Sum::new())`,
/// `p.for_each(0..n, f)`, `p.sort_unstable(a)`.
///
/// ```
/// use uat_pattern::Policy;
/// let p = Policy::default().with_grain(4096).with_checkout(1 << 20);
/// assert_eq!((p.grain(), p.checkout()), (4096, 1 << 20));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    grain: usize,
    checkout: usize,
    sequential: bool,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy::new()
    }
}

impl Policy {
    /// [`DEFAULT_GRAIN`] and [`DEFAULT_CHECKOUT`], in parallel.
    pub const fn new() -> Policy {
        Policy {
            // 0: each pattern's default (DEFAULT_GRAIN; sorting's cut-off).
            grain: 0,
            checkout: DEFAULT_CHECKOUT,
            sequential: false,
        }
    }

    /// This policy with `grain` elements per leaf task (at least 1).
    pub const fn with_grain(self, grain: usize) -> Policy {
        Policy {
            grain: if grain == 0 { 1 } else { grain },
            ..self
        }
    }

    /// This policy with checkouts of at most `bytes` bytes (at least one
    /// element's worth is checked out whatever this says).
    pub const fn with_checkout(self, bytes: usize) -> Policy {
        Policy {
            checkout: if bytes == 0 { 1 } else { bytes },
            ..self
        }
    }

    /// This policy's serial elision: the same splits and leaves, run one
    /// after the other on this thread (no task is spawned).
    pub const fn sequential(self) -> Policy {
        Policy {
            sequential: true,
            ..self
        }
    }

    /// Elements per leaf task ([`DEFAULT_GRAIN`] unless set).
    pub const fn grain(&self) -> usize {
        self.grain_or(DEFAULT_GRAIN)
    }

    /// The grain if one was set (`with_grain`), else a pattern's own
    /// default (sorting's cut-off).
    pub(crate) const fn grain_or(&self, default: usize) -> usize {
        if self.grain == 0 {
            default
        } else {
            self.grain
        }
    }

    /// The checkout bound in bytes.
    pub const fn checkout(&self) -> usize {
        self.checkout
    }

    /// Whether this is a serial elision.
    pub const fn is_sequential(&self) -> bool {
        self.sequential
    }

    /// Elements of `item_bytes` bytes (all slices of an item together) in
    /// one checkout: at least 1.
    pub const fn chunk_items(&self, item_bytes: usize) -> usize {
        let n = self.checkout / if item_bytes == 0 { 1 } else { item_bytes };
        if n == 0 {
            1
        } else {
            n
        }
    }

    /// Leaves (blocks) of a range of `n` elements.
    pub const fn blocks(&self, n: usize) -> usize {
        n.div_ceil(self.grain())
    }

    /// Elements `[lo, hi)` of block `k` of a range of `n`.
    pub const fn block(&self, k: usize, n: usize) -> (usize, usize) {
        let grain = self.grain();
        let lo = k * grain;
        let hi = lo + grain;
        (lo, if hi < n { hi } else { n })
    }
}

/// Runs `a` and `b`: in parallel (`uni_threads::join`) unless the policy is
/// sequential.
#[inline]
pub(crate) fn fork<A, B, RA, RB>(p: Policy, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send + Copy + 'static,
    B: FnOnce() -> RB + Send + Copy + 'static,
    RA: Send + Copy + 'static,
    RB: Send + Copy + 'static,
{
    if p.sequential {
        (a(), b())
    } else {
        uni_threads::join(a, b)
    }
}

/// The middle of the block range `[lo, hi)` (`hi - lo >= 2`).
#[inline]
pub(crate) const fn mid(lo: usize, hi: usize) -> usize {
    lo + (hi - lo) / 2
}

/// Runs `leaf(k, lo, hi)` for every block `k` (elements `[lo, hi)`) of a
/// range of `n` elements, in parallel by halving the block range.
pub(crate) fn par_blocks<L>(p: Policy, n: usize, leaf: L)
where
    L: Fn(usize, usize, usize) + Send + Copy + 'static,
{
    fn rec<L: Fn(usize, usize, usize) + Send + Copy + 'static>(p: Policy, n: usize, blo: usize, bhi: usize, leaf: L) {
        if bhi - blo == 1 {
            let (lo, hi) = p.block(blo, n);
            return leaf(blo, lo, hi);
        }
        let m = mid(blo, bhi);
        fork(p, move || rec(p, n, blo, m, leaf), move || rec(p, n, m, bhi, leaf));
    }
    let b = p.blocks(n);
    if b > 0 {
        rec(p, n, 0, b, leaf)
    }
}

/// Calls `f(lo, hi)` for consecutive chunks covering `[lo, hi)`, each at
/// most `max` elements and ending no later than `part_end(lo, end)` says
/// (the first rank boundary after `lo`).
#[inline]
pub(crate) fn chunks(
    lo: usize,
    hi: usize,
    max: usize,
    part_end: impl Fn(usize, usize) -> usize,
    mut f: impl FnMut(usize, usize),
) {
    let mut at = lo;
    while at < hi {
        let end = part_end(at, hi.min(at.saturating_add(max)));
        debug_assert!(end > at);
        f(at, end);
        at = end;
    }
}

#[cfg(test)]
mod tests {
    use super::{chunks, Policy};

    #[test]
    fn blocks_cover_the_range_exactly() {
        for grain in [1, 2, 3, 7, 2048] {
            let p = Policy::new().with_grain(grain);
            for n in [0, 1, 2, 5, 2047, 2048, 2049, 100003] {
                let mut next = 0;
                for k in 0..p.blocks(n) {
                    let (lo, hi) = p.block(k, n);
                    assert_eq!(lo, next);
                    assert!(hi > lo && hi - lo <= grain);
                    next = hi;
                }
                assert_eq!(next, n, "grain {grain} n {n}");
            }
        }
    }

    #[test]
    fn chunks_are_bounded_and_stop_at_part_ends() {
        // Parts of 10 elements (a distributed slice's ranks).
        let part_end = |lo: usize, hi: usize| hi.min((lo / 10 + 1) * 10);
        for (lo, hi, max) in [(0, 0, 4), (3, 47, 4), (0, 100, 100), (5, 6, 1), (9, 31, 7)] {
            let mut seen = Vec::new();
            chunks(lo, hi, max, part_end, |a, b| seen.push((a, b)));
            let mut at = lo;
            for &(a, b) in &seen {
                assert_eq!(a, at);
                assert!(b > a && b - a <= max && (b - 1) / 10 == a / 10);
                at = b;
            }
            assert_eq!(at, hi);
        }
    }

    #[test]
    fn the_builders_keep_at_least_one() {
        let p = Policy::default().with_grain(0).with_checkout(0);
        assert_eq!((p.grain(), p.checkout(), p.chunk_items(8)), (1, 1, 1));
        assert_eq!(Policy::new().chunk_items(24), (64 << 10) / 24);
        assert!(Policy::new().sequential().is_sequential());
    }
}
