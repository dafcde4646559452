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
//! > **No pointer into process-local memory may be live across a `spawn`,
//! > `join` or `poll_point`.**
//!
//! The types enforce what they can: a spawned closure (and both closures of
//! [`join`]) is `Copy + Send + 'static` and its result `Copy + Send +
//! 'static` (at most 48 bytes), which rules out borrowed data and
//! heap-owning values (`Box`, `Vec`, `String`); [`JoinHandle`] and
//! [`Runtime`] are neither `Send` nor `Sync`. What the types cannot see is a
//! *local* of the task itself: `let v = vec![..]; let h = spawn(f); ...;
//! v.len()` keeps a heap pointer in the task's frame across the spawn, and
//! after a steal the frame runs on a process where that heap does not exist.
//! Rust cannot rule this out, so the contract is acknowledged once, where the
//! user takes it on: [`Runtime::start`] is `unsafe` (as `memmap2`'s
//! `Mmap::map` is for an invariant the compiler cannot check). Everything
//! else is safe to call; misuse that *can* be detected (spawn outside a task
//! or from another OS thread, a leaked handle, `Runtime::run` inside a task)
//! ends the job with a message naming the mistake and the rule.
//!
//! Pointers into the task's own frames are fine (they move with it), and so
//! are statics (uat runs every process with address randomisation off, so
//! statics and code have the same address in every process).
//!
//! A panic in a task ends the whole job: the message is printed with the
//! rank and every rank exits non-zero.
//!
//! # The migration checker
//!
//! With `UAT_CHECK_MIGRATION=1` every rank's Rust heap lives in an address
//! range of its own (allocations after `Runtime::start`), and the other
//! ranks keep that range unmapped: a pointer that travelled with a stolen
//! thread faults where it is used (or is recognised where it is freed), and
//! the job ends with the rank the pointer came from, the address and a
//! backtrace. It cannot see memory allocated before `Runtime::start`, C
//! `malloc`, the native stack or thread-locals. Off by default (it costs a
//! lock per allocation); it needs the `migration-checker` cargo feature (on
//! by default), which installs this crate's global allocator.

pub use am_fad::poller as fad_poller;
pub use am_fad::{Mode, MODE};
/// Facts shared with the launcher (when a host is oversubscribed).
pub use uat_rules as rules;

mod arena;
mod attention;
mod collective;
mod config;
mod context;
mod deque;
mod fatal;
mod future;
#[cfg(feature = "testing")]
mod fuzz;
mod guard;
mod idle;
pub mod layer;
mod lifeline;
mod migration;
mod par;
mod rdma;
mod runtime;
mod scheduler;
pub mod settings;
mod signal_line;
mod sleep_word;
mod spawn;
pub mod stats;
mod steal;
mod task_words;
#[cfg(feature = "testing")]
pub mod testing;
mod trace;
mod tsc;
use uat_protocol::victim;
mod worker;
mod workspan;

pub use arena::ARENA_BASE;
pub use config::{Config, ConfigError, PollerCores, PollerWait, StealProtocol, TraceMode, VictimPolicy};
pub use par::join;
pub use runtime::{Runtime, StartError};
pub use settings::Setting;
pub use spawn::{spawn, JoinHandle};
pub use stats::{Field, Stats, Unit};
pub use tsc::hz as tsc_hz;
pub use worker::is_running;

/// What `spawn` does for other ranks: when a thief has asked (or, across
/// the network, every `poll_interval` calls), serve Active Messages and
/// expose work. Call it in long loops that spawn nothing, so that thieves
/// are not kept waiting. Only on the runtime's thread (in a task, or
/// between runs).
#[inline]
pub fn poll_point() {
    worker::worker_for_thread("uat::runtime::poll_point").check_attention(false)
}

/// The number of ranks of the job (0 before the runtime starts).
pub fn ranks() -> u32 {
    if worker::is_running() {
        worker::worker().ranks
    } else {
        0
    }
}

/// The rank this task is running on right now. It may change after any
/// `spawn` or `join` (the thread may be stolen): never keep it across them.
pub fn current_rank() -> u32 {
    worker::worker().rank
}
