//! A simulated rank: a coroutine that runs the scheduler's loop, with the
//! runtime's own protocol steps (`uat_protocol`) over words in simulated
//! memory.
//!
//! **Why a coroutine per rank.** The protocol steps are synchronous
//! functions (`claim` calls `split_fetch_add` and uses its result), as the
//! runtime needs them: on GASNet-EX a remote fetch-and-add blocks. A
//! simulated rank must stop in the middle of such a step until the
//! simulated reply arrives, while other ranks run. A stackful coroutine
//! (`corosensei`) does exactly that with the steps unchanged: the words'
//! remote operations yield to the event loop and return the value their
//! simulated service produced. Rewriting the steps as resumable state
//! machines would have made the runtime run a second form of them, or run
//! a state machine in a loop on its hot path; with a coroutine there is one
//! form, and the simulator costs one stack per rank.
//!
//! **What a rank runs** (the runtime's scheduler, `docs/design/scheduler.md`):
//! a thread is a stack of frames; a spawn pushes the parent's continuation
//! (an entry whose `ctx` names the frames' segment) into the real
//! [`Deque`] and runs the child; when the child returns, a pop either
//! continues the parent or finds it stolen; a join whose children are not
//! all done suspends its segment; the scheduler's choices are a resumable
//! waiter, then stealing (the real [`claim`] and [`release`]), then
//! lifelines (the real steps of `uat_protocol::lifeline`).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use corosensei::Yielder;
use uat_protocol::deque::{self, claim, release, Deque, Entry, OwnWords, Thieves, VictimWords};
use uat_protocol::lifeline::{self as lifeline, Look};
use uat_protocol::mutation::{active, Mutation};
use uat_protocol::victim::{VictimPolicy, Victims};

use crate::frames::Frame;
use crate::serve::{arrive, child_done, serve, LifelineView};
use crate::workload::{btc_nodes, btc_spawns, Step, Task};
use crate::world::{Class, Fad, Op, Ps, State, World, CAPACITY};

/// The smallest subtree run as one event.
const MIN_BLOCK_NODES: u64 = 64;

/// The coroutine's handle on the simulation.
pub(crate) struct Ctx<'y> {
    w: &'y World,
    me: u32,
    y: &'y Yielder<(), ()>,
}

impl Ctx<'_> {
    fn rank(&self) -> &crate::world::Rank {
        &self.w.ranks[self.me as usize]
    }

    fn now(&self) -> Ps {
        self.rank().now.get()
    }

    /// Spends `dt` of this rank's CPU; yields when its clock passes the
    /// next event, so that events are processed in time order.
    fn advance(&self, dt: Ps) {
        let r = self.rank();
        r.now.set(r.now.get() + dt);
        if r.now.get() > self.w.horizon() {
            self.w.wake_at(self.me, r.now.get());
            self.y.suspend(());
            r.now.set(r.now.get().max(r.busy_until.get()));
        }
    }

    /// Sends `op` to `to` and waits for its reply.
    fn call(&self, to: u32, op: Op, bytes: u64) -> u64 {
        let r = self.rank();
        // A blocking operation polls: what waits in the inbox is served.
        self.poll(false);
        self.w.send(self.me, to, op, true, bytes, r.now.get());
        r.state.set(State::Blocked);
        self.y.suspend(());
        r.state.set(State::Running);
        r.now.set(r.now.get().max(r.busy_until.get()));
        r.reply.get()
    }

    /// A check failed: records it and never runs again (the event loop
    /// stops with the error and drops the coroutine).
    fn fail(&self, why: String) -> ! {
        self.w.fail(why);
        loop {
            self.y.suspend(());
        }
    }

    /// Stops here if a step just taken failed a check.
    fn check(&self) {
        if self.w.failed() {
            self.fail(String::new());
        }
    }

    /// Sends `op` to `to` without waiting.
    fn post(&self, to: u32, op: Op) {
        self.w.send(self.me, to, op, false, 0, self.now());
    }

    /// Serves the messages that arrived by now (a poll). `at_spawn`: the
    /// poll a spawn makes, which costs the poll's time and which the
    /// runtime's timer counts whole (`msg_handling_s`, handlers inside
    /// included); otherwise the untimed poll of a rank that waits, where
    /// only `am`'s fetch-and-add handlers are counted (the runtime times
    /// its own handlers wherever they run).
    fn poll(&self, at_spawn: bool) {
        let r = self.rank();
        let c = &self.w.costs;
        let cost = if at_spawn { self.w.poll_timed() } else { 0 };
        r.counters.borrow_mut().poll_ps += cost;
        // A poll takes what had arrived when it began (what arrives during
        // it waits for the next one, as in a subtree run as one event).
        let began = r.now.get();
        // The poll point's own work, which the runtime's timer leaves out.
        r.now.set(began + cost + if at_spawn { c.poll_point } else { 0 });
        loop {
            let m = {
                let mut inbox = r.inbox.borrow_mut();
                match inbox.front() {
                    Some(m) if m.arrival <= began => inbox.pop_front(),
                    _ => None,
                }
            };
            let Some(m) = m else { break };
            let h = self.w.handler(m.from, m.to) + c.timer;
            let timed = at_spawn || self.w.class(&m.op) == Class::FadAm;
            self.w.count_busy(self.me, h, timed);
            r.now.set(r.now.get() + h);
            serve(self.w, &m, r.now.get());
        }
    }
}

/// The owner's words, reached by the owner: CPU atomics, or the network's
/// atomic domain in `native` mode across hosts.
struct OwnSim<'a, 'y> {
    ctx: &'a Ctx<'y>,
    /// When the owner's current wait for thieves (a release, the lock)
    /// began.
    waiting_since: Cell<Option<Ps>>,
}

/// The longest a correct thief can keep an owner waiting (for its
/// release, or the lock it holds): a claimed steal's few messages, each
/// within a latency, a NIC's queue and the emulated delay. An owner that
/// waits longer waits for a release or unlock that never comes, an error
/// (never a hang).
fn wait_bound(w: &World) -> Ps {
    let c = &w.costs;
    let message = c.latency + c.nic_gap * w.setup.ranks_per_host as Ps + w.setup.net_delay;
    // Every other rank's request may be served before the release.
    let queue = w.setup.ranks as Ps * (c.handler + c.timer);
    1_000_000_000 + 1000 * message + queue
}

impl OwnSim<'_, '_> {
    fn d(&self) -> &crate::world::DequeWords {
        &self.ctx.rank().deque
    }
    fn atomic_cost(&self) {
        if self.ctx.w.setup.fad == Fad::Native {
            self.ctx.advance(self.ctx.w.costs.own_atomic);
        }
    }
}

impl OwnWords for OwnSim<'_, '_> {
    fn tail(&self) -> &AtomicU64 {
        &self.d().tail
    }
    fn head(&self) -> &AtomicU64 {
        &self.d().head
    }
    fn slot(&self, i: u64) -> *mut Entry {
        self.d().slots[i as usize].get()
    }
    fn split_fetch_add(&self, value: u64) -> u64 {
        self.atomic_cost();
        self.d().split.fetch_add(value, Ordering::SeqCst)
    }
    fn split_load(&self) -> u64 {
        self.atomic_cost();
        self.d().split.load(Ordering::SeqCst)
    }
    fn split_compare_swap(&self, current: u64, new: u64) -> u64 {
        self.atomic_cost();
        match self
            .d()
            .split
            .compare_exchange(current, new, Ordering::SeqCst, Ordering::SeqCst)
        {
            Ok(v) | Err(v) => v,
        }
    }
    fn split_store(&self, value: u64) {
        // The owner's wait for releases (if any) is over.
        self.waiting_since.set(None);
        self.atomic_cost();
        self.d().split.store(value, Ordering::SeqCst)
    }
    fn lock(&self) {
        loop {
            self.atomic_cost();
            if self
                .d()
                .lock
                .compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                self.waiting_since.set(None);
                return;
            }
            self.wait();
        }
    }
    fn unlock(&self) {
        self.d().lock.store(0, Ordering::SeqCst)
    }
    fn wait(&self) {
        let now = self.ctx.now();
        let since = *self.waiting_since.get().get_or_insert(now);
        self.waiting_since.set(Some(since));
        if now - since > wait_bound(self.ctx.w) {
            self.ctx.fail(format!(
                "rank {} waited {} us for thieves that had taken its entries or its lock (a release or unlock was lost)",
                self.ctx.me,
                (now - since) / 1_000_000
            ));
        }
        // The runtime's wait polls GASNet without its timer.
        self.ctx.poll(false);
        self.ctx.advance(self.ctx.w.costs.poll_empty.max(10_000));
    }
}

/// A thief's view of one victim: every access is a simulated message.
struct VictimSim<'a, 'y> {
    ctx: &'a Ctx<'y>,
    victim: u32,
}

impl VictimWords for VictimSim<'_, '_> {
    fn split_load(&self) -> u64 {
        self.ctx.call(self.victim, Op::SplitLoad, 0)
    }
    fn split_fetch_add(&self, value: u64) -> u64 {
        self.ctx.call(self.victim, Op::SplitFetchAdd(value), 0)
    }
    fn request(&self) {
        self.ctx.post(self.victim, Op::Request)
    }
    fn entry(&self, i: u64) -> Entry {
        let ctx = self.ctx.call(self.victim, Op::Entry(i), 8);
        Entry { ctx, top: 1 }
    }
    fn release_entry(&self, i: u64) {
        self.ctx.post(self.victim, Op::ReleaseEntry(i))
    }
    fn try_lock(&self) -> bool {
        self.ctx.call(self.victim, Op::TryLock, 0) == 1
    }
    fn unlock(&self) {
        self.ctx.post(self.victim, Op::Unlock)
    }
    fn head_and_tail(&self) -> (u64, u64) {
        let v = self.ctx.call(self.victim, Op::HeadAndTail, 8);
        (v >> 32, v & 0xffff_ffff)
    }
    fn put_head(&self, head: u64) {
        self.ctx.call(self.victim, Op::PutHead(head), 0);
    }
    fn get_tail(&self) -> u64 {
        self.ctx.call(self.victim, Op::GetTail, 0)
    }
}

/// The scheduler loop of rank `me` (the coroutine's body).
pub(crate) fn run(w: &World, me: u32, y: &Yielder<(), ()>) {
    let ctx = Ctx { w, me, y };
    let s = &w.setup;
    let thieves = if s.ranks > 1 { Thieves::Possible } else { Thieves::None };
    let deque = Deque::new(
        OwnSim {
            ctx: &ctx,
            waiting_since: Cell::new(None),
        },
        CAPACITY,
        s.protocol,
        thieves,
    );
    let victims = Victims::new(VictimPolicy::Random, s.seed, me, w.host_table(), s.lifeline_w);
    let buddies = lifeline::graph(me, s.ranks, lifeline::default_dimensions(s.ranks));
    let slots = w.lifeline_slots(me).to_vec();
    let mut worker = Worker {
        ctx: &ctx,
        deque,
        stack: Vec::new(),
        since_poll: 0,
        slots,
        node_ps: (w.costs.node as f64 * w.speed(me)).round() as Ps,
        spawn_ps: (w.costs.spawn as f64 * w.speed(me)).round() as Ps,
    };
    if me == 0 {
        let root = w.frames.borrow_mut().add(Frame::new(None, 0, false));
        worker.start(root, s.bench.root());
        worker.run_stack();
    }
    let mut failures = 0u32;
    while !ctx.rank().finished.get() {
        // 1. A waiting thread whose children are done (only into an empty
        // deque: the deque's entries stay one chain).
        let ready = ctx.rank().resumable.borrow_mut().pop();
        if let Some(f) = ready {
            let seg = std::mem::take(&mut w.frames.borrow_mut().get(f).segment);
            ctx.advance(w.costs.resume);
            worker.stack = seg;
            worker.run_stack();
            continue;
        }
        if s.ranks == 1 {
            ctx.advance(w.costs.sleep_poll);
            ctx.poll(false);
            continue;
        }
        // 2. Steal.
        let start = ctx.now();
        let victim = victims.pick();
        let stolen = worker.steal_from(victim);
        victims.outcome(stolen.is_some());
        ctx.rank().counters.borrow_mut().idle_ps += ctx.now() - start;
        if let Some(seg) = stolen {
            failures = 0;
            worker.stack = seg;
            worker.run_stack();
            continue;
        }
        failures += 1;
        // 3. Lifelines.
        if let Some(limit) = s.lifeline_w {
            if failures >= limit && !buddies.is_empty() {
                worker.sleep(&buddies, &victims);
                failures = 0;
            }
        }
    }
    ctx.poll(false);
    ctx.rank().state.set(State::Done);
}

struct Worker<'a, 'y> {
    ctx: &'a Ctx<'y>,
    deque: Deque<OwnSim<'a, 'y>>,
    /// The running thread's frames, innermost last.
    stack: Vec<usize>,
    since_poll: u32,
    slots: Vec<u32>,
    /// This rank's node and spawn: the machine's, times its speed factor.
    node_ps: Ps,
    spawn_ps: Ps,
}

impl Worker<'_, '_> {
    fn w(&self) -> &World {
        self.ctx.w
    }

    /// Fills frame `f` with `task`'s step (following calls) and charges
    /// its nodes' work.
    fn start(&mut self, f: usize, mut task: Task) {
        let w = self.ctx.w;
        loop {
            let (node, step) = w.setup.bench.expand(&task);
            if node {
                self.ctx.rank().counters.borrow_mut().nodes += 1;
                w.progress(self.ctx.me, self.ctx.now() + self.node_ps);
                self.ctx.advance(self.node_ps);
            }
            match step {
                Step::Call(t) => task = t,
                other => {
                    w.frames.borrow_mut().get(f).step = other;
                    break;
                }
            }
        }
        self.stack.push(f);
    }

    /// Starts a child frame: as one event when its subtree has a closed
    /// form and nothing waits for this rank (the deque is not empty, so
    /// every push inside is private), else node by node.
    fn start_child(&mut self, f: usize, task: Task, spawned: bool) {
        let w = self.ctx.w;
        let r = self.ctx.rank();
        if w.setup.blocks && spawned && !r.attention.get() && r.inbox.borrow().is_empty() && !self.deque.is_empty() {
            if let Some((d, join)) = w.setup.bench.closed_form(&task) {
                if btc_nodes(d) >= MIN_BLOCK_NODES {
                    self.block(f, d, join);
                    return;
                }
            }
        }
        self.start(f, task);
    }

    /// The cost of polls at `n` spawns from `since_poll = s`, and the new
    /// `since_poll`.
    fn polls(&self, s: u64, n: u64) -> (u64, u64) {
        match self.ctx.w.setup.poll_interval as u64 {
            0 => (0, s),
            p => ((s + n) / p, (s + n) % p),
        }
    }

    /// The time of one poll at a spawn.
    fn poll_cost(&self) -> Ps {
        self.ctx.w.poll_timed() + self.ctx.w.costs.poll_point
    }

    /// How long a BTC subtree of depth `d` takes from `since_poll = s`.
    fn btc_duration(&self, d: u32, join: bool, s: u64) -> Ps {
        let spawns = btc_spawns(d, join);
        let ps = btc_nodes(d) as u128 * self.node_ps as u128
            + spawns as u128 * self.spawn_ps as u128
            + self.polls(s, spawns).0 as u128 * self.poll_cost() as u128;
        // `simulate` refused a tree whose time does not fit.
        Ps::try_from(ps).expect("a subtree's time fits 64 bits of picoseconds")
    }

    /// Runs the BTC subtree of depth `d` in frame `f` as one event; a
    /// message that arrives meanwhile stops it there, and the rank goes on
    /// node by node from the point the subtree had reached.
    fn block(&mut self, f: usize, d: u32, join: bool) {
        let w = self.ctx.w;
        let r = self.ctx.rank();
        let (t0, s0) = (r.now.get(), self.since_poll as u64);
        let end = t0 + self.btc_duration(d, join, s0);
        w.progress(self.ctx.me, end);
        r.state.set(State::InBlock);
        r.interrupted.set(None);
        w.wake_at(self.ctx.me, end);
        self.ctx.y.suspend(());
        r.state.set(State::Running);
        match r.interrupted.take() {
            None => {
                let spawns = btc_spawns(d, join);
                let (polls, s) = self.polls(s0, spawns);
                self.count(btc_nodes(d), spawns, polls);
                self.since_poll = s as u32;
                r.now.set(end);
                // The frame is done: the loop finishes it.
                w.frames.borrow_mut().get(f).step = Step::Leaf;
                self.stack.push(f);
            }
            Some(at) => {
                // The subtree did not run to its planned end.
                w.progress(self.ctx.me, at);
                let (cur, depth) = self.materialize(f, d, join, t0, s0, at);
                // The messages reach the rank where it now is, before it
                // runs on: in arrival order, into an empty inbox.
                let deferred = std::mem::take(&mut *r.deferred.borrow_mut());
                for m in deferred {
                    arrive(w, m, at);
                }
                self.start(cur, Task::Btc(depth));
            }
        }
    }

    fn count(&self, nodes: u64, spawns: u64, polls: u64) {
        let mut c = self.ctx.rank().counters.borrow_mut();
        c.nodes += nodes;
        c.spawns += spawns;
        c.poll_ps += polls * self.ctx.w.poll_timed();
    }

    /// The BTC subtree of depth `d` that frame `f` started at `t0` was
    /// stopped at `at`: builds the frames and deque entries it had then
    /// (the path from its root to the running task, each level's
    /// continuation pushed by the real deque); returns the running task's
    /// frame and depth, to be started afresh.
    fn materialize(&mut self, f: usize, d: u32, join: bool, t0: Ps, s0: u64, at: Ps) -> (usize, u32) {
        let w = self.ctx.w;
        let spawn_ps = self.spawn_ps;
        let (mut t, mut s, mut cur, mut depth) = (t0, s0, f, d);
        let (mut nodes, mut spawns, mut polls) = (0u64, 0u64, 0u64);
        let poll = self.poll_cost();
        let p = w.setup.poll_interval as u64;
        let spawn_step = |t: &mut Ps, s: &mut u64, spawns: &mut u64, polls: &mut u64| {
            *s += 1;
            *spawns += 1;
            if p > 0 && *s >= p {
                *s = 0;
                *t += poll;
                *polls += 1;
            }
            *t += spawn_ps;
        };
        while depth > 0 && at >= t + self.node_ps {
            t += self.node_ps;
            nodes += 1;
            let (a, b) = (Task::Btc(depth - 1), Task::Btc(depth - 1));
            let step = if join { Step::Join(a, b) } else { Step::Spawn2(a, b) };
            spawn_step(&mut t, &mut s, &mut spawns, &mut polls);
            let left = self.btc_duration(depth - 1, join, s);
            let (phase, spawned) = if at < t + left {
                (1, true)
            } else {
                t += left;
                let inner = btc_spawns(depth - 1, join);
                let (pl, sl) = self.polls(s, inner);
                nodes += btc_nodes(depth - 1);
                spawns += inner;
                polls += pl;
                s = sl;
                if !join {
                    spawn_step(&mut t, &mut s, &mut spawns, &mut polls);
                }
                (2, !join)
            };
            {
                let mut frames = w.frames.borrow_mut();
                let fr = frames.get(cur);
                fr.step = step;
                fr.phase = phase;
                fr.pending = 1;
            }
            self.stack.push(cur);
            if spawned {
                let base = self.segment_base();
                let seg: Vec<usize> = self.stack.drain(base..).collect();
                let ctx = w.frames.borrow_mut().park_segment(seg);
                let pushed = self.deque.push(Entry { ctx, top: 1 });
                assert!(pushed, "simulated deque full ({CAPACITY} entries)");
            }
            cur = w.frames.borrow_mut().add(Frame::new(Some(cur), self.ctx.me, spawned));
            depth -= 1;
        }
        self.count(nodes, spawns, polls);
        self.since_poll = s as u32;
        self.ctx.rank().now.set(t);
        (cur, depth)
    }

    /// A spawn point: the attention word and the periodic poll.
    fn spawn_point(&mut self) {
        let w = self.ctx.w;
        let r = self.ctx.rank();
        self.since_poll += 1;
        let asked = r.attention.replace(false);
        let periodic = w.setup.poll_interval > 0 && self.since_poll >= w.setup.poll_interval;
        if asked || periodic {
            self.since_poll = 0;
            // GASNet's poll costs the same whichever mode asked for it.
            self.ctx.poll(true);
            if asked {
                self.deque.expose();
                let tag = self.ctx.me as u64 + 1;
                let view = LifelineView {
                    w,
                    me: self.ctx.me,
                    at: Cell::new(self.ctx.now()),
                };
                let served = lifeline::serve_waiting(&view, &self.slots, w.setup.ranks, true, || tag);
                if served.pending {
                    r.attention.set(true);
                }
            }
        }
        self.ctx.advance(self.spawn_ps);
        r.counters.borrow_mut().spawns += 1;
    }

    /// Runs the current thread until its stack is empty.
    fn run_stack(&mut self) {
        let w = self.ctx.w;
        while let Some(&f) = self.stack.last() {
            let (step, phase) = {
                let mut frames = w.frames.borrow_mut();
                let fr = frames.get(f);
                (fr.step, fr.phase)
            };
            let next = match (step, phase) {
                (Step::Join(a, _), 0) | (Step::Spawn2(a, _), 0) => Some((a, true)),
                (Step::Spawn2(_, b), 1) => Some((b, true)),
                (Step::Join(_, b), 1) => Some((b, false)),
                _ => None,
            };
            if let Some((task, spawn)) = next {
                let child = {
                    let mut frames = w.frames.borrow_mut();
                    let fr = frames.get(f);
                    fr.phase += 1;
                    fr.pending += 1;
                    frames.add(Frame::new(Some(f), self.ctx.me, spawn))
                };
                if spawn {
                    self.spawn_point();
                    // The continuation: every frame of this thread from its
                    // last spawned frame up (what the entry's frames hold).
                    let base = self.segment_base();
                    let seg: Vec<usize> = self.stack.drain(base..).collect();
                    let ctx = w.frames.borrow_mut().park_segment(seg);
                    let pushed = if self.deque.is_empty() {
                        self.deque.push_bottom(Entry { ctx, top: 1 })
                    } else {
                        self.deque.push(Entry { ctx, top: 1 })
                    };
                    assert!(pushed, "simulated deque full ({CAPACITY} entries)");
                }
                self.start_child(child, task, spawn);
                continue;
            }
            // Every child started: join, then finish.
            let pending = w.frames.borrow().slab[f].as_ref().expect("live").pending;
            if pending > 0 {
                self.suspend(f);
                continue;
            }
            self.finish(f);
        }
    }

    /// Where the running thread's segment starts in `stack`: its innermost
    /// spawned frame (frames above it are inline calls).
    fn segment_base(&self) -> usize {
        let frames = self.w().frames.borrow();
        self.stack
            .iter()
            .rposition(|&f| frames.slab[f].as_ref().expect("live").spawned)
            .unwrap_or(0)
    }

    /// Frame `f` (innermost) is done.
    fn finish(&mut self, f: usize) {
        let w = self.ctx.w;
        self.stack.pop();
        let fr = w.frames.borrow_mut().remove(f);
        let Some(parent) = fr.parent else {
            // The root: the run is over; every rank learns it by a put.
            w.finish.set(Some(self.ctx.now()));
            for r in 0..w.setup.ranks {
                if r == self.ctx.me {
                    self.ctx.rank().finished.set(true);
                } else {
                    self.ctx.post(r, Op::Finished);
                }
            }
            self.stack.clear();
            return;
        };
        if !fr.spawned {
            if self.stack.is_empty() {
                // A resumed or stolen thread's base: its parent's
                // continuation is not below it; tell the parent wherever
                // it is.
                self.notify(parent);
            } else {
                // An inline call returns into its parent, below it.
                child_done(w, parent, self.ctx.me);
                self.ctx.check();
            }
            return;
        }
        // The parent's continuation is the newest entry, unless stolen.
        match self.deque.pop() {
            Some(e) => {
                let seg = self.take_segment(e.ctx);
                debug_assert_eq!(seg.last(), Some(&parent));
                self.stack.extend(seg);
                child_done(w, parent, self.ctx.me);
                if active(Mutation::TerminationCountedTwice) {
                    child_done(w, parent, self.ctx.me);
                }
                self.ctx.check();
            }
            None => {
                self.stack.clear();
                self.notify(parent);
            }
        }
    }

    fn notify(&self, parent: usize) {
        let w = self.ctx.w;
        let on = w.frames.borrow_mut().get(parent).rank;
        if on == self.ctx.me {
            child_done(w, parent, on);
            self.ctx.check();
        } else {
            self.ctx.post(on, Op::ChildDone(parent));
        }
    }

    /// Frame `f` joins children still running: its segment waits, and the
    /// thread below it continues from the deque (or the scheduler).
    fn suspend(&mut self, f: usize) {
        let w = self.ctx.w;
        self.ctx.advance(w.costs.suspend);
        self.ctx.rank().counters.borrow_mut().suspensions += 1;
        let base = self.segment_base();
        let seg: Vec<usize> = self.stack.drain(base..).collect();
        let spawned_base = w.frames.borrow().slab[seg[0]].as_ref().expect("live").spawned;
        {
            let mut frames = w.frames.borrow_mut();
            let fr = frames.get(f);
            fr.waiting = true;
            fr.segment = seg.clone();
            // The segment resumes as a thread of its own: its base's
            // completion no longer pops a continuation.
            frames.get(seg[0]).spawned = false;
        }
        if spawned_base {
            // The continuation below is the newest entry: resume it.
            match self.deque.pop() {
                Some(e) => {
                    let below = self.take_segment(e.ctx);
                    self.stack.extend(below);
                }
                None => self.stack.clear(),
            }
        } else {
            self.stack.clear();
        }
        // A child may have finished meanwhile (a message served above).
        let resumable = {
            let mut frames = w.frames.borrow_mut();
            let fr = frames.get(f);
            fr.pending == 0 && fr.waiting
        };
        if resumable {
            w.frames.borrow_mut().get(f).waiting = false;
            self.ctx.rank().resumable.borrow_mut().push(f);
        }
    }

    /// The segment of the entry `ctx` this rank popped or stole; an entry
    /// handed out twice (its segment already taken) is an error.
    fn take_segment(&self, ctx: u64) -> Vec<usize> {
        let seg = self.w().frames.borrow_mut().take_segment(ctx);
        seg.unwrap_or_else(|| {
            self.ctx.fail(format!(
                "rank {} took entry {ctx}, whose frames another rank had taken (an entry handed out twice)",
                self.ctx.me
            ))
        })
    }

    /// One steal attempt from `victim`: the stolen thread's frames, to run.
    fn steal_from(&mut self, victim: u32) -> Option<Vec<usize>> {
        let w = self.ctx.w;
        if w.setup.lifeline_w.is_some() && w.same_host(self.ctx.me, victim) && w.sleeping(victim) {
            // A sleeping rank has no work: skipped for the cost of a load.
            self.ctx.advance(w.costs.shm_op);
            return None;
        }
        self.ctx.rank().counters.borrow_mut().steals_attempted += 1;
        let v = VictimSim { ctx: self.ctx, victim };
        let mut times = deque::ClaimTimes::default();
        let claimed = match claim(&v, w.setup.protocol, w.setup.empty_check, || 0, &mut times) {
            Ok(c) => c,
            Err(miss) => {
                // "Empty" follows a read of the victim's indices (the
                // attempt's last reply): they must show nothing to take.
                let word = self.ctx.rank().reply.get();
                let (lo, hi) = match w.setup.protocol {
                    deque::Protocol::Split => deque::unpack(word),
                    deque::Protocol::Paper => (word >> 32, word & 0xffff_ffff),
                };
                if miss == deque::Miss::Empty && lo < hi {
                    self.ctx.fail(format!(
                        "rank {} found rank {victim} empty although the indices it read, ({lo}, {hi}), held an entry",
                        self.ctx.me
                    ));
                }
                return None;
            }
        };
        // The frames: one get of their bytes.
        self.ctx.call(victim, Op::Frames, w.costs.frame_bytes);
        release(&v, w.setup.protocol, &claimed);
        self.ctx.advance(w.costs.resume);
        self.ctx.rank().counters.borrow_mut().steals_succeeded += 1;
        let seg = self.take_segment(claimed.entry.ctx);
        let mut frames = w.frames.borrow_mut();
        // The stolen thread's base no longer has its parent's continuation
        // below it: its finish notifies the parent.
        frames.get(seg[0]).spawned = false;
        Some(seg)
    }

    /// A sleeper's lifeline check: a buddy that its registration reached
    /// and that has cleared it since (served it: `serve_waiting` clears a
    /// slot only to wake its rank) owes it a wake-up. With no wake-up on
    /// its way to this rank (in flight or in its inbox) and its sleep word
    /// still `QUIESCENT` (it was not applied either), the wake-up was
    /// lost: the rank would sleep on while the buddy that served it has
    /// work. Exact, no time bound: in a correct run the wake-up is sent
    /// in the same step that clears the slot.
    fn check_wake_owed(&self, buddies: &[(u32, u32)]) {
        let w = self.ctx.w;
        let r = self.ctx.rank();
        if r.wakes_in_flight.get() > 0 {
            return;
        }
        let reached = r.registered_at.borrow();
        for &(d, b) in buddies {
            let slot = w.ranks[b as usize].lifeline.slots[d as usize].load(Ordering::SeqCst);
            if reached.contains(&b) && slot == 0 {
                self.ctx.fail(format!(
                    "rank {} sleeps although its lifeline buddy {b} served its registration and no wake-up is on its way (a lost wake-up)",
                    self.ctx.me
                ));
            }
        }
    }

    /// Quiesces on the lifelines and sleeps until woken or finished.
    fn sleep(&mut self, buddies: &[(u32, u32)], victims: &Victims) {
        let w = self.ctx.w;
        let me = self.ctx.me;
        let view = LifelineView {
            w,
            me,
            at: Cell::new(self.ctx.now()),
        };
        self.ctx.rank().registered_at.borrow_mut().clear();
        lifeline::announce(&view, me, buddies);
        for &(_, b) in buddies {
            if let Some(seg) = self.steal_from(b) {
                lifeline::awake(&view);
                self.stack = seg;
                self.run_stack();
                return;
            }
        }
        self.ctx.rank().counters.borrow_mut().sleeps += 1;
        let r = self.ctx.rank();
        let slept_from = self.ctx.now();
        loop {
            if r.finished.get() || !r.resumable.borrow().is_empty() {
                break;
            }
            match lifeline::look(&view) {
                Look::Awake => break,
                Look::Serve => {
                    self.ctx.poll(false);
                    lifeline::served(&view);
                }
                Look::Asleep => {
                    self.check_wake_owed(buddies);
                    r.state.set(State::Sleeping);
                    let until = self.ctx.now() + w.costs.sleep_poll;
                    w.wake_at(me, until);
                    self.ctx.y.suspend(());
                    r.state.set(State::Running);
                    self.ctx.poll(false);
                    if lifeline::buddy_to_steal_from(&view, buddies).is_some() {
                        break;
                    }
                }
            }
        }
        lifeline::awake(&view);
        r.counters.borrow_mut().asleep_ps += self.ctx.now() - slept_from;
        victims.reset();
        if let Some(waker) = lifeline::take_waker(&view, me, w.setup.ranks) {
            if let Some(seg) = self.steal_from(waker) {
                self.stack = seg;
                self.run_stack();
            }
        }
    }
}
