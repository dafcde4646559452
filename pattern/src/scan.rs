//! Prefix scans: [`inclusive_scan`] and [`exclusive_scan`] of a slice with
//! a [`Monoid`] whose accumulator is the element type.
//!
//! Two passes over the blocks of the policy's grain ([`crate::policy`]):
//!
//! 1. in parallel, each leaf folds its block into its total and stores it
//!    in its slot of a scratch slice of one element per block
//!    (distributed when the job has several ranks): totals of any size
//!    travel through global memory, never through a join's result;
//! 2. serially, the totals are replaced by their exclusive scan (the
//!    offset of each block; blocks are `n / grain`, so this is small), in
//!    bounded checkouts;
//! 3. in parallel, each leaf scans its block again from its offset into
//!    the destination.
//!
//! Work: two reads of the source, one write of the destination, plus
//! `n / grain` totals; depth: `O(log n + n / grain)` (the serial middle
//! pass; with the default grain it is a 32768th of the data).
//!
//! On one rank (or under a sequential policy) nobody can take a leaf, so
//! the scan is one pass in index order: one read and one write, as a
//! serial loop.

use crate::bytes::alloc_like_input;
use crate::policy::{chunks, par_blocks, Policy};
use crate::reduce::Monoid;
use crate::source::{refuse_overlap, slice_part_end};
use crate::{GlobalSlice, Pod};

/// Writes `dst[i] = src[0] ⊕ … ⊕ src[i]` (`⊕`: `monoid.combine`).
/// `dst` must be as long as `src` and must not overlap it.
pub fn inclusive_scan<T: Pod, M: Monoid<Acc = T>>(src: GlobalSlice<T>, dst: GlobalSlice<T>, monoid: M) {
    Policy::new().inclusive_scan(src, dst, monoid)
}

/// Writes `dst[i] = identity ⊕ src[0] ⊕ … ⊕ src[i - 1]` and returns the
/// total of `src`. `dst` must be as long as `src` and must not overlap it.
pub fn exclusive_scan<T: Pod, M: Monoid<Acc = T>>(src: GlobalSlice<T>, dst: GlobalSlice<T>, monoid: M) -> T {
    Policy::new().exclusive_scan(src, dst, monoid)
}

impl Policy {
    /// [`inclusive_scan`] under this policy.
    pub fn inclusive_scan<T: Pod, M: Monoid<Acc = T>>(self, src: GlobalSlice<T>, dst: GlobalSlice<T>, monoid: M) {
        scan("inclusive_scan", self, src, dst, monoid, true);
    }

    /// [`exclusive_scan`] under this policy.
    pub fn exclusive_scan<T: Pod, M: Monoid<Acc = T>>(self, src: GlobalSlice<T>, dst: GlobalSlice<T>, monoid: M) -> T {
        scan("exclusive_scan", self, src, dst, monoid, false)
    }
}

fn scan<T: Pod, M: Monoid<Acc = T>>(
    what: &str,
    p: Policy,
    src: GlobalSlice<T>,
    dst: GlobalSlice<T>,
    m: M,
    inclusive: bool,
) -> T {
    let n = src.len();
    assert_eq!(
        dst.len(),
        n,
        "{what}: the destination has {} elements, the source {n}",
        dst.len()
    );
    refuse_overlap(what, src.overlaps(&dst));
    let blocks = p.blocks(n);
    if blocks == 0 {
        return m.identity();
    }
    let size = std::mem::size_of::<T>();
    let two = p.chunk_items(2 * size);
    if p.is_sequential() || uni_threads::ranks() <= 1 {
        // One worker: nobody can take a leaf, so the leaves would run in
        // index order anyway. One pass, carrying the running total.
        return scan_part(src, dst, m, inclusive, two, 0, n, m.identity());
    }
    let totals = alloc_like_input::<T>(blocks);
    let one = p.chunk_items(size);
    par_blocks(p, n, move |k, lo, hi| {
        let mut acc = m.identity();
        chunks(
            lo,
            hi,
            one,
            |a, b| slice_part_end(&src, a, b),
            // The running total is a value local to the checkout's loop (a
            // `&mut` captured across it would be stored at every element).
            |a, b| acc = src.slice(a..b).read(|x| x.iter().fold(acc, |t, &v| m.combine(t, v))),
        );
        totals.set(k, acc);
    });
    let mut run = m.identity();
    chunks(
        0,
        blocks,
        one,
        |a, b| slice_part_end(&totals, a, b),
        |a, b| {
            totals.slice(a..b).update(|t| {
                for e in t {
                    let v = *e;
                    *e = run;
                    run = m.combine(run, v);
                }
            })
        },
    );
    par_blocks(p, n, move |k, lo, hi| {
        scan_part(src, dst, m, inclusive, two, lo, hi, totals.get(k));
    });
    totals.free();
    run
}

/// Scans `src[lo..hi]` into `dst[lo..hi]` from the running total `acc`, in
/// checkouts of `two` elements of both; returns the total after `hi`.
#[allow(clippy::too_many_arguments)]
fn scan_part<T: Pod, M: Monoid<Acc = T>>(
    src: GlobalSlice<T>,
    dst: GlobalSlice<T>,
    m: M,
    inclusive: bool,
    two: usize,
    lo: usize,
    hi: usize,
    mut acc: T,
) -> T {
    chunks(
        lo,
        hi,
        two,
        |a, b| slice_part_end(&dst, a, slice_part_end(&src, a, b)),
        |a, b| {
            acc = src.slice(a..b).read(|x| {
                dst.slice(a..b).write(|d| {
                    let mut t = acc;
                    for (o, &v) in d.iter_mut().zip(x) {
                        if inclusive {
                            t = m.combine(t, v);
                            *o = t;
                        } else {
                            *o = t;
                            t = m.combine(t, v);
                        }
                    }
                    t
                })
            })
        },
    );
    acc
}
