//! Searches and comparisons: [`is_sorted`], [`partition_point`],
//! [`position`], [`find`], [`min`], [`max`], [`min_by_key`],
//! [`max_by_key`], [`equal`].
//!
//! All but [`partition_point`] are reductions ([`crate::reduce()`]) over the
//! whole range: `O(n)` work, `O(log n)` depth, no early exit (a match in
//! the first leaf does not stop the others). Ties follow std:
//! [`min`]/[`min_by_key`] return the first least element,
//! [`max`]/[`max_by_key`] the last greatest ([`Iterator::min`],
//! [`Iterator::max`]); [`position`]/[`find`] the first match.

use crate::policy::Policy;
use crate::reduce::{reduce_named, Count, Monoid, Reducer};
use crate::source::{enumerate, IntoSource};
use crate::{GlobalSlice, Pod};

/// Whether `s` is sorted (non-decreasing by `<=`).
pub fn is_sorted<T: Pod + PartialOrd + Send>(s: GlobalSlice<T>) -> bool {
    Policy::new().is_sorted(s)
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
    S: IntoSource,
    P: Fn(S::Item) -> bool + Copy + Send + 'static,
{
    Policy::new().position(src, pred)
}

/// The first item of `src` for which `pred` is true, with its index.
pub fn find<S, P>(src: S, pred: P) -> Option<(usize, S::Item)>
where
    S: IntoSource,
    S::Item: Send + 'static,
    P: Fn(S::Item) -> bool + Copy + Send + 'static,
{
    Policy::new().find(src, pred)
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
    Policy::new().min(s)
}

/// The greatest element and its index (the last of equal ones, like
/// [`Iterator::max`]); `None` when `s` is empty.
pub fn max<T: Pod + PartialOrd + Send>(s: GlobalSlice<T>) -> Option<(usize, T)> {
    Policy::new().max(s)
}

/// The element with the least `key` and its index (the first of equal
/// ones, like [`Iterator::min_by_key`]).
pub fn min_by_key<T, U, K>(s: GlobalSlice<T>, key: K) -> Option<(usize, T)>
where
    T: Pod + Send,
    U: Ord,
    K: Fn(&T) -> U + Copy + Send + 'static,
{
    Policy::new().min_by_key(s, key)
}

/// The element with the greatest `key` and its index (the last of equal
/// ones, like [`Iterator::max_by_key`]).
pub fn max_by_key<T, U, K>(s: GlobalSlice<T>, key: K) -> Option<(usize, T)>
where
    T: Pod + Send,
    U: Ord,
    K: Fn(&T) -> U + Copy + Send + 'static,
{
    Policy::new().max_by_key(s, key)
}

/// Whether `a` and `b` have the same length and equal elements.
pub fn equal<T: Pod + PartialEq>(a: GlobalSlice<T>, b: GlobalSlice<T>) -> bool {
    Policy::new().equal(a, b)
}

impl Policy {
    /// [`is_sorted`] under this policy.
    pub fn is_sorted<T: Pod + PartialOrd + Send>(self, s: GlobalSlice<T>) -> bool {
        reduce_named("is_sorted", self, s, Sortedness::<T>(std::marker::PhantomData))
            .is_none_or(|(_, _, sorted)| sorted)
    }

    /// [`position`] under this policy.
    pub fn position<S, P>(self, src: S, pred: P) -> Option<usize>
    where
        S: IntoSource,
        P: Fn(S::Item) -> bool + Copy + Send + 'static,
    {
        self.map_reduce(
            enumerate(src),
            move |(i, x)| pred(x).then_some(i),
            First(std::marker::PhantomData),
        )
    }

    /// [`find`] under this policy.
    pub fn find<S, P>(self, src: S, pred: P) -> Option<(usize, S::Item)>
    where
        S: IntoSource,
        S::Item: Send + 'static,
        P: Fn(S::Item) -> bool + Copy + Send + 'static,
    {
        self.map_reduce(
            enumerate(src),
            move |(i, x)| pred(x).then_some((i, x)),
            First(std::marker::PhantomData),
        )
    }

    /// [`min`] under this policy.
    pub fn min<T: Pod + PartialOrd + Send>(self, s: GlobalSlice<T>) -> Option<(usize, T)> {
        extreme::<T, _, false>("min", self, s, |a: &T, b: &T| a < b)
    }

    /// [`max`] under this policy.
    pub fn max<T: Pod + PartialOrd + Send>(self, s: GlobalSlice<T>) -> Option<(usize, T)> {
        extreme::<T, _, true>("max", self, s, |a: &T, b: &T| a < b)
    }

    /// [`min_by_key`] under this policy.
    pub fn min_by_key<T, U, K>(self, s: GlobalSlice<T>, key: K) -> Option<(usize, T)>
    where
        T: Pod + Send,
        U: Ord,
        K: Fn(&T) -> U + Copy + Send + 'static,
    {
        extreme::<T, _, false>("min_by_key", self, s, move |a: &T, b: &T| key(a) < key(b))
    }

    /// [`max_by_key`] under this policy.
    pub fn max_by_key<T, U, K>(self, s: GlobalSlice<T>, key: K) -> Option<(usize, T)>
    where
        T: Pod + Send,
        U: Ord,
        K: Fn(&T) -> U + Copy + Send + 'static,
    {
        extreme::<T, _, true>("max_by_key", self, s, move |a: &T, b: &T| key(a) < key(b))
    }

    /// [`equal`] under this policy.
    pub fn equal<T: Pod + PartialEq>(self, a: GlobalSlice<T>, b: GlobalSlice<T>) -> bool {
        a.len() == b.len() && self.map_reduce((a, b), |(x, y)| x != y, Count::of_true()) == 0
    }
}
