//! Child-first `spawn` and `join` (IPSJ 2016 Fig. 4 and Fig. 7).
//!
//! `spawn(f)` saves the parent's context as a record on the stack, pushes
//! the parent `{ctx, top}` on the deque, and runs `f` right below on the same
//! stack, like a function call. When `f` returns, the worker pops: if the
//! parent is still there (not stolen) it simply returns into it; otherwise
//! the parent runs elsewhere and this worker goes to the scheduler.

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::panic::AssertUnwindSafe;

use crate::attention::Attention;
use crate::context::{save_context_and_call, Word};
use crate::deque::Entry;
use crate::fatal;
use crate::future::{copy_in_field_sized_pieces, CellRef, MAX_RESULT_SIZE};
use crate::layer::{Acquire, Here, Release};
use crate::scheduler;
use crate::task_words::{self, TaskWords};
use crate::worker::{worker_for_task, worker_in_task};

/// The result of a spawned task, to be collected with [`JoinHandle::join`].
///
/// Dropping a handle without joining it *joins it* (waiting for the task)
/// and discards the result, so no task outlives the handle that names it.
///
/// A handle stays with the thread that spawned its task: it is neither
/// `Send` nor `Sync`, so it cannot be given to another task or OS thread
/// (a joiner other than the spawner could suspend with a parent that is not
/// its own in the deque):
///
/// ```compile_fail,E0277
/// fn needs_send<T: Send>(_: T) {}
/// needs_send(uni_threads::spawn(|| 1u64)); // JoinHandle is not Send
/// ```
///
/// ```compile_fail,E0277
/// fn needs_sync<T: Sync>(_: &T) {}
/// needs_sync(&uni_threads::spawn(|| 1u64)); // nor Sync (so no static can hold one)
/// ```
///
/// Forgetting a handle (`std::mem::forget`, a leak) leaves a task that no one
/// joins: the run then ends the job with a message saying so, when its root
/// returns.
#[must_use = "a spawned task should be joined (dropping its handle joins it and discards the result)"]
pub struct JoinHandle<T: Copy + 'static> {
    cell: CellRef,
    _result: ResultMarker<T>,
}

/// What a [`JoinHandle`] says about its `T` without holding one: `fn() -> T`
/// makes it covariant in `T` and owning none; `*const ()` makes it neither
/// Send nor Sync.
type ResultMarker<T> = PhantomData<(fn() -> T, *const ())>;

/// Compile-time check of a task result type.
struct Fits<T>(PhantomData<T>);
impl<T> Fits<T> {
    const OK: () = assert!(
        std::mem::size_of::<T>() <= MAX_RESULT_SIZE && std::mem::align_of::<T>() <= 16,
        "a task's result must be plain data of at most 48 bytes (return an index or a small struct)"
    );
}

/// Starts `f` as a new thread, child-first: `f` runs now, and the caller's
/// continuation may be stolen by another process meanwhile.
///
/// The task model: `F: Copy + 'static` and `T: Copy + 'static` admit only
/// plain data — no borrows, no `Box`/`Vec`/`String`. A thread may continue
/// on another process after any `spawn` or `join`, where heap, native stack,
/// thread-locals and per-process handles of the old process do not exist:
/// keep no pointers into process-local memory across these calls (see the
/// crate docs).
///
/// ```compile_fail,E0277
/// let v = vec![1u64, 2, 3];
/// // A closure that owns a heap Vec is not plain data.
/// let h = uni_threads::spawn(move || v.len() as u64);
/// ```
#[inline]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + Copy + 'static,
    T: Send + Copy + 'static,
{
    #[allow(clippy::let_unit_value)]
    let () = Fits::<T>::OK;
    let w = worker_for_task("uat::spawn");
    // The attention word (one load, `Worker::check_attention`). The per-task
    // hooks (trace, work/span) keep it set while they are on (their mark,
    // the HOOKS mark), so they are looked for only behind this
    // branch, which a clear word skips: when off they cost a spawn nothing
    // (on the network, where the periodic mark keeps the word set, one
    // more branch); when on, the same code runs with them compiled in.
    if Attention::raised() {
        if w.hooks.any() {
            return spawn_hooked(w, f);
        }
        if w.attention.due() {
            w.attend(true);
        }
    }
    spawn_with::<F, T, false>(w, f)
}

/// [`spawn`] with the per-task hooks (`Worker::hooks`; cold: off is the
/// case to lay out for).
#[cold]
#[inline(never)]
fn spawn_hooked<F, T>(w: &'static crate::worker::Worker, f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + Copy + 'static,
    T: Send + Copy + 'static,
{
    w.check_attention(true);
    spawn_with::<F, T, true>(w, f)
}

/// [`spawn`]'s body after its look at the attention word; `HOOKED`: with
/// the per-task hooks.
#[inline(always)]
fn spawn_with<F, T, const HOOKED: bool>(w: &'static crate::worker::Worker, f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + Copy + 'static,
    T: Send + Copy + 'static,
{
    let cell = match w.cells.alloc() {
        Some(cell) => cell,
        None => scheduler::alloc_cell_slow(),
    };
    // A small task goes in registers (task_words); a larger one by reference
    // to where it was built (not moved into an argument struct first: every
    // copy of a closure that was just written field by field risks a
    // store-forwarding stall).
    let task = if task_words::fits::<F>() {
        task_words::pack(&f)
    } else {
        [Word::new(&f as *const F as usize), Word::uninit(), Word::uninit()]
    };
    let [a, b, c] = task;
    // Work/span (the hooked copy only): the path the continuation starts
    // after, in this frame (it travels with a steal).
    let path = (HOOKED && w.hooks.workspan()).then(|| w.workspan.spawn());
    // SAFETY: do_spawn returns normally (leaving the frames above the record
    // untouched) or never (the parent continues elsewhere via its deque
    // entry). A task by reference: `f` outlives the call, and do_spawn
    // copies it before it can move.
    unsafe { save_context_and_call(do_spawn::<F, T, HOOKED>, a, b, c, Word::new(cell.addr), Word::uninit()) };
    if let Some(path) = path {
        // Work/span agrees on every rank: a thief has it on too.
        worker_in_task().workspan.continuation(path);
    }
    JoinHandle {
        cell,
        _result: PhantomData,
    }
}

/// The child's side of [`spawn`]: `a`, `b`, `c` carry the task (packed by
/// `task_words`, or `a` its address in the parent's frame), `cell` the
/// child's result cell.
///
/// # Safety
/// Called only by `spawn` through `save_context_and_call`, with the
/// arguments above (the task's address valid until this function returns
/// or the parent's continuation moves).
unsafe extern "C-unwind" fn do_spawn<F, T, const HOOKED: bool>(
    ctx: *mut u8,
    a: Word,
    b: Word,
    c: Word,
    cell: Word,
    _: Word,
) where
    F: FnOnce() -> T + Copy + 'static,
    T: Copy + 'static,
{
    if worker_in_task().deque.is_empty() {
        // SAFETY: as for this call.
        return unsafe { do_spawn_bottom::<F, T, HOOKED>(ctx, a, b, c, cell) };
    }
    // SAFETY: as for this call.
    unsafe { child::<F, T, false, HOOKED>(ctx, [a, b, c], cell) }
}

/// [`do_spawn`] when the deque is empty: the parent's entry becomes the
/// bottom one, which the split protocol shares at once. A separate
/// function, so that the call that shares it costs the common path
/// nothing (no registers kept across it).
///
/// # Safety
/// As for [`do_spawn`].
#[cold]
#[inline(never)]
unsafe extern "C-unwind" fn do_spawn_bottom<F, T, const HOOKED: bool>(
    ctx: *mut u8,
    a: Word,
    b: Word,
    c: Word,
    cell: Word,
) where
    F: FnOnce() -> T + Copy + 'static,
    T: Copy + 'static,
{
    // SAFETY: as for this call.
    unsafe { child::<F, T, true, HOOKED>(ctx, [a, b, c], cell) }
}

/// Pushes the parent, runs the child, completes its cell, and returns into
/// the parent if it is still here.
///
/// # Safety
/// As for [`do_spawn`] (`ctx` the parent's record, `task` its task, `cell`
/// a cell of this rank allocated for this child; `BOTTOM`: the deque is
/// empty; `HOOKED`: with the per-task hooks).
#[inline(always)]
unsafe fn child<F, T, const BOTTOM: bool, const HOOKED: bool>(ctx: *mut u8, task: TaskWords, cell: Word)
where
    F: FnOnce() -> T + Copy + 'static,
    T: Copy + 'static,
{
    // SAFETY: spawn passes it initialized.
    let cell = unsafe { cell.assume_init() };
    let w = worker_in_task();
    // The cell was allocated on this rank just now (spawn), before any
    // migration point.
    let cell = CellRef {
        addr: cell,
        rank: w.rank,
    };
    let ctx = ctx as usize;
    // The parent's frames end at its own parent's record (the newest
    // entry), or at the bottom thread's top (Worker::thread_top).
    let pushed = if BOTTOM {
        w.deque.push_bottom(Entry {
            ctx: ctx as u64,
            top: w.thread.bottom_top.get() as u64,
        })
    } else {
        // SAFETY: not BOTTOM: do_spawn found the deque not empty, and
        // nothing has popped since (thieves never move its tail).
        unsafe { w.deque.push_above_newest(ctx as u64) }
    };
    if !pushed {
        fatal::deque_overflow(w.deque.capacity());
    }
    w.run.counters.update(|c| c.spawns += 1);
    w.note_stack_low(ctx);
    // A task by reference is copied into this frame only now, after the
    // bookkeeping above: the parent has just written it, and a load that
    // spans two of its stores still in the store buffer waits for them (a
    // store-forwarding stall, measured at ~30% of this function in UTS).
    let f = if task_words::fits::<F>() {
        // SAFETY: spawn packed the task (fits).
        unsafe { task_words::unpack::<F>(task) }
    } else {
        // SAFETY: task[0] is the address of `f` in the parent's live frame
        // (spawn); the stores above are to the arena and the worker, not to
        // it. F is Copy: copying it out leaves nothing to drop there. The
        // copy is this child's own: the parent's frame does not move with
        // the child.
        unsafe { std::ptr::read(task[0].assume_init() as *const F) }
    };

    // The result is written where the task's body returns it (its return
    // slot), then copied into the cell in pieces no wider than its fields:
    // a wider copy would span the body's separate stores, still in the
    // store buffer, and wait for them.
    let mut value = std::mem::MaybeUninit::<T>::uninit();
    run_task_into(f, &mut value);

    // The child may have moved to another process: fetch the worker again.
    let w = worker_in_task();
    if HOOKED && w.hooks.any() {
        child_ends(w, cell);
    }
    if w.deque.pop().is_some() {
        // The parent is still here, and so is its cell: entries never move
        // between deques, so the popped one (the parent's: a waiter resumes
        // only into the deque it left, or an empty one) is on the rank that
        // pushed it, where the spawn allocated the cell. Complete it and
        // return into the parent.
        debug_assert_eq!(cell.rank, w.rank);
        // SAFETY: run_task_into wrote a T (or ended the job); T fits
        // (Fits::OK in spawn); this child is the cell's one completer.
        unsafe { cell.complete_local(value.assume_init_ref()) };
        return;
    }
    // The parent runs elsewhere: what this task wrote to global memory
    // must be visible there before the result is (a release point).
    crate::layer::installed().release(Here::of(w), Release::TaskEnd);
    // SAFETY: as above.
    complete_untagged(cell, unsafe { value.assume_init_ref() });
    scheduler::parent_gone()
}

/// Runs a task's body; a panic ends the whole job (its payload lives in
/// this process's heap and cannot cross ranks), after the panic hook has
/// printed it with the rank.
#[inline(always)]
pub(crate) fn run_task<F: FnOnce() -> T, T>(f: F) -> T {
    match std::panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => task_panicked(),
    }
}

#[cold]
#[inline(never)]
fn task_panicked() -> ! {
    fatal::fatal(format_args!("a task panicked (message above); ending the job"))
}

/// [`run_task`], writing the result into `out`.
///
/// A result returned in memory (more than two registers' worth) is copied
/// out of the body's return slot in pieces no wider than its fields: the
/// body has just stored them one by one, and a wider load spanning two of
/// those stores cannot be forwarded from the store buffer (it waits until
/// they reach the cache). The compiler's own copy used a 16-byte load over
/// two 8-byte stores of UTS's 24-byte result: on the Zen 4 dev VM a third
/// of `do_spawn`'s samples, UTS 1.35-1.37 -> 1.32-1.34 of its `--seq`
/// time (docs/results/2026-11-25-zen4-one-rank/).
#[inline(always)]
fn run_task_into<F: FnOnce() -> T, T: Copy>(f: F, out: &mut std::mem::MaybeUninit<T>) {
    if std::panic::catch_unwind(AssertUnwindSafe(|| {
        if std::mem::size_of::<T>() > 2 * std::mem::size_of::<usize>() {
            let value = f();
            // SAFETY: `out` is a place for a T: valid for size_of::<T>()
            // bytes and aligned like T.
            unsafe { copy_in_field_sized_pieces(&value, out.as_mut_ptr() as *mut u8) };
        } else {
            // Returned in registers: nothing to forward from memory.
            out.write(f());
        }
    }))
    .is_err()
    {
        task_panicked()
    }
}

/// A child's end, with a hook on: its final path (work/span) and its
/// completion tag (trace) go next to its cell, before the completion.
#[cold]
#[inline(never)]
fn child_ends(w: &crate::worker::Worker, cell: CellRef) {
    let now = crate::tsc::now();
    if w.hooks.workspan() {
        cell.put_child_path(w.gasnet, &w.layout, w.rank, w.workspan.child_end(now));
    }
    if w.hooks.trace() {
        cell.put_tag(w.gasnet, w.rank, crate::trace::completion_tag(w.rank, now));
    }
}

/// Stores a finished task's result in its cell (the root's: its tag first).
#[inline(always)]
pub(crate) fn complete<T: Copy>(cell: CellRef, value: &T) {
    let w = worker_in_task();
    if w.hooks.trace() {
        cell.put_tag(
            w.gasnet,
            w.rank,
            crate::trace::completion_tag(w.rank, crate::tsc::now()),
        );
    }
    complete_untagged(cell, value)
}

/// [`complete`] for a child whose hooks already ran ([`child_ends`]).
#[inline(always)]
fn complete_untagged<T: Copy>(cell: CellRef, value: &T) {
    let w = worker_in_task();
    if cell.rank == w.rank {
        // SAFETY: T fits (Fits::OK in spawn); one completer per cell.
        unsafe { cell.complete_local(value) }
    } else {
        cell.complete_remote(w.gasnet, value as *const T as *const u8, std::mem::size_of::<T>())
    }
}

impl<T: Copy + 'static> JoinHandle<T> {
    /// Waits for the task and returns its result. If the task runs on
    /// another process, this thread suspends (its frames are saved) and the
    /// worker runs other work until the result arrives.
    #[inline]
    pub fn join(self) -> T {
        let this = ManuallyDrop::new(self);
        join_any(this.cell)
    }
}

impl<T: Copy + 'static> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Unwinding (a panic hook other than the runtime's let it): a
            // join could suspend and move the unwinding thread, whose panic
            // payload lives in this process's heap. End the job here.
            task_panicked();
        }
        let _ = join_any::<T>(self.cell);
    }
}

/// A join: work/span costs it this one branch when off.
#[inline(always)]
fn join_any<T: Copy>(cell: CellRef) -> T {
    if worker_in_task().hooks.workspan() {
        join_hooked(cell)
    } else {
        join_cell::<T, false>(cell)
    }
}

/// [`join_cell`] with work/span (cold: off is the case to lay out for).
#[cold]
#[inline(never)]
fn join_hooked<T: Copy>(cell: CellRef) -> T {
    join_cell::<T, true>(cell)
}

#[inline(always)]
fn join_cell<T: Copy, const HOOKED: bool>(cell: CellRef) -> T {
    // Work/span (the hooked copy): the joiner's strand ends here; its path
    // waits in this frame, across a suspension; the next strand starts
    // after the longer of it and the child's (read before the cell is
    // freed), at once or at the resumption.
    let (mut path, mut at) = (crate::workspan::Path::default(), 0);
    if HOOKED {
        at = crate::tsc::now();
        path = worker_in_task().workspan.end_at(at);
    }
    // The next strand's start: now, if the join waited (else `at`).
    let after = |w: &crate::worker::Worker, at: u64| {
        if HOOKED {
            w.workspan
                .begin_at(path.join(cell.child_path(w.gasnet, &w.layout, w.rank)), at);
        }
    };
    // A JoinHandle is neither Send nor Sync: it is on the worker thread,
    // whose runtime made it. Taking a finished task's result needs nothing
    // more; suspending needs a task (a thread-local can carry a handle out
    // of its task), checked below.
    loop {
        let w = worker_in_task();
        if cell.rank == w.rank {
            let state = cell.state_local();
            if state & 1 == 1 {
                if state == crate::future::DONE_REMOTE {
                    // The task finished on another process: an acquire
                    // point for global memory.
                    crate::layer::installed().acquire(Here::of(w), Acquire::Join);
                    trace_joined_remote(w, cell);
                }
                // SAFETY: done, and it holds the T its spawn created it for.
                let value = unsafe { cell.result_local::<T>() };
                after(w, at);
                w.cells.free(cell);
                w.run.counters.update(|c| c.joins += 1);
                return value;
            }
        } else if cell.is_done_remote(w.gasnet) {
            crate::layer::installed().acquire(Here::of(w), Acquire::Join);
            trace_joined_remote(w, cell);
            after(w, at);
            let value = cell.take_remote::<T>(w.gasnet);
            w.run.counters.update(|c| c.joins += 1);
            return value;
        }
        let _ = worker_for_task("JoinHandle::join");
        crate::layer::installed().before_suspend(Here::of(w));
        scheduler::suspend_until_done(cell);
        if HOOKED {
            at = crate::tsc::now();
        }
    }
}

/// A join took the result of a child that finished on another rank (the
/// cell was completed remotely, or is another rank's): the flow from that
/// completion to here. A timeline reads the child's completion tag (none
/// if this rank completed it); the statistics count the join (its child's
/// rank taken as the cell's).
#[cold]
#[inline(never)]
fn trace_joined_remote(w: &crate::worker::Worker, cell: crate::future::CellRef) {
    if !w.trace.on() {
        return;
    }
    let now = crate::tsc::now();
    if !w.hooks.trace() {
        // The statistics count it; the child's rank is unknown here (its
        // cell's, or another one's when the cell is this rank's).
        w.trace
            .record(uat_trace::Kind::JoinFlow, w.rank, now, now, cell.addr as u64);
        return;
    }
    let tag = cell.tag(w.gasnet, w.rank);
    let bits = uat_trace::PEER_TICK_BITS;
    let Some(completer) = (tag >> bits).checked_sub(1).map(|r| r as u32) else {
        return;
    };
    if completer == w.rank || completer >= w.ranks {
        return;
    }
    w.trace.record(
        uat_trace::Kind::JoinFlow,
        completer,
        tag & ((1 << bits) - 1),
        now,
        cell.addr as u64,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::MaybeUninit;

    fn through_run_task_into<T: Copy>(value: T) -> T {
        let mut out = MaybeUninit::<T>::uninit();
        run_task_into(move || std::hint::black_box(value), &mut out);
        // SAFETY: run_task_into wrote a T (the body did not panic).
        unsafe { out.assume_init() }
    }

    /// 24 bytes, returned in memory, with padding inside a word.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Padded {
        a: u8,
        b: u64,
        c: u16,
        d: u64,
    }

    #[test]
    fn a_result_reaches_its_place_whole_by_either_path() {
        // In registers (up to two words).
        assert_eq!(through_run_task_into(7u64), 7);
        assert_eq!(through_run_task_into((1u64, 2u64)), (1, 2));
        assert_eq!(through_run_task_into(()), ());
        // In memory, copied in field-sized pieces: words, 4-byte and 2-byte
        // fields, bytes, and padding between fields.
        assert_eq!(through_run_task_into((1u64, 2u64, 3u64)), (1, 2, 3));
        assert_eq!(through_run_task_into([9u32; 5]), [9; 5]);
        assert_eq!(through_run_task_into([3u16; 9]), [3; 9]);
        assert_eq!(through_run_task_into([5u8; 17]), [5; 17]);
        assert_eq!(through_run_task_into([u64::MAX; 6]), [u64::MAX; 6]);
        assert_eq!(std::mem::size_of::<Padded>(), 24);
        let p = Padded {
            a: 1,
            b: u64::MAX - 1,
            c: 0xbeef,
            d: 3,
        };
        assert_eq!(through_run_task_into(p), p);
    }
}
