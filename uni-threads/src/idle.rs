//! An idle worker and its lifelines: quiescing (announcing itself to its
//! lifeline buddies, one last steal from each), sleeping until woken or
//! until a suspended thread can resume, and waking the ranks that wait on
//! this one when it has work. The lifelines' state, graph, words and
//! message handlers are [`crate::lifeline`]'s; this module is where they
//! meet the worker, the scheduler and the thieves.

use std::sync::atomic::{AtomicU64, Ordering};

use am_fad::sleep;
use gasnet_sys::am::split_u64;
use gasnet_sys::wait::Patience;

use crate::arena::{ControlWord, SLEEP_WORD, WOKEN_BY_WORD};
use crate::deque::Entry;
use crate::lifeline::protocol::{self, OwnWord, Words, WAKER_BITS};
use crate::lifeline::{
    control_word, keep_polling, own, slot, Lifelines, ThisRank, FIRST_BACKOFF, LIFELINE_REGISTER, LIFELINE_WAKE,
    SLEEP_PERIOD, SLEEP_PERIOD_WITH_WAITERS, THIEF_PATIENCE,
};
use crate::worker::Worker;

impl Lifelines {
    /// [`THIEF_PATIENCE`], polling at least every
    /// [`SLEEP_PERIOD_WITH_WAITERS`] while a thread suspended here waits
    /// for a child elsewhere (it looks for the child's completion only
    /// between steal attempts), and every [`FIRST_BACKOFF`] while another
    /// rank asked this one to keep polling ([`keep_polling`]).
    pub(crate) fn thief_patience(&self, w: &Worker) -> Patience {
        let max_sleep = if keep_polling::asked() {
            FIRST_BACKOFF
        } else if w.waiters.list.borrow().is_empty() {
            return THIEF_PATIENCE;
        } else {
            SLEEP_PERIOD_WITH_WAITERS
        };
        Patience {
            max_sleep,
            ..THIEF_PATIENCE
        }
    }

    /// The rank that woke this one, once (it is stolen from first).
    #[inline]
    pub(crate) fn take_waker(&self, w: &Worker) -> Option<u32> {
        protocol::take_waker(&ThisRank, w.rank, w.ranks)
    }

    /// Just woken for work: the time since the waker's wake-up, when the
    /// waker is on this host (its TSC is this host's).
    fn note_wake_latency(&self, w: &Worker) {
        let v = own(WOKEN_BY_WORD).load(Ordering::Acquire);
        let waker = protocol::waker_field(v) as usize;
        if waker == 0 || !self.host.get(waker - 1).copied().unwrap_or(false) {
            return;
        }
        let mask = (1u64 << (64 - WAKER_BITS)) - 1;
        let latency = (crate::tsc::now() & mask).wrapping_sub(v >> WAKER_BITS) & mask;
        w.run.counters.update(|c| {
            c.wake_latency_max_cycles = c.wake_latency_max_cycles.max(latency);
        });
    }

    /// The attention word was raised by another rank: wake the ranks
    /// waiting on this one's lifelines, if it has work for them (`pushing`:
    /// the caller is a spawn, about to push a continuation). Returns
    /// whether some wait but could not be served now.
    pub(crate) fn wake_waiting(&self, w: &Worker, pushing: bool) -> bool {
        let can_serve = pushing || !w.deque.is_empty();
        let tag = || (crate::tsc::now() << WAKER_BITS) | (w.rank as u64 + 1);
        let served = protocol::serve_waiting(&WorkerWords(w), &self.slots, w.ranks, can_serve, tag);
        if served.woken != 0 {
            w.run.counters.update(|c| c.lifeline_wakes += served.woken as u64);
        }
        served.pending
    }

    /// Quiesces (the module docs' steps 1–4). Returns a continuation stolen
    /// from a lifeline buddy, or None when the sleep ended (woken, the run
    /// finished, or a suspended thread can resume): the scheduler decides.
    pub(crate) fn quiesce(&self, w: &Worker) -> Option<Entry> {
        let words = WorkerWords(w);
        protocol::announce(&words, w.rank, &self.buddies);
        for &(_, b) in &self.buddies {
            if let Some(entry) = crate::steal::try_steal_from(b) {
                protocol::awake(&words);
                self.failures.set(0);
                return Some(entry);
            }
        }
        let start = crate::tsc::now();
        let woken = self.sleep(w);
        protocol::awake(&words);
        w.trace.since(uat_trace::Kind::Quiescent, w.rank, start, woken as u64);
        if woken {
            self.note_wake_latency(w);
            if w.trace.on() {
                let v = own(WOKEN_BY_WORD).load(Ordering::Acquire);
                let waker = protocol::waker_field(v) as u32;
                w.trace.instant(uat_trace::Kind::Wakeup, waker.saturating_sub(1), 0);
            }
        }
        let cycles = crate::tsc::now() - start;
        w.run.counters.update(|c| {
            c.quiescences += 1;
            c.quiescent_cycles += cycles;
            c.wakeups += woken as u64;
        });
        self.failures.set(0);
        None
    }

    /// Step 4: sleeps until a reason to wake, polling without sleeping
    /// while another rank asked it to ([`keep_polling`]). Returns whether
    /// another rank woke it for work.
    fn sleep(&self, w: &Worker) -> bool {
        // When this rank began polling without sleeping, if it does.
        let mut kept: Option<u64> = None;
        let woken = self.sleep_until(w, &mut kept);
        end_kept_polling(w, &mut kept);
        woken
    }

    fn sleep_until(&self, w: &Worker, kept: &mut Option<u64>) -> bool {
        let words = WorkerWords(w);
        let mut backoff = FIRST_BACKOFF;
        loop {
            if w.finished() {
                return false;
            }
            match protocol::look(&words) {
                protocol::Look::Awake => return true,
                protocol::Look::Serve => {
                    w.gasnet.poll();
                    protocol::served(&words);
                    continue;
                }
                protocol::Look::Asleep => {}
            }
            let waiters = !w.waiters.list.borrow().is_empty();
            if waiters && crate::scheduler::has_resumable_waiter() {
                return false;
            }
            let period = if waiters {
                SLEEP_PERIOD_WITH_WAITERS
            } else {
                SLEEP_PERIOD
            };
            if keep_polling::asked() {
                // Another rank's operations on this rank's memory wait for
                // its polls: poll at once, and back off from the start
                // when the window ends.
                kept.get_or_insert_with(crate::tsc::now);
                backoff = FIRST_BACKOFF;
                std::hint::spin_loop();
            } else {
                end_kept_polling(w, kept);
                if self.futex {
                    sleep::futex_wait(own(SLEEP_WORD), am_fad::sleep::QUIESCENT, period);
                } else {
                    std::thread::sleep(backoff.min(period));
                    backoff = (backoff * 2).min(period);
                }
            }
            // Buddies whose segments are mapped here (all of them on a
            // futex, some on a job of several shared-memory hosts): one
            // load each.
            if protocol::buddy_to_steal_from(&words, &self.buddies).is_some() {
                return false;
            }
            w.gasnet.poll();
        }
    }
}

/// Counts the time since `kept` (polling without sleeping), if set, and
/// clears it.
fn end_kept_polling(w: &Worker, kept: &mut Option<u64>) {
    if let Some(start) = kept.take() {
        let cycles = crate::tsc::now().wrapping_sub(start);
        w.run.counters.update(|c| c.kept_polling_cycles += cycles);
    }
}

/// The words as the worker sees them: its own, and its buddies' where
/// their segments are mapped here (else messages).
struct WorkerWords<'a>(&'a Worker);

impl Words for WorkerWords<'_> {
    fn own(&self, word: OwnWord) -> &AtomicU64 {
        own(control_word(word))
    }
    fn register_at(&self, buddy: u32, d: u32, me: u32) {
        let w = self.0;
        match shared_word(w, buddy, slot(d)) {
            Some(word) => {
                word.store(me as u64 + 1, Ordering::SeqCst);
                am_fad::raise_attention(w.gasnet, buddy, crate::arena::ATTENTION_WORD.segment_offset());
            }
            None => w.gasnet.request(buddy, LIFELINE_REGISTER, &[d]),
        }
    }
    fn wake(&self, thief: u32, tag: u64) {
        let w = self.0;
        match shared_word(w, thief, WOKEN_BY_WORD) {
            Some(woken_by) => {
                woken_by.store(tag, Ordering::SeqCst);
                crate::sleep_word::wake(w.gasnet, thief);
            }
            None => w.gasnet.request(thief, LIFELINE_WAKE, &split_u64(tag)),
        }
    }
    fn raise_own_attention(&self) {
        crate::attention::Attention::raise_own();
    }
    fn buddy_has_work(&self, buddy: u32) -> bool {
        let w = self.0;
        w.gasnet.segment(buddy).local.is_some()
            && !crate::sleep_word::sleeping(w.gasnet, buddy)
            && crate::deque::has_shared(
                &crate::deque::RemoteDeque::new(w.gasnet, buddy, w.deque.words().atomics()),
                w.deque.protocol(),
            )
    }
}

/// A word of `rank`'s control page, if its segment is mapped here.
fn shared_word(w: &Worker, rank: u32, word: ControlWord) -> Option<&'static AtomicU64> {
    let local = w.gasnet.segment(rank).local?;
    // SAFETY: `rank`'s segment is mapped here for the job's lifetime; the
    // word is an aligned control word that everyone accesses whole and
    // atomically.
    Some(unsafe { &*((local + word.segment_offset()) as *const AtomicU64) })
}
