//! Parallel patterns over global memory: the `pattern` layer of Itoyori,
//! with rayon's feel, over [`GlobalSlice`].
//!
//! Every pattern is a free function that splits its index range in halves
//! with `uni_threads::join` (child-first spawn, so an idle rank steals the
//! other half) down to a *grain* of elements, and processes each leaf in
//! *checkouts* ([`GlobalSlice::read`]/`update`/`write`) of at most the
//! policy's checkout bytes. See [`Policy`] for the two knobs and their
//! defaults, and `docs/design/patterns.md` for the whole layer.
//!
//! - [`policy`]: [`Policy`] (grain, checkout bound, serial elision);
//! - [`source`]: what a pattern reads: one slice, two or three zipped
//!   slices of equal length ([`Source`]), or an index range
//!   ([`IntoSource`]), and what it updates ([`Target`]);
//! - [`for_each`](mod@for_each): [`for_each()`], [`for_each_mut`],
//!   [`for_each_chunk`], [`for_each_chunk_mut`], [`fill`], [`copy`],
//!   [`transform`];
//! - [`reduce`](mod@reduce): [`reduce()`], [`map_reduce`] and the
//!   reducers ([`Sum`], [`Min`], [`Max`], [`MinMax`], [`Count`],
//!   [`Histogram`], [`Op`], [`Collect`]); results of any size (accumulators over
//!   48 bytes travel through global memory);
//! - [`scan`]: [`inclusive_scan`], [`exclusive_scan`];
//! - [`sort`]: [`sort_unstable`], [`sort_unstable_by_key`],
//!   [`sort_unstable_by`], [`merge`] (cilksort; AVX-512 kernels for u64);
//! - [`search`]: [`is_sorted`], [`partition_point`], [`position`],
//!   [`find`], [`min`], [`max`], [`min_by_key`], [`max_by_key`],
//!   [`equal`];
//! - [`collect`]: [`GlobalVec`] (a growable result), [`filter`],
//!   [`filter_map`].
//!
//! Every function but `partition_point` (a binary search, no tasks) runs
//! under the default [`Policy`]; the same pattern under another policy is
//! the [`Policy`] method of the same name, the policy given once:
//! `Policy::new().with_grain(4096).reduce(a, Sum::new())`
//! (`sort_unstable_in`, a sort into the caller's scratch, is only a
//! method). A pattern that reads takes an [`IntoSource`]: a slice, a zip,
//! or an index range `lo..hi` whose items are the indices
//! (`for_each(0..n, |i| ..)`).
//! Closures are `Fn(..) + Copy + Send + 'static` (they travel with the
//! tasks, possibly to another rank); elements are [`Pod`]. Misuse (zipped
//! slices of unequal lengths, a destination of the wrong length) panics
//! with a message naming the pattern.
//!
//! ```no_run
//! use uat_pattern::{self as pattern, GlobalSlice, Sum};
//! let a = GlobalSlice::<u64>::alloc_distributed(1 << 20);
//! pattern::transform(pattern::enumerate(a), a, |(i, _)| i as u64);
//! let total = pattern::reduce(a, Sum::new());
//! let squares = pattern::map_reduce(0..1000, |i| (i * i) as u64, Sum::new());
//! pattern::Policy::new().with_grain(4096).fill(a, 0);
//! # let _ = (total, squares);
//! ```

// The one place this crate names where global memory lives.
pub use uat_memory::{GlobalSlice, Pod, Zeroable};

mod bytes;
pub mod collect;
pub mod for_each;
pub mod policy;
pub mod reduce;
pub mod scan;
pub mod search;
pub mod sort;
pub mod source;

pub use collect::{filter, filter_map, Collect, Concat, GlobalVec};
pub use for_each::{copy, fill, for_each, for_each_chunk, for_each_chunk_mut, for_each_mut, transform};
pub use policy::Policy;
pub use reduce::{map_reduce, reduce, Count, Histogram, LeafItems, Max, Min, MinMax, Monoid, Op, Reducer, Sum};
pub use scan::{exclusive_scan, inclusive_scan};
pub use search::{equal, find, is_sorted, max, max_by_key, min, min_by_key, partition_point, position};
pub use sort::{merge, sort_unstable, sort_unstable_by, sort_unstable_by_key};
pub use source::{enumerate, Enumerate, Indices, IntoSource, Source, Target};
