//! Element-wise patterns: [`for_each`], [`for_each_mut`], the chunk forms
//! [`for_each_chunk`] / [`for_each_chunk_mut`], and [`fill`], [`copy`],
//! [`transform`].
//!
//! Each splits the range into leaves of the policy's grain
//! ([`crate::policy`]) and walks a leaf in checkouts of at most the
//! policy's checkout bytes (all slices together), never across a rank
//! boundary. The closure runs inside a checkout: it must not spawn or join
//! (the runtime ends the job if it does).

use crate::policy::{chunks, par_blocks, Policy};
use crate::source::{refuse_overlap, slice_part_end, IntoSource, Source, Target};
use crate::{GlobalSlice, Pod};

/// Calls `f` on every item of `src` (one slice or a zip of two or three),
/// in parallel: `for_each((a, b), |(x, y)| ..)`.
pub fn for_each<S, F>(src: S, f: F)
where
    S: IntoSource,
    F: Fn(S::Item) + Copy + Send + 'static,
{
    Policy::new().for_each(src, f)
}

/// Calls `f(start, chunk)` on consecutive checked-out chunks covering
/// `src` (`start`: the index of the chunk's first item), in parallel. A
/// chunk holds at most the policy's checkout bytes and never more than one
/// leaf (grain) of items.
pub fn for_each_chunk<S, F>(src: S, f: F)
where
    S: IntoSource,
    F: for<'a> Fn(usize, <S::Source as Source>::Chunk<'a>) + Copy + Send + 'static,
{
    Policy::new().for_each_chunk(src, f)
}

/// Calls `f` on every item of `dst`, the first slice by `&mut` and any
/// others zipped with it by value: `for_each_mut((a, b), |(x, y)| *x += y)`.
pub fn for_each_mut<M, F>(dst: M, f: F)
where
    M: Target,
    F: for<'a> Fn(M::ItemMut<'a>) + Copy + Send + 'static,
{
    Policy::new().for_each_mut(dst, f)
}

/// Calls `f(start, chunk)` on consecutive chunks covering `dst`, the first
/// slice checked out for updating, the others for reading.
pub fn for_each_chunk_mut<M, F>(dst: M, f: F)
where
    M: Target,
    F: for<'a> Fn(usize, M::ChunkMut<'a>) + Copy + Send + 'static,
{
    Policy::new().for_each_chunk_mut(dst, f)
}

/// Sets every element of `dst` to `value` (write checkouts: the old
/// contents are never fetched).
pub fn fill<T: Pod + Send>(dst: GlobalSlice<T>, value: T) {
    Policy::new().fill(dst, value)
}

/// Copies `src` into `dst` (of the same length; they must not overlap).
pub fn copy<T: Pod>(src: GlobalSlice<T>, dst: GlobalSlice<T>) {
    Policy::new().copy(src, dst)
}

/// Writes `f(item)` for every item of `src` (one slice or a zip) into
/// `dst`, index by index: `transform((a, b), c, |(x, y)| x + y)`. `dst`
/// must be as long as `src` and must not overlap it.
pub fn transform<S, T, F>(src: S, dst: GlobalSlice<T>, f: F)
where
    S: IntoSource,
    T: Pod,
    F: Fn(S::Item) -> T + Copy + Send + 'static,
{
    Policy::new().transform(src, dst, f)
}

impl Policy {
    /// [`for_each`] under this policy.
    pub fn for_each<S, F>(self, src: S, f: F)
    where
        S: IntoSource,
        F: Fn(S::Item) + Copy + Send + 'static,
    {
        self.for_each_chunk(src, move |_, c| S::Source::items(c, f))
    }

    /// [`for_each_chunk`] under this policy.
    pub fn for_each_chunk<S, F>(self, src: S, f: F)
    where
        S: IntoSource,
        F: for<'a> Fn(usize, <S::Source as Source>::Chunk<'a>) + Copy + Send + 'static,
    {
        let src = src.into_source();
        let n = src.length("for_each");
        let max = self.chunk_items(S::Source::item_bytes());
        par_blocks(self, n, move |_, lo, hi| {
            chunks(
                lo,
                hi,
                max,
                |a, b| src.part_end(a, b),
                |a, b| src.sub(a, b).read(|c| f(a, c)),
            )
        })
    }

    /// [`for_each_mut`] under this policy.
    pub fn for_each_mut<M, F>(self, dst: M, f: F)
    where
        M: Target,
        F: for<'a> Fn(M::ItemMut<'a>) + Copy + Send + 'static,
    {
        self.for_each_chunk_mut(dst, move |_, c| M::items_mut(c, f))
    }

    /// [`for_each_chunk_mut`] under this policy.
    pub fn for_each_chunk_mut<M, F>(self, dst: M, f: F)
    where
        M: Target,
        F: for<'a> Fn(usize, M::ChunkMut<'a>) + Copy + Send + 'static,
    {
        let n = dst.length("for_each_mut");
        refuse_overlap("for_each_mut", dst.overlapping());
        let max = self.chunk_items(M::item_bytes());
        par_blocks(self, n, move |_, lo, hi| {
            chunks(
                lo,
                hi,
                max,
                |a, b| dst.part_end(a, b),
                |a, b| dst.sub(a, b).update(|c| f(a, c)),
            )
        })
    }

    /// [`fill`] under this policy.
    pub fn fill<T: Pod + Send>(self, dst: GlobalSlice<T>, value: T) {
        let max = self.chunk_items(std::mem::size_of::<T>());
        par_blocks(self, dst.len(), move |_, lo, hi| {
            chunks(
                lo,
                hi,
                max,
                |a, b| slice_part_end(&dst, a, b),
                |a, b| dst.slice(a..b).write(|d| d.fill(value)),
            )
        })
    }

    /// [`copy`] under this policy.
    pub fn copy<T: Pod>(self, src: GlobalSlice<T>, dst: GlobalSlice<T>) {
        self.transform(src, dst, |x| x)
    }

    /// [`transform`] under this policy.
    pub fn transform<S, T, F>(self, src: S, dst: GlobalSlice<T>, f: F)
    where
        S: IntoSource,
        T: Pod,
        F: Fn(S::Item) -> T + Copy + Send + 'static,
    {
        let src = src.into_source();
        let n = src.length("transform");
        refuse_overlap("transform", src.overlaps(&dst));
        assert_eq!(
            dst.len(),
            n,
            "transform: the destination has {} elements, the source {n}",
            dst.len()
        );
        let max = self.chunk_items(S::Source::item_bytes() + std::mem::size_of::<T>());
        par_blocks(self, n, move |_, lo, hi| {
            chunks(
                lo,
                hi,
                max,
                |a, b| slice_part_end(&dst, a, src.part_end(a, b)),
                |a, b| {
                    src.sub(a, b).read(|c| {
                        dst.slice(a..b).write(|d| {
                            let mut out = d.iter_mut();
                            S::Source::items(c, |x| {
                                if let Some(o) = out.next() {
                                    *o = f(x)
                                }
                            })
                        })
                    })
                },
            )
        })
    }
}
