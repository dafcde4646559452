//! The simulated job: its ranks' words, the event queue, the costs in
//! picoseconds, and how a message between two ranks is served.
//!
//! Time is integer picoseconds. One event queue orders everything; a rank
//! runs (inside its coroutine, [`crate::rank`]) until its own clock passes
//! the earliest queued event, then yields, so that no event is processed
//! out of order by more than one step of a rank's own work.
//!
//! **Who serves a message.** A message to a rank of the same host is a
//! load or store through shared memory: done at `shm_op_ns` after it is
//! sent. Between hosts, an RMA-class message (gets, puts, `native` atomics
//! on a conduit whose NIC serves them) is done at its arrival, one latency
//! after it is sent. An AM-class message (the `am` modes' fetch-and-add,
//! the lifeline messages, any RMA on a conduit that emulates it with AMs)
//! waits for its target to poll: at once if the target is blocked in a
//! communication of its own (GASNet polls there) or has a polling thread
//! (`rdma-emulated`); at its next spawn's poll if it is running a task; at
//! its next sleep poll if it sleeps. The target's CPU pays the handler.

use std::cell::{Cell, RefCell, UnsafeCell};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::atomic::AtomicU64;

use uat_protocol::deque::{Entry, Protocol};
use uat_protocol::lifeline::{self, MAX_LIFELINES, QUIESCENT};

use crate::machine::{Conduit, Machine, Rma};
use crate::workload::Bench;

/// Picoseconds.
pub(crate) type Ps = u64;

/// ns → ps.
pub(crate) fn ps(ns: f64) -> Ps {
    (ns * 1000.0).round() as Ps
}

/// The fetch-and-add mode (`--fad`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fad {
    /// The conduit's own atomics (NIC or its AM emulation).
    Native,
    /// An Active Message served by the worker at its polls.
    Am,
    /// An Active Message served by a polling thread beside each worker.
    RdmaEmulated,
}

impl Fad {
    /// The name in `--fad` and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Fad::Native => "native",
            Fad::Am => "am",
            Fad::RdmaEmulated => "rdma-emulated",
        }
    }

    /// The mode named `text`.
    pub fn parse(text: &str) -> Option<Fad> {
        [Fad::Native, Fad::Am, Fad::RdmaEmulated]
            .into_iter()
            .find(|f| f.name() == text)
    }
}

/// What a simulated job runs and how.
#[derive(Clone, Debug)]
pub struct Setup {
    /// Ranks of the job.
    pub ranks: u32,
    /// Ranks per host (the last host may hold fewer).
    pub ranks_per_host: u32,
    /// Which conduit profile of the machine.
    pub conduit: String,
    /// The fetch-and-add mode.
    pub fad: Fad,
    /// The deque's protocol.
    pub protocol: Protocol,
    /// Whether a thief checks the victim's deque before claiming.
    pub empty_check: bool,
    /// Spawns between polls when no thief asked (0: only when asked).
    pub poll_interval: u32,
    /// Failed steals before a thief sleeps on its lifelines (None: off).
    pub lifeline_w: Option<u32>,
    /// The victim choice's seed.
    pub seed: u64,
    /// Whether a subtree whose cost has a closed form (BTC) and that no
    /// message interrupts is charged as one event (exact: an interrupted
    /// subtree is resumed node by node from where it was).
    pub blocks: bool,
    /// The emulated delay added to each request between hosts that is
    /// waited for, and to each Active Message request (`UAT_NET_DELAY`),
    /// in ps.
    pub net_delay: u64,
    /// The benchmark.
    pub bench: Bench,
}

impl Fad {
    /// The runtime's default poll interval for this mode on `conduit` when
    /// the job spans `hosts` hosts (`am_fad::default_poll_interval`): 0
    /// (poll only when a thief asked) on smp and with a polling thread; 1
    /// for `am` where some rank is on another host; 64 otherwise.
    pub fn default_poll_interval(self, conduit: &str, hosts: u32) -> u32 {
        match self {
            _ if conduit == "smp" => 0,
            Fad::RdmaEmulated => 0,
            Fad::Am if hosts >= 2 => 1,
            _ => 64,
        }
    }
}

/// The costs of a setup, in ps (resolved from the machine file once).
#[derive(Clone, Debug)]
pub(crate) struct Costs {
    pub(crate) rma_by_nic: bool,
    /// One way between hosts, in this setup's mode.
    pub(crate) latency: Ps,
    pub(crate) net_ps_per_byte: f64,
    pub(crate) nic_gap: Ps,
    pub(crate) shm_op: Ps,
    pub(crate) shm_ps_per_byte: f64,
    pub(crate) poll_empty: Ps,
    pub(crate) poll_point: Ps,
    pub(crate) poll_per_peer: Ps,
    pub(crate) handler: Ps,
    pub(crate) shm_handler: Ps,
    pub(crate) own_atomic: Ps,
    pub(crate) sleep_poll: Ps,
    pub(crate) timer: Ps,
    pub(crate) spawn: Ps,
    pub(crate) suspend: Ps,
    pub(crate) resume: Ps,
    pub(crate) frame_bytes: u64,
    pub(crate) node: Ps,
    pub(crate) speed_spread: f64,
}

impl Costs {
    pub(crate) fn new(m: &Machine, c: &Conduit, setup: &Setup) -> Costs {
        let node = match setup.bench {
            Bench::Btc { .. } => m.work.btc_ns.value,
            Bench::Uts { .. } => m.work.uts_ns.value,
            Bench::Nqueens { .. } => m.work.nqueens_ns.value,
        };
        Costs {
            rma_by_nic: c.rma == Rma::Nic,
            // Every message between hosts takes the latency of the mode:
            // with a polling thread beside each rank, the slower one.
            latency: ps(if setup.fad == Fad::RdmaEmulated {
                c.net_latency_poller_ns.value
            } else {
                c.net_latency_ns.value
            }),
            net_ps_per_byte: 1000.0 / c.net_bytes_per_ns.value,
            nic_gap: ps(c.nic_gap_ns.value),
            shm_op: ps(c.shm_op_ns.value),
            shm_ps_per_byte: 1000.0 / c.shm_bytes_per_ns.value,
            poll_empty: ps(c.poll_empty_ns.value),
            poll_point: ps(c.poll_point_ns.value),
            poll_per_peer: ps(c.poll_per_peer_ns.value),
            handler: ps(c.handler_ns.value),
            shm_handler: ps(c.shm_handler_ns.value),
            own_atomic: ps(c.own_atomic_ns.value),
            sleep_poll: ps(c.sleep_poll_ns.value).max(1),
            timer: ps(c.timer_ns.value),
            spawn: ps(m.local.spawn_ns.value),
            suspend: ps(m.local.suspend_ns.value),
            resume: ps(m.local.resume_ns.value),
            frame_bytes: m.local.frame_bytes.value.round() as u64,
            node: ps(node),
            speed_spread: m.local.speed_spread.value,
        }
    }
}

/// A deque's words in a simulated rank's memory.
pub(crate) struct DequeWords {
    pub(crate) tail: AtomicU64,
    pub(crate) head: AtomicU64,
    pub(crate) split: AtomicU64,
    pub(crate) lock: AtomicU64,
    pub(crate) slots: Box<[UnsafeCell<Entry>]>,
}

/// A rank's lifeline words.
pub(crate) struct LifelineWords {
    pub(crate) sleep: AtomicU64,
    pub(crate) woken_by: AtomicU64,
    pub(crate) slots: [AtomicU64; MAX_LIFELINES],
}

/// Where a rank's coroutine is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Running a task or the scheduler: messages wait for its next poll.
    Running,
    /// Waiting for a reply of its own (GASNet polls meanwhile).
    Blocked,
    /// Asleep on its lifelines: polls every `sleep_poll`.
    Sleeping,
    /// Running a subtree charged as one event; a message that arrives
    /// interrupts it ([`World::arrive`]).
    InBlock,
    /// Its coroutine returned.
    Done,
}

/// What a message does at its target.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    SplitLoad,
    SplitFetchAdd(u64),
    Request,
    Entry(u64),
    ReleaseEntry(u64),
    TryLock,
    Unlock,
    HeadAndTail,
    PutHead(u64),
    GetTail,
    /// A get of a stolen entry's frames (the bytes ride on the message).
    Frames,
    /// A child of the frame finished elsewhere (a put into its cell).
    ChildDone(usize),
    /// A lifeline registration for slot `d` from the sender.
    Register(u32),
    /// A wake-up with the waker's tag.
    Wake(u64),
    /// The root finished (a put into the finished word).
    Finished,
}

/// How the target serves an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// A get, a put or a `native` atomic: the NIC (or its AM emulation).
    Rma,
    /// The `am` modes' atomics: an Active Message to the worker (or its
    /// polling thread).
    FadAm,
    /// An Active Message to the worker (lifelines).
    Am,
}

/// A message in flight or waiting at its target.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Message {
    pub(crate) from: u32,
    pub(crate) to: u32,
    pub(crate) op: Op,
    /// Whether the sender waits for the reply.
    pub(crate) reply: bool,
    /// Bytes the reply carries (a get of frames), beyond a word.
    pub(crate) bytes: u64,
    pub(crate) arrival: Ps,
}

/// An event of the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Event {
    /// Resume the rank's coroutine (its generation must match).
    Resume { rank: u32, generation: u64 },
    /// A message arrives at its target (index into `messages`).
    Arrive(usize),
}

/// Per-rank counters.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counters {
    pub(crate) nodes: u64,
    pub(crate) spawns: u64,
    pub(crate) steals_attempted: u64,
    pub(crate) steals_succeeded: u64,
    pub(crate) poll_ps: Ps,
    pub(crate) handler_ps: Ps,
    pub(crate) messages: u64,
    pub(crate) sleeps: u64,
    pub(crate) suspensions: u64,
    pub(crate) idle_ps: Ps,
    /// Time asleep on the lifelines (the runtime's `quiescent_s`).
    pub(crate) asleep_ps: Ps,
}

/// One simulated rank's state that others can reach.
pub(crate) struct Rank {
    pub(crate) host: u32,
    pub(crate) deque: DequeWords,
    pub(crate) lifeline: LifelineWords,
    pub(crate) attention: Cell<bool>,
    pub(crate) state: Cell<State>,
    /// The rank's own clock while it runs; when it last yielded otherwise.
    pub(crate) now: Cell<Ps>,
    /// Its CPU is busy with handlers until then (served while blocked).
    pub(crate) busy_until: Cell<Ps>,
    /// Its polling thread (`rdma-emulated`) is busy until then.
    pub(crate) poller_busy_until: Cell<Ps>,
    pub(crate) generation: Cell<u64>,
    /// The reply of its last blocking operation.
    pub(crate) reply: Cell<u64>,
    pub(crate) inbox: RefCell<VecDeque<Message>>,
    /// Until when this rank is known to run a node (a node's or a
    /// subtree's end): the progress the stall check looks for.
    pub(crate) progress_until: Cell<Ps>,
    /// When a message interrupted the subtree this rank runs as one event.
    pub(crate) interrupted: Cell<Option<Ps>>,
    /// Messages that arrived during that subtree (indices into `messages`),
    /// to arrive again once the rank is back at the point they reached.
    pub(crate) deferred: RefCell<Vec<usize>>,
    /// Suspended frames whose children are all done (ready to resume).
    pub(crate) resumable: RefCell<Vec<usize>>,
    /// When the root's finish reached this rank.
    pub(crate) finished: Cell<bool>,
    pub(crate) counters: RefCell<Counters>,
    /// The buddies this rank's lifeline registrations reached since it
    /// last announced itself.
    pub(crate) registered_at: RefCell<Vec<u32>>,
    /// Wake-ups sent to this rank and not yet applied to its words.
    pub(crate) wakes_in_flight: Cell<u32>,
}

/// The whole simulated job.
pub(crate) struct World {
    pub(crate) setup: Setup,
    pub(crate) costs: Costs,
    pub(crate) ranks: Vec<Rank>,
    queue: RefCell<BinaryHeap<Reverse<(Ps, u64, Event)>>>,
    sequence: Cell<u64>,
    clock: Cell<Ps>,
    messages: RefCell<Vec<Option<Message>>>,
    free_messages: RefCell<Vec<usize>>,
    /// Free NIC time per host (messages leaving a host queue there).
    nic_free: RefCell<Vec<Ps>>,
    /// When the root task finished.
    pub(crate) finish: Cell<Option<Ps>>,
    /// The largest of the ranks' `progress_until` when last looked at
    /// (the stall check recomputes it before it reports a stall).
    pub(crate) progress_until: Cell<Ps>,
    /// The harmonic mean of the ranks' speed draws.
    speed_mean: f64,
    pub(crate) frames: RefCell<crate::frames::Frames>,
    /// Every rank's host.
    hosts: Vec<u32>,
    /// Every rank's lifeline slots that a lifeline ends in (the graph
    /// inverted once: `lifeline::incoming` per rank would cost O(ranks²)).
    lifeline_slots: Vec<Vec<u32>>,
    /// The first check that failed: the simulation stops with it.
    pub(crate) error: RefCell<Option<String>>,
}

/// A rank's speed draw before scaling ([`World::speed`]).
fn raw_speed(seed: u64, spread: f64, rank: u32) -> f64 {
    let mut x = seed ^ (rank as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // splitmix64's finaliser: a well-mixed draw from (seed, rank).
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    let u = (x >> 11) as f64 / (1u64 << 53) as f64;
    1.0 + spread * (2.0 * u - 1.0)
}

/// Deque entries per simulated rank.
pub(crate) const CAPACITY: usize = 4096;

impl World {
    pub(crate) fn new(setup: Setup, costs: Costs) -> World {
        let hosts_of = |r: u32| r / setup.ranks_per_host.max(1);
        let ranks = (0..setup.ranks)
            .map(|r| Rank {
                host: hosts_of(r),
                deque: DequeWords {
                    tail: AtomicU64::new(0),
                    head: AtomicU64::new(0),
                    split: AtomicU64::new(0),
                    lock: AtomicU64::new(0),
                    slots: (0..CAPACITY)
                        .map(|_| UnsafeCell::new(Entry { ctx: 0, top: 0 }))
                        .collect(),
                },
                lifeline: LifelineWords {
                    sleep: AtomicU64::new(0),
                    woken_by: AtomicU64::new(0),
                    slots: std::array::from_fn(|_| AtomicU64::new(0)),
                },
                attention: Cell::new(false),
                state: Cell::new(State::Running),
                now: Cell::new(0),
                busy_until: Cell::new(0),
                poller_busy_until: Cell::new(0),
                generation: Cell::new(0),
                reply: Cell::new(0),
                inbox: RefCell::new(VecDeque::new()),
                progress_until: Cell::new(0),
                interrupted: Cell::new(None),
                deferred: RefCell::new(Vec::new()),
                resumable: RefCell::new(Vec::new()),
                finished: Cell::new(false),
                counters: RefCell::new(Counters::default()),
                registered_at: RefCell::new(Vec::new()),
                wakes_in_flight: Cell::new(0),
            })
            .collect();
        let hosts = setup.ranks.div_ceil(setup.ranks_per_host.max(1)) as usize;
        let host_of: Vec<u32> = (0..setup.ranks).map(hosts_of).collect();
        let dims = lifeline::default_dimensions(setup.ranks);
        let mut lifeline_slots = vec![Vec::new(); setup.ranks as usize];
        for r in 0..setup.ranks {
            for (d, buddy) in lifeline::graph(r, setup.ranks, dims) {
                lifeline_slots[buddy as usize].push(d);
            }
        }
        let speed_mean = setup.ranks as f64
            / (0..setup.ranks)
                .map(|r| 1.0 / raw_speed(setup.seed, costs.speed_spread, r))
                .sum::<f64>();
        World {
            setup,
            costs,
            ranks,
            queue: RefCell::new(BinaryHeap::new()),
            sequence: Cell::new(0),
            clock: Cell::new(0),
            messages: RefCell::new(Vec::new()),
            free_messages: RefCell::new(Vec::new()),
            nic_free: RefCell::new(vec![0; hosts]),
            finish: Cell::new(None),
            progress_until: Cell::new(0),
            speed_mean,
            frames: RefCell::new(crate::frames::Frames::default()),
            hosts: host_of,
            lifeline_slots,
            error: RefCell::new(None),
        }
    }

    /// Records a failed check (the first one stays): the event loop stops
    /// after the event that found it and `simulate` returns it.
    pub(crate) fn fail(&self, why: String) {
        self.error.borrow_mut().get_or_insert(why);
    }

    /// Whether a check failed.
    pub(crate) fn failed(&self) -> bool {
        self.error.borrow().is_some()
    }

    /// Rank `rank` runs a node (or a subtree) until `until`.
    pub(crate) fn progress(&self, rank: u32, until: Ps) {
        self.ranks[rank as usize].progress_until.set(until);
        if until > self.progress_until.get() {
            self.progress_until.set(until);
        }
    }

    /// Whether no rank has run a node since `now - stall`: the cached
    /// largest `progress_until` is recomputed from the ranks (a subtree
    /// that a message interrupted withdrew its planned end) before it is
    /// believed.
    pub(crate) fn stalled(&self, now: Ps, stall: Ps) -> bool {
        if now <= self.progress_until.get().saturating_add(stall) {
            return false;
        }
        let latest = self.ranks.iter().map(|r| r.progress_until.get()).max().unwrap_or(0);
        self.progress_until.set(latest);
        now > latest.saturating_add(stall)
    }

    /// Rank `rank`'s factor on its own work (nodes and spawns): one draw
    /// from `1 ± speed_spread`, uniform, seeded by the setup's seed and the
    /// rank, scaled so that the job's ranks together do the declared work
    /// per second (their harmonic mean is 1; one rank alone is exactly 1).
    /// Ranks do not all run in lockstep, as no real machine's do.
    pub(crate) fn speed(&self, rank: u32) -> f64 {
        self.raw_speed(rank) / self.speed_mean
    }

    fn raw_speed(&self, rank: u32) -> f64 {
        raw_speed(self.setup.seed, self.costs.speed_spread, rank)
    }

    /// The dimensions whose lifelines end at `rank`.
    pub(crate) fn lifeline_slots(&self, rank: u32) -> &[u32] {
        &self.lifeline_slots[rank as usize]
    }

    /// The host of every rank (built once).
    pub(crate) fn host_table(&self) -> &[u32] {
        &self.hosts
    }

    pub(crate) fn same_host(&self, a: u32, b: u32) -> bool {
        self.ranks[a as usize].host == self.ranks[b as usize].host
    }

    /// The time of the event being processed.
    pub(crate) fn now(&self) -> Ps {
        self.clock.get()
    }

    /// The earliest queued event's time (a running rank yields past it).
    pub(crate) fn horizon(&self) -> Ps {
        self.queue.borrow().peek().map_or(Ps::MAX, |Reverse((t, _, _))| *t)
    }

    /// The target of message `index` (still in flight).
    pub(crate) fn message_target(&self, index: usize) -> u32 {
        self.messages.borrow()[index]
            .as_ref()
            .expect("a message arrives once")
            .to
    }

    /// Takes message `index` out of flight.
    pub(crate) fn take_message(&self, index: usize) -> Message {
        let m = self.messages.borrow_mut()[index]
            .take()
            .expect("a message arrives once");
        self.free_messages.borrow_mut().push(index);
        m
    }

    pub(crate) fn push(&self, at: Ps, e: Event) {
        let s = self.sequence.get();
        self.sequence.set(s + 1);
        self.queue.borrow_mut().push(Reverse((at, s, e)));
    }

    pub(crate) fn pop(&self) -> Option<(Ps, Event)> {
        let e = self.queue.borrow_mut().pop().map(|Reverse((t, _, e))| (t, e));
        if let Some((t, _)) = e {
            self.clock.set(t);
        }
        e
    }

    /// Schedules the rank's coroutine at `at` (a newer generation
    /// cancels older wake-ups).
    pub(crate) fn wake_at(&self, rank: u32, at: Ps) {
        let r = &self.ranks[rank as usize];
        let g = r.generation.get() + 1;
        r.generation.set(g);
        self.push(at, Event::Resume { rank, generation: g });
    }

    /// The class of `op` in this setup.
    pub(crate) fn class(&self, op: &Op) -> Class {
        match op {
            Op::SplitFetchAdd(_) | Op::TryLock if self.setup.fad != Fad::Native => Class::FadAm,
            Op::Register(_) | Op::Wake(_) => Class::Am,
            _ => Class::Rma,
        }
    }

    /// Sends `op` from `from` (at its clock `at`) to `to`. Returns the
    /// message's index.
    pub(crate) fn send(&self, from: u32, to: u32, op: Op, reply: bool, bytes: u64, at: Ps) {
        self.ranks[from as usize].counters.borrow_mut().messages += 1;
        if let Op::Wake(_) = op {
            let r = &self.ranks[to as usize];
            r.wakes_in_flight.set(r.wakes_in_flight.get() + 1);
        }
        let c = &self.costs;
        let arrival = if self.same_host(from, to) {
            at + c.shm_op + (bytes as f64 * c.shm_ps_per_byte) as Ps
        } else {
            // The sender's host NIC sends one message at a time.
            let host = self.ranks[from as usize].host as usize;
            let mut nic = self.nic_free.borrow_mut();
            let leave = nic[host].max(at);
            nic[host] = leave + c.nic_gap;
            let latency = c.latency;
            // The emulated cross-host delay (`UAT_NET_DELAY`): once per
            // request that is waited for, and per Active Message request.
            let delayed = reply || self.class(&op) == Class::Am;
            leave + latency + if delayed { self.setup.net_delay } else { 0 }
        };
        let m = Message {
            from,
            to,
            op,
            reply,
            bytes,
            arrival,
        };
        let index = match self.free_messages.borrow_mut().pop() {
            Some(i) => {
                self.messages.borrow_mut()[i] = Some(m);
                i
            }
            None => {
                let mut ms = self.messages.borrow_mut();
                ms.push(Some(m));
                ms.len() - 1
            }
        };
        self.push(arrival, Event::Arrive(index));
    }

    /// The target's CPU for one handler of a message between these ranks.
    pub(crate) fn handler(&self, from: u32, to: u32) -> Ps {
        if self.same_host(from, to) {
            self.costs.shm_handler
        } else {
            self.costs.handler
        }
    }

    /// A handler of `ps` ran on `rank`'s worker while it waited; `timed`:
    /// the runtime's `msg_handling_s` counts it.
    pub(crate) fn count_busy(&self, rank: u32, ps: Ps, timed: bool) {
        if timed {
            self.ranks[rank as usize].counters.borrow_mut().handler_ps += ps;
        }
    }

    /// The part of a poll at a spawn that the runtime's timer counts
    /// (`msg_handling_s`): the empty poll, growing with the peers.
    pub(crate) fn poll_timed(&self) -> Ps {
        self.costs.poll_empty + self.costs.poll_per_peer * (self.setup.ranks as u64 - 1)
    }

    /// Whether `rank` sleeps (its sleep word, for thieves in shared memory).
    pub(crate) fn sleeping(&self, rank: u32) -> bool {
        self.ranks[rank as usize]
            .lifeline
            .sleep
            .load(std::sync::atomic::Ordering::SeqCst)
            == QUIESCENT
    }
}
