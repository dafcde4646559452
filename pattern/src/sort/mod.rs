//! Sorting and merging: [`sort_unstable`], [`sort_unstable_by_key`],
//! [`sort_unstable_by`], [`Policy::sort_unstable_in`] and [`merge`] — cilksort
//! (Cilk's example, after Akl & Santoro) over global memory.
//!
//! # Structure
//!
//! `sort(a, tmp)`: a part of at most the cut-off is sorted serially in one
//! update checkout (the leaf kernel); a longer one is split in four
//! quarters sorted in parallel (each with the matching quarter of `tmp` as
//! its scratch), then quarters 1+2 and 3+4 are merged in parallel into the
//! halves of `tmp`, and the halves merged back into `a`. A merge is
//! parallel too: the longer input is split at its middle, the shorter
//! where that key goes (a binary search,
//! [`GlobalSlice::partition_point`]), and the two pairs merge in parallel
//! into the two parts of the output; below the cut-off it is one serial
//! merge (the inputs checked out for reading, the output for writing).
//! Work `O(n log n)`, depth `O(log³ n)`.
//!
//! The cut-off is the policy's grain if it sets one, else [`SORT_CUTOFF`],
//! bounded so that a merge leaf's
//! checkouts (inputs and output: twice the cut-off's elements) fit the
//! checkout bound, and at least 4: with the defaults, 2048 elements (Cilk's
//! `QUICKSIZE` and `MERGESIZE`).
//!
//! # Kernels
//!
//! Sorting `u64` by the natural order (`sort_unstable` of a
//! `GlobalSlice<u64>`) uses the AVX-512 kernels where the CPU has
//! AVX-512F ([`kernels`]: sorting networks on 64-key blocks merged
//! pairwise; a bitonic merge network with two-ended chains), scalar
//! branch-free merges elsewhere. Every other type or order sorts leaves
//! with `slice::sort_unstable_by` and merges with a serial merge.
//!
//! # Scratch
//!
//! `tmp` is as long as the input: [`sort_unstable`] allocates it
//! (distributed when the job has several ranks, zeroed — `O(n)` writes
//! and, on first use of the pages, their faults) and frees it after;
//! [`Policy::sort_unstable_in`] takes the caller's, for repeated or timed sorts.

mod cilk;
mod dist;
mod leaf;
mod merge;
#[cfg(target_arch = "x86_64")]
mod network;
mod order;

use std::cmp::Ordering;

use crate::bytes::alloc_like_input;
use crate::policy::Policy;
use crate::source::refuse_overlap;
use crate::{GlobalSlice, Pod};
use cilk::merge_rec;
use order::{By, ByKey, Natural, Order};

/// The serial kernels for `u64` keys, for programs that build their own
/// sorts (e.g. the hand-written cilksort of the benchmarks).
pub mod kernels {
    /// Sorts `x` serially: on AVX-512F, sorting networks on blocks of 64
    /// keys merged pairwise through a thread-local buffer; elsewhere
    /// `slice::sort_unstable`.
    pub fn sort_u64(x: &mut [u64]) {
        super::leaf::sort_leaf(x)
    }

    /// Merges sorted `x` and `y` into `d` (`x.len() + y.len()` long; else
    /// panics): a bitonic merge network on AVX-512F, four two-ended
    /// branch-free chains elsewhere.
    pub fn merge_u64(x: &[u64], y: &[u64], d: &mut [u64]) {
        super::merge::merge_serial(x, y, d)
    }
}

/// The cut-off below which a part is sorted or merged serially when the
/// policy sets no grain: Cilk's `QUICKSIZE` and `MERGESIZE`.
pub const SORT_CUTOFF: usize = 2048;

/// The cut-off for elements of `size` bytes (see the module's docs).
pub(crate) fn cut(p: &Policy, size: usize) -> usize {
    p.grain_or(SORT_CUTOFF).min(p.checkout() / (2 * size).max(1)).max(4)
}

/// Sorts `a` (unstable), in parallel, by `T`'s order; u64 keys use the
/// AVX-512 kernels where the CPU has them. Allocates a scratch slice as
/// long as `a` (see the module's docs).
pub fn sort_unstable<T: Pod + Ord>(a: GlobalSlice<T>) {
    Policy::new().sort_unstable(a)
}

/// Sorts `a` (unstable) by `key`, in parallel: `sort_unstable_by_key(a,
/// |p: &Point| p.x)`.
pub fn sort_unstable_by_key<T, U, K>(a: GlobalSlice<T>, key: K)
where
    T: Pod,
    U: Ord,
    K: Fn(&T) -> U + Copy + Send + 'static,
{
    Policy::new().sort_unstable_by_key(a, key)
}

/// Sorts `a` (unstable) by the comparison `cmp`, in parallel.
pub fn sort_unstable_by<T, C>(a: GlobalSlice<T>, cmp: C)
where
    T: Pod,
    C: Fn(&T, &T) -> Ordering + Copy + Send + 'static,
{
    Policy::new().sort_unstable_by(a, cmp)
}

/// Merges sorted `a` and `b` into `dst` (`a.len() + b.len()` long, not
/// overlapping them), in parallel.
pub fn merge<T: Pod + Ord>(a: GlobalSlice<T>, b: GlobalSlice<T>, dst: GlobalSlice<T>) {
    Policy::new().merge(a, b, dst)
}

impl Policy {
    /// [`sort_unstable`] under this policy.
    pub fn sort_unstable<T: Pod + Ord>(self, a: GlobalSlice<T>) {
        with_scratch(self, a, Natural)
    }

    /// [`sort_unstable`] with the caller's scratch (at least as long as `a`,
    /// its first `a.len()` elements not overlapping `a`; their contents are
    /// lost), allocating nothing.
    pub fn sort_unstable_in<T: Pod + Ord>(self, a: GlobalSlice<T>, scratch: GlobalSlice<T>) {
        in_scratch(self, "sort_unstable_in", a, scratch, Natural)
    }

    /// [`sort_unstable_by`] with the caller's scratch (as
    /// [`Policy::sort_unstable_in`]).
    pub fn sort_unstable_by_in<T, C>(self, a: GlobalSlice<T>, scratch: GlobalSlice<T>, cmp: C)
    where
        T: Pod,
        C: Fn(&T, &T) -> Ordering + Copy + Send + 'static,
    {
        in_scratch(self, "sort_unstable_by_in", a, scratch, By(cmp))
    }

    /// [`sort_unstable_by_key`] under this policy.
    pub fn sort_unstable_by_key<T, U, K>(self, a: GlobalSlice<T>, key: K)
    where
        T: Pod,
        U: Ord,
        K: Fn(&T) -> U + Copy + Send + 'static,
    {
        with_scratch(self, a, ByKey(key))
    }

    /// [`sort_unstable_by`] under this policy.
    pub fn sort_unstable_by<T, C>(self, a: GlobalSlice<T>, cmp: C)
    where
        T: Pod,
        C: Fn(&T, &T) -> Ordering + Copy + Send + 'static,
    {
        with_scratch(self, a, By(cmp))
    }

    /// [`merge`] under this policy.
    pub fn merge<T: Pod + Ord>(self, a: GlobalSlice<T>, b: GlobalSlice<T>, dst: GlobalSlice<T>) {
        assert_eq!(
            dst.len(),
            a.len() + b.len(),
            "merge: the destination has {} elements, the inputs {} + {}",
            dst.len(),
            a.len(),
            b.len()
        );
        refuse_overlap("merge", a.overlaps(&dst) || b.overlaps(&dst));
        let c = cut(&self, std::mem::size_of::<T>());
        merge_rec(self, c, a, b, dst, Natural)
    }
}

fn with_scratch<T: Pod, O: Order<T>>(p: Policy, a: GlobalSlice<T>, o: O) {
    let c = cut(&p, std::mem::size_of::<T>());
    if a.len() <= c {
        return a.update(|x| o.sort_leaf(x));
    }
    let tmp = alloc_like_input::<T>(a.len());
    dist::sort(p, c, a, tmp, o, 0);
    tmp.free();
}

/// Sorts `a` with the caller's `scratch` (checked; `what` names the
/// function in messages).
fn in_scratch<T: Pod, O: Order<T>>(p: Policy, what: &str, a: GlobalSlice<T>, scratch: GlobalSlice<T>, o: O) {
    assert!(
        scratch.len() >= a.len(),
        "{what}: the scratch has {} elements, the slice {}",
        scratch.len(),
        a.len()
    );
    let scratch = scratch.slice(..a.len());
    refuse_overlap(what, a.overlaps(&scratch));
    let c = cut(&p, std::mem::size_of::<T>());
    dist::sort(p, c, a, scratch, o, 0)
}

#[cfg(test)]
mod tests {
    use super::cut;
    use super::order::merge_by;
    use crate::Policy;

    #[test]
    fn the_generic_merge_merges() {
        for (a, b) in [
            (vec![], vec![1u32]),
            (vec![1, 3, 5], vec![2, 3, 4, 9]),
            (vec![7, 8], vec![]),
        ] {
            let mut d = vec![0; a.len() + b.len()];
            merge_by(&a, &b, &mut d, |x, y| x < y);
            let mut want = [a, b].concat();
            want.sort();
            assert_eq!(d, want);
        }
    }

    #[test]
    fn the_cut_off_fits_the_checkout_bound() {
        assert_eq!(cut(&Policy::new(), 8), 2048);
        assert_eq!(cut(&Policy::new(), 64), 512);
        assert_eq!(cut(&Policy::new().with_grain(1), 8), 4);
        assert_eq!(cut(&Policy::new().with_checkout(64), 8), 4);
    }
}
