//! What a pattern reads ([`Source`]) and what it updates ([`Target`]): one
//! [`GlobalSlice`], or two or three zipped slices of equal length, given as
//! a tuple: `for_each((a, b), |(x, y)| ..)`. A pattern that reads takes
//! anything that is [`IntoSource`]: a source, or an index range `lo..hi`
//! whose items are the indices themselves (`map_reduce(0..n, |i| i * i,
//! Sum::new())`: no memory is read, the range is split into tasks the same
//! way a slice is).
//!
//! A source is checked out for reading (one nested checkout per slice); a
//! target's first slice is checked out for updating and the others for
//! reading. Zipped slices must not overlap where one is written (the
//! runtime refuses that with a message). Items are passed by value (`T:
//! Pod` is `Copy`); a target's first element by `&mut`.
//!
//! Invariant of every implementation: `sub(lo, hi)` is the same zip of the
//! same parts `[lo, hi)`, and `part_end(lo, hi)` is the largest `e` in
//! `(lo, hi]` such that every slice's `[lo, e)` lies on one rank.

use crate::{GlobalSlice, Pod};

/// One slice, or two or three zipped slices of equal length, read by a
/// pattern.
pub trait Source: sealed::Sealed + Copy + Send + 'static {
    /// One item: `T`, `(A, B)` or `(A, B, C)` (by value).
    type Item: Copy;
    /// A checked-out chunk: `&[T]`, `(&[A], &[B])`, ...
    type Chunk<'a>;
    /// The common length; panics (naming the pattern `what`) when zipped
    /// slices differ in length.
    fn length(&self, what: &str) -> usize;
    /// Bytes of one item (all slices together).
    fn item_bytes() -> usize;
    /// Items `[lo, hi)` of this source.
    fn sub(&self, lo: usize, hi: usize) -> Self;
    /// The largest `e <= hi` such that `[lo, e)` lies on one rank in every
    /// slice (`lo < hi`).
    fn part_end(&self, lo: usize, hi: usize) -> usize;
    /// Checks the whole source out for reading.
    fn read<R>(&self, f: impl FnOnce(Self::Chunk<'_>) -> R) -> R;
    /// Calls `f` on every item of a chunk, in order.
    fn items(c: Self::Chunk<'_>, f: impl FnMut(Self::Item));
    /// Whether a slice of this source shares memory with `s`.
    fn overlaps<X: Pod>(&self, s: &GlobalSlice<X>) -> bool;
}

/// One slice, or two or three zipped slices of equal length, of which a
/// pattern updates the first and reads the others.
pub trait Target: sealed::Sealed + Copy + Send + 'static {
    /// One item: `&mut T`, `(&mut A, B)` or `(&mut A, B, C)`.
    type ItemMut<'a>;
    /// A checked-out chunk: `&mut [T]`, `(&mut [A], &[B])`, ...
    type ChunkMut<'a>;
    /// As [`Source::length`].
    fn length(&self, what: &str) -> usize;
    /// As [`Source::item_bytes`].
    fn item_bytes() -> usize;
    /// As [`Source::sub`].
    fn sub(&self, lo: usize, hi: usize) -> Self;
    /// As [`Source::part_end`].
    fn part_end(&self, lo: usize, hi: usize) -> usize;
    /// Checks the first slice out for updating and the others for reading.
    fn update<R>(&self, f: impl FnOnce(Self::ChunkMut<'_>) -> R) -> R;
    /// Calls `f` on every item of a chunk, in order.
    fn items_mut(c: Self::ChunkMut<'_>, f: impl FnMut(Self::ItemMut<'_>));
    /// Whether the updated slice shares memory with one it reads.
    fn overlapping(&self) -> bool;
}

/// The sources and targets are this crate's (one slice, tuples of two or
/// three, `Enumerate`): the traits are sealed, so that adding what every
/// pattern needs of them (an overlap test, say) breaks no one's code.
mod sealed {
    use crate::{GlobalSlice, Pod};

    /// Implemented only here.
    pub trait Sealed {}
    impl<A: Pod> Sealed for GlobalSlice<A> {}
    impl<A: Pod, B: Pod> Sealed for (GlobalSlice<A>, GlobalSlice<B>) {}
    impl<A: Pod, B: Pod, C: Pod> Sealed for (GlobalSlice<A>, GlobalSlice<B>, GlobalSlice<C>) {}
    impl<S> Sealed for super::Enumerate<S> {}
    impl Sealed for super::Indices {}
}

/// Ends the job (a panic) when a pattern's destination overlaps what it
/// reads: leaves run in parallel, so one would write what another reads.
pub(crate) fn refuse_overlap(what: &str, overlap: bool) {
    assert!(
        !overlap,
        "{what}: the destination overlaps a source (one task would write what another reads): use separate slices"
    );
}

/// The first index in `(lo, hi]` where `s`'s home rank changes after `lo`
/// (`hi` when `[lo, hi)` is on one rank). Pure arithmetic: no memory is
/// touched.
pub(crate) fn slice_part_end<T: Pod>(s: &GlobalSlice<T>, lo: usize, hi: usize) -> usize {
    if hi <= lo + 1 {
        return hi;
    }
    let r = s.home(lo);
    if s.home(hi - 1) == r {
        return hi;
    }
    // home is non-decreasing: the first index of another rank.
    let (mut a, mut b) = (lo + 1, hi - 1);
    while a < b {
        let m = a + (b - a) / 2;
        if s.home(m) == r {
            a = m + 1;
        } else {
            b = m;
        }
    }
    a
}

impl<A: Pod> Source for GlobalSlice<A> {
    type Item = A;
    type Chunk<'a> = &'a [A];
    fn length(&self, _what: &str) -> usize {
        self.len()
    }
    fn item_bytes() -> usize {
        std::mem::size_of::<A>()
    }
    fn sub(&self, lo: usize, hi: usize) -> Self {
        self.slice(lo..hi)
    }
    fn part_end(&self, lo: usize, hi: usize) -> usize {
        slice_part_end(self, lo, hi)
    }
    fn read<R>(&self, f: impl FnOnce(&[A]) -> R) -> R {
        GlobalSlice::read(self, f)
    }
    #[inline]
    fn items(c: &[A], mut f: impl FnMut(A)) {
        for &x in c {
            f(x)
        }
    }
    fn overlaps<X: Pod>(&self, s: &GlobalSlice<X>) -> bool {
        GlobalSlice::overlaps(self, s)
    }
}

impl<A: Pod> Target for GlobalSlice<A> {
    type ItemMut<'a> = &'a mut A;
    type ChunkMut<'a> = &'a mut [A];
    fn length(&self, _what: &str) -> usize {
        self.len()
    }
    fn item_bytes() -> usize {
        std::mem::size_of::<A>()
    }
    fn sub(&self, lo: usize, hi: usize) -> Self {
        self.slice(lo..hi)
    }
    fn part_end(&self, lo: usize, hi: usize) -> usize {
        slice_part_end(self, lo, hi)
    }
    fn update<R>(&self, f: impl FnOnce(&mut [A]) -> R) -> R {
        GlobalSlice::update(self, f)
    }
    #[inline]
    fn items_mut(c: &mut [A], mut f: impl FnMut(&mut A)) {
        for x in c {
            f(x)
        }
    }
    fn overlapping(&self) -> bool {
        false
    }
}

/// Panics unless every length in `lens` is the first's.
fn same_lengths(what: &str, lens: &[usize]) -> usize {
    if lens.iter().any(|&l| l != lens[0]) {
        panic!("{what}: the zipped slices differ in length ({lens:?})");
    }
    lens[0]
}

impl<A: Pod, B: Pod> Source for (GlobalSlice<A>, GlobalSlice<B>) {
    type Item = (A, B);
    type Chunk<'a> = (&'a [A], &'a [B]);
    fn length(&self, what: &str) -> usize {
        same_lengths(what, &[self.0.len(), self.1.len()])
    }
    fn item_bytes() -> usize {
        std::mem::size_of::<A>() + std::mem::size_of::<B>()
    }
    fn sub(&self, lo: usize, hi: usize) -> Self {
        (self.0.slice(lo..hi), self.1.slice(lo..hi))
    }
    fn part_end(&self, lo: usize, hi: usize) -> usize {
        slice_part_end(&self.1, lo, slice_part_end(&self.0, lo, hi))
    }
    fn read<R>(&self, f: impl FnOnce(Self::Chunk<'_>) -> R) -> R {
        self.0.read(|a| self.1.read(|b| f((a, b))))
    }
    #[inline]
    fn items((a, b): (&[A], &[B]), mut f: impl FnMut((A, B))) {
        for (&x, &y) in a.iter().zip(b) {
            f((x, y))
        }
    }
    fn overlaps<X: Pod>(&self, s: &GlobalSlice<X>) -> bool {
        self.0.overlaps(s) || self.1.overlaps(s)
    }
}

impl<A: Pod, B: Pod> Target for (GlobalSlice<A>, GlobalSlice<B>) {
    type ItemMut<'a> = (&'a mut A, B);
    type ChunkMut<'a> = (&'a mut [A], &'a [B]);
    fn length(&self, what: &str) -> usize {
        same_lengths(what, &[self.0.len(), self.1.len()])
    }
    fn item_bytes() -> usize {
        std::mem::size_of::<A>() + std::mem::size_of::<B>()
    }
    fn sub(&self, lo: usize, hi: usize) -> Self {
        (self.0.slice(lo..hi), self.1.slice(lo..hi))
    }
    fn part_end(&self, lo: usize, hi: usize) -> usize {
        slice_part_end(&self.1, lo, slice_part_end(&self.0, lo, hi))
    }
    fn update<R>(&self, f: impl FnOnce(Self::ChunkMut<'_>) -> R) -> R {
        self.1.read(|b| self.0.update(|a| f((a, b))))
    }
    #[inline]
    fn items_mut((a, b): (&mut [A], &[B]), mut f: impl FnMut((&mut A, B))) {
        for (x, &y) in a.iter_mut().zip(b) {
            f((x, y))
        }
    }
    fn overlapping(&self) -> bool {
        self.0.overlaps(&self.1)
    }
}

impl<A: Pod, B: Pod, C: Pod> Source for (GlobalSlice<A>, GlobalSlice<B>, GlobalSlice<C>) {
    type Item = (A, B, C);
    type Chunk<'a> = (&'a [A], &'a [B], &'a [C]);
    fn length(&self, what: &str) -> usize {
        same_lengths(what, &[self.0.len(), self.1.len(), self.2.len()])
    }
    fn item_bytes() -> usize {
        std::mem::size_of::<A>() + std::mem::size_of::<B>() + std::mem::size_of::<C>()
    }
    fn sub(&self, lo: usize, hi: usize) -> Self {
        (self.0.slice(lo..hi), self.1.slice(lo..hi), self.2.slice(lo..hi))
    }
    fn part_end(&self, lo: usize, hi: usize) -> usize {
        let e = slice_part_end(&self.0, lo, hi);
        slice_part_end(&self.2, lo, slice_part_end(&self.1, lo, e))
    }
    fn read<R>(&self, f: impl FnOnce(Self::Chunk<'_>) -> R) -> R {
        self.0.read(|a| self.1.read(|b| self.2.read(|c| f((a, b, c)))))
    }
    #[inline]
    fn items((a, b, c): (&[A], &[B], &[C]), mut f: impl FnMut((A, B, C))) {
        for ((&x, &y), &z) in a.iter().zip(b).zip(c) {
            f((x, y, z))
        }
    }
    fn overlaps<X: Pod>(&self, s: &GlobalSlice<X>) -> bool {
        self.0.overlaps(s) || self.1.overlaps(s) || self.2.overlaps(s)
    }
}

impl<A: Pod, B: Pod, C: Pod> Target for (GlobalSlice<A>, GlobalSlice<B>, GlobalSlice<C>) {
    type ItemMut<'a> = (&'a mut A, B, C);
    type ChunkMut<'a> = (&'a mut [A], &'a [B], &'a [C]);
    fn length(&self, what: &str) -> usize {
        same_lengths(what, &[self.0.len(), self.1.len(), self.2.len()])
    }
    fn item_bytes() -> usize {
        std::mem::size_of::<A>() + std::mem::size_of::<B>() + std::mem::size_of::<C>()
    }
    fn sub(&self, lo: usize, hi: usize) -> Self {
        (self.0.slice(lo..hi), self.1.slice(lo..hi), self.2.slice(lo..hi))
    }
    fn part_end(&self, lo: usize, hi: usize) -> usize {
        let e = slice_part_end(&self.0, lo, hi);
        slice_part_end(&self.2, lo, slice_part_end(&self.1, lo, e))
    }
    fn update<R>(&self, f: impl FnOnce(Self::ChunkMut<'_>) -> R) -> R {
        self.1.read(|b| self.2.read(|c| self.0.update(|a| f((a, b, c)))))
    }
    #[inline]
    fn items_mut((a, b, c): (&mut [A], &[B], &[C]), mut f: impl FnMut((&mut A, B, C))) {
        for ((x, &y), &z) in a.iter_mut().zip(b).zip(c) {
            f((x, y, z))
        }
    }
    fn overlapping(&self) -> bool {
        self.0.overlaps(&self.1) || self.0.overlaps(&self.2)
    }
}

/// What a pattern can read: a [`Source`] (a slice, a zip, an
/// [`Enumerate`]) or an index range `lo..hi` of `usize` (its items are the
/// indices). Patterns take `impl IntoSource`, so `for_each(0..n, |i| ..)`
/// and `for_each(a, |x| ..)` are the same pattern over two sources.
pub trait IntoSource: Sized {
    /// The items the pattern's closure gets.
    type Item: Copy;
    /// The source it becomes.
    type Source: Source<Item = Self::Item>;
    /// This as a source.
    fn into_source(self) -> Self::Source;
}

impl<S: Source> IntoSource for S {
    type Item = S::Item;
    type Source = S;
    fn into_source(self) -> S {
        self
    }
}

impl IntoSource for std::ops::Range<usize> {
    type Item = usize;
    type Source = Indices;
    fn into_source(self) -> Indices {
        Indices {
            lo: self.start,
            hi: self.end.max(self.start),
        }
    }
}

/// The source an index range becomes: the indices `lo..hi` themselves
/// (`Copy`, unlike [`std::ops::Range`]); a chunk is a sub-range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Indices {
    lo: usize,
    hi: usize,
}

impl Source for Indices {
    type Item = usize;
    type Chunk<'a> = std::ops::Range<usize>;
    fn length(&self, _what: &str) -> usize {
        self.hi - self.lo
    }
    fn item_bytes() -> usize {
        // Nothing is checked out: a leaf is one chunk (at most the
        // checkout bound's count of items, as for 1-byte elements).
        1
    }
    fn sub(&self, lo: usize, hi: usize) -> Self {
        Indices {
            lo: self.lo + lo,
            hi: self.lo + hi,
        }
    }
    fn part_end(&self, _lo: usize, hi: usize) -> usize {
        hi
    }
    fn read<R>(&self, f: impl FnOnce(std::ops::Range<usize>) -> R) -> R {
        f(self.lo..self.hi)
    }
    #[inline]
    fn items(c: std::ops::Range<usize>, mut f: impl FnMut(usize)) {
        for i in c {
            f(i)
        }
    }
    fn overlaps<X: Pod>(&self, _s: &GlobalSlice<X>) -> bool {
        false
    }
}

/// A source whose items carry their index: `(i, item)`. Made by
/// [`enumerate`].
#[derive(Clone, Copy, Debug)]
pub struct Enumerate<S> {
    src: S,
    offset: usize,
}

/// `src`'s items with their indices: `for_each(enumerate(a), |(i, x)| ..)`.
pub fn enumerate<S: IntoSource>(src: S) -> Enumerate<S::Source> {
    Enumerate {
        src: src.into_source(),
        offset: 0,
    }
}

impl<S: Source> Source for Enumerate<S> {
    type Item = (usize, S::Item);
    type Chunk<'a> = (usize, S::Chunk<'a>);
    fn length(&self, what: &str) -> usize {
        self.src.length(what)
    }
    fn item_bytes() -> usize {
        S::item_bytes()
    }
    fn sub(&self, lo: usize, hi: usize) -> Self {
        Enumerate {
            src: self.src.sub(lo, hi),
            offset: self.offset + lo,
        }
    }
    fn part_end(&self, lo: usize, hi: usize) -> usize {
        self.src.part_end(lo, hi)
    }
    fn read<R>(&self, f: impl FnOnce(Self::Chunk<'_>) -> R) -> R {
        let offset = self.offset;
        self.src.read(|c| f((offset, c)))
    }
    #[inline]
    fn items((mut i, c): Self::Chunk<'_>, mut f: impl FnMut(Self::Item)) {
        S::items(c, |x| {
            f((i, x));
            i += 1;
        })
    }
    fn overlaps<X: Pod>(&self, s: &GlobalSlice<X>) -> bool {
        self.src.overlaps(s)
    }
}
