//! The uni-address threads runtime (Akiyama & Taura, HPDC'15 / IPSJ 2016):
//! native threads whose stacks live at the same virtual address in every
//! process, child-first spawn, and work stealing of continuations by RDMA.
//!
//! # The task model
//!
//! A task is an ordinary Rust closure run as a thread with a real call stack
//! in the *uni-address region* (a stack region at the same virtual address
//! in every process). `spawn` runs the child at once; the parent's
//! continuation — its stack frames — waits in a deque, from which another
//! process may steal it by copying the frames to the same address in its own
//! region and resuming there.
//!
//! So a thread may continue on another process after any `spawn`, `join`
//! (or poll point). What moves is exactly its stack frames; what does not
//! exist on the other process is everything process-local: the heap, the
//! native (main) stack, thread-locals, file descriptors and handles. The
//! contract:
//!
//! > **No pointer into process-local memory may be live across a `spawn`
//! > or `join`.**
//!
//! The types enforce most of it: a spawned closure is `Copy + Send +
//! 'static` and its result `Copy + Send + 'static` (at most 48 bytes), which
//! rules out borrowed data and heap-owning values (`Box`, `Vec`, `String`).
//! What the types cannot see — a raw pointer or a `&'static` into a leaked
//! heap object, a cached thread-local address — is the caller's
//! responsibility. Pointers into the task's own frames are fine (they move
//! with it), and so are statics (every executable is linked non-PIE, so
//! statics and code have the same address in every process).
//!
//! A panic in a task ends the whole job: the message is printed with the
//! rank and every rank exits non-zero.

pub use am_fad::poller as fad_poller;
pub use am_fad::{Mode, MODE};

mod arena;
mod collective;
mod config;
mod context;
mod deque;
mod fatal;
mod future;
mod guard;
mod par;
mod rdma;
mod runtime;
mod scheduler;
mod spawn;
mod stats;
mod steal;
mod tsc;
mod worker;

pub use arena::{ARENA_BASE, FAD_BENCH_WORD};
pub use config::{Config, ConfigError};
pub use par::{join, reduce};
pub use runtime::{Runtime, StartError};
pub use spawn::{spawn, JoinHandle};
pub use stats::Stats;
pub use tsc::hz as tsc_hz;
pub use worker::is_running;

/// What `spawn` does to serve remote requests (in `am` mode: poll every
/// `poll_interval` calls). Call it in long loops that spawn nothing, so that
/// thieves are not kept waiting.
#[inline]
pub fn poll_point() {
    worker::worker().poll_at_spawn()
}

#[doc(hidden)]
/// Remote fetch-and-add, in this build's mode, on `rank`'s
/// [`FAD_BENCH_WORD`] (for micro-benchmarks). None: the target refused it.
pub fn bench_fetch_add(rank: u32, value: u64) -> Option<u64> {
    let w = worker::worker();
    w.lock
        .fetch_add(rank, arena::remote(w.gasnet, rank, ARENA_BASE + FAD_BENCH_WORD), value)
}

#[doc(hidden)]
/// A fetch-and-add on `rank`'s deque *head* word, which is not registered
/// for atomics: the AM modes must refuse it (tests the handler's check).
pub fn bench_fetch_add_unregistered(rank: u32) -> Option<u64> {
    let w = worker::worker();
    w.lock
        .fetch_add(rank, arena::remote(w.gasnet, rank, ARENA_BASE + arena::HEAD_WORD), 0)
}

/// The rank this task is running on right now. It may change after any
/// `spawn` or `join` (the thread may be stolen): never keep it across them.
pub fn current_rank() -> u32 {
    worker::worker().rank
}
