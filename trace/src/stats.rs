//! The statistics table: per kind, per rank (with its host) and over all
//! ranks, the count, total time, mean and max (from the headers' totals,
//! which count every record, kept or dropped), steal outcomes (from the
//! kept records), flows (and how many cross hosts) and the ranks of each
//! host; as text ([`stats_text`]) and JSON ([`stats_json`]).

use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use crate::load::{FlowKind, RankTrace, Timeline, Trace};
use crate::record::{Kind, Outcome, Shape};

/// One kind's statistics (durations in ns).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KindStats {
    /// Records.
    pub count: u64,
    /// Their total duration (intervals and steal flows; 0 otherwise).
    pub total_ns: f64,
    /// The longest.
    pub max_ns: f64,
}

impl KindStats {
    /// The mean duration, if any record was counted.
    pub fn mean_ns(&self) -> Option<f64> {
        (self.count > 0).then(|| self.total_ns / self.count as f64)
    }

    fn add(&mut self, other: &KindStats) {
        self.count += other.count;
        self.total_ns += other.total_ns;
        self.max_ns = self.max_ns.max(other.max_ns);
    }
}

/// Whether a kind has durations (intervals and steal flows).
fn timed(kind: Kind) -> bool {
    matches!(kind.info().shape, Shape::Interval | Shape::Flow)
}

/// Steal attempts by outcome, in [`Outcome::ALL`]'s order, then those with
/// an unknown outcome code.
pub type Outcomes = [u64; Outcome::ALL.len() + 1];

/// One rank's statistics.
#[derive(Clone, Debug)]
pub struct RankStats {
    /// The rank.
    pub rank: u32,
    /// Its host (from its file).
    pub host: u32,
    /// Per kind, in [`Kind::ALL`]'s order.
    pub kinds: Vec<KindStats>,
    /// Whether `kinds` came from the header's totals (else from the kept
    /// records: the header had none).
    pub from_totals: bool,
    /// Steal attempts by outcome, over the kept records.
    pub outcomes: Outcomes,
}

/// The statistics of a trace.
#[derive(Clone, Debug)]
pub struct Stats {
    /// Per rank with a file, ascending.
    pub ranks: Vec<RankStats>,
    /// Over all ranks, per kind in [`Kind::ALL`]'s order.
    pub kinds: Vec<KindStats>,
    /// Over all ranks.
    pub outcomes: Outcomes,
    /// Steal flows drawn (kept records).
    pub steal_flows: usize,
    /// Join flows drawn.
    pub join_flows: usize,
    /// Join flows whose child's rank left no file.
    pub unplaced_join_flows: u64,
    /// Steal flows drawn between ranks on different hosts (both with a
    /// file: a rank's host is known from its own file only).
    pub steal_flows_across_hosts: usize,
    /// Join flows drawn between ranks on different hosts.
    pub join_flows_across_hosts: usize,
    /// The sum of the ranks' `steals_succeeded` counters, if every rank
    /// with a file has one.
    pub steals_succeeded: Option<u64>,
    /// The sum of the ranks' `steals_across_hosts` counters (the steals
    /// whose victim was on another host), if every rank with a file has one.
    pub steals_across_hosts: Option<u64>,
    /// From the first event to the last, in ns.
    pub length_ns: f64,
    /// What a reader must know (dropped records, missing ranks, ...).
    pub notes: Vec<String>,
}

fn rank_kinds(r: &RankTrace) -> (Vec<KindStats>, bool) {
    let h = &r.header;
    let mut kinds = vec![KindStats::default(); Kind::ALL.len()];
    if h.totals.is_empty() {
        for rec in &r.records {
            let kind = rec.kind().expect("load checked every kind");
            let i = Kind::ALL.iter().position(|k| k.code == kind as u32).expect("declared");
            let ns = if timed(kind) {
                h.duration_ns(rec.end - rec.start)
            } else {
                0.0
            };
            kinds[i].add(&KindStats {
                count: 1,
                total_ns: ns,
                max_ns: ns,
            });
        }
        return (kinds, false);
    }
    for t in &h.totals {
        let i = Kind::ALL
            .iter()
            .position(|k| k.name == t.kind)
            .expect("load checked every name");
        kinds[i].add(&KindStats {
            count: t.count,
            total_ns: h.duration_ns(t.ticks),
            max_ns: h.duration_ns(t.max_ticks),
        });
    }
    (kinds, true)
}

fn outcome_index(value: u64) -> usize {
    Outcome::from_code(value).map_or(Outcome::ALL.len(), |o| o as usize)
}

/// Ascending ranks as runs: "rank 4", "ranks 0-3, 5, 8-9" (a host of a
/// large job holds many consecutive ranks).
fn rank_runs(ranks: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &r in ranks {
        match runs.last_mut() {
            Some((_, last)) if last.checked_add(1) == Some(r) => *last = r,
            _ => runs.push((r, r)),
        }
    }
    let list = runs
        .iter()
        .map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") })
        .collect::<Vec<_>>()
        .join(", ");
    if ranks.len() == 1 {
        format!("rank {list}")
    } else {
        format!("ranks {list}")
    }
}

impl Stats {
    /// The statistics of `trace`, with its flows from `timeline`.
    pub fn new(trace: &Trace, timeline: &Timeline) -> Stats {
        let mut notes = Vec::new();
        let mut kinds = vec![KindStats::default(); Kind::ALL.len()];
        let mut outcomes = Outcomes::default();
        let mut ranks = Vec::new();
        let mut succeeded = Some(0u64);
        let mut across_counted = Some(0u64);
        for r in &trace.ranks {
            let (rank_kinds, from_totals) = rank_kinds(r);
            if !from_totals {
                notes.push(format!(
                    "rank {}: no totals in its header; its counts are those of its {} kept records",
                    r.header.rank,
                    r.records.len()
                ));
            }
            for (all, k) in kinds.iter_mut().zip(&rank_kinds) {
                all.add(k);
            }
            let mut rank_outcomes = Outcomes::default();
            for rec in r.records.iter().filter(|rec| rec.kind == Kind::Steal as u32) {
                rank_outcomes[outcome_index(rec.value)] += 1;
            }
            for (all, n) in outcomes.iter_mut().zip(rank_outcomes) {
                *all += n;
            }
            succeeded = succeeded.and_then(|s| Some(s + r.header.stats.get("steals_succeeded")?.as_u64()?));
            across_counted =
                across_counted.and_then(|s| Some(s + r.header.stats.get("steals_across_hosts")?.as_u64()?));
            ranks.push(RankStats {
                rank: r.header.rank,
                host: r.header.host,
                kinds: rank_kinds,
                from_totals,
                outcomes: rank_outcomes,
            });
        }
        if !trace.missing.is_empty() {
            notes.push(format!(
                "no file from {} (the job failed before writing it?); the totals leave them out",
                rank_runs(&trace.missing)
            ));
        }
        let incomplete = trace.incomplete_ranks();
        if !incomplete.is_empty() {
            notes.push(format!(
                "partial traces (the job failed) from {}",
                rank_runs(&incomplete)
            ));
        }
        if trace.dropped() > 0 {
            let on: Vec<u32> = trace
                .ranks
                .iter()
                .filter(|r| r.header.dropped > 0)
                .map(|r| r.header.rank)
                .collect();
            notes.push(format!(
                "{} records dropped (buffer full) on {}: counts and times include them; \
                 the timelines, steal outcomes and flows do not",
                trace.dropped(),
                rank_runs(&on)
            ));
        }
        if timeline.unplaced_join_flows > 0 {
            notes.push(format!(
                "{} join flows not drawn: the rank where the child ended left no file",
                timeline.unplaced_join_flows
            ));
        }
        let steal_flows = timeline.flow_count(FlowKind::Steal);
        let across = |kind: FlowKind| {
            timeline
                .flows
                .iter()
                .filter(|f| f.kind == kind && trace.across_hosts(f.from_rank, f.to_rank) == Some(true))
                .count()
        };
        let flow_total = kinds[Kind::ALL
            .iter()
            .position(|k| k.code == Kind::StealFlow as u32)
            .expect("declared")]
        .count;
        if let Some(s) = succeeded {
            if s != flow_total {
                notes.push(format!(
                    "the runtime counted {s} steals_succeeded, the trace {flow_total} steal flows"
                ));
            }
        }
        let steal_flows_across_hosts = across(FlowKind::Steal);
        // Only a whole trace draws every steal flow between known hosts.
        if let (Some(n), true) = (across_counted, trace.complete() && trace.dropped() == 0) {
            if n != steal_flows_across_hosts as u64 {
                notes.push(format!(
                    "the runtime counted {n} steals_across_hosts, the trace {steal_flows_across_hosts} steal flows \
                     between hosts"
                ));
            }
        }
        Stats {
            ranks,
            kinds,
            outcomes,
            steal_flows,
            join_flows: timeline.flow_count(FlowKind::Join),
            unplaced_join_flows: timeline.unplaced_join_flows,
            steal_flows_across_hosts,
            join_flows_across_hosts: across(FlowKind::Join),
            steals_succeeded: succeeded,
            steals_across_hosts: across_counted,
            length_ns: timeline.length_ns,
            notes,
        }
    }

    /// One kind's statistics over all ranks.
    pub fn kind(&self, kind: Kind) -> KindStats {
        self.kinds[Kind::ALL.iter().position(|k| k.code == kind as u32).expect("declared")]
    }

    /// The table, for people.
    pub fn text(&self, trace: &Trace) -> String {
        let mut s = String::new();
        let files = trace.ranks.len();
        let _ = writeln!(
            s,
            "uat trace statistics: {}, {} ranks on {} hosts ({files} with a file); {} from the first event to \
             the last; clocks aligned within {}",
            trace.program(),
            trace.job_ranks(),
            trace.job_hosts(),
            human_ns(self.length_ns),
            human_ns(trace.clock_error_ns() as f64),
        );
        let recorded: u64 = trace.ranks.iter().map(|r| r.header.recorded).sum();
        let _ = writeln!(s, "records: {recorded} kept, {} dropped", trace.dropped());
        for n in &self.notes {
            let _ = writeln!(s, "NOTE: {n}");
        }
        let _ = writeln!(
            s,
            "\nHosts (GASNet neighbourhoods: the ranks that share memory; ranks with a file)"
        );
        for (host, ranks) in trace.ranks_by_host().iter().enumerate() {
            if ranks.is_empty() {
                let _ = writeln!(s, "host {host}: no rank with a file");
            } else {
                let _ = writeln!(s, "host {host}: {}", rank_runs(ranks));
            }
        }
        if !trace.missing.is_empty() {
            let _ = writeln!(s, "unknown (no file): {}", rank_runs(&trace.missing));
        }
        let used: Vec<usize> = (0..Kind::ALL.len()).filter(|&i| self.kinds[i].count > 0).collect();
        let share = |k: &KindStats, ranks: usize| {
            if self.length_ns > 0.0 && ranks > 0 {
                format!("{:.1}%", 100.0 * k.total_ns / (self.length_ns * ranks as f64))
            } else {
                "-".into()
            }
        };
        let row = |s: &mut String, label: &str, host: &str, i: usize, k: &KindStats, ranks: usize| {
            let kind = Kind::ALL[i];
            let timed = Kind::from_code(kind.code).is_some_and(timed);
            let (total, mean, max, pct) = if timed {
                (
                    human_ns(k.total_ns),
                    k.mean_ns().map_or("-".into(), human_ns),
                    human_ns(k.max_ns),
                    // A flow's time is a latency, not a state of the rank.
                    if kind.shape == Shape::Interval {
                        share(k, ranks)
                    } else {
                        "-".into()
                    },
                )
            } else {
                ("-".into(), "-".into(), "-".into(), "-".into())
            };
            let _ = writeln!(
                s,
                "{:<12} {:>6} {:>5} {:>12} {:>11} {:>11} {:>11} {:>7}",
                kind.name, label, host, k.count, total, mean, max, pct
            );
        };
        let header = |s: &mut String| {
            let _ = writeln!(
                s,
                "{:<12} {:>6} {:>5} {:>12} {:>11} {:>11} {:>11} {:>7}",
                "kind", "rank", "host", "count", "total", "mean", "max", "time"
            );
        };
        let _ = writeln!(s, "\nAll ranks (time: share of ranks × run; nested kinds overlap: poll, fetch and write_back lie inside tasks, suspended beside them)");
        header(&mut s);
        for &i in &used {
            row(&mut s, "all", "-", i, &self.kinds[i], files);
        }
        let _ = writeln!(
            s,
            "\nPer rank (time: share of the run; ranks without such records left out)"
        );
        header(&mut s);
        for &i in &used {
            for r in self.ranks.iter().filter(|r| r.kinds[i].count > 0) {
                row(&mut s, &r.rank.to_string(), &r.host.to_string(), i, &r.kinds[i], 1);
            }
        }
        let _ = writeln!(s, "\nSteal outcomes (kept records)");
        let _ = write!(s, "{:>6} {:>5}", "rank", "host");
        for (_, name) in Outcome::ALL {
            let _ = write!(s, " {name:>12}");
        }
        let _ = writeln!(s, " {:>12}", "unknown");
        let outcome_row = |s: &mut String, label: &str, host: &str, o: &Outcomes| {
            let _ = write!(s, "{label:>6} {host:>5}");
            for n in o {
                let _ = write!(s, " {n:>12}");
            }
            let _ = writeln!(s);
        };
        for r in &self.ranks {
            outcome_row(&mut s, &r.rank.to_string(), &r.host.to_string(), &r.outcomes);
        }
        outcome_row(&mut s, "all", "-", &self.outcomes);
        let _ = writeln!(s, "\nFlows");
        let total = self.kind(Kind::StealFlow).count;
        let runtime = self.steals_succeeded.map_or("no steals_succeeded counter".into(), |n| {
            format!("{n} steals_succeeded counted by the runtime")
        });
        let _ = writeln!(
            s,
            "steal flows: {total} recorded, {} drawn; {runtime}",
            self.steal_flows
        );
        let _ = writeln!(
            s,
            "join flows:  {} drawn, {} not (their child's rank left no file)",
            self.join_flows, self.unplaced_join_flows
        );
        let runtime = self
            .steals_across_hosts
            .map_or("no steals_across_hosts counter".into(), |n| {
                format!("{n} steals_across_hosts counted by the runtime")
            });
        let _ = writeln!(
            s,
            "across hosts (drawn, between ranks with a file): {} steal flows, {} join flows; {runtime}",
            self.steal_flows_across_hosts, self.join_flows_across_hosts
        );
        s
    }

    /// The same as JSON: every kind (zero counts too), durations in ns.
    pub fn json(&self, trace: &Trace) -> Value {
        let kinds = |k: &[KindStats]| -> Value {
            let mut m = Map::new();
            for (info, k) in Kind::ALL.iter().zip(k) {
                let v = if Kind::from_code(info.code).is_some_and(timed) {
                    json!({"count": k.count, "total_ns": k.total_ns, "mean_ns": k.mean_ns(), "max_ns": k.max_ns})
                } else {
                    json!({"count": k.count})
                };
                m.insert(info.name.into(), v);
            }
            Value::Object(m)
        };
        let outcomes = |o: &Outcomes| -> Value {
            let mut m: Map<String, Value> = Outcome::ALL
                .iter()
                .zip(o)
                .map(|(&(_, n), c)| (n.to_string(), json!(c)))
                .collect();
            m.insert("unknown".into(), json!(o[Outcome::ALL.len()]));
            Value::Object(m)
        };
        let per_rank: Vec<Value> = self
            .ranks
            .iter()
            .zip(&trace.ranks)
            .map(|(s, r)| {
                json!({
                    "rank": s.rank,
                    "host": s.host,
                    "recorded": r.header.recorded,
                    "dropped": r.header.dropped,
                    "complete": r.header.complete,
                    "clock_error_ns": r.header.clock_error_ns,
                    "from_totals": s.from_totals,
                    "kinds": kinds(&s.kinds),
                    "steal_outcomes": outcomes(&s.outcomes),
                    "stats": r.header.stats,
                })
            })
            .collect();
        json!({
            "program": trace.program(),
            "ranks": trace.job_ranks(),
            "hosts": trace.job_hosts(),
            "ranks_by_host": trace.ranks_by_host(),
            "files": trace.ranks.iter().map(|r| r.header.rank).collect::<Vec<_>>(),
            "missing_ranks": trace.missing,
            "incomplete_ranks": trace.incomplete_ranks(),
            "complete": trace.complete(),
            "clock_error_ns": trace.clock_error_ns(),
            "length_ns": self.length_ns,
            "recorded": trace.ranks.iter().map(|r| r.header.recorded).sum::<u64>(),
            "dropped": trace.dropped(),
            "kinds": kinds(&self.kinds),
            "steal_outcomes": outcomes(&self.outcomes),
            "flows": {
                "steal_recorded": self.kind(Kind::StealFlow).count,
                "steal_drawn": self.steal_flows,
                "steals_succeeded": self.steals_succeeded,
                "join_drawn": self.join_flows,
                "join_unplaced": self.unplaced_join_flows,
                "steal_drawn_across_hosts": self.steal_flows_across_hosts,
                "steals_across_hosts": self.steals_across_hosts,
                "join_drawn_across_hosts": self.join_flows_across_hosts,
            },
            "per_rank": per_rank,
            "notes": self.notes,
        })
    }
}

/// The statistics table of a trace, for people.
pub fn stats_text(trace: &Trace) -> String {
    Stats::new(trace, &trace.timeline()).text(trace)
}

/// The statistics of a trace as JSON.
pub fn stats_json(trace: &Trace) -> Value {
    Stats::new(trace, &trace.timeline()).json(trace)
}

/// A duration with three significant digits in ns, µs, ms or s.
pub fn human_ns(ns: f64) -> String {
    let (v, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    if unit == "ns" || v >= 100.0 {
        format!("{v:.0} {unit}")
    } else if v >= 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_read_as_runs() {
        assert_eq!(rank_runs(&[4]), "rank 4");
        assert_eq!(rank_runs(&[0, 1, 2, 3, 5, 8, 9]), "ranks 0-3, 5, 8-9");
        assert_eq!(rank_runs(&[2, 4]), "ranks 2, 4");
        assert_eq!(
            rank_runs(&[u32::MAX - 1, u32::MAX]),
            format!("ranks {}-{}", u32::MAX - 1, u32::MAX)
        );
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(human_ns(0.0), "0 ns");
        assert_eq!(human_ns(999.4), "999 ns");
        assert_eq!(human_ns(1234.0), "1.23 µs");
        assert_eq!(human_ns(12_345.0), "12.3 µs");
        assert_eq!(human_ns(123_456_789.0), "123 ms");
        assert_eq!(human_ns(4.5e9), "4.50 s");
    }
}
