//! Global memory: data of any size that every rank can reach
//! ([`GlobalSlice`], [`GlobalAtomicU64`]), in the GASNet-EX segments, with a
//! software cache where a rank's memory is across the network.
//!
//! # The model
//!
//! A [`GlobalSlice<T>`] names elements of plain data (`T:`
//! [`bytemuck::Pod`]: no pointers, every bit pattern valid) in some rank's
//! global heap, or block-distributed over all ranks. It is `Copy + Send +
//! 'static` and five words, so it passes through `spawn` and comes back as
//! a task's result: that is how a task returns a result of any size.
//!
//! A task reaches the elements by *checking them out* for a scope:
//! [`GlobalSlice::read`] hands the closure a `&[T]`, [`GlobalSlice::update`]
//! a `&mut [T]` with the current contents, [`GlobalSlice::write`] a `&mut
//! [T]` the closure must overwrite. A checkout must not span a `spawn`, or a
//! `join` that has to wait or whose task ended on another process (the
//! thread may move to another process there, or see another's writes; the
//! checked-out memory does not): both end the job with a message, on every
//! conduit.
//! Overlapping checkouts on one thread are refused unless both read.
//!
//! # Coherence (fork-join, as Itoyori documents it)
//!
//! What a task wrote is visible to whoever joins it and to a thief that
//! steals a continuation after the write. Where a rank's segment is mapped
//! in this process (its own, and every rank of its shared-memory
//! neighbourhood: all of them on smp) a checkout is the memory itself —
//! loads and stores, no copies; the deque's and the future cells' atomics
//! order them. Across the network the [`cache`] holds blocks; *release*
//! points write dirty bytes back (a `spawn`, before its continuation can be
//! stolen; a task's end whose parent was stolen, before its result is
//! published; the end of the root task and of every run), *acquire* points
//! forget every block (a steal, before the stolen continuation resumes; a
//! join whose task finished on another process; the start of every run).
//! Release is lazy: a write checkout only marks bytes dirty and raises this
//! rank's attention word, so the next spawn — which loads that word anyway
//! — writes them back; with nothing dirty and no checkout the spawn path
//! pays nothing more.
//!
//! Programs must not let two tasks that may run at the same time (neither
//! joined the other) check out overlapping memory when one of them writes,
//! nor free memory another such task may have checked out: the contract
//! taken on at `Runtime::start`. Freeing memory inside this thread's own
//! checkout of it is refused (the job ends with a message).

mod atomic;
mod cache;
mod config;
mod heap;
mod layer;
mod net;
mod slice;
mod state;

pub use atomic::GlobalAtomicU64;
pub use bytemuck::{Pod, Zeroable};
pub use config::{CacheFault, Config};
pub use layer::GlobalMemory;
pub use slice::GlobalSlice;
