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
mod fuzz;
pub mod global;
mod guard;
mod lifeline;
mod migration;
mod par;
mod rdma;
mod runtime;
mod scheduler;
mod signal_line;
mod spawn;
pub mod stats;
mod steal;
mod task_words;
mod tsc;
mod victim;
mod worker;

pub use arena::ARENA_BASE;
pub use config::{CacheFault, Config, ConfigError, PollerCores, PollerWait, Setting, StealProtocol};
pub use par::{for_each, join, reduce};
pub use runtime::{Runtime, StartError};
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
    worker::worker_for_thread("uat::poll_point").check_attention(false)
}

#[doc(hidden)]
/// Test support: waits (polling) until another rank has stolen the
/// continuation of the calling task's parent, so that a test's steal is
/// certain rather than likely. Call it first thing in a spawned child, before
/// it spawns; returns at once on one rank.
pub fn wait_until_parent_stolen() {
    let w = worker::worker_for_task("uat::wait_until_parent_stolen");
    if w.ranks < 2 {
        return;
    }
    // The parent's continuation is the newest entry pushed (by the spawn
    // that started the caller).
    let Some(parent) = w.deque.newest_pushed() else {
        return;
    };
    loop {
        let w = worker::worker_in_task();
        if w.deque.stolen(parent) {
            return;
        }
        // A thief's request to expose the entry arrives here.
        w.attend(false);
        w.gasnet.poll();
        std::hint::spin_loop();
    }
}

#[doc(hidden)]
/// Test support: whether another rank has stolen the continuation of the
/// calling task's parent — looked at without polling or serving requests
/// (a task that neither spawns nor polls). False on one rank.
pub fn parent_stolen() -> bool {
    let w = worker::worker_for_task("uat::parent_stolen");
    w.ranks > 1 && w.deque.newest_pushed().is_some_and(|parent| w.deque.stolen(parent))
}

#[doc(hidden)]
/// Test support: the number of ranks of the job (0 before the runtime
/// starts).
pub fn ranks() -> u32 {
    if worker::is_running() {
        worker::worker().ranks
    } else {
        0
    }
}

#[doc(hidden)]
/// Test support: sends Active Messages that their handlers must refuse (and
/// report), and returns how many: CELL_FREEs to `rank` of an address outside
/// the cells, of a misaligned one and of a free cell, and to this rank of a
/// cell whose task has not finished; in the
/// AM fetch-and-add modes also a fetch-and-add request on an unregistered
/// address whose reply names a slot no request is waiting on (refused by
/// this rank's reply handler). Polls a while for the replies.
pub fn send_malformed_messages(rank: u32) -> u32 {
    let w = worker::worker_for_task("uat::send_malformed_messages");
    let mut sent = future::send_malformed_cell_frees(w.gasnet, rank, &w.layout, &w.cells);
    if am_fad::send_malformed_request(w.gasnet, rank) {
        sent += 2;
    }
    let until = std::time::Instant::now() + std::time::Duration::from_millis(50);
    while std::time::Instant::now() < until {
        w.gasnet.poll();
    }
    sent
}

#[doc(hidden)]
/// Test support: the fuzzer of issue 32. Sends `count` requests with random
/// payloads (from `seed` and the two ranks) to each Active Message handler
/// the runtime registers on `target` (another rank), and returns how many
/// it sent: CELL_FREE, LIFELINE_REGISTER, LIFELINE_WAKE, GLOBAL_FREE and,
/// in the AM fetch-and-add modes, FAD_REQUEST and GLOBAL_ATOMIC_REQUEST
/// (whose replies, naming random reply slots and sequence numbers, fuzz
/// this rank's FAD_REPLY). The payloads sit at the handlers' edges:
/// addresses around the cells, the registered atomic words and both zones
/// of the global heap (one below, unaligned, the last element, the end,
/// past it, random ones inside, 0, the top of the address space), slot
/// counts and dimensions ±1, stale and random sequence numbers, tags naming
/// this rank, the target and ranks that do not exist. Every message is
/// refused by its handler or harmless: the few a handler must act on (a
/// lifeline registration in a slot this rank owns, a wake-up naming this
/// rank, an atomic that leaves a valid word unchanged) do what a racing
/// peer's would; exact addresses of a finished cell or a live block (which
/// any rank may hand back) are never sent. Call it inside a task while the
/// target neither spawns nor allocates global memory. Waits (polling) until
/// the fetch-and-add replies are back.
pub fn fuzz_handlers(target: u32, count: u32, seed: u64) -> u64 {
    let w = worker::worker_for_task("uat::fuzz_handlers");
    if target >= w.ranks || target == w.rank {
        return 0;
    }
    fuzz::send(w, target, count, seed)
}

#[doc(hidden)]
/// Remote fetch-and-add, in this build's mode, on `rank`'s spare atomic
/// word (for micro-benchmarks). None: the target refused it.
pub fn bench_fetch_add(rank: u32, value: u64) -> Option<u64> {
    let w = worker::worker_for_thread("uat::bench_fetch_add");
    let word = deque::words::FAD_BENCH.on(w.gasnet, rank);
    w.deque.words().atomics().fetch_add(rank, word, value)
}

#[doc(hidden)]
/// The value of this rank's spare atomic word (what `bench_fetch_add`s
/// added up to).
pub fn bench_word() -> u64 {
    let w = worker::worker_for_thread("uat::bench_word");
    let word = deque::words::FAD_BENCH;
    // SAFETY: FAD_BENCH is one of the deque's atomic words, given to
    // init_own (ArenaOwnWords::new), seen at its arena address here.
    unsafe {
        w.deque
            .words()
            .atomics()
            .own_load(word.on(w.gasnet, w.rank), word.addr() as *const u64)
    }
}

#[doc(hidden)]
/// A fetch-and-add on `rank`'s deque *head* word, which is not registered
/// for atomics: the AM modes must refuse it (tests the handler's check).
pub fn bench_fetch_add_unregistered(rank: u32) -> Option<u64> {
    let w = worker::worker_for_thread("uat::bench_fetch_add_unregistered");
    let word = deque::words::HEAD.on(w.gasnet, rank);
    w.deque.words().atomics().fetch_add(rank, word, 0)
}

#[doc(hidden)]
/// Test support: whether this rank's attention word is set (a thief or a
/// fetch-and-add request is waiting for the next spawn).
pub fn attention_raised() -> bool {
    let _ = worker::worker_for_thread("uat::attention_raised");
    attention::Attention::raised()
}

#[doc(hidden)]
/// Test support: fetch-and-add requests this rank has served so far (AM
/// modes; 0 in `native` mode).
pub fn fetch_adds_served() -> u64 {
    am_fad::requests_served()
}

/// The rank this task is running on right now. It may change after any
/// `spawn` or `join` (the thread may be stolen): never keep it across them.
pub fn current_rank() -> u32 {
    worker::worker().rank
}
