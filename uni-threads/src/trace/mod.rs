//! What the scheduler did: per-rank records of its states, steals, sleeps
//! and global memory traffic (kinds in [`uat_trace::Kind`]), written to
//! `UAT_TRACE`'s directory at the end of the job — or, when this rank
//! fails, what was recorded so far — and merged there by rank 0 into
//! `trace.json` (Chrome Trace Event JSON), `stats.txt` and `stats.json`
//! (and `trace.otf2` where the `otf2` feature is built).
//!
//! `UAT_TRACE_MODE=stats` keeps only each kind's count, total and maximum
//! (no timeline); `timeline` (the default) keeps every record too, up to
//! `UAT_TRACE_EVENTS` per rank (then it says how many it dropped and keeps
//! counting). Off (no `UAT_TRACE`), every hook is one branch on
//! [`Tracer::on`], a field of the worker that the hot paths do not reach:
//! spawn and join record nothing.
//!
//! Clocks: records hold this rank's TSC ticks; at start-up every rank
//! measures its monotonic clock against rank 0's with a few Active Message
//! round trips ([`clock`]), and the file's header says how a tick maps to
//! the job's clock and within how much.
//!
//! Hosts: the header names this rank's host and the job's number of hosts
//! ([`gasnet_sys::Hosts`], GASNet's neighbourhoods, learnt at init), so
//! that the outputs group the ranks by host.

pub(crate) mod clock;

use std::cell::{Cell, RefCell};
use std::path::PathBuf;

use uat_trace::{Kind, KindTotal, Outcome, RankHeader, Record};

/// What a trace keeps (`UAT_TRACE_MODE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceMode {
    /// Every record (up to `UAT_TRACE_EVENTS` per rank) and the totals.
    Timeline,
    /// Each kind's count, total and maximum only.
    Stats,
}

/// Kinds by code (codes are small: an array indexed by code).
const KIND_SLOTS: usize = 16;
const _: () = {
    let mut i = 0;
    while i < Kind::ALL.len() {
        assert!((Kind::ALL[i].code as usize) < KIND_SLOTS);
        i += 1;
    }
};

/// One kind's running totals.
#[derive(Clone, Copy, Default)]
struct Total {
    count: u64,
    ticks: u64,
    max_ticks: u64,
}

/// This rank's recorder (worker thread only).
pub(crate) struct Tracer {
    /// Where the files go; None: tracing is off.
    dir: Option<PathBuf>,
    /// Keep every record (timeline), or only the totals (stats).
    timeline: bool,
    records: RefCell<Vec<Record>>,
    capacity: usize,
    dropped: Cell<u64>,
    totals: RefCell<[Total; KIND_SLOTS]>,
    /// Since when the running task has run (0: no task runs).
    task_since: Cell<u64>,
    /// The last claim of a successful steal: victim and tick.
    claim: Cell<(u32, u64)>,
    /// This rank's clock against the job's.
    clock: Cell<clock::Alignment>,
    /// Counters summed over the runs traced.
    stats: RefCell<crate::stats::Stats>,
    /// The last run whose counters are in `stats` (`RunState::id`).
    runs_added: Cell<u64>,
    /// The file was written (the end of the job, or a failure).
    written: Cell<bool>,
    rank: u32,
    ranks: u32,
}

impl Tracer {
    pub(crate) fn new(dir: Option<PathBuf>, mode: TraceMode, capacity: usize, rank: u32, ranks: u32) -> Tracer {
        let timeline = dir.is_some() && mode == TraceMode::Timeline;
        Tracer {
            dir,
            timeline,
            records: RefCell::new(if timeline {
                Vec::with_capacity(capacity)
            } else {
                Vec::new()
            }),
            capacity,
            dropped: Cell::new(0),
            totals: RefCell::new([Total::default(); KIND_SLOTS]),
            task_since: Cell::new(0),
            claim: Cell::new((0, 0)),
            clock: Cell::new(clock::Alignment::default()),
            stats: RefCell::new(crate::stats::Stats::default()),
            written: Cell::new(false),
            runs_added: Cell::new(0),
            rank,
            ranks,
        }
    }

    /// Whether the file was written (the end of the job, or a failure).
    pub(crate) fn written(&self) -> bool {
        self.written.get()
    }

    /// Whether anything is recorded.
    #[inline(always)]
    pub(crate) fn on(&self) -> bool {
        self.dir.is_some()
    }

    pub(crate) fn set_clock(&self, a: clock::Alignment) {
        self.clock.set(a);
    }

    /// Records one record (tracing on).
    #[cold]
    pub(crate) fn record(&self, kind: Kind, peer: u32, start: u64, end: u64, value: u64) {
        // A peer flow's start is on the peer's clock: no duration here.
        let ticks = if kind == Kind::JoinFlow {
            0
        } else {
            end.saturating_sub(start)
        };
        {
            let mut totals = self.totals.borrow_mut();
            let t = &mut totals[kind as usize];
            t.count += 1;
            t.ticks += ticks;
            t.max_ticks = t.max_ticks.max(ticks);
        }
        if !self.timeline {
            return;
        }
        let mut records = self.records.borrow_mut();
        if records.len() < self.capacity {
            records.push(Record {
                kind: kind as u32,
                peer,
                start,
                end,
                value,
            });
        } else {
            if self.dropped.get() == 0 {
                gasnet_sys::report(format_args!(
                    "uat: trace buffer full ({} records, UAT_TRACE_EVENTS): later records are counted, not kept",
                    self.capacity
                ));
            }
            self.dropped.set(self.dropped.get() + 1);
        }
    }

    /// An interval of `kind` that began at `start` and ends now.
    #[inline]
    pub(crate) fn since(&self, kind: Kind, peer: u32, start: u64, value: u64) {
        if self.on() {
            self.record(kind, peer, start, crate::tsc::now(), value);
        }
    }

    /// An instant of `kind` now.
    #[inline]
    pub(crate) fn instant(&self, kind: Kind, peer: u32, value: u64) {
        if self.on() {
            let t = crate::tsc::now();
            self.record(kind, peer, t, t, value);
        }
    }

    /// The worker resumes a task (it leaves its scheduler).
    #[inline]
    pub(crate) fn task_begins(&self) {
        if self.on() {
            self.task_since.set(crate::tsc::now());
        }
    }

    /// The worker enters its scheduler: the task that ran ends here.
    #[inline]
    pub(crate) fn task_ends(&self) {
        if self.on() && self.task_since.get() != 0 {
            self.since(Kind::Task, self.rank, self.task_since.replace(0), 0);
        }
    }

    /// A steal attempt from `victim` that began at `start`.
    #[inline]
    pub(crate) fn steal(&self, victim: u32, start: u64, outcome: Outcome) {
        if self.on() {
            let end = crate::tsc::now();
            if outcome == Outcome::Success {
                self.claim.set((victim, end));
            }
            self.record(Kind::Steal, victim, start, end, outcome as u64);
        }
    }

    /// The stolen continuation resumes now: the flow from its claim.
    #[inline]
    /// (The resumed task begins at the flow's end: one tick for both.)
    pub(crate) fn stolen_resumes(&self) {
        if self.on() {
            let (victim, claimed) = self.claim.get();
            let now = crate::tsc::now();
            self.record(Kind::StealFlow, victim, claimed, now, 0);
            self.task_since.set(now);
        }
    }

    /// Adds run `run`'s counters (this rank's) to the traced total, once.
    pub(crate) fn add_run(&self, run: u64, s: &crate::stats::Stats) {
        if self.on() && run > self.runs_added.get() {
            self.runs_added.set(run);
            self.stats.borrow_mut().accumulate(s);
        }
    }

    /// Writes this rank's file (once). `complete`: the job ends normally;
    /// `hosts`: the job's hosts (this rank's and their number go in the
    /// header). Returns its path.
    pub(crate) fn write(&self, complete: bool, hosts: &gasnet_sys::Hosts) -> Option<Result<PathBuf, String>> {
        let dir = self.dir.as_ref()?;
        if self.written.replace(true) {
            return None;
        }
        self.task_ends();
        let a = self.clock.get();
        // The TSC's rate over the whole job (from the alignment to now,
        // against CLOCK_MONOTONIC): a 20 ms start-up estimate could be off
        // by a preemption.
        let (ticks, ns) = (crate::tsc::now(), clock::monotonic_ns());
        let ticks_per_s = if ns > a.origin_mono_ns + 100_000_000 {
            (ticks - a.origin_ticks) as f64 * 1e9 / (ns - a.origin_mono_ns) as f64
        } else {
            crate::tsc::hz()
        };
        let totals = self.totals.borrow();
        let stats = self.stats.borrow();
        let header = RankHeader {
            rank: self.rank,
            ranks: self.ranks,
            host: hosts.mine(),
            hosts: hosts.count(),
            program: program_name(),
            ticks_per_s,
            origin_ticks: a.origin_ticks,
            origin_ns: a.origin_ns,
            clock_error_ns: a.error_ns,
            clock_estimate_ns: a.estimate_ns,
            clock_estimate_error_ns: a.estimate_error_ns,
            recorded: self.records.borrow().len() as u64,
            dropped: self.dropped.get(),
            complete,
            totals: Kind::ALL
                .iter()
                .map(|k| {
                    let t = totals[k.code as usize];
                    KindTotal {
                        kind: k.name.into(),
                        count: t.count,
                        ticks: t.ticks,
                        max_ticks: t.max_ticks,
                    }
                })
                .collect(),
            stats: serde_json::Value::Object(
                crate::stats::Stats::FIELDS
                    .iter()
                    .zip(stats.values())
                    .map(|(f, v)| (f.name.to_string(), v.into()))
                    .collect(),
            ),
        };
        Some(
            uat_trace::write_rank_file(dir, &header, &self.records.borrow())
                .map_err(|e| format!("cannot write this rank's trace into {}: {e}", dir.display())),
        )
    }

    /// The directory, if tracing.
    pub(crate) fn dir(&self) -> Option<&std::path::Path> {
        self.dir.as_deref()
    }

    /// Per kind (in `Kind::ALL`'s order): count, total ns, max ns, over
    /// every record so far.
    pub(crate) fn totals_words(&self) -> Vec<u64> {
        let hz = crate::tsc::hz();
        let ns = |ticks: u64| (ticks as f64 * 1e9 / hz) as u64;
        let totals = self.totals.borrow();
        Kind::ALL
            .iter()
            .flat_map(|k| {
                let t = totals[k.code as usize];
                [t.count, ns(t.ticks), ns(t.max_ticks)]
            })
            .collect()
    }
}

fn program_name() -> String {
    std::env::args()
        .next()
        .and_then(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_default()
}

/// A completion tag (a timeline trace): the completing rank plus one in
/// the high bits, the low [`uat_trace::PEER_TICK_BITS`] bits of its clock
/// (`now`) below.
pub(crate) fn completion_tag(rank: u32, now: u64) -> u64 {
    let bits = uat_trace::PEER_TICK_BITS;
    ((rank as u64 + 1) << bits) | (now & ((1 << bits) - 1))
}
