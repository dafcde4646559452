//! The lifeline protocol ([`super::protocol`]) run by model ranks, one
//! thread each, on in-process words, under a seeded scheduler that lets one
//! rank run at a time and picks who runs next at every word access: each
//! seed is one interleaving, and a failing seed replays.
//!
//! A model rank does what a worker does: with work it spawns (looks at its
//! attention word as `Worker::attend` does, then pushes a continuation),
//! runs the child — sometimes a long one that neither spawns nor polls —
//! and pops the continuation unless a thief took it; without work it
//! steals, and after `ATTEMPTS` failures quiesces by the protocol's steps.
//! A *shared-memory* job registers and wakes by stores; a *network* job by
//! messages that the target handles only when it polls (at a spawn whose
//! attention word is set, or between sleeps).
//!
//! Checked on every schedule:
//! - **a registration is served:** once the buddy a sleeper registered on
//!   has spawned twice after the registration reached it (the first spawn
//!   may have cleared its attention word just before the raise), the
//!   sleeper is awake at its next look;
//! - **shared work is seen** (shared memory): a sleeper does not sleep on
//!   for more than two wait periods while a buddy holds work it could
//!   steal (one period, plus the instant the look missed);
//! - the job ends, and every unit of work runs exactly once.
//!
//! Three broken variants (wake-ups dropped; the shared-memory look at the
//! buddies' deques left out; a served sleeper storing `QUIESCENT` over a
//! wake-up) must each be caught on some schedule: the checks can fail.
//! With the feature `mutations`, so must the protocol's own step broken
//! (`uat_protocol::mutation::Mutation::WakeDropped`: `serve_waiting`
//! clears a registration without waking its sleeper).
//!
//! What the model does not show: memory orderings (it runs one rank at a
//! time, so every access is sequentially consistent; `protocol.rs` argues
//! the orderings), handlers running on a polling thread or inside blocking
//! GASNet calls (messages are handled at the target's polls only), jobs
//! that mix shared-memory and network buddies, and thieves skipping
//! sleeping victims.

use std::collections::VecDeque;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread::Thread;

use am_fad::sleep::{AWAKE, QUIESCENT, SERVE};
use am_fad::AttentionBits;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

use super::protocol::{self, Look, OwnWord, Words};
use super::{graph, incoming};

/// Failed steal attempts before quiescing.
const ATTEMPTS: u32 = 2;
/// Own steps a sleeper waits before it looks again (the futex's timeout).
const WAIT_STEPS: u32 = 40;
/// Own steps of a long child: far beyond a wait period.
const LONG_CHILD_STEPS: u32 = 40 * WAIT_STEPS;

/// How the model is broken, to show that the checks catch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Break {
    None,
    /// Every other wake-up is lost.
    DropWakes,
    /// Sleepers in shared memory never look at their buddies' deques.
    NoBuddyLook,
    /// A sleeper that polled for a service request stores `QUIESCENT`
    /// instead of swapping `SERVE` back (a wake-up meanwhile is lost).
    ServeOverwrites,
    /// The protocol's own step broken (`uat_protocol::mutation`), in
    /// every rank's thread.
    #[cfg(feature = "mutations")]
    Protocol(uat_protocol::mutation::Mutation),
}

#[derive(Clone, Copy, Debug)]
struct Job {
    ranks: u32,
    dims: u32,
    shared: bool,
    /// Units of work (spawns) in the whole job.
    units: u64,
    /// Spawns between polls when only the periodic mark is set (network).
    poll_interval: u32,
    broken: Break,
    seed: u64,
}

/// A message, handled when the target polls.
enum Message {
    Register { d: u32, from: u32 },
    Wake { tag: u64 },
}

/// One model rank's words, and what the checks observe of it.
struct RankWords {
    sleep: AtomicU64,
    woken_by: AtomicU64,
    slots: Vec<AtomicU64>,
    attention: AtomicU64,
    /// Stealable continuations (a thief takes one by decrementing).
    deque: AtomicU64,
    inbox: Mutex<VecDeque<Message>>,
    /// Spawns so far.
    spawns: AtomicU64,
    /// Per rank `s`: this rank's spawn count when `s`'s latest
    /// registration reached it, plus one (0: none).
    registered_at: Vec<AtomicU64>,
}

/// What every model rank shares: the words, the scheduler, the work.
struct World {
    job: Job,
    ranks: Vec<RankWords>,
    threads: Mutex<Vec<Thread>>,
    /// The rank that runs now.
    turn: AtomicU64,
    live: Mutex<Vec<bool>>,
    rng: Mutex<SmallRng>,
    steps: AtomicU64,
    /// Set when a check failed or the step limit passed: every rank
    /// unwinds at its next step.
    abort: AtomicBool,
    failure: Mutex<Option<String>>,
    /// Units not yet started.
    budget: AtomicU64,
    /// Units run (each exactly once: counted and compared).
    done: AtomicU64,
    /// Ranks that hold a continuation (or are about to, mid-steal).
    holders: AtomicU64,
    finished: AtomicBool,
    wakes_sent: AtomicU64,
    /// The threads are known: turns can be handed over.
    started: AtomicBool,
}

const STEP_LIMIT: u64 = 2_000_000;

/// The payload a rank unwinds with when the world aborts.
struct Aborted;

impl World {
    fn new(job: Job) -> Arc<World> {
        let p = job.ranks as usize;
        Arc::new(World {
            job,
            ranks: (0..p)
                .map(|_| RankWords {
                    sleep: AtomicU64::new(AWAKE),
                    woken_by: AtomicU64::new(0),
                    slots: (0..job.dims).map(|_| AtomicU64::new(0)).collect(),
                    attention: AtomicU64::new(if job.shared {
                        0
                    } else {
                        crate::attention::PERIODIC.word()
                    }),
                    deque: AtomicU64::new(0),
                    inbox: Mutex::new(VecDeque::new()),
                    spawns: AtomicU64::new(0),
                    registered_at: (0..p).map(|_| AtomicU64::new(0)).collect(),
                })
                .collect(),
            threads: Mutex::new(Vec::new()),
            turn: AtomicU64::new(0),
            live: Mutex::new(vec![true; p]),
            rng: Mutex::new(SmallRng::seed_from_u64(job.seed)),
            steps: AtomicU64::new(0),
            abort: AtomicBool::new(false),
            failure: Mutex::new(None),
            budget: AtomicU64::new(job.units),
            done: AtomicU64::new(0),
            holders: AtomicU64::new(1),
            finished: AtomicBool::new(false),
            wakes_sent: AtomicU64::new(0),
            started: AtomicBool::new(false),
        })
    }

    /// Hands the turn to a rank the seed picks (perhaps `me` again) and
    /// waits for `me`'s next turn: every word access is preceded by one.
    fn step(&self, me: u32) {
        if self.steps.fetch_add(1, SeqCst) > STEP_LIMIT {
            self.fail(format!("the job did not end in {STEP_LIMIT} steps"));
        }
        self.pass_turn();
        self.wait_turn(me);
    }

    fn pass_turn(&self) {
        let next = {
            let live = self.live.lock().unwrap();
            let alive: Vec<usize> = (0..live.len()).filter(|&r| live[r]).collect();
            if alive.is_empty() {
                return;
            }
            alive[self.rng.lock().unwrap().random_range(0..alive.len())]
        };
        self.turn.store(next as u64, SeqCst);
        self.threads.lock().unwrap()[next].unpark();
    }

    /// A rank's thread starts: waits until every thread is known, then for
    /// its turn.
    fn wait_turn_or_start(&self, me: u32) {
        while !self.started.load(SeqCst) {
            std::thread::park();
        }
        self.wait_turn(me);
    }

    fn wait_turn(&self, me: u32) {
        while self.turn.load(SeqCst) != me as u64 {
            if self.abort.load(SeqCst) {
                resume_unwind(Box::new(Aborted));
            }
            std::thread::park();
        }
        if self.abort.load(SeqCst) {
            resume_unwind(Box::new(Aborted));
        }
    }

    fn fail(&self, why: String) -> ! {
        self.failure.lock().unwrap().get_or_insert(why);
        self.abort.store(true, SeqCst);
        for t in self.threads.lock().unwrap().iter() {
            t.unpark();
        }
        resume_unwind(Box::new(Aborted));
    }

    fn exit(&self, me: u32) {
        self.live.lock().unwrap()[me as usize] = false;
        self.pass_turn();
    }

    fn random(&self, n: u32) -> u32 {
        self.rng.lock().unwrap().random_range(0..n)
    }
}

/// Rank `me`'s view of the words: what the runtime's `WorkerWords` is.
struct View<'a> {
    world: &'a World,
    me: u32,
}

impl View<'_> {
    fn rank(&self, r: u32) -> &RankWords {
        &self.world.ranks[r as usize]
    }
    fn mine(&self) -> &RankWords {
        self.rank(self.me)
    }
    fn step(&self) {
        self.world.step(self.me)
    }
}

impl Words for View<'_> {
    fn own(&self, word: OwnWord) -> &AtomicU64 {
        self.step();
        let r = self.mine();
        match word {
            OwnWord::Sleep => &r.sleep,
            OwnWord::WokenBy => &r.woken_by,
            OwnWord::Slot(d) => &r.slots[d as usize],
        }
    }

    fn register_at(&self, buddy: u32, d: u32, me: u32) {
        let b = self.rank(buddy);
        if self.world.job.shared {
            self.step();
            b.slots[d as usize].store(me as u64 + 1, SeqCst);
            self.step();
            // As `am_fad::raise_attention` does: the request stored whole.
            b.attention.store(AttentionBits::REQUEST.word(), SeqCst);
            b.registered_at[me as usize].store(b.spawns.load(SeqCst) + 1, SeqCst);
        } else {
            self.step();
            b.inbox.lock().unwrap().push_back(Message::Register { d, from: me });
        }
    }

    fn wake(&self, thief: u32, tag: u64) {
        let n = self.world.wakes_sent.fetch_add(1, SeqCst);
        if self.world.job.broken == Break::DropWakes && n % 2 == 1 {
            return;
        }
        let t = self.rank(thief);
        self.step();
        if self.world.job.shared {
            t.woken_by.store(tag, SeqCst);
            self.step();
            t.sleep.swap(AWAKE, SeqCst);
        } else {
            t.inbox.lock().unwrap().push_back(Message::Wake { tag });
        }
    }

    fn raise_own_attention(&self) {
        self.step();
        self.mine().attention.fetch_or(AttentionBits::REQUEST.word(), SeqCst);
    }

    fn buddy_has_work(&self, buddy: u32) -> bool {
        if !self.world.job.shared || self.world.job.broken == Break::NoBuddyLook {
            return false;
        }
        self.step();
        let b = self.rank(buddy);
        b.sleep.load(SeqCst) == AWAKE && b.deque.load(SeqCst) > 0
    }
}

/// One model rank: the scheduler's loop, with the protocol's steps.
struct ModelRank<'a> {
    view: View<'a>,
    buddies: Vec<(u32, u32)>,
    slots: Vec<u32>,
    /// Spawns left before a poll when only the periodic mark is set.
    countdown: u32,
}

impl<'a> ModelRank<'a> {
    fn world(&self) -> &'a World {
        self.view.world
    }

    /// `Worker::attend`'s order: look at the word; when due, swap it clear
    /// (the owner's bits stay), poll, and serve if another rank asked.
    fn check_attention(&mut self, pushing: bool) {
        let me = self.view.me;
        let w = self.world();
        let own_bits = if w.job.shared {
            AttentionBits::NONE
        } else {
            crate::attention::PERIODIC
        };
        self.view.step();
        let bits = AttentionBits::from_word(self.view.mine().attention.load(SeqCst));
        if bits == AttentionBits::NONE {
            return;
        }
        if bits.only(crate::attention::PERIODIC.with(crate::attention::HOOKS)) && self.countdown > 1 {
            self.countdown -= 1;
            return;
        }
        self.countdown = w.job.poll_interval;
        self.view.step();
        let requested = AttentionBits::from_word(self.view.mine().attention.swap(own_bits.word(), SeqCst)).requested();
        self.poll();
        if requested {
            let can_serve = pushing || self.view.mine().deque.load(SeqCst) > 0;
            let served = protocol::serve_waiting(&self.view, &self.slots, w.job.ranks, can_serve, || me as u64 + 1);
            if served.pending {
                self.view.raise_own_attention();
            }
        }
    }

    /// Handles this rank's messages, as the message handlers do.
    fn poll(&self) {
        loop {
            self.view.step();
            let Some(m) = self.view.mine().inbox.lock().unwrap().pop_front() else {
                return;
            };
            match m {
                Message::Register { d, from } => {
                    protocol::accept_registration(&self.view, d, from);
                    let mine = self.view.mine();
                    mine.registered_at[from as usize].store(mine.spawns.load(SeqCst) + 1, SeqCst);
                }
                Message::Wake { tag } => protocol::accept_wake(&self.view, tag),
            }
        }
    }

    /// Holds a continuation: spawn units until the budget is spent or a
    /// thief took the continuation.
    fn work(&mut self) {
        let w = self.world();
        loop {
            self.view.step();
            let took = w.budget.fetch_update(SeqCst, SeqCst, |b| b.checked_sub(1)).is_ok();
            if !took {
                break;
            }
            self.check_attention(true);
            self.view.step();
            self.view.mine().deque.fetch_add(1, SeqCst);
            self.view.mine().spawns.fetch_add(1, SeqCst);
            // The child: runs without spawning or polling.
            w.done.fetch_add(1, SeqCst);
            let quiet = if w.random(4) == 0 {
                LONG_CHILD_STEPS
            } else {
                w.random(WAIT_STEPS)
            };
            for _ in 0..quiet {
                self.view.step();
                if self.view.mine().deque.load(SeqCst) == 0 {
                    break;
                }
            }
            self.view.step();
            let popped = self
                .view
                .mine()
                .deque
                .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1))
                .is_ok();
            if !popped {
                break; // stolen: the thief runs the rest
            }
        }
        if w.holders.fetch_sub(1, SeqCst) == 1 {
            if w.budget.load(SeqCst) != 0 {
                w.fail("work was lost: nobody holds a continuation and units are left".into());
            }
            w.finished.store(true, SeqCst);
        }
    }

    /// One steal attempt: take a continuation from `victim`'s deque.
    fn steal(&self, victim: u32) -> bool {
        let w = self.world();
        w.holders.fetch_add(1, SeqCst);
        self.view.step();
        let v = self.view.rank(victim);
        if v.deque.fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1)).is_ok() {
            return true;
        }
        if w.holders.fetch_sub(1, SeqCst) == 1 {
            if w.budget.load(SeqCst) != 0 {
                w.fail("work was lost: nobody holds a continuation and units are left".into());
            }
            w.finished.store(true, SeqCst);
        }
        // A split-protocol thief asks the victim to expose work.
        if w.job.shared && w.random(2) == 0 {
            self.view.step();
            v.attention.store(AttentionBits::REQUEST.word(), SeqCst);
        }
        // An `am` mode requester has a sleeping target poll once
        // (`Wake::Service`).
        if w.job.shared && w.random(3) == 0 {
            self.view.step();
            let _ = v.sleep.compare_exchange(QUIESCENT, SERVE, SeqCst, SeqCst);
        }
        false
    }

    /// Steps 1–4: returns whether it holds a continuation.
    fn quiesce(&mut self) -> bool {
        let me = self.view.me;
        // The registrations this quiescence sends re-record them.
        for &(_, b) in &self.buddies {
            self.view.rank(b).registered_at[me as usize].store(0, SeqCst);
        }
        protocol::announce(&self.view, me, &self.buddies);
        for &(_, b) in &self.buddies {
            if self.steal(b) {
                protocol::awake(&self.view);
                return true;
            }
        }
        self.sleep();
        protocol::awake(&self.view);
        false
    }

    /// Whether a buddy owes this sleeper a wake-up: it spawned twice since
    /// the registration reached it.
    fn owed(&self) -> bool {
        let me = self.view.me as usize;
        self.buddies.iter().any(|&(_, b)| {
            let b = self.view.rank(b);
            let at = b.registered_at[me].load(SeqCst);
            at != 0 && b.spawns.load(SeqCst) + 1 >= at + 2
        })
    }

    /// Whether a buddy is awake with stealable work.
    fn buddy_holds_work(&self) -> bool {
        self.buddies.iter().any(|&(_, b)| {
            let b = self.view.rank(b);
            b.sleep.load(SeqCst) == AWAKE && b.deque.load(SeqCst) > 0
        })
    }

    /// Step 4, as `Lifelines::sleep` does it, with the checks.
    fn sleep(&mut self) {
        let (me, w) = (self.view.me, self.world());
        let mut owed_before = false;
        let mut unseen_work = 0u32;
        loop {
            self.view.step();
            if w.finished.load(SeqCst) {
                return;
            }
            let owed_now = self.owed();
            match protocol::look(&self.view) {
                Look::Awake => return,
                Look::Serve => {
                    self.poll();
                    if w.job.broken == Break::ServeOverwrites {
                        self.view.own(OwnWord::Sleep).store(QUIESCENT, SeqCst);
                    } else {
                        protocol::served(&self.view);
                    }
                    continue;
                }
                Look::Asleep => {}
            }
            if owed_before {
                w.fail(format!(
                    "rank {me} sleeps although a buddy served its registration ({:?})",
                    w.job
                ));
            }
            owed_before = owed_now;
            if w.job.shared {
                // futex_wait: until the word changes or the period ends.
                for _ in 0..WAIT_STEPS {
                    self.view.step();
                    if self.view.mine().sleep.load(SeqCst) != QUIESCENT {
                        break;
                    }
                    if self.buddy_holds_work() {
                        unseen_work += 1;
                        if unseen_work > 2 * WAIT_STEPS + 8 {
                            w.fail(format!(
                                "rank {me} sleeps on while a buddy holds work it could steal ({:?})",
                                w.job
                            ));
                        }
                    } else {
                        unseen_work = 0;
                    }
                }
                if protocol::buddy_to_steal_from(&self.view, &self.buddies).is_some() {
                    return;
                }
                // It looked and saw none (else it would have left).
                if !self.buddy_holds_work() {
                    unseen_work = 0;
                }
            } else {
                for _ in 0..1 + w.random(WAIT_STEPS) {
                    self.view.step();
                }
            }
            self.poll();
        }
    }

    fn run(&mut self) {
        let (me, w) = (self.view.me, self.world());
        let mut holding = me == 0;
        let mut failures = 0;
        loop {
            if holding {
                self.work();
                holding = false;
            }
            self.view.step();
            if w.finished.load(SeqCst) {
                return;
            }
            let victim = match protocol::take_waker(&self.view, me, w.job.ranks) {
                Some(v) => v,
                None => (me + 1 + w.random(w.job.ranks - 1)) % w.job.ranks,
            };
            if self.steal(victim) {
                holding = true;
                failures = 0;
                continue;
            }
            // A spawn's look at the attention word happens only with work;
            // a thief polls between attempts.
            self.poll();
            failures += 1;
            if failures >= ATTEMPTS {
                failures = 0;
                holding = self.quiesce();
            }
        }
    }
}

/// Runs one schedule: Ok with the wake-ups sent, or the failed check.
fn run(job: Job) -> Result<u64, String> {
    let world = World::new(job);
    let handles: Vec<_> = (0..job.ranks)
        .map(|me| {
            let world = world.clone();
            std::thread::spawn(move || {
                #[cfg(feature = "mutations")]
                if let Break::Protocol(m) = job.broken {
                    uat_protocol::mutation::set(m);
                }
                world.wait_turn_or_start(me);
                let buddies = graph(me, job.ranks, job.dims);
                let slots = incoming(me, job.ranks, job.dims).iter().map(|&(d, _)| d).collect();
                let mut rank = ModelRank {
                    view: View { world: &world, me },
                    buddies,
                    slots,
                    countdown: job.poll_interval,
                };
                let r = catch_unwind(AssertUnwindSafe(|| rank.run()));
                world.exit(me);
                if let Err(e) = r {
                    if !e.is::<Aborted>() {
                        world
                            .failure
                            .lock()
                            .unwrap()
                            .get_or_insert(format!("rank {me} panicked"));
                        world.abort.store(true, SeqCst);
                        for t in world.threads.lock().unwrap().iter() {
                            t.unpark();
                        }
                    }
                }
            })
        })
        .collect();
    *world.threads.lock().unwrap() = handles.iter().map(|h| h.thread().clone()).collect();
    world.started.store(true, SeqCst);
    for h in &handles {
        h.thread().unpark();
    }
    for h in handles {
        h.join().unwrap();
    }
    if let Some(f) = world.failure.lock().unwrap().take() {
        return Err(format!("{f} [seed {}]", job.seed));
    }
    let done = world.done.load(SeqCst);
    if done != job.units {
        return Err(format!("{done} of {} units ran ({job:?})", job.units));
    }
    Ok(world.wakes_sent.load(SeqCst))
}

/// Jobs of 2 to 5 ranks, every dimension count, drawn from `seeds`.
fn jobs(shared: bool, broken: Break, seeds: std::ops::Range<u64>) -> impl Iterator<Item = Job> {
    seeds.map(move |seed| {
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x5eed);
        let ranks = rng.random_range(2..=5u32);
        let most = super::default_dimensions(ranks);
        Job {
            ranks,
            dims: rng.random_range(1..=most),
            shared,
            units: rng.random_range(10..40),
            poll_interval: rng.random_range(1..=3),
            broken,
            seed,
        }
    })
}

/// Runs every job; returns the wake-ups sent in all.
fn all_pass(jobs: impl Iterator<Item = Job>) -> u64 {
    jobs.map(|job| run(job).unwrap_or_else(|e| panic!("{e}"))).sum()
}

#[test]
fn no_sleeper_stays_asleep_while_its_buddy_holds_work_in_shared_memory() {
    let wakes = all_pass(jobs(true, Break::None, 0..120));
    assert!(wakes > 0, "the schedules put ranks to sleep and woke them");
}

#[test]
fn no_sleeper_stays_asleep_while_its_buddy_holds_work_across_the_network() {
    let wakes = all_pass(jobs(false, Break::None, 0..120));
    assert!(wakes > 0, "the schedules put ranks to sleep and woke them");
}

#[test]
fn the_model_catches_lost_wake_ups() {
    for shared in [true, false] {
        let caught = jobs(shared, Break::DropWakes, 0..120)
            .filter_map(|j| run(j).err())
            .next();
        let caught = caught.unwrap_or_else(|| panic!("no schedule caught lost wake-ups (shared memory: {shared})"));
        assert!(caught.contains("sleeps although a buddy served"), "{caught}");
    }
}

#[test]
fn the_model_catches_a_sleeper_that_never_looks_at_its_buddies() {
    let caught = jobs(true, Break::NoBuddyLook, 0..3000)
        .filter_map(|j| run(j).err())
        .next();
    let caught = caught.expect("no schedule caught a sleeper missing its buddy's work");
    assert!(caught.contains("while a buddy holds work"), "{caught}");
}

#[test]
fn the_model_catches_a_served_sleeper_that_overwrites_a_wake_up() {
    let caught = jobs(true, Break::ServeOverwrites, 0..3000)
        .filter_map(|j| run(j).err())
        .next();
    let caught = caught.expect("no schedule caught a served sleeper losing its wake-up");
    assert!(caught.contains("sleeps although a buddy served"), "{caught}");
}

#[cfg(feature = "mutations")]
#[test]
fn the_model_catches_the_protocols_dropped_wake_up() {
    use uat_protocol::mutation::Mutation;
    for shared in [true, false] {
        let caught = jobs(shared, Break::Protocol(Mutation::WakeDropped), 0..120)
            .filter_map(|j| run(j).err())
            .next();
        let caught = caught
            .unwrap_or_else(|| panic!("no schedule caught serve_waiting's dropped wake-up (shared memory: {shared})"));
        assert!(caught.contains("sleeps although a buddy served"), "{caught}");
    }
}
