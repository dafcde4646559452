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
//! # Consistency model (in brief; in full: docs/design/global-memory.md)
//!
//! The same on every conduit, cache on and off. Happens-before (hb) is
//! program order within a task; a `spawn` (the parent's past hb the child
//! and the continuation, whoever runs it); a join (the child's past hb what
//! follows it); the runtime's collectives and each run's start and end
//! (everything before, on any rank, hb everything after, on every rank);
//! and a [`GlobalAtomicU64`] operation ordered `Release`/`AcqRel`/`SeqCst`
//! whose value an operation ordered `Acquire`/`AcqRel`/`SeqCst` reads,
//! directly or through read-modify-writes. `SeqCst` operations lie in one
//! total order. A read (`get`, a checkout) returns the last write that hb
//! it; conflicting accesses that hb does not order are a data race, which
//! the contract of `uat::launch` and `Runtime::start` excludes (a pattern's
//! closure in its parallel leaves included).
//!
//! A checkout reads at its start (its view shows what hb the start and
//! never changes while held) and writes at its end. Inside one, a
//! `Release` publishes this thread's earlier `set`s and ended checkouts
//! (bytes of blocks an open checkout pins included), not the open write
//! checkout's own elements; an `Acquire` makes later `get`s and new
//! checkouts see what was released, while the open checkout's view stays.
//!
//! How: where a rank's segment is mapped in this process (its own, and
//! every rank of its shared-memory neighbourhood: all of them on smp) a
//! checkout is the memory itself and the scheduler's and the atomics'
//! own operations carry the edges. Across the network the [`cache`] holds
//! blocks; *release* points write dirty bytes back (a `spawn`, lazily: a
//! write raises this rank's attention mark and the next spawn writes back;
//! a task's end whose parent was stolen; each run's start and end; a
//! collective; a releasing atomic), except bytes under this thread's active
//! write checkouts; *acquire* points drop what may be stale (a steal, a join
//! of a task that ended on another process, a run's start, a collective,
//! an acquiring atomic), keeping the bytes under active checkouts.
//!
//! Programs must not let two tasks that may run at the same time (neither
//! joined the other) access overlapping memory when one of them writes,
//! nor free memory another such task may access, nor use a slice or atomic
//! (any copy of it) after its free. Checked where it costs nothing
//! measurable: a checkout of an allocation whose header this process maps
//! ends the job if the allocation was freed (freed by a rank across the
//! network: once its home has the free's message); on one thread, freeing,
//! allocating or an atomic operation over memory a live checkout covers
//! ends the job before any byte changes.

mod active;
mod atomic;
mod cache;
mod config;
mod dirty;
mod heap;
mod layer;
mod mapped;
mod net;
mod slice;
mod state;

pub use atomic::GlobalAtomicU64;
pub use bytemuck::{Pod, Zeroable};
pub use config::{CacheFault, Config};
pub use layer::GlobalMemory;
pub use slice::GlobalSlice;
