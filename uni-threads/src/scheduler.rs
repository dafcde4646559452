//! The scheduler: what a worker does when the running thread cannot go on.
//!
//! It runs on its own native stack (outside the uni-address region), entered
//! afresh each time with [`start_on_stack`]: it keeps no state on that stack
//! between entries, so it can leave by jumping into any thread's context and
//! come back later from anywhere. Its choices, in order (IPSJ 2016 §5.4):
//!
//! 1. a waiting thread whose child has completed and whose frames fit below
//!    the frames in place (copied back to their address, then resumed);
//! 2. the newest ready continuation of the own deque (frames in place);
//! 3. leave, when the root task has completed (on any rank);
//! 4. steal from another rank — only when the uni-address region is empty.
//!
//! Unlike the original implementation, waiters are retried on every pass,
//! not only after a failed steal: a joiner resumes as soon as it can.

use crate::attention::Attention;
use crate::context::{resume_context, save_context_and_call, start_on_stack, Word};
use crate::fatal;
use crate::future::CellRef;
use crate::worker::{worker, Waiter};

/// Enters the scheduler on its own stack; never returns.
pub(crate) fn enter() -> ! {
    let top = worker().thread.sched_stack_top;
    // SAFETY: the scheduler stack is ours and unused (the scheduler keeps
    // nothing on it between entries); schedule never returns.
    unsafe { start_on_stack(top, schedule, 0, 0) }
}

/// A child finished but its parent was stolen: nothing of this thread is
/// live any more.
#[cold]
pub(crate) fn parent_gone() -> ! {
    enter()
}

unsafe extern "C-unwind" fn schedule(_: usize, _: usize) {
    // A thread that just suspended is saved first (we are off its stack now).
    let w = worker();
    w.trace.task_ends();
    if let Some(waiter) = w.waiters.suspending.take() {
        save_waiter(waiter);
    }
    loop {
        let w = worker();
        if let Some(waiter) = take_resumable_waiter() {
            resume_waiter(waiter);
        }
        if let Some(entry) = w.deque.pop() {
            // With the deque now empty its thread is the bottom one, which
            // pushed the oldest entry with bottom_top as its top: unchanged
            // since (only a thread starting on an empty deque sets it).
            debug_assert!(!w.deque.is_empty() || w.thread.bottom_top.get() == entry.top as usize);
            w.trace.task_begins();
            // A continuation resumes here: its strand starts now (its
            // child may have suspended long ago).
            if w.hooks.workspan() {
                w.workspan.resumed_here();
            }
            // SAFETY: its frames are in place; nothing below them is live.
            unsafe { resume_context(entry.ctx as *mut u8) }
        }
        if w.deque.is_empty() {
            if w.finished() {
                if !w.waiters.list.borrow().is_empty() {
                    fatal::leaked_tasks(w.waiters.list.borrow().len() as u64, "are still waiting in a join");
                }
                // SAFETY: main_ctx is the record of Runtime::run's caller on
                // the native stack, untouched since.
                unsafe { resume_context(w.thread.main_ctx.get() as *mut u8) }
            }
            // The uni-address region is empty: steal.
            if let Some(entry) = crate::steal::try_steal() {
                // An acquire point for global memory (the victim released
                // at the spawn that pushed this continuation).
                let w = worker();
                crate::layer::installed().acquire(crate::layer::Here::of(w), crate::layer::Acquire::Steal);
                // The deque is empty: the stolen thread is its bottom one.
                w.thread.bottom_top.set(entry.top as usize);
                // The flow ends where the resumed task begins (one tick).
                w.trace.stolen_resumes();
                if w.hooks.workspan() {
                    w.workspan.resumed_here();
                }
                // SAFETY: the stolen frames are in place at their address.
                unsafe { resume_context(entry.ctx as *mut u8) }
            }
        }
        w.gasnet.poll();
        std::hint::spin_loop();
    }
}

/// Suspends the running thread until `cell` is done (Fig. 7/8): its frames
/// are copied into the RDMA region and the worker runs other work. Returns
/// when the thread has been resumed (on this or another process).
#[inline(never)]
pub(crate) fn suspend_until_done(cell: CellRef) {
    let top = worker().thread_top();
    let (addr, rank) = (Word::new(cell.addr), Word::new(cell.rank as usize));
    // SAFETY: do_suspend never returns; this thread continues only through
    // resume_context of the saved record, with its frames restored in place.
    unsafe { save_context_and_call(do_suspend, addr, rank, Word::new(top), Word::uninit(), Word::uninit()) };
    // Resumed into the deque it left (its top is derived from its parent's
    // entry there) or into an empty one, where it is the bottom thread.
    let w = worker();
    if w.deque.is_empty() {
        w.thread.bottom_top.set(top);
    }
}

unsafe extern "C-unwind" fn do_suspend(ctx: *mut u8, addr: Word, rank: Word, top: Word, _: Word, _: Word) {
    let w = worker();
    // SAFETY: suspend_until_done passes all three initialized.
    let (cell, top) = unsafe {
        (
            CellRef {
                addr: addr.assume_init(),
                rank: rank.assume_init() as u32,
            },
            top.assume_init(),
        )
    };
    w.waiters.suspending.set(Some(Waiter {
        ctx: ctx as usize,
        top,
        buf: 0,
        cell,
        deque: w.deque_mark(),
        since: 0,
    }));
    enter()
}

fn save_waiter(mut waiter: Waiter) {
    let start = crate::tsc::now();
    let w = worker();
    let len = waiter.top - waiter.ctx;
    let mut rdma = w.waiters.rdma.borrow_mut();
    let Some(buf) = rdma.alloc(len) else {
        fatal::rdma_region_full(rdma.capacity(), len)
    };
    // SAFETY: [ctx, top) are the suspended thread's frames in the stack
    // region; buf is a free RDMA buffer of at least len bytes; we run on the
    // scheduler stack, so neither range is in use.
    unsafe { std::ptr::copy_nonoverlapping(waiter.ctx as *const u8, buf as *mut u8, len) };
    waiter.buf = buf;
    waiter.since = start;
    w.waiters.list.borrow_mut().push(waiter);
    let cycles = crate::tsc::now() - start;
    w.run.counters.update(|c| {
        c.suspensions += 1;
        c.suspend_cycles += cycles;
    });
}

fn take_resumable_waiter() -> Option<Waiter> {
    let i = resumable_waiter()?;
    Some(worker().waiters.list.borrow_mut().swap_remove(i))
}

/// Whether a suspended thread could resume now (a sleeping rank looks).
pub(crate) fn has_resumable_waiter() -> bool {
    resumable_waiter().is_some()
}

/// The index of a waiter that can resume now.
fn resumable_waiter() -> Option<usize> {
    let w = worker();
    let waiters = w.waiters.list.borrow();
    if waiters.is_empty() {
        return None;
    }
    let lowest = w.lowest_used();
    // A thread that finishes returns into its parent if the deque's newest
    // entry is there (it pops it): so a waiter resumes only into the deque
    // it left (its parent's entry, if any, still the newest) or into an
    // empty one — never above another thread's entry, which its pop would
    // take for its parent's.
    let mark = w.deque_mark();
    waiters
        .iter()
        .position(|x| x.top <= lowest && (w.deque.is_empty() || x.deque == mark) && is_done(x.cell))
}

fn resume_waiter(waiter: Waiter) -> ! {
    let start = crate::tsc::now();
    let w = worker();
    let len = waiter.top - waiter.ctx;
    // SAFETY: the waiter's range lies below every frame in place (checked in
    // take_resumable_waiter) and we run on the scheduler stack.
    unsafe { std::ptr::copy_nonoverlapping(waiter.buf as *const u8, waiter.ctx as *mut u8, len) };
    w.waiters.rdma.borrow_mut().free(waiter.buf, len);
    let cycles = crate::tsc::now() - start;
    w.run.counters.update(|c| {
        c.resumes += 1;
        c.resume_cycles += cycles;
    });
    w.trace
        .since(uat_trace::Kind::Suspended, w.rank, waiter.since, len as u64);
    w.trace.task_begins();
    // SAFETY: the frames are back at their address.
    unsafe { resume_context(waiter.ctx as *mut u8) }
}

fn is_done(cell: CellRef) -> bool {
    let w = worker();
    if cell.rank == w.rank {
        cell.is_done_local()
    } else {
        cell.is_done_remote(w.gasnet)
    }
}

/// The pool is empty: cells handed back by other ranks may still be in
/// flight, so poll for them a while before giving up.
#[cold]
#[inline(never)]
pub(crate) fn alloc_cell_slow() -> CellRef {
    let w = worker();
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(200);
    loop {
        w.gasnet.poll();
        if let Some(cell) = w.cells.alloc() {
            return cell;
        }
        if std::time::Instant::now() > deadline {
            fatal::cells_exhausted(w.layout.cell_count)
        }
    }
}

/// What the worker does for other ranks when its attention word is set
/// (`crate::attention`): the layer's release point, the poll, exposing
/// work, waking the ranks waiting on its lifelines.
impl crate::worker::Worker {
    /// What every spawn (`pushing`: it is about to push a continuation) and
    /// `poll_point` does for other ranks: one load of the attention word;
    /// when it is set, serve (see [`crate::attention`]).
    #[inline(always)]
    pub(crate) fn check_attention(&self, pushing: bool) {
        if Attention::raised() && self.attention.due() {
            self.attend(pushing);
        }
    }

    /// The attention word is set: poll for Active Messages (fetch-and-add
    /// requests in `am` mode, remote frees); if another rank raised it,
    /// expose an entry to the thief that asked for work and wake the ranks
    /// waiting on this one's lifelines ([`crate::lifeline`]).
    #[inline(never)]
    pub(crate) fn attend(&self, pushing: bool) {
        if self.attention.layer_marked() {
            let at = if pushing {
                crate::layer::Release::Spawn
            } else {
                crate::layer::Release::Poll
            };
            crate::layer::installed().release(crate::layer::Here::of(worker()), at);
        }
        let start = if self.trace.on() { crate::tsc::now() } else { 0 };
        let requested = self.attention.take();
        self.poll_now();
        if requested {
            if self.deque.expose() {
                self.run.counters.update(|c| c.exposures += 1);
            }
            if self.lifelines.on() && self.lifelines.wake_waiting(self, pushing) {
                // Ranks wait, but there is no work to give them yet: look
                // again at the next spawn.
                Attention::raise_own();
            }
        }
        self.trace
            .since(uat_trace::Kind::Poll, self.rank, start, requested as u64);
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn poll_now(&self) {
        let start = crate::tsc::now();
        self.gasnet.poll();
        let cycles = crate::tsc::now().wrapping_sub(start);
        self.run.counters.update(|s| s.msg_handling_cycles += cycles);
    }
}
