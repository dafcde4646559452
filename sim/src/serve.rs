//! How a message is served at its target (the table in
//! `docs/design/simulator.md`): at once, by the target's NIC or polling
//! thread, or at the target's next poll; and what its operation does to
//! the target's words, through the protocol's own steps where it has them
//! (a lifeline registration, a wake-up).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use uat_protocol::deque::{self, Entry, VictimWords};
use uat_protocol::lifeline::{self as lifeline, OwnWord, Words};

use uat_protocol::mutation::{active, Mutation};

use crate::world::{Class, Fad, Message, Op, Ps, State, World};

/// The message arrived at its target at `now`: served at once, or left
/// in the target's inbox for its next poll.
pub(crate) fn arrive(w: &World, index: usize, now: Ps) {
    let to = w.message_target(index);
    let target = &w.ranks[to as usize];
    if target.state.get() == State::InBlock {
        // The target runs a subtree as one event: stop it where it is
        // now, and let it take the message as a running rank would.
        target.deferred.borrow_mut().push(index);
        if target.interrupted.get().is_none() {
            target.interrupted.set(Some(now));
            w.wake_at(to, now);
        }
        return;
    }
    let m = w.take_message(index);
    let target = &w.ranks[m.to as usize];
    let class = w.class(&m.op);
    let same = w.same_host(m.from, m.to);
    let handler = w.handler(m.from, m.to);
    // Where the runtime's polling thread runs (`rdma-emulated`), it serves
    // every Active Message from another host, GASNet's emulation of RMA
    // included, and `am`'s fetch-and-add from any rank.
    let poller = w.setup.fad == Fad::RdmaEmulated
        && match class {
            Class::Rma => !same && !w.costs.rma_by_nic,
            Class::FadAm => true,
            Class::Am => !same,
        };
    if poller {
        // One polling thread per rank: requests queue there.
        let start = target.poller_busy_until.get().max(now);
        let end = start + handler;
        target.poller_busy_until.set(end);
        serve(w, &m, end);
        return;
    }
    let by_worker = match class {
        Class::Rma => !same && !w.costs.rma_by_nic,
        Class::FadAm => w.setup.fad == Fad::Am,
        Class::Am => !same,
    };
    if !by_worker {
        // Shared memory or the NIC.
        serve(w, &m, now);
        return;
    }
    match target.state.get() {
        State::Blocked | State::Done => {
            let start = target.busy_until.get().max(now);
            let end = start + handler + w.costs.timer;
            target.busy_until.set(end);
            // The runtime times its own handlers (`am`'s fetch-and-add)
            // wherever they run, and GASNet's emulation of RMA only inside
            // a poll at a spawn (`Ctx::poll`).
            w.count_busy(m.to, end - start, class == Class::FadAm);
            serve(w, &m, end);
        }
        State::Running => {
            target.inbox.borrow_mut().push_back(m);
            // `am`'s requester raises the target's attention word: its
            // next spawn polls.
            if class == Class::FadAm {
                target.attention.set(true);
            }
        }
        State::Sleeping => {
            target.inbox.borrow_mut().push_back(m);
            // `am`'s requester wakes a sleeping target on its host to
            // poll once for it (`am_fad::sleep::Wake::Service`).
            if same && class == Class::FadAm {
                w.wake_at(m.to, now);
            }
        }
        State::InBlock => unreachable!("a rank in a block defers its messages"),
    }
}

/// Does `m`'s operation at its target at `at` and sends the reply.
pub(crate) fn serve(w: &World, m: &Message, at: Ps) {
    let value = apply(w, m, at);
    if m.reply {
        let c = &w.costs;
        // Within a host the copy was charged with the request (`send`).
        let back = if w.same_host(m.from, m.to) {
            0
        } else {
            c.latency + (m.bytes as f64 * c.net_ps_per_byte) as Ps
        };
        let from = &w.ranks[m.from as usize];
        from.reply.set(value);
        w.wake_at(m.from, (at + back).max(w.now()));
    }
}

/// Does `m`'s operation on its target's words (at the target, at `at`).
fn apply(w: &World, m: &Message, at: Ps) -> u64 {
    let r = &w.ranks[m.to as usize];
    let d = &r.deque;
    let sc = Ordering::SeqCst;
    match m.op {
        Op::SplitLoad => d.split.load(sc),
        Op::SplitFetchAdd(v) => d.split.fetch_add(v, sc),
        Op::Request => {
            r.attention.set(true);
            0
        }
        Op::Entry(i) => {
            // SAFETY: single-threaded simulation; the slot is in bounds
            // (claims return indices below the capacity).
            let e = unsafe { *d.slots[i as usize].get() };
            let mut frames = w.frames.borrow_mut();
            // The thief now owns the segment: its frames are on its rank.
            if let Some(Some(seg)) = e.ctx.checked_sub(1).and_then(|i| frames.segments.get(i as usize)) {
                for &f in seg.clone().iter() {
                    frames.get(f).rank = m.from;
                }
            }
            e.ctx
        }
        Op::ReleaseEntry(i) => {
            // SAFETY: as above.
            unsafe { (*d.slots[i as usize].get()).top = 0 };
            0
        }
        Op::TryLock => (d.lock.compare_exchange(0, 1, sc, sc).is_ok()) as u64,
        Op::Unlock => {
            d.lock.store(0, sc);
            0
        }
        Op::HeadAndTail => (d.head.load(sc) << 32) | d.tail.load(sc),
        Op::PutHead(h) => {
            d.head.store(h, sc);
            0
        }
        Op::GetTail => d.tail.load(sc),
        Op::Frames => 0,
        Op::ChildDone(f) => {
            if !active(Mutation::CompletionLost) {
                child_done(w, f, m.to);
            }
            0
        }
        Op::Register(dim) => {
            w.ranks[m.from as usize].registered_at.borrow_mut().push(m.to);
            lifeline::accept_registration(
                &LifelineView {
                    w,
                    me: m.to,
                    at: Cell::new(at),
                },
                dim,
                m.from,
            );
            0
        }
        Op::Wake(tag) => {
            r.wakes_in_flight.set(r.wakes_in_flight.get().saturating_sub(1));
            lifeline::accept_wake(
                &LifelineView {
                    w,
                    me: m.to,
                    at: Cell::new(at),
                },
                tag,
            );
            if r.state.get() == State::Sleeping {
                w.wake_at(m.to, at);
            }
            0
        }
        Op::Finished => {
            r.finished.set(true);
            if r.state.get() == State::Sleeping {
                w.wake_at(m.to, at);
            }
            0
        }
    }
}

/// A child of frame `f` finished; `f` is on rank `on`.
pub(crate) fn child_done(w: &World, f: usize, on: u32) {
    let mut frames = w.frames.borrow_mut();
    // A completion counted twice: the parent went on (and perhaps
    // finished) before all its children were done.
    let Some(fr) = frames.slab.get_mut(f).and_then(Option::as_mut) else {
        w.fail(format!(
            "a child's completion reached frame {f}, which had finished (a completion counted twice)"
        ));
        return;
    };
    if fr.pending == 0 {
        w.fail(format!(
            "frame {f} was told of more children done than it started (a completion counted twice)"
        ));
        return;
    }
    fr.pending -= 1;
    if fr.pending == 0 && fr.waiting {
        fr.waiting = false;
        let r = &w.ranks[on as usize];
        r.resumable.borrow_mut().push(f);
        // A sleeping rank wakes when a thread suspended there can resume.
        if r.state.get() == State::Sleeping {
            w.wake_at(on, r.now.get().max(w.now()));
        }
    }
}

/// A rank's lifeline words as the protocol sees them.
pub(crate) struct LifelineView<'a> {
    pub(crate) w: &'a World,
    pub(crate) me: u32,
    pub(crate) at: Cell<Ps>,
}

impl Words for LifelineView<'_> {
    fn own(&self, word: OwnWord) -> &AtomicU64 {
        let l = &self.w.ranks[self.me as usize].lifeline;
        match word {
            OwnWord::Sleep => &l.sleep,
            OwnWord::WokenBy => &l.woken_by,
            OwnWord::Slot(d) => &l.slots[d as usize],
        }
    }
    fn register_at(&self, buddy: u32, d: u32, me: u32) {
        self.w.send(me, buddy, Op::Register(d), false, 0, self.at.get());
    }
    fn wake(&self, thief: u32, tag: u64) {
        self.w.send(self.me, thief, Op::Wake(tag), false, 0, self.at.get());
    }
    fn raise_own_attention(&self) {
        self.w.ranks[self.me as usize].attention.set(true);
    }
    fn buddy_has_work(&self, buddy: u32) -> bool {
        let w = self.w;
        w.same_host(self.me, buddy)
            && !w.sleeping(buddy)
            && deque::has_shared(&Peek { w, rank: buddy }, w.setup.protocol)
    }
}

/// Direct reads of a same-host rank's words (one load each).
pub(crate) struct Peek<'a> {
    w: &'a World,
    rank: u32,
}

impl VictimWords for Peek<'_> {
    fn split_load(&self) -> u64 {
        self.w.ranks[self.rank as usize].deque.split.load(Ordering::SeqCst)
    }
    fn head_and_tail(&self) -> (u64, u64) {
        let d = &self.w.ranks[self.rank as usize].deque;
        (d.head.load(Ordering::SeqCst), d.tail.load(Ordering::SeqCst))
    }
    fn split_fetch_add(&self, _: u64) -> u64 {
        unreachable!("a peek only reads")
    }
    fn request(&self) {}
    fn entry(&self, _: u64) -> Entry {
        unreachable!("a peek only reads")
    }
    fn release_entry(&self, _: u64) {}
    fn try_lock(&self) -> bool {
        false
    }
    fn unlock(&self) {}
    fn put_head(&self, _: u64) {}
    fn get_tail(&self) -> u64 {
        0
    }
}
