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
//! - [`source`]: what a pattern reads: one slice, or two or three zipped
//!   slices of equal length ([`Source`]), and what it updates ([`Target`]);
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
//! Every function but `partition_point` (a binary search, no tasks) has a
//! default form and a `_with(policy, ...)` form.
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
//! # let _ = total;
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

pub use collect::{filter, filter_map, filter_map_with, filter_with, Collect, Concat, GlobalVec};
pub use for_each::{
    copy, copy_with, fill, fill_with, for_each, for_each_chunk, for_each_chunk_mut, for_each_chunk_mut_with,
    for_each_chunk_with, for_each_mut, for_each_mut_with, for_each_with, transform, transform_with,
};
pub use policy::Policy;
pub use reduce::{
    map_reduce, map_reduce_with, reduce, reduce_with, Count, Histogram, LeafItems, Max, Min, MinMax, Monoid, Op,
    Reducer, Sum,
};
pub use scan::{exclusive_scan, exclusive_scan_with, inclusive_scan, inclusive_scan_with};
pub use search::{
    equal, equal_with, find, find_with, is_sorted, is_sorted_with, max, max_by_key, max_by_key_with, max_with, min,
    min_by_key, min_by_key_with, min_with, partition_point, position, position_with,
};
pub use sort::{
    merge, merge_with, sort_unstable, sort_unstable_by, sort_unstable_by_key, sort_unstable_by_key_with,
    sort_unstable_by_with, sort_unstable_in, sort_unstable_with,
};
pub use source::{enumerate, Enumerate, Source, Target};
