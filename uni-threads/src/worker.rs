//! The worker: this process's scheduler state, in one static.
//!
//! One worker per process (the paper's process-per-core design). Its state
//! differs between processes (rank, GASNet handles, free lists), and a
//! thread's frames may move to another process at any spawn, join or poll
//! point. So:
//!
//! - the worker lives in a static (same address in every process: see
//!   `uat::addresses`),
//!   never in a thread-local;
//! - code that may migrate calls [`worker()`] again after every migration
//!   point instead of keeping the reference: `&Worker` lets the compiler
//!   cache field values in registers, which would carry the old process's
//!   values across a steal;
//! - mutable fields are `Cell`s: only the worker thread touches them (AM
//!   handlers run on it too, inside its polls).

use std::cell::{Cell, RefCell, UnsafeCell};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use gasnet_sys::Gasnet;

use crate::arena::{Layout, ARENA_BASE};
use crate::attention::Attention;
use crate::config::Config;
use crate::deque::{ArenaOwnWords, Deque};
use crate::future::CellPool;
use crate::lifeline::Lifelines;
use crate::rdma::RdmaAlloc;
use crate::stats::Counters;
use crate::victim::Victims;

/// A thread suspended in `join`: its frames `[ctx, top)` are saved in the
/// RDMA region at `buf` until the child completes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Waiter {
    pub(crate) ctx: usize,
    pub(crate) top: usize,
    pub(crate) buf: usize,
    pub(crate) cell: crate::future::CellRef,
    /// The deque when it suspended ([`Worker::deque_mark`]).
    pub(crate) deque: (u64, u64),
    /// When it suspended (TSC; for the trace).
    pub(crate) since: u64,
}

/// Where the running thread is, and the native contexts around it.
pub(crate) struct ThreadPlace {
    /// Top (exclusive) of the frames of the deque's bottom thread: the one
    /// that runs, or whose continuation is in the deque's oldest entry
    /// (stolen or not). Set where a thread starts with the deque empty (the
    /// root, a stolen continuation, a waiter resumed into an empty deque);
    /// the bottom thread keeps it while it has entries above it;
    /// [`Worker::thread_top`] derives every other thread's top from the
    /// deque, so a spawn stores no top.
    pub(crate) bottom_top: Cell<usize>,
    /// Top of the native stack the scheduler runs on (process-local).
    pub(crate) sched_stack_top: usize,
    /// The context of `Runtime::run`'s caller on the native stack.
    pub(crate) main_ctx: Cell<usize>,
}

/// Threads suspended in a join, and the RDMA-region buffers of their frames.
pub(crate) struct Waiters {
    pub(crate) rdma: RefCell<RdmaAlloc>,
    pub(crate) list: RefCell<Vec<Waiter>>,
    /// A thread on its way into the list (set just before switching to the
    /// scheduler stack).
    pub(crate) suspending: Cell<Option<Waiter>>,
}

/// The current run: its number and its statistics.
pub(crate) struct RunState {
    /// The run number the FINISHED word must reach for this run to be over.
    pub(crate) id: Cell<u64>,
    pub(crate) counters: Counters,
    /// The lowest context record of this run (its `max_stack_bytes`).
    pub(crate) lowest_ctx: Cell<usize>,
    /// am_fad::handler_cycles() when the run started.
    pub(crate) handler_cycles_at_start: Cell<u64>,
    /// The worker thread's CPU time when the run started (ns).
    pub(crate) cpu_ns_at_start: Cell<u64>,
    /// The process's CPU time (all its threads) when the run started (ns).
    pub(crate) process_cpu_ns_at_start: Cell<u64>,
}

/// This process's scheduler state: who it is (GASNet, rank, configuration,
/// arena layout) and its parts, each with one purpose.
pub(crate) struct Worker {
    /// The GASNet-EX handle.
    pub(crate) gasnet: Gasnet,
    /// This rank.
    pub(crate) rank: u32,
    /// The job's ranks.
    pub(crate) ranks: u32,
    /// The settings it was started with.
    pub(crate) config: Config,
    /// Where the arena's parts are.
    pub(crate) layout: Layout,
    /// Ready continuations (owner side; thieves reach it remotely).
    pub(crate) deque: Deque<ArenaOwnWords>,
    /// Future cells of this rank's tasks.
    pub(crate) cells: CellPool,
    /// The attention word's polling state.
    pub(crate) attention: Attention,
    /// Victim choice when stealing.
    pub(crate) victims: Victims,
    /// Quiescing when idle, waking the idle when busy.
    pub(crate) lifelines: Lifelines,
    /// Its per-process state ([`crate::layer::Here::state`]).
    pub(crate) layer_state: std::cell::OnceCell<Box<dyn std::any::Any>>,
    /// The running thread's place (its stack, the native contexts).
    pub(crate) thread: ThreadPlace,
    /// Threads suspended in a join.
    pub(crate) waiters: Waiters,
    /// The current run.
    pub(crate) run: RunState,
    /// The communication-assisting thread (`rdma-emulated` mode).
    pub(crate) poller: RefCell<Option<am_fad::poller::Poller>>,
    /// What the scheduler did (`UAT_TRACE`).
    pub(crate) trace: crate::trace::Tracer,
    /// Work and span (`UAT_WORKSPAN`).
    pub(crate) workspan: crate::workspan::WorkSpan,
    /// Which per-task hooks are on: the one byte spawn, a child's end and
    /// join test.
    pub(crate) hooks: Hooks,
}

/// The per-task hooks that are on (a timeline trace's completion tags,
/// work/span), as one byte.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hooks(u8);

impl Hooks {
    const TRACE: u8 = 1;
    const WORKSPAN: u8 = 2;

    pub(crate) fn new(trace: bool, workspan: bool) -> Hooks {
        Hooks(if trace { Hooks::TRACE } else { 0 } | if workspan { Hooks::WORKSPAN } else { 0 })
    }

    /// Any hook (a child's end).
    #[inline(always)]
    pub(crate) fn any(self) -> bool {
        self.0 != 0
    }

    /// Work/span.
    #[inline(always)]
    pub(crate) fn workspan(self) -> bool {
        self.0 & Hooks::WORKSPAN != 0
    }

    /// The trace's timeline (completion tags for its join flows).
    #[inline(always)]
    pub(crate) fn trace(self) -> bool {
        self.0 & Hooks::TRACE != 0
    }
}

struct Slot {
    worker: UnsafeCell<MaybeUninit<Worker>>,
    ready: AtomicBool,
}

// SAFETY: written once by `install` before `ready` is set (Release), then
// only read, by the worker thread (Cell fields are worker-thread-only).
unsafe impl Sync for Slot {}

static WORKER: Slot = Slot {
    worker: UnsafeCell::new(MaybeUninit::uninit()),
    ready: AtomicBool::new(false),
};

/// Bytes of the uni-address stack region `[ARENA_BASE - size, ARENA_BASE)`;
/// 0 until the worker is installed, so that no stack pointer passes
/// [`on_task_stack`] before.
static TASK_STACK_SIZE: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    /// Whether this OS thread is the worker thread (the one that started the
    /// runtime). Read, never cached: a task that moves finds the flag of the
    /// worker thread of the process it is on.
    static IS_WORKER_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The current stack pointer.
#[inline(always)]
fn stack_pointer() -> usize {
    let sp: usize;
    // SAFETY: reads a register; no memory, stack or flags are touched.
    unsafe { std::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
    sp
}

/// Whether the caller runs as a task: on the uni-address stack, which only
/// the worker thread uses, and only for tasks (the scheduler has a native
/// stack of its own). One load and a compare.
#[inline(always)]
pub(crate) fn on_task_stack() -> bool {
    (ARENA_BASE - 1).wrapping_sub(stack_pointer()) < TASK_STACK_SIZE.load(Ordering::Relaxed)
}

/// This process's worker, for `spawn`, `join` and `poll_point`: checks that
/// the caller is a task and ends the job with the rule otherwise.
#[inline(always)]
pub(crate) fn worker_for_task(what: &'static str) -> &'static Worker {
    if !on_task_stack() {
        misuse_outside_task(what);
    }
    worker_in_task()
}

/// This process's worker, for calls that are fine on the worker thread
/// outside tasks too (polling, micro-benchmark hooks) but not on any other
/// OS thread.
#[inline(always)]
pub(crate) fn worker_for_thread(what: &'static str) -> &'static Worker {
    if !on_task_stack() && !on_worker_thread() {
        misuse_outside_task(what);
    }
    worker_in_task()
}

/// This process's worker. Panics outside a runtime.
#[inline(always)]
pub(crate) fn worker() -> &'static Worker {
    if !WORKER.ready.load(Ordering::Acquire) {
        not_in_runtime();
    }
    // SAFETY: initialised (ready is set only after the write) and never
    // mutated except through its Cells.
    unsafe { (*WORKER.worker.get()).assume_init_ref() }
}

/// This process's worker, on paths that only run inside a runtime (a task's
/// body after [`worker_for_task`], the scheduler): skips the check of
/// [`worker()`].
#[inline(always)]
pub(crate) fn worker_in_task() -> &'static Worker {
    debug_assert!(WORKER.ready.load(Ordering::Relaxed));
    // SAFETY: only called from code that runs after `install` (tasks and the
    // scheduler exist only inside Runtime::run); see worker().
    unsafe { (*WORKER.worker.get()).assume_init_ref() }
}

/// Whether a runtime is up in this process.
pub fn is_running() -> bool {
    WORKER.ready.load(Ordering::Acquire)
}

/// Whether the calling OS thread is the worker thread.
pub(crate) fn on_worker_thread() -> bool {
    IS_WORKER_THREAD.with(|w| w.get())
}

#[cold]
#[inline(never)]
fn not_in_runtime() -> ! {
    crate::fatal::fatal(format_args!(
        "the uni-address threads runtime is not started in this process (start it with Runtime::start)"
    ))
}

/// `what` was called where no task runs: say where, and the rule.
#[cold]
#[inline(never)]
fn misuse_outside_task(what: &str) -> ! {
    let rule = "Rule: spawn, join, poll_point and dropping a JoinHandle work only inside a task \
                (the closure given to Runtime::run, spawn or join, and what it calls), on the runtime's thread";
    if !is_running() {
        crate::fatal::fatal(format_args!(
            "{what} was called with no runtime started in this process. {rule}"
        ))
    } else if !on_worker_thread() {
        crate::fatal::fatal(format_args!(
            "{what} was called from an OS thread that is not the runtime's (one made with std::thread::spawn, \
             or another thread of the process). {rule}"
        ))
    } else {
        crate::fatal::fatal(format_args!(
            "{what} was called outside a task (on the main thread outside Runtime::run, e.g. on a JoinHandle \
             kept in a thread-local after its run). {rule}"
        ))
    }
}

/// Installs the worker (once per process), on the thread that will run it.
pub(crate) fn install(w: Worker) {
    assert!(
        !WORKER.ready.load(Ordering::Acquire),
        "the runtime is already started in this process"
    );
    let stack_size = w.layout.stack_size;
    // SAFETY: not ready yet, so nobody reads the slot; written once.
    unsafe { (*WORKER.worker.get()).write(w) };
    IS_WORKER_THREAD.with(|w| w.set(true));
    WORKER.ready.store(true, Ordering::Release);
    TASK_STACK_SIZE.store(stack_size, Ordering::Release);
}

impl Worker {
    /// Identifies the deque's state for a waiter: its length and the pushes
    /// of this run so far (equal marks: nothing was pushed or popped since).
    pub(crate) fn deque_mark(&self) -> (u64, u64) {
        (self.deque.len(), self.run.counters.snapshot().spawns)
    }

    /// Records a context record at `ctx` (the stack's depth there).
    #[inline(always)]
    pub(crate) fn note_stack_low(&self, ctx: usize) {
        // A branch, not a `min`: the store happens only at a new minimum
        // (rare once the stack has reached its depth), so consecutive
        // spawns do not chain through this word (a load, a compare and a
        // store each, every spawn: NQueens 15 ~4% slower at one rank).
        if ctx < self.run.lowest_ctx.get() {
            self.run.lowest_ctx.set(ctx);
        }
    }

    /// This run's counters so far, the stack depth included.
    pub(crate) fn stats_snapshot(&self) -> crate::stats::Stats {
        let mut s = self.run.counters.snapshot();
        s.max_stack_bytes = s
            .max_stack_bytes
            .max((self.layout.stack_top() - self.run.lowest_ctx.get().min(self.layout.stack_top())) as u64);
        s
    }

    /// Zeroes the counters at the start of a run.
    pub(crate) fn reset_stats(&self) {
        self.run.counters.reset();
        self.run.lowest_ctx.set(usize::MAX);
    }

    /// Whether the current run's root task has completed (on any rank).
    #[inline]
    pub(crate) fn finished(&self) -> bool {
        // SAFETY: a control word of the mapped arena, written by remote puts
        // of whole words and read atomically here.
        let word = unsafe { crate::arena::FINISHED_WORD.local() };
        word.load(Ordering::Acquire) >= self.run.id.get()
    }

    /// Top (exclusive) of the running thread's frames in the stack region.
    ///
    /// The deque's entries form one chain: each entry's continuation is
    /// the parent of the thread that pushed the next one (a waiter resumes
    /// only into the deque it left or an empty one, and a thread is stolen
    /// only whole, from the oldest end). So the running thread's frames end
    /// at its parent's record, the newest entry's `ctx` (stolen or not:
    /// thieves never rewrite it), and at the bottom thread's top when the
    /// deque is empty.
    #[inline(always)]
    pub(crate) fn thread_top(&self) -> usize {
        self.deque
            .newest_ctx()
            .map_or(self.thread.bottom_top.get(), |ctx| ctx as usize)
    }

    /// The lowest address in use in the stack region while the worker is in
    /// the scheduler: the newest ready continuation's context, or the
    /// region's top when no frames are in place.
    pub(crate) fn lowest_used(&self) -> usize {
        self.deque
            .newest_ctx()
            .map_or(self.layout.stack_top(), |ctx| ctx as usize)
    }
}
