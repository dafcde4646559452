//! Per-rank counters of the scheduler, summed over ranks at the end of a run.
//!
//! Every field is declared once, in the `stats!` invocation below, with how
//! it combines across ranks (`sum` or `max`) and its unit (`count`, `bytes`
//! or `cycles`). The struct, the reset, the sum over ranks, the field names
//! and the JSON of the benchmarks all come from that one list, so a new
//! counter cannot be forgotten by one of them.
//!
//! The live counters ([`Counters`]) are touched only by the worker thread of
//! their rank (AM handlers that run on a polling thread keep their own
//! atomics), and are reset as a whole at the start of every run.

use std::cell::UnsafeCell;

/// How a field is combined over ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// Added up.
    Sum,
    /// The largest.
    Max,
}

/// What a field counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Events.
    Count,
    /// Bytes.
    Bytes,
    /// TSC cycles (reported in seconds: the JSON name ends in `_s`, not
    /// `_cycles`).
    Cycles,
    /// Nanoseconds (reported in seconds: `_s`, not `_ns`).
    Nanos,
}

/// One field of [`Stats`]: its name, how it combines, its unit.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// The field's name in [`Stats`].
    pub name: &'static str,
    /// How it combines over ranks.
    pub combine: Combine,
    /// What it counts.
    pub unit: Unit,
}

impl Field {
    /// The key in the benchmarks' JSON `stats` object: the name, with
    /// `_cycles` turned into `_s` (the value is then in seconds).
    pub fn json_name(&self) -> std::borrow::Cow<'static, str> {
        let stem = match self.unit {
            Unit::Cycles => self.name.strip_suffix("_cycles"),
            Unit::Nanos => self.name.strip_suffix("_ns"),
            _ => None,
        };
        match stem {
            Some(stem) => format!("{stem}_s").into(),
            None => self.name.into(),
        }
    }
}

macro_rules! stats {
    ($( $(#[doc = $doc:literal])* $name:ident : $combine:ident $unit:ident, )*) => {
        /// Counters of one run (per rank, or combined over all ranks).
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct Stats {
            $( $(#[doc = $doc])* pub $name: u64, )*
        }

        impl Stats {
            /// Every field, in declaration order.
            pub const FIELDS: &'static [Field] = &[
                $( Field { name: stringify!($name), combine: Combine::$combine, unit: Unit::$unit }, )*
            ];

            /// The values, in the order of [`Stats::FIELDS`].
            pub fn values(&self) -> Vec<u64> {
                vec![$( self.$name, )*]
            }

            /// The inverse of [`Stats::values`]. Panics on a wrong length.
            pub fn from_values(values: &[u64]) -> Stats {
                assert_eq!(values.len(), Stats::FIELDS.len(), "a Stats needs one value per field");
                let mut it = values.iter().copied();
                Stats { $( $name: it.next().unwrap_or(0), )* }
            }

            /// Combines `other` into self, field by field (sum or max).
            pub fn accumulate(&mut self, other: &Stats) {
                $( self.$name = combine(Combine::$combine, self.$name, other.$name); )*
            }
        }
    };
}

impl Stats {
    /// Means derived from a total and a count, as (name, total, count):
    /// the JSON gives each as `<name>_s` in seconds (null without events).
    pub fn means(&self) -> [(&'static str, u64, u64); 2] {
        [
            (
                "steal_within_host_mean",
                self.steal_within_host_cycles,
                self.steals_within_host,
            ),
            (
                "steal_across_hosts_mean",
                self.steal_across_hosts_cycles,
                self.steals_across_hosts,
            ),
        ]
    }
}

fn combine(how: Combine, a: u64, b: u64) -> u64 {
    match how {
        Combine::Sum => a.wrapping_add(b),
        Combine::Max => a.max(b),
    }
}

stats! {
    /// Tasks spawned.
    spawns: Sum Count,
    /// Join handles joined (or dropped, which joins). Over a whole run this
    /// equals `spawns`: every task is joined before the root returns.
    joins: Sum Count,
    /// Steal attempts (one per victim probed).
    steals_attempted: Sum Count,
    /// Continuations stolen.
    steals_succeeded: Sum Count,
    /// Of the attempts, those whose victim was on another host (another
    /// GASNet neighbourhood: [`gasnet_sys::Hosts`]).
    steal_attempts_across_hosts: Sum Count,
    /// Of the continuations stolen, those from a rank of the thief's host.
    steals_within_host: Sum Count,
    /// Of the continuations stolen, those from a rank of another host.
    steals_across_hosts: Sum Count,
    /// Time of the successful steals within a host, from the claim's start
    /// to the release (the mean latency: this over `steals_within_host`).
    steal_within_host_cycles: Sum Cycles,
    /// The same for the steals across hosts.
    steal_across_hosts_cycles: Sum Cycles,
    /// Attempts that stopped at the empty check (victim had nothing).
    empty_check_aborts: Sum Count,
    /// Attempts that could not claim an entry: the victim's lock was taken
    /// (paper protocol) or its fetch-and-add found nothing shared (split).
    claim_failures: Sum Count,
    /// Entries this rank exposed to thieves at their request (split
    /// protocol).
    exposures: Sum Count,
    /// Remote round trips of the successful steals (blocking RMA, atomics,
    /// request-reply AMs), counted by the gasnet-sys wrappers.
    steal_round_trips: Sum Count,
    /// Bytes of stack frames copied by steals.
    frame_bytes_stolen: Sum Bytes,
    /// Largest distance from the stack region's top to a saved context.
    max_stack_bytes: Max Bytes,
    /// Threads suspended in a join (frames copied out).
    suspensions: Sum Count,
    /// Suspended threads resumed (frames copied back).
    resumes: Sum Count,
    /// Time spent handling Active Messages (fetch-and-add requests).
    msg_handling_cycles: Sum Cycles,
    /// Steal phases, summed over successful steals: the empty check; the
    /// claim (split: one fetch-and-add; paper: lock, read head/tail,
    /// advance head, re-read tail); reading the entry; the frame transfer;
    /// the release (split: a non-blocking put; paper: the unlock).
    steal_empty_check_cycles: Sum Cycles,
    /// The claim phase of successful steals.
    steal_claim_cycles: Sum Cycles,
    /// Reading the claimed entry.
    steal_entry_cycles: Sum Cycles,
    /// Copying the frames.
    steal_transfer_cycles: Sum Cycles,
    /// The release.
    steal_release_cycles: Sum Cycles,
    /// Copying joiners' frames out (suspend) and back (resume).
    suspend_cycles: Sum Cycles,
    /// Copying resumed threads' frames back.
    resume_cycles: Sum Cycles,
    /// Lifelines: times this rank went quiescent (slept for lack of work).
    quiescences: Sum Count,
    /// Quiescences ended by another rank waking this one for work.
    wakeups: Sum Count,
    /// Ranks this rank woke through its incoming lifelines.
    lifeline_wakes: Sum Count,
    /// Time spent quiescent.
    quiescent_cycles: Sum Cycles,
    /// Requests this rank sent asking another to poll without sleeping for
    /// a while (`KEEP_POLLING`): its gets, puts or atomics on that rank's
    /// memory had waited for the rank's polls.
    keep_polling_asked: Sum Count,
    /// Time this rank spent asleep on its lifelines polling without
    /// sleeping, because others asked it to (`KEEP_POLLING`).
    kept_polling_cycles: Sum Cycles,
    /// Steal attempts not made because the victim slept (a load told).
    steal_attempts_saved: Sum Count,
    /// Steal attempts whose victim did not answer within the thief's
    /// patience spin (lifelines on; [`crate::lifeline::THIEF_PATIENCE`]):
    /// the thief slept between polls until it did.
    unanswered_steal_waits: Sum Count,
    /// Time those attempts spent asleep waiting for the answer.
    unanswered_steal_wait_ns: Sum Nanos,
    /// Longest time from a waker's wake-up to the woken rank's leaving its
    /// sleep (waker on the same host).
    wake_latency_max_cycles: Max Cycles,
    /// CPU time of the worker thread during the run (the `rdma-emulated`
    /// poller thread not included).
    worker_cpu_ns: Sum Nanos,
    /// CPU time of the whole process during the run: the worker, the
    /// `rdma-emulated` poller and GASNet's own threads.
    process_cpu_ns: Sum Nanos,
    /// Global memory (`uat::global`): cache blocks a checkout found valid
    /// (network only; 0 where every rank's memory is mapped).
    cache_hits: Sum Count,
    /// Cache blocks a checkout had to fetch (with `UAT_CACHE=off`: every
    /// checkout's gets).
    cache_misses: Sum Count,
    /// Bytes of global memory fetched from other processes' segments.
    global_fetched_bytes: Sum Bytes,
    /// Bytes of global memory written to other processes' segments (cache
    /// write-backs, or with `UAT_CACHE=off` every write checkout).
    global_written_bytes: Sum Bytes,
    /// Work/span (`UAT_WORKSPAN`): strands run (the work in strands: 1 + 3
    /// per spawn over a run).
    work_strands: Sum Count,
    /// The work in time: the strands' total length.
    work_cycles: Sum Cycles,
    /// The span in strands: the longest path of strands through the run.
    span_strands: Max Count,
    /// The span in time: the longest path's length.
    span_cycles: Max Cycles,
    /// Spawns along the span in time (the burdened span adds a steal's
    /// cost for each).
    span_spawns: Max Count,
}

/// The live counters of this rank: a [`Stats`] updated in place by the
/// worker thread only.
#[derive(Default)]
pub(crate) struct Counters(UnsafeCell<Stats>);

impl Counters {
    /// Updates the counters.
    #[inline(always)]
    pub(crate) fn update(&self, f: impl FnOnce(&mut Stats)) {
        // SAFETY: only the worker thread touches its counters (module docs),
        // and no closure passed here reaches a Counters (every caller, in
        // this crate only, passes a closure that updates the Stats fields
        // it is given), so the `&mut Stats` is the only reference.
        f(unsafe { &mut *self.0.get() })
    }

    /// A copy of the counters.
    pub(crate) fn snapshot(&self) -> Stats {
        // SAFETY: as in update; a plain copy.
        unsafe { *self.0.get() }
    }

    /// Zeroes every counter (the start of a run).
    pub(crate) fn reset(&self) {
        self.update(|s| *s = Stats::default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulate_sums_counts_and_keeps_the_maximum_stack() {
        let mut a = Stats {
            spawns: 3,
            max_stack_bytes: 100,
            ..Stats::default()
        };
        a.accumulate(&Stats {
            spawns: 4,
            max_stack_bytes: 50,
            steals_succeeded: 2,
            ..Stats::default()
        });
        assert_eq!((a.spawns, a.max_stack_bytes, a.steals_succeeded), (7, 100, 2));
    }

    #[test]
    fn values_round_trip_and_name_every_field_once() {
        let s = Stats::from_values(&(1..=Stats::FIELDS.len() as u64).collect::<Vec<_>>());
        assert_eq!(Stats::from_values(&s.values()), s);
        let mut names: Vec<_> = Stats::FIELDS.iter().map(|f| f.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Stats::FIELDS.len());
        assert_eq!(std::mem::size_of::<Stats>(), 8 * Stats::FIELDS.len());
    }

    #[test]
    fn reset_zeroes_every_field() {
        let c = Counters::default();
        c.update(|s| *s = Stats::from_values(&vec![7; Stats::FIELDS.len()]));
        c.reset();
        assert_eq!(c.snapshot(), Stats::default());
    }

    #[test]
    fn cycle_fields_are_reported_in_seconds() {
        let f = Stats::FIELDS.iter().find(|f| f.name == "msg_handling_cycles").unwrap();
        assert_eq!(f.json_name(), "msg_handling_s");
        let f = Stats::FIELDS.iter().find(|f| f.name == "spawns").unwrap();
        assert_eq!(f.json_name(), "spawns");
        let f = Stats::FIELDS.iter().find(|f| f.name == "worker_cpu_ns").unwrap();
        assert_eq!(f.json_name(), "worker_cpu_s");
    }
}

/// Work, span and parallelism of a run (`UAT_WORKSPAN=on`), from its
/// counters summed over ranks ([`Stats::workspan`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorkSpan {
    /// Strands run (1 + 3 per spawn).
    pub work_strands: u64,
    /// The longest path of strands.
    pub span_strands: u64,
    /// Seconds of all strands.
    pub work_s: f64,
    /// Seconds along the longest path.
    pub span_s: f64,
    /// `work_s / span_s`: the speed-up no number of ranks can beat.
    pub parallelism: f64,
    /// The run's mean cost of a successful steal (its phases), charged per
    /// spawn along the span; None without steals.
    pub steal_s: Option<f64>,
    /// `span_s` plus `steal_s` per spawn along it.
    pub burdened_span_s: Option<f64>,
    /// `work_s / burdened_span_s`.
    pub burdened_parallelism: Option<f64>,
}

impl Stats {
    /// The run's work and span, when they were measured.
    pub fn workspan(&self) -> Option<WorkSpan> {
        if self.span_strands == 0 {
            return None;
        }
        let hz = crate::tsc::hz();
        let (work_s, span_s) = (self.work_cycles as f64 / hz, self.span_cycles as f64 / hz);
        let steal_cycles = self.steal_empty_check_cycles
            + self.steal_claim_cycles
            + self.steal_entry_cycles
            + self.steal_transfer_cycles
            + self.steal_release_cycles;
        let steal_s = (self.steals_succeeded > 0).then(|| steal_cycles as f64 / hz / self.steals_succeeded as f64);
        let burdened_span_s = steal_s.map(|c| span_s + c * self.span_spawns as f64);
        Some(WorkSpan {
            work_strands: self.work_strands,
            span_strands: self.span_strands,
            work_s,
            span_s,
            parallelism: work_s / span_s.max(1e-12),
            steal_s,
            burdened_span_s,
            burdened_parallelism: burdened_span_s.map(|b| work_s / b.max(1e-12)),
        })
    }
}

/// One kind of trace record over all ranks (`UAT_TRACE`;
/// [`Runtime::trace_totals`](crate::Runtime::trace_totals)): the
/// statistics of the job so far.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceTotal {
    /// The kind's name (`task`, `steal`, ...: `docs/design/trace.md`).
    pub kind: &'static str,
    /// Records of that kind, dropped ones included.
    pub count: u64,
    /// Their total duration, in seconds (intervals and steal flows).
    pub total_s: f64,
    /// The longest, in seconds.
    pub max_s: f64,
}
