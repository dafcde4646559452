//! The scheduler's interface to the layer above it.
//!
//! The scheduler knows nothing of what a layer keeps (global memory, in the
//! `uat-memory` crate, is the one layer there is). It offers three things:
//!
//! - **its ordering points**, as calls into the [`Layer`] given to
//!   `Runtime::start_with_layer`: *release* points ([`Release`]), after
//!   which whoever continues elsewhere must see what this thread wrote, and
//!   *acquire* points ([`Acquire`]), after which this thread must see what
//!   others released; and one more, [`Layer::before_suspend`], where a
//!   thread is about to leave the worker;
//! - **one attention mark** ([`Here::mark`]): while the layer sets it, the
//!   next spawn or poll point calls [`Layer::release`] with
//!   [`Release::Spawn`] or [`Release::Poll`] (a spawn already loads the
//!   attention word: a layer with nothing to do costs the spawn nothing);
//! - **a part of the process** ([`Here`]): its rank, the zone of the arena
//!   reserved for the layer ([`Layer::zone_bytes`], at the same address on
//!   every rank), the segment addresses of other ranks, the statistics and
//!   trace records the layer reports, the layer's per-process state, and
//!   the way to end the job with a message ([`fatal`]).
//!
//! # When each point is called (the scheduler's promise)
//!
//! | point | where | order |
//! |---|---|---|
//! | `release(Spawn)` | a `spawn`, mark set, before the continuation is pushed (stealable) | before the push's release store |
//! | `release(Poll)` | a poll point (or a spawn's periodic poll), mark set | before Active Messages are served |
//! | `release(TaskEnd)` | a task ends whose parent was stolen, and the root task's end | before its result is published (release store / put) |
//! | `release(Collective)` | the collectives that order global memory: `barrier`, `broadcast`, `broadcast_value`, `sum_over_ranks`, and `exit` | before the collective's first message |
//! | `acquire(Steal)` | a thief took a continuation | before the continuation resumes |
//! | `acquire(Join)` | a join took a result that a task on another process completed | after the result's acquire load, before `join` returns |
//! | `acquire(RunStart)` | `Runtime::run` on every rank | before the run's first barrier |
//! | `acquire(Collective)` | the same collectives but `exit`, after them | after their last message |
//! | `acquire(RunEnd)` | the end of every run, every rank | after the root task ended everywhere (its result is complete), before the run's statistics and the result are handed back |
//! | `before_suspend` | a join must wait (the thread leaves this worker) | before the switch |
//!
//! Every call is made on the worker thread, on the task's stack or the
//! scheduler's, never inside a signal handler or an Active Message handler.
//! The scheduler's own release/acquire orderings (the deque's, the future
//! cells') order these calls with the other process's: what a layer makes
//! visible at a release point before the thief's or joiner's acquire is
//! visible after it (see `docs/design/layers.md`).

use std::any::Any;
use std::marker::PhantomData;
use std::sync::OnceLock;

use gasnet_sys::am::{Handler, HandlerId};

use crate::settings::Settings;
use gasnet_sys::Gasnet;

pub use crate::fatal::fmt_size;
use crate::worker::{worker_for_thread, Worker};

/// The layer the process's runtime was started with (one per process:
/// `Runtime::start` installs it before the first ordering point). Read
/// with an acquire load (`OnceLock::get`) at the ordering points, none of
/// them a spawn's fast path.
static INSTALLED: OnceLock<&'static dyn Layer> = OnceLock::new();

/// Installs the process's layer (once, at start).
pub(crate) fn install(layer: &'static dyn Layer) {
    if INSTALLED.set(layer).is_err() {
        unreachable!("one runtime per process, its layer installed once");
    }
}

/// The process's layer ([`install`]).
#[inline]
pub(crate) fn installed() -> &'static dyn Layer {
    *INSTALLED.get().expect("the layer is installed when the runtime starts")
}

/// A release point (see the module table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Release {
    /// A spawn while the layer's mark is set.
    Spawn,
    /// A poll point while the layer's mark is set.
    Poll,
    /// A task whose parent runs elsewhere ends (or the root task ends).
    TaskEnd,
    /// Before a collective.
    Collective,
}

/// An acquire point (see the module table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquire {
    /// A stolen continuation is about to resume.
    Steal,
    /// A join took the result of a task that ended on another process.
    Join,
    /// A run starts.
    RunStart,
    /// After a collective.
    Collective,
    /// A run ended (every rank).
    RunEnd,
}

/// A layer above the scheduler: what it registers at start and what it does
/// at the scheduler's ordering points. Every method runs on the worker
/// thread.
pub trait Layer: Sync + 'static {
    /// Its Active Message handlers, registered on every rank at
    /// `Runtime::start` (each a row of the job's handler table,
    /// `gasnet_sys::am::ids`).
    fn handlers(&self) -> Vec<Handler>;

    /// The layer's own settings (a [`settings!`](crate::settings!) table,
    /// read before `Runtime::start`), which the start validates, checks for
    /// agreement across ranks and describes (`UAT_VERBOSE`) with the
    /// scheduler's. None by default.
    fn settings(&self) -> Option<&dyn Settings> {
        None
    }

    /// Bytes of the arena zone the scheduler reserves for the layer
    /// ([`Here::zone`]; the same on every rank: the layer's settings that
    /// size it must be among those that agree). None by default.
    fn zone_bytes(&self) -> usize {
        0
    }

    /// Called once per process at `Runtime::start`, after the arena is
    /// mapped and before the start's closing barrier (so before any rank's
    /// first task): the layer builds its per-process state, which
    /// [`Here::state`] returns from then on.
    fn attach(&self, here: Here) -> Box<dyn Any>;

    /// A release point.
    fn release(&self, here: Here, at: Release);

    /// An acquire point.
    fn acquire(&self, here: Here, at: Acquire);

    /// A join is about to suspend its thread (it may resume on another
    /// process).
    fn before_suspend(&self, here: Here);

    /// Test support: sends `count` malformed or random requests to each of
    /// the layer's handlers on `target` through `request(handler, args)`,
    /// drawing payloads from `draw` (see `testing::fuzz_handlers`). None by
    /// default.
    fn fuzz(&self, here: Here, target: u32, count: u32, draw: &mut dyn FuzzDraw, request: &mut FuzzRequest) {
        let _ = (here, target, count, draw, request);
    }
}

/// How [`Layer::fuzz`] sends one request: to the handler, with the
/// arguments.
pub type FuzzRequest<'a> = dyn FnMut(HandlerId, &[u32]) + 'a;

/// The handler fuzz's seeded generator, lent to [`Layer::fuzz`].
pub trait FuzzDraw {
    /// Random bits.
    fn next(&mut self) -> u64;
    /// An address near the range `[lo, hi)` of `step`-byte elements: at
    /// and around its edges, inside it, or far outside.
    fn near(&mut self, lo: usize, hi: usize, step: usize) -> usize;
}

/// The scheduler alone: no layer.
pub(crate) struct NoLayer;

impl Layer for NoLayer {
    fn handlers(&self) -> Vec<Handler> {
        Vec::new()
    }
    fn attach(&self, _: Here) -> Box<dyn Any> {
        Box::new(())
    }
    fn release(&self, _: Here, _: Release) {}
    fn acquire(&self, _: Here, _: Acquire) {}
    fn before_suspend(&self, _: Here) {}
}

/// A statistics counter a layer adds to (fields of [`crate::Stats`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    /// `cache_hits`.
    CacheHits,
    /// `cache_misses`.
    CacheMisses,
    /// `global_fetched_bytes`.
    FetchedBytes,
    /// `global_written_bytes`.
    WrittenBytes,
}

/// The process as a layer sees it: a handle to the worker, valid on the
/// worker thread only (neither `Send` nor `Sync`).
#[derive(Clone, Copy)]
pub struct Here {
    w: &'static Worker,
    _not_send: PhantomData<*const ()>,
}

impl Here {
    pub(crate) fn of(w: &'static Worker) -> Here {
        Here {
            w,
            _not_send: PhantomData,
        }
    }

    /// The process's worker, for `what` (a public operation's name): ends
    /// the job with a message naming `what` when no runtime runs here or
    /// this is not the runtime's thread.
    pub fn for_thread(what: &'static str) -> Here {
        Here::of(worker_for_thread(what))
    }

    /// This rank.
    pub fn rank(self) -> u32 {
        self.w.rank
    }

    /// The job's ranks.
    pub fn ranks(self) -> u32 {
        self.w.ranks
    }

    /// The runtime's settings.
    pub fn config(self) -> &'static crate::Config {
        &self.w.config
    }

    /// The GASNet-EX handle.
    ///
    /// # Safety
    ///
    /// The layer reaches only the zone reserved for it ([`Here::zone`]) of
    /// any rank's segment through it, and ends the job only through
    /// [`fatal`]: the rest of every segment holds the scheduler's live
    /// frames and words.
    pub unsafe fn gasnet(self) -> Gasnet {
        self.w.gasnet
    }

    /// The layer's zone of the arena: `(first address, bytes)`, the same
    /// arena addresses on every rank ([`Layer::zone_bytes`], rounded up to
    /// whole pages).
    pub fn zone(self) -> (usize, usize) {
        (crate::arena::Layout::addr(self.w.layout.heap), self.w.layout.heap_size)
    }

    /// The segment address (for RMA and atomics) of `rank`'s arena address
    /// `addr`.
    pub fn remote(self, rank: u32, addr: usize) -> usize {
        crate::arena::remote(self.w.gasnet, rank, addr)
    }

    /// Where this process reaches `rank`'s arena address `addr` with loads
    /// and stores, if it does (its own rank, and every rank of its
    /// shared-memory neighbourhood).
    pub fn mapped(self, rank: u32, addr: usize) -> Option<usize> {
        if rank == self.w.rank {
            return Some(addr);
        }
        self.w
            .gasnet
            .segment(rank)
            .local
            .map(|local| local + crate::arena::segment_offset(addr))
    }

    /// The layer's per-process state, as [`Layer::attach`] returned it.
    /// Ends the job if it is not an `S` (a program linked two layers).
    pub fn state<S: Any>(self) -> &'static S {
        match self.w.layer_state.get().and_then(|s| s.downcast_ref::<S>()) {
            Some(s) => s,
            None => crate::fatal::fatal(format_args!(
                "the runtime was started without the layer {} (start it through uat::Runtime::start or uat::launch)",
                std::any::type_name::<S>()
            )),
        }
    }

    /// Sets or clears the layer's attention mark: while it is set, the next
    /// spawn or poll point calls [`Layer::release`].
    pub fn mark(self, on: bool) {
        self.w.attention.mark_layer(on);
    }

    /// Adds `n` to one of this run's statistics counters.
    pub fn count(self, counter: Count, n: u64) {
        self.w.run.counters.update(|c| match counter {
            Count::CacheHits => c.cache_hits += n,
            Count::CacheMisses => c.cache_misses += n,
            Count::FetchedBytes => c.global_fetched_bytes += n,
            Count::WrittenBytes => c.global_written_bytes += n,
        });
    }

    /// Whether a timeline or statistics trace records (`UAT_TRACE`).
    pub fn tracing(self) -> bool {
        self.w.trace.on()
    }

    /// Records an interval of `kind` that started at `start` (a
    /// [`Here::now`]) and ends now, with `peer` and `value`, if tracing.
    pub fn trace_since(self, kind: uat_trace::Kind, peer: u32, start: u64, value: u64) {
        self.w.trace.since(kind, peer, start, value);
    }

    /// The trace's clock (TSC ticks).
    pub fn now(self) -> u64 {
        crate::tsc::now()
    }

    /// Makes `rank` serve its Active Message queue soon, if it sleeps in
    /// shared memory (call it after a request that waits for a reply).
    pub fn serve(self, rank: u32) {
        crate::sleep_word::serve(self.w.gasnet, rank);
    }

    /// A blocking operation of the layer on `rank`'s memory (a get, a put,
    /// an atomic, a wait for non-blocking gets and puts) that began at
    /// `since` has completed. Across the network such an operation
    /// completes only when `rank` polls, which a rank asleep on its
    /// lifelines does at most every millisecond: when this one waited
    /// longer than many round trips, `rank` is asked to poll without
    /// sleeping for a while (`UAT_KEEP_POLLING`), and asked again while
    /// operations on it go on (at most once per half window; never for a
    /// rank whose memory is mapped here, nor with lifelines off). Returns
    /// whether it asked (counted as `keep_polling_asked`).
    #[inline]
    pub fn served(self, rank: u32, since: std::time::Instant) -> bool {
        let asked = self.w.lifelines.keep_polling.served(self.w.gasnet, rank, since);
        if asked {
            self.w.run.counters.update(|c| c.keep_polling_asked += 1);
        }
        asked
    }
}

/// Ends the whole job with `msg` (every rank exits non-zero, the message
/// printed with this rank).
pub fn fatal(msg: std::fmt::Arguments) -> ! {
    crate::fatal::fatal(msg)
}
