//! Searches and comparisons: [`is_sorted`], [`partition_point`],
//! [`position`], [`find`], [`min`], [`max`], [`min_by_key`],
//! [`max_by_key`], [`equal`].
//!
//! All but [`partition_point`] are reductions ([`crate::reduce`]) over the
//! whole range: `O(n)` work, `O(log n)` depth, no early exit (a match in
//! the first leaf does not stop the others). Ties follow std:
//! [`min`]/[`min_by_key`] return the first least element,
//! [`max`]/[`max_by_key`] the last greatest ([`Iterator::min`],
//! [`Iterator::max`]); [`position`]/[`find`] the first match.

use crate::policy::Policy;
use crate::reduce::{map_reduce_with, reduce_named, Count, Monoid, Reducer};
use crate::source::{enumerate, Source};
use crate::{GlobalSlice, Pod};

/// Whether `s` is sorted (non-decreasing by `<=`).
pub fn is_sorted<T: Pod + PartialOrd + Send>(s: GlobalSlice<T>) -> bool {
    is_sorted_with(Policy::default(), s)
}

/// [`is_sorted`] under `policy`.
pub fn is_sorted_with<T: Pod + PartialOrd + Send>(policy: Policy, s: GlobalSlice<T>) -> bool {
    reduce_named("is_sorted", policy, s, Sortedness::<T>(std::marker::PhantomData)).is_none_or(|(_, _, sorted)| sorted)
}

/// (first, last, sorted) of a range.
struct Sortedness<T>(std::marker::PhantomData<fn() -> T>);

impl<T> Clone for Sortedness<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Sortedness<T> {}

impl<T: PartialOrd + Copy + Send + 'static> Monoid for Sortedness<T> {
    type Acc = Option<(T, T, bool)>;
    fn identity(&self) -> Self::Acc {
        None
    }
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc {
        match (a, b) {
            (Some((f, l, s)), Some((f2, l2, s2))) => Some((f, l2, s && s2 && l <= f2)),
            (None, b) => b,
            (a, None) => a,
        }
    }
}

impl<T: PartialOrd + Copy + Send + 'static> Reducer<T> for Sortedness<T> {
    #[inline]
    fn fold(&self, acc: &mut Self::Acc, x: T) {
        *acc = Some(match *acc {
            None => (x, x, true),
            Some((f, l, s)) => (f, x, s && l <= x),
        })
    }
}

/// The index of the first element of `s` for which `pred` is false, `s`
/// being partitioned by it (true first), like [`slice::partition_point`]:
/// a binary search ([`GlobalSlice::partition_point`]: by reference where
/// this process maps the memory, element by element elsewhere).
pub fn partition_point<T: Pod>(s: GlobalSlice<T>, pred: impl FnMut(&T) -> bool) -> usize {
    s.partition_point(pred)
}

/// The first `Some` (by index).
#[derive(Clone, Copy)]
struct First<U>(std::marker::PhantomData<fn() -> U>);

impl<U: Copy + Send + 'static> Monoid for First<U> {
    type Acc = Option<U>;
    fn identity(&self) -> Option<U> {
        None
    }
    fn combine(&self, a: Option<U>, b: Option<U>) -> Option<U> {
        a.or(b)
    }
}

impl<U: Copy + Send + 'static> Reducer<Option<U>> for First<U> {
    #[inline]
    fn fold(&self, acc: &mut Option<U>, x: Option<U>) {
        if acc.is_none() {
            *acc = x
        }
    }
}

/// The index of the first item of `src` (one slice or a zip) for which
/// `pred` is true.
pub fn position<S, P>(src: S, pred: P) -> Option<usize>
where
    S: Source,
    P: Fn(S::Item) -> bool + Copy + Send + 'static,
{
    position_with(Policy::default(), src, pred)
}

/// [`position`] under `policy`.
pub fn position_with<S, P>(policy: Policy, src: S, pred: P) -> Option<usize>
where
    S: Source,
    P: Fn(S::Item) -> bool + Copy + Send + 'static,
{
    map_reduce_with(
        policy,
        enumerate(src),
        move |(i, x)| pred(x).then_some(i),
        First(std::marker::PhantomData),
    )
}

/// The first item of `src` for which `pred` is true, with its index.
pub fn find<S, P>(src: S, pred: P) -> Option<(usize, S::Item)>
where
    S: Source,
    S::Item: Send + 'static,
    P: Fn(S::Item) -> bool + Copy + Send + 'static,
{
    find_with(Policy::default(), src, pred)
}

/// [`find`] under `policy`.
pub fn find_with<S, P>(policy: Policy, src: S, pred: P) -> Option<(usize, S::Item)>
where
    S: Source,
    S::Item: Send + 'static,
    P: Fn(S::Item) -> bool + Copy + Send + 'static,
{
    map_reduce_with(
        policy,
        enumerate(src),
        move |(i, x)| pred(x).then_some((i, x)),
        First(std::marker::PhantomData),
    )
}

/// The extreme `(index, value)` by `less`: the first least (`MAX ==
/// false`) or the last greatest (`MAX == true`).
#[derive(Clone, Copy)]
struct Extreme<T, L, const MAX: bool> {
    less: L,
    _t: std::marker::PhantomData<fn() -> T>,
}

impl<T, L, const MAX: bool> Extreme<T, L, MAX>
where
    L: Fn(&T, &T) -> bool,
{
    /// Whether `new` (later by index) replaces `cur`.
    #[inline]
    fn better(&self, new: &T, cur: &T) -> bool {
        if MAX {
            !(self.less)(new, cur)
        } else {
            (self.less)(new, cur)
        }
    }
}

impl<T: Copy + Send + 'static, L: Fn(&T, &T) -> bool + Copy + Send + 'static, const MAX: bool> Monoid
    for Extreme<T, L, MAX>
{
    type Acc = Option<(usize, T)>;
    fn identity(&self) -> Self::Acc {
        None
    }
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc {
        match (a, b) {
            (Some(x), Some(y)) => Some(if self.better(&y.1, &x.1) { y } else { x }),
            (None, b) => b,
            (a, None) => a,
        }
    }
}

impl<T: Copy + Send + 'static, L: Fn(&T, &T) -> bool + Copy + Send + 'static, const MAX: bool> Reducer<(usize, T)>
    for Extreme<T, L, MAX>
{
    #[inline]
    fn fold(&self, acc: &mut Self::Acc, (i, x): (usize, T)) {
        if acc.is_none_or(|(_, c)| self.better(&x, &c)) {
            *acc = Some((i, x))
        }
    }
}

fn extreme<T: Pod + Send, L: Fn(&T, &T) -> bool + Copy + Send + 'static, const MAX: bool>(
    what: &str,
    p: Policy,
    s: GlobalSlice<T>,
    less: L,
) -> Option<(usize, T)> {
    reduce_named(
        what,
        p,
        enumerate(s),
        Extreme::<T, L, MAX> {
            less,
            _t: std::marker::PhantomData,
        },
    )
}

/// The least element and its index (the first of equal ones, like
/// [`Iterator::min`]); `None` when `s` is empty.
pub fn min<T: Pod + PartialOrd + Send>(s: GlobalSlice<T>) -> Option<(usize, T)> {
    min_with(Policy::default(), s)
}

/// [`min`] under `policy`.
pub fn min_with<T: Pod + PartialOrd + Send>(policy: Policy, s: GlobalSlice<T>) -> Option<(usize, T)> {
    extreme::<T, _, false>("min", policy, s, |a: &T, b: &T| a < b)
}

/// The greatest element and its index (the last of equal ones, like
/// [`Iterator::max`]); `None` when `s` is empty.
pub fn max<T: Pod + PartialOrd + Send>(s: GlobalSlice<T>) -> Option<(usize, T)> {
    max_with(Policy::default(), s)
}

/// [`max`] under `policy`.
pub fn max_with<T: Pod + PartialOrd + Send>(policy: Policy, s: GlobalSlice<T>) -> Option<(usize, T)> {
    extreme::<T, _, true>("max", policy, s, |a: &T, b: &T| a < b)
}

/// The element with the least `key` and its index (the first of equal
/// ones, like [`Iterator::min_by_key`]).
pub fn min_by_key<T, U, K>(s: GlobalSlice<T>, key: K) -> Option<(usize, T)>
where
    T: Pod + Send,
    U: Ord,
    K: Fn(&T) -> U + Copy + Send + 'static,
{
    min_by_key_with(Policy::default(), s, key)
}

/// [`min_by_key`] under `policy`.
pub fn min_by_key_with<T, U, K>(policy: Policy, s: GlobalSlice<T>, key: K) -> Option<(usize, T)>
where
    T: Pod + Send,
    U: Ord,
    K: Fn(&T) -> U + Copy + Send + 'static,
{
    extreme::<T, _, false>("min_by_key", policy, s, move |a: &T, b: &T| key(a) < key(b))
}

/// The element with the greatest `key` and its index (the last of equal
/// ones, like [`Iterator::max_by_key`]).
pub fn max_by_key<T, U, K>(s: GlobalSlice<T>, key: K) -> Option<(usize, T)>
where
    T: Pod + Send,
    U: Ord,
    K: Fn(&T) -> U + Copy + Send + 'static,
{
    max_by_key_with(Policy::default(), s, key)
}

/// [`max_by_key`] under `policy`.
pub fn max_by_key_with<T, U, K>(policy: Policy, s: GlobalSlice<T>, key: K) -> Option<(usize, T)>
where
    T: Pod + Send,
    U: Ord,
    K: Fn(&T) -> U + Copy + Send + 'static,
{
    extreme::<T, _, true>("max_by_key", policy, s, move |a: &T, b: &T| key(a) < key(b))
}

/// Whether `a` and `b` have the same length and equal elements.
pub fn equal<T: Pod + PartialEq>(a: GlobalSlice<T>, b: GlobalSlice<T>) -> bool {
    equal_with(Policy::default(), a, b)
}

/// [`equal`] under `policy`.
pub fn equal_with<T: Pod + PartialEq>(policy: Policy, a: GlobalSlice<T>, b: GlobalSlice<T>) -> bool {
    a.len() == b.len() && map_reduce_with(policy, (a, b), |(x, y)| x != y, Count::of_true()) == 0
}
