//! Cilksort over global memory (see the parent module's docs): four
//! quarters sorted in parallel, merged pairwise in parallel through the
//! scratch, each merge split by a binary search.

use super::order::Order;
use crate::policy::{fork, Policy};
use crate::{GlobalSlice, Pod};

/// Sorts `a` with `tmp` (as long) as scratch.
pub(crate) fn sort<T: Pod, O: Order<T>>(p: Policy, cut: usize, a: GlobalSlice<T>, tmp: GlobalSlice<T>, o: O) {
    let n = a.len();
    if n <= cut {
        a.update(|x| o.sort_leaf(x));
        return;
    }
    let q = n / 4;
    let (a12, a34) = a.split_at(2 * q);
    let (a1, a2) = a12.split_at(q);
    let (a3, a4) = a34.split_at(q);
    let (t12, t34) = tmp.split_at(2 * q);
    let (t1, t2) = t12.split_at(q);
    let (t3, t4) = t34.split_at(q);
    fork(
        p,
        move || fork(p, move || sort(p, cut, a1, t1, o), move || sort(p, cut, a2, t2, o)),
        move || fork(p, move || sort(p, cut, a3, t3, o), move || sort(p, cut, a4, t4, o)),
    );
    fork(
        p,
        move || merge_rec(p, cut, a1, a2, t12, o),
        move || merge_rec(p, cut, a3, a4, t34, o),
    );
    merge_rec(p, cut, t12, t34, a, o);
}

/// Merges sorted `a` and `b` into `dest` (`a.len() + b.len()` long).
pub(crate) fn merge_rec<T: Pod, O: Order<T>>(
    p: Policy,
    cut: usize,
    a: GlobalSlice<T>,
    b: GlobalSlice<T>,
    dest: GlobalSlice<T>,
    o: O,
) {
    let (a, b) = if a.len() < b.len() { (b, a) } else { (a, b) };
    if a.is_empty() {
        return;
    }
    if a.len() + b.len() <= cut {
        a.read(|x| b.read(|y| dest.write(|d| o.merge_leaf(x, y, d))));
        return;
    }
    // Split the longer at its middle and the shorter where that key goes.
    let split_a = a.len() / 2;
    let pivot = a.get(split_a);
    let split_b = b.partition_point(|k| o.less(k, &pivot));
    let (a1, a2) = a.split_at(split_a);
    let (b1, b2) = b.split_at(split_b);
    let (d1, d2) = dest.split_at(split_a + split_b);
    fork(
        p,
        move || merge_rec(p, cut, a1, b1, d1, o),
        move || merge_rec(p, cut, a2, b2, d2, o),
    );
}
