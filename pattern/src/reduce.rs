//! Reductions: [`reduce`] and [`map_reduce`], with reducers that are
//! monoids ([`Monoid`]: an identity and an associative `combine`) folding
//! elements ([`Reducer`]): [`Sum`], [`Min`], [`Max`], [`MinMax`],
//! [`Count`], [`Histogram`], [`Op`] (any closure), and
//! [`Collect`](crate::Collect) (a new slice of any length).
//!
//! # How accumulators travel
//!
//! Each leaf folds its block into an accumulator starting from the
//! identity; sibling accumulators are combined, left before right, up the
//! same tree of joins. An accumulator of at most 48 bytes (alignment at
//! most 16) is a join's result. A larger one (a [`Histogram`] of more than
//! six buckets, say) cannot be: it travels through global memory instead —
//! one slot per leaf in a scratch slice (distributed when the job has
//! several ranks), where each leaf stores its accumulator and each inner
//! node reads its two children's slots (the left child's is its own first
//! leaf's), combines, and stores the result in its own. The choice is made
//! per type at compile time; nothing changes for the caller.
//!
//! Invariants asked of a reducer: `combine` is associative and `identity`
//! its neutral element (the tree's shape depends on the grain and must not
//! change the result); `fold(acc, x)` equals `combine(acc, fold(identity,
//! x))`. The result is then the serial left fold's. Combination order is
//! always index order, so non-commutative monoids (concatenation) work.

use std::marker::PhantomData;
use std::ops::Add;

use crate::bytes::{self, Carrier};
use crate::policy::{chunks, fork, mid, Policy};
use crate::source::{IntoSource, Source};
use crate::{GlobalSlice, Zeroable};

/// An associative operation with a neutral element on accumulators of type
/// [`Monoid::Acc`]. Plain data (`Copy + Send + 'static`): it travels with
/// the tasks.
pub trait Monoid: Copy + Send + 'static {
    /// The accumulator: plain data (its bytes move between ranks).
    type Acc: Copy + Send + 'static;
    /// The neutral element.
    fn identity(&self) -> Self::Acc;
    /// `a` then `b` (associative; `a` covers lower indices than `b`).
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc;
}

/// A monoid that folds items of type `In` into its accumulator.
pub trait Reducer<In>: Monoid {
    /// Adds `x` (the next item in index order) to `acc`.
    fn fold(&self, acc: &mut Self::Acc, x: In);

    /// A whole leaf's accumulator: by default the identity folded with
    /// every item. A reducer may override it to work per leaf (e.g.
    /// [`Collect`](crate::Collect) gathers a leaf's items in a local
    /// buffer and stores them in one global chunk).
    fn fold_leaf<I: LeafItems<In>>(&self, items: I) -> Self::Acc {
        items.fold(self.identity(), |mut acc, x| {
            self.fold(&mut acc, x);
            acc
        })
    }
}

/// A leaf's items, in index order, read in bounded checkouts.
pub trait LeafItems<In> {
    /// Items of the leaf.
    fn len(&self) -> usize;
    /// Whether the leaf has no items.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Calls `f` on every item, in order. `f` runs inside a checkout: it
    /// must not spawn or join.
    fn for_each(self, f: impl FnMut(In));
    /// Folds every item into `init`, in order (as [`LeafItems::for_each`]).
    /// The accumulator is a value local to each checkout's loop, so that a
    /// simple fold (a sum) stays in registers and vectorizes: a `&mut`
    /// captured across the checkout would be reloaded and stored at every
    /// item.
    fn fold<A: Copy>(self, init: A, f: impl FnMut(A, In) -> A) -> A;
}

/// A leaf of a source: items `[lo, hi)`, read in checkouts of `max` items.
#[derive(Clone, Copy)]
pub(crate) struct Leaf<S> {
    src: S,
    len: usize,
    max: usize,
}

impl<S: Source> LeafItems<S::Item> for Leaf<S> {
    fn len(&self) -> usize {
        self.len
    }
    fn for_each(self, mut f: impl FnMut(S::Item)) {
        let src = self.src;
        chunks(
            0,
            self.len,
            self.max,
            |a, b| src.part_end(a, b),
            |a, b| src.sub(a, b).read(|c| S::items(c, &mut f)),
        )
    }
    fn fold<A: Copy>(self, init: A, mut f: impl FnMut(A, S::Item) -> A) -> A {
        let src = self.src;
        let mut acc = init;
        chunks(
            0,
            self.len,
            self.max,
            |a, b| src.part_end(a, b),
            |a, b| {
                acc = src.sub(a, b).read(|c| {
                    let mut local = acc;
                    S::items(c, |x| local = f(local, x));
                    local
                })
            },
        );
        acc
    }
}

/// A leaf's items mapped by `map`.
struct MapItems<I, M, In> {
    items: I,
    map: M,
    _in: PhantomData<fn(In)>,
}

impl<In, U, I: LeafItems<In>, M: Fn(In) -> U> LeafItems<U> for MapItems<I, M, In> {
    fn len(&self) -> usize {
        self.items.len()
    }
    fn for_each(self, mut f: impl FnMut(U)) {
        let map = self.map;
        self.items.for_each(|x| f(map(x)))
    }
    fn fold<A: Copy>(self, init: A, mut f: impl FnMut(A, U) -> A) -> A {
        let map = self.map;
        self.items.fold(init, |acc, x| f(acc, map(x)))
    }
}

/// `r` over items mapped by `map` (what [`map_reduce`] reduces with).
#[derive(Clone, Copy)]
struct Mapped<M, R> {
    map: M,
    r: R,
}

impl<M: Copy + Send + 'static, R: Monoid> Monoid for Mapped<M, R> {
    type Acc = R::Acc;
    fn identity(&self) -> R::Acc {
        self.r.identity()
    }
    fn combine(&self, a: R::Acc, b: R::Acc) -> R::Acc {
        self.r.combine(a, b)
    }
}

impl<In, U, M, R> Reducer<In> for Mapped<M, R>
where
    M: Fn(In) -> U + Copy + Send + 'static,
    R: Reducer<U>,
{
    fn fold(&self, acc: &mut R::Acc, x: In) {
        self.r.fold(acc, (self.map)(x))
    }
    fn fold_leaf<I: LeafItems<In>>(&self, items: I) -> R::Acc {
        self.r.fold_leaf(MapItems {
            items,
            map: self.map,
            _in: PhantomData,
        })
    }
}

/// Reduces the items of `src` (one slice or a zip) with `reducer`, in
/// parallel: `reduce(a, Sum::new())`, `reduce(a, Histogram::<16>::new())`
/// (items must then be bucket indices; see [`map_reduce`]).
pub fn reduce<S, R>(src: S, reducer: R) -> R::Acc
where
    S: IntoSource,
    R: Reducer<S::Item>,
{
    Policy::new().reduce(src, reducer)
}

/// Maps every item of `src` with `map` and reduces the results with
/// `reducer`: `map_reduce((a, b), |(x, y)| x * y, Sum::new())`.
pub fn map_reduce<S, U, M, R>(src: S, map: M, reducer: R) -> R::Acc
where
    S: IntoSource,
    M: Fn(S::Item) -> U + Copy + Send + 'static,
    R: Reducer<U>,
{
    Policy::new().map_reduce(src, map, reducer)
}

impl Policy {
    /// [`reduce`] under this policy.
    pub fn reduce<S, R>(self, src: S, reducer: R) -> R::Acc
    where
        S: IntoSource,
        R: Reducer<S::Item>,
    {
        reduce_named("reduce", self, src, reducer)
    }

    /// [`map_reduce`] under this policy.
    pub fn map_reduce<S, U, M, R>(self, src: S, map: M, reducer: R) -> R::Acc
    where
        S: IntoSource,
        M: Fn(S::Item) -> U + Copy + Send + 'static,
        R: Reducer<U>,
    {
        reduce_named("map_reduce", self, src, Mapped { map, r: reducer })
    }
}

/// The reduction driver (`what` names the pattern in messages).
pub(crate) fn reduce_named<S, R>(what: &str, p: Policy, src: S, r: R) -> R::Acc
where
    S: IntoSource,
    R: Reducer<S::Item>,
{
    let src = src.into_source();
    let n = src.length(what);
    let blocks = p.blocks(n);
    if blocks == 0 {
        return r.identity();
    }
    let slots = bytes::slots_for::<R::Acc>(blocks);
    let c = rec(p, src, r, n, 0, blocks, slots);
    // SAFETY: the root's accumulator, given for block 0.
    let acc = unsafe { take::<R::Acc>(c, 0, slots) };
    if let Some(s) = slots {
        s.free()
    }
    acc
}

/// Reduces blocks `[blo, bhi)`; the result is in the carrier or, for a
/// large accumulator, in slot `blo`.
fn rec<S, R>(p: Policy, src: S, r: R, n: usize, blo: usize, bhi: usize, slots: Option<GlobalSlice<u64>>) -> Carrier
where
    S: Source,
    R: Reducer<S::Item>,
{
    if bhi - blo == 1 {
        let (lo, hi) = p.block(blo, n);
        let leaf = Leaf {
            src: src.sub(lo, hi),
            len: hi - lo,
            max: p.chunk_items(S::item_bytes()),
        };
        return give(r.fold_leaf(leaf), blo, slots);
    }
    let m = mid(blo, bhi);
    let (x, y) = fork(
        p,
        move || rec(p, src, r, n, blo, m, slots),
        move || rec(p, src, r, n, m, bhi, slots),
    );
    // SAFETY: the children's results, given for their first blocks.
    let acc = unsafe { r.combine(take(x, blo, slots), take(y, m, slots)) };
    give(acc, blo, slots)
}

/// Hands `a` (the accumulator of blocks from `k`) up the tree.
pub(crate) fn give<A: Copy>(a: A, k: usize, slots: Option<GlobalSlice<u64>>) -> Carrier {
    match slots {
        None => Carrier::pack(a),
        Some(s) => {
            bytes::store(s, k, a);
            Carrier::EMPTY
        }
    }
}

/// The accumulator [`give`] handed up for block `k`.
///
/// # Safety
/// `c` and `slots` come from `give::<A>(_, k, slots)`.
pub(crate) unsafe fn take<A: Copy>(c: Carrier, k: usize, slots: Option<GlobalSlice<u64>>) -> A {
    // SAFETY: the caller's contract.
    unsafe {
        match slots {
            None => c.unpack(),
            Some(s) => bytes::load(s, k),
        }
    }
}

/// The sum (`+`, from zero): `reduce(a, Sum::new())`. Integer overflow
/// behaves as `+` does in the build (wraps in release builds).
pub struct Sum<T>(PhantomData<fn() -> T>);

impl<T> Sum<T> {
    /// The sum reducer.
    pub const fn new() -> Self {
        Sum(PhantomData)
    }
}

impl<T> Default for Sum<T> {
    fn default() -> Self {
        Sum::new()
    }
}

impl<T> Clone for Sum<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Sum<T> {}

impl<T: Copy + Send + 'static + Zeroable + Add<Output = T>> Monoid for Sum<T> {
    type Acc = T;
    fn identity(&self) -> T {
        T::zeroed()
    }
    fn combine(&self, a: T, b: T) -> T {
        a + b
    }
}

impl<T: Copy + Send + 'static + Zeroable + Add<Output = T>> Reducer<T> for Sum<T> {
    #[inline]
    fn fold(&self, acc: &mut T, x: T) {
        *acc = *acc + x
    }
}

macro_rules! marker_reducer {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        pub struct $name<T>(PhantomData<fn() -> T>);
        impl<T> $name<T> {
            /// The reducer.
            pub const fn new() -> Self {
                $name(PhantomData)
            }
        }
        impl<T> Default for $name<T> {
            fn default() -> Self {
                $name::new()
            }
        }
        impl<T> Clone for $name<T> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<T> Copy for $name<T> {}
    };
}

marker_reducer!(
    /// The least item (`None` when there is none); on ties the first, like
    /// [`Iterator::min`].
    Min
);
marker_reducer!(
    /// The greatest item (`None` when there is none); on ties the last,
    /// like [`Iterator::max`].
    Max
);
marker_reducer!(
    /// `(least, greatest)` (`None` when there is none); ties as [`Min`] and
    /// [`Max`].
    MinMax
);

impl<T: PartialOrd + Copy + Send + 'static> Monoid for Min<T> {
    type Acc = Option<T>;
    fn identity(&self) -> Option<T> {
        None
    }
    fn combine(&self, a: Option<T>, b: Option<T>) -> Option<T> {
        match (a, b) {
            (Some(x), Some(y)) => Some(if y < x { y } else { x }),
            (None, b) => b,
            (a, None) => a,
        }
    }
}

impl<T: PartialOrd + Copy + Send + 'static> Reducer<T> for Min<T> {
    #[inline]
    fn fold(&self, acc: &mut Option<T>, x: T) {
        if acc.is_none_or(|a| x < a) {
            *acc = Some(x)
        }
    }
}

impl<T: PartialOrd + Copy + Send + 'static> Monoid for Max<T> {
    type Acc = Option<T>;
    fn identity(&self) -> Option<T> {
        None
    }
    fn combine(&self, a: Option<T>, b: Option<T>) -> Option<T> {
        match (a, b) {
            (Some(x), Some(y)) => Some(if y >= x { y } else { x }),
            (None, b) => b,
            (a, None) => a,
        }
    }
}

impl<T: PartialOrd + Copy + Send + 'static> Reducer<T> for Max<T> {
    #[inline]
    fn fold(&self, acc: &mut Option<T>, x: T) {
        if acc.is_none_or(|a| x >= a) {
            *acc = Some(x)
        }
    }
}

impl<T: PartialOrd + Copy + Send + 'static> Monoid for MinMax<T> {
    type Acc = Option<(T, T)>;
    fn identity(&self) -> Option<(T, T)> {
        None
    }
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc {
        match (a, b) {
            (Some((l1, h1)), Some((l2, h2))) => Some((if l2 < l1 { l2 } else { l1 }, if h2 >= h1 { h2 } else { h1 })),
            (None, b) => b,
            (a, None) => a,
        }
    }
}

impl<T: PartialOrd + Copy + Send + 'static> Reducer<T> for MinMax<T> {
    #[inline]
    fn fold(&self, acc: &mut Self::Acc, x: T) {
        *acc = Some(match *acc {
            None => (x, x),
            Some((l, h)) => (if x < l { x } else { l }, if x >= h { x } else { h }),
        })
    }
}

/// How many items satisfy a predicate: `reduce(a, Count::new(|x| x > 5))`;
/// [`Count::of_true`] counts mapped `true`s.
#[derive(Clone, Copy)]
pub struct Count<P>(P);

impl<P> Count<P> {
    /// Counts the items for which `pred` is true.
    pub const fn new(pred: P) -> Self {
        Count(pred)
    }
}

impl Count<fn(bool) -> bool> {
    /// Counts `true` items (`map_reduce(a, |x| x > 5, Count::of_true())`).
    pub fn of_true() -> Self {
        Count(|b| b)
    }
}

impl<P: Copy + Send + 'static> Monoid for Count<P> {
    type Acc = u64;
    fn identity(&self) -> u64 {
        0
    }
    fn combine(&self, a: u64, b: u64) -> u64 {
        a + b
    }
}

impl<In, P: Fn(In) -> bool + Copy + Send + 'static> Reducer<In> for Count<P> {
    #[inline]
    fn fold(&self, acc: &mut u64, x: In) {
        *acc += (self.0)(x) as u64
    }
}

/// Counts of bucket indices in `0..N` (an index out of range panics):
/// `map_reduce(a, |x| (x % 16) as usize, Histogram::<16>::new())`. Its
/// accumulator is `8·N` bytes: above six buckets it travels through global
/// memory (see the module's docs).
#[derive(Clone, Copy, Default)]
pub struct Histogram<const N: usize>;

impl<const N: usize> Histogram<N> {
    /// The reducer.
    pub const fn new() -> Self {
        Histogram
    }
}

impl<const N: usize> Monoid for Histogram<N> {
    type Acc = [u64; N];
    fn identity(&self) -> [u64; N] {
        [0; N]
    }
    fn combine(&self, mut a: [u64; N], b: [u64; N]) -> [u64; N] {
        for (x, y) in a.iter_mut().zip(b) {
            *x += y
        }
        a
    }
}

impl<const N: usize> Reducer<usize> for Histogram<N> {
    #[inline]
    fn fold(&self, acc: &mut [u64; N], bucket: usize) {
        match acc.get_mut(bucket) {
            Some(c) => *c += 1,
            None => panic!("Histogram::<{N}>: bucket {bucket} is out of range"),
        }
    }

    /// Counts into one array in place ([`Reducer::fold_leaf`]'s default
    /// would carry the `8·N` bytes by value from item to item).
    fn fold_leaf<I: LeafItems<usize>>(&self, items: I) -> [u64; N] {
        let mut acc = [0u64; N];
        items.for_each(|b| self.fold(&mut acc, b));
        acc
    }
}

/// Any monoid given by its identity and an associative closure, folding
/// items of the accumulator's type: `reduce(a, Op::new(0, |x, y| x ^ y))`.
#[derive(Clone, Copy)]
pub struct Op<T, F> {
    identity: T,
    op: F,
}

impl<T, F> Op<T, F> {
    /// The monoid (`identity`, `op`); `op` must be associative with
    /// `identity` neutral.
    pub const fn new(identity: T, op: F) -> Self {
        Op { identity, op }
    }
}

impl<T: Copy + Send + 'static, F: Fn(T, T) -> T + Copy + Send + 'static> Monoid for Op<T, F> {
    type Acc = T;
    fn identity(&self) -> T {
        self.identity
    }
    fn combine(&self, a: T, b: T) -> T {
        (self.op)(a, b)
    }
}

impl<T: Copy + Send + 'static, F: Fn(T, T) -> T + Copy + Send + 'static> Reducer<T> for Op<T, F> {
    #[inline]
    fn fold(&self, acc: &mut T, x: T) {
        *acc = (self.op)(*acc, x)
    }
}

#[cfg(test)]
mod tests {
    use super::{Count, Histogram, Max, Min, MinMax, Monoid, Op, Reducer, Sum};

    /// Folds `xs` split at every point, combining the halves: the same as
    /// the serial fold (associativity, neutral identity, fold = combine).
    fn laws<T: Copy + PartialEq + std::fmt::Debug, R: Reducer<T>>(r: R, xs: &[T])
    where
        R::Acc: PartialEq + std::fmt::Debug,
    {
        let fold = |s: &[T]| {
            let mut a = r.identity();
            for &x in s {
                r.fold(&mut a, x)
            }
            a
        };
        let whole = fold(xs);
        for k in 0..=xs.len() {
            let (l, rt) = xs.split_at(k);
            assert_eq!(r.combine(fold(l), fold(rt)), whole);
            assert_eq!(r.combine(r.identity(), fold(l)), fold(l));
            assert_eq!(r.combine(fold(l), r.identity()), fold(l));
        }
        for k in 0..xs.len() {
            for m in k..xs.len() {
                let (a, b, c) = (fold(&xs[..k]), fold(&xs[k..m]), fold(&xs[m..]));
                assert_eq!(r.combine(r.combine(a, b), c), r.combine(a, r.combine(b, c)));
            }
        }
    }

    #[test]
    fn the_reducers_are_monoids_agreeing_with_the_serial_fold() {
        let xs: Vec<u64> = [5, 3, 9, 3, 1, 9, 7, 0, 1].to_vec();
        laws(Sum::new(), &xs);
        laws(Min::new(), &xs);
        laws(Max::new(), &xs);
        laws(MinMax::new(), &xs);
        laws(Count::new(|x: u64| x > 4), &xs);
        laws(Op::new(0u64, |a, b| a ^ b), &xs);
        let buckets: Vec<usize> = xs.iter().map(|&x| x as usize).collect();
        laws(Histogram::<10>::new(), &buckets);
        // Ties: the first minimum and the last maximum (by index).
        let pairs: Vec<(u64, usize)> = vec![(1, 0), (0, 1), (0, 2), (1, 3)];
        let by_key = |p: &[(u64, usize)]| {
            let r = Min::<KeyFirst>::new();
            let mut a = r.identity();
            p.iter().for_each(|&(k, i)| r.fold(&mut a, KeyFirst(k, i)));
            a.map(|KeyFirst(_, i)| i)
        };
        assert_eq!(by_key(&pairs), Some(1));
        let mx = Max::<KeyFirst>::new();
        let mut a = mx.identity();
        pairs.iter().for_each(|&(k, i)| mx.fold(&mut a, KeyFirst(k, i)));
        assert_eq!(a.map(|KeyFirst(_, i)| i), Some(3));
    }

    /// Compared by key only.
    #[derive(Clone, Copy, Debug)]
    struct KeyFirst(u64, usize);
    impl PartialEq for KeyFirst {
        fn eq(&self, o: &Self) -> bool {
            self.0 == o.0
        }
    }
    impl PartialOrd for KeyFirst {
        fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
            self.0.partial_cmp(&o.0)
        }
    }
}
