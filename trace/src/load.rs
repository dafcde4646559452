//! A trace directory read back: every rank's file ([`load`]), checked, and
//! its records placed on the job's clock with their flows paired
//! ([`Trace::timeline`]), which is what every output is made from.

use std::path::{Path, PathBuf};

use crate::file::{read_rank_file, RankHeader};
use crate::record::{peer_ticks, Kind, Record, Shape};

/// A count every rank file of a job must agree on, read from its header.
type HeaderCount = fn(&RankHeader) -> u32;

/// One rank's file: its header and its records, as read.
#[derive(Clone, Debug)]
pub struct RankTrace {
    /// The file it was read from.
    pub path: PathBuf,
    /// Its header.
    pub header: RankHeader,
    /// Its records, in the file's order.
    pub records: Vec<Record>,
}

/// A job's trace: the ranks that left a file, and those that did not.
#[derive(Clone, Debug)]
pub struct Trace {
    /// One per file, sorted by rank.
    pub ranks: Vec<RankTrace>,
    /// The ranks of the job (`header.ranks`) without a file (a failed job
    /// may leave a partial set), ascending.
    pub missing: Vec<u32>,
}

/// Reads every `rank-<R>.uatrace` in `dir` and checks it: the name's rank
/// is the header's, every header counts the same ranks and the same hosts,
/// the rank's host is one of them (and there are no more hosts than
/// ranks: each holds one at least), the clock rate is
/// positive, the header's `recorded` is the number of records, every record
/// has a known kind, `end ≥ start` and a peer among the ranks, and every
/// per-kind total names a kind. Errors name the file.
pub fn load(dir: &Path) -> Result<Trace, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut ranks = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if !(name.starts_with("rank-") && name.ends_with(".uatrace")) {
            continue;
        }
        let rank: u32 = name["rank-".len()..name.len() - ".uatrace".len()]
            .parse()
            .map_err(|_| format!("{}: not a rank's file name (rank-<R>.uatrace)", path.display()))?;
        let (header, records) = read_rank_file(&path)?;
        check_rank(&path, rank, &header, &records)?;
        ranks.push(RankTrace { path, header, records });
    }
    if ranks.is_empty() {
        return Err(format!(
            "{}: no rank-<R>.uatrace files (was the job traced?)",
            dir.display()
        ));
    }
    ranks.sort_by_key(|r| r.header.rank);
    let first = &ranks[0];
    // Every file of one job counts the same ranks and hosts.
    let counts: [(&str, HeaderCount); 2] = [("ranks", |h| h.ranks), ("hosts", |h| h.hosts)];
    for r in &ranks[1..] {
        for (what, count) in counts {
            if count(&r.header) != count(&first.header) {
                return Err(format!(
                    "{}: the header counts {} {what}, but {} counts {}",
                    r.path.display(),
                    count(&r.header),
                    first.path.display(),
                    count(&first.header)
                ));
            }
        }
    }
    let mut present = ranks.iter().map(|r| r.header.rank).peekable();
    let missing = (0..first.header.ranks)
        .filter(|&r| {
            if present.peek() == Some(&r) {
                present.next();
                false
            } else {
                true
            }
        })
        .collect();
    Ok(Trace { ranks, missing })
}

fn check_rank(path: &Path, rank: u32, h: &RankHeader, records: &[Record]) -> Result<(), String> {
    let bad = |what: String| Err(format!("{}: {what}", path.display()));
    if h.rank != rank {
        return bad(format!("the header says rank {}, the file's name rank {rank}", h.rank));
    }
    if h.rank >= h.ranks {
        return bad(format!("rank {} of {} ranks", h.rank, h.ranks));
    }
    if h.hosts == 0 || h.hosts > h.ranks {
        return bad(format!(
            "{} hosts for {} ranks (each host holds a rank at least)",
            h.hosts, h.ranks
        ));
    }
    if h.host >= h.hosts {
        return bad(format!("host {} of {} hosts", h.host, h.hosts));
    }
    if !(h.ticks_per_s.is_finite() && h.ticks_per_s > 0.0) {
        return bad(format!("ticks_per_s {} is not a positive rate", h.ticks_per_s));
    }
    if h.recorded != records.len() as u64 {
        return bad(format!(
            "the header says {} records kept, the file holds {} (truncated?)",
            h.recorded,
            records.len()
        ));
    }
    for (i, r) in records.iter().enumerate() {
        let Some(kind) = r.kind() else {
            return bad(format!("record {i}: unknown kind code {}", r.kind));
        };
        // A peer flow's start is on its peer's clock.
        if r.end < r.start && kind.info().shape != Shape::PeerFlow {
            return bad(format!(
                "record {i} ({}): ends at {} before its start {}",
                kind.info().name,
                r.end,
                r.start
            ));
        }
        if r.peer >= h.ranks {
            return bad(format!(
                "record {i} ({}): peer {} of {} ranks",
                kind.info().name,
                r.peer,
                h.ranks
            ));
        }
    }
    for t in &h.totals {
        if !Kind::ALL.iter().any(|k| k.name == t.kind) {
            return bad(format!("totals: unknown kind {:?}", t.kind));
        }
    }
    Ok(())
}

/// One record on the job's clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Event {
    /// Its kind.
    pub kind: Kind,
    /// The rank that recorded it.
    pub rank: u32,
    /// The record's `peer`.
    pub peer: u32,
    /// Its start, in ns after the [`Timeline`]'s zero.
    pub start_ns: f64,
    /// Its end, likewise (equal to `start_ns` for instants).
    pub end_ns: f64,
    /// The record's `value`.
    pub value: u64,
}

/// What a [`Flow`] shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowKind {
    /// A continuation stolen: from its claim on the victim to its resumption
    /// on the thief ([`Kind::StealFlow`]).
    Steal,
    /// A child's end on one rank to the join that took its result on
    /// another ([`Kind::JoinFlow`]).
    Join,
}

impl FlowKind {
    /// Its name in every output.
    pub fn name(self) -> &'static str {
        match self {
            FlowKind::Steal => "steal",
            FlowKind::Join => "join",
        }
    }
}

/// An arrow from one rank's track to another's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flow {
    /// What it shows.
    pub kind: FlowKind,
    /// Where it starts (the victim; the rank where the child finished).
    pub from_rank: u32,
    /// When, in ns after the [`Timeline`]'s zero.
    pub from_ns: f64,
    /// Where it ends (the thief; the rank where the parent resumes).
    pub to_rank: u32,
    /// When, likewise.
    pub to_ns: f64,
    /// The steal record's `value`; the join's cell address.
    pub value: u64,
}

/// One rank's events.
#[derive(Clone, Debug)]
pub struct RankEvents {
    /// The rank.
    pub rank: u32,
    /// Its records on the job's clock, in the file's order.
    pub events: Vec<Event>,
}

/// A trace on the job's clock: every kept record and every flow, with times
/// in ns after the earliest event.
#[derive(Clone, Debug)]
pub struct Timeline {
    /// The job's clock (rank 0's, in ns) at time zero, rounded.
    pub zero_ns: u64,
    /// The last moment of any event, in ns after zero.
    pub length_ns: f64,
    /// Per rank with a file, ascending.
    pub ranks: Vec<RankEvents>,
    /// Every steal flow and every placed join flow, in the order of the
    /// records that make them.
    pub flows: Vec<Flow>,
    /// [`Kind::JoinFlow`] records whose child's rank left no file (their
    /// tail's time cannot be placed).
    pub unplaced_join_flows: u64,
}

impl Timeline {
    /// The number of flows of one kind.
    pub fn flow_count(&self, kind: FlowKind) -> usize {
        self.flows.iter().filter(|f| f.kind == kind).count()
    }
}

impl Trace {
    /// The job's number of ranks.
    pub fn job_ranks(&self) -> u32 {
        self.ranks[0].header.ranks
    }

    /// The job's number of hosts (GASNet neighbourhoods: the ranks that
    /// share memory).
    pub fn job_hosts(&self) -> u32 {
        self.ranks[0].header.hosts
    }

    /// `rank`'s host, if it left a file (a rank's file names only its own).
    pub fn host_of(&self, rank: u32) -> Option<u32> {
        self.rank(rank).map(|r| r.header.host)
    }

    /// Per host of the job (`0..job_hosts()`), its ranks that left a file,
    /// ascending; a host whose ranks all left none has an empty list.
    pub fn ranks_by_host(&self) -> Vec<Vec<u32>> {
        let mut by_host = vec![Vec::new(); self.job_hosts() as usize];
        for r in &self.ranks {
            // load checked host < hosts, the same in every file.
            by_host[r.header.host as usize].push(r.header.rank);
        }
        by_host
    }

    /// Whether a flow from `from` to `to` crosses hosts: `None` when either
    /// rank left no file (its host is unknown).
    pub fn across_hosts(&self, from: u32, to: u32) -> Option<bool> {
        Some(self.host_of(from)? != self.host_of(to)?)
    }

    /// The program's name (rank 0's header, else the first file's).
    pub fn program(&self) -> &str {
        &self.ranks[0].header.program
    }

    /// The largest bound on a rank's clock alignment error, in ns.
    pub fn clock_error_ns(&self) -> u64 {
        self.ranks.iter().map(|r| r.header.clock_error_ns).max().unwrap_or(0)
    }

    /// Records lost to full buffers, over every rank.
    pub fn dropped(&self) -> u64 {
        self.ranks.iter().map(|r| r.header.dropped).sum()
    }

    /// Whether every rank left a file and ended normally.
    pub fn complete(&self) -> bool {
        self.missing.is_empty() && self.ranks.iter().all(|r| r.header.complete)
    }

    /// The ranks whose files say the job failed (`complete: false`).
    pub fn incomplete_ranks(&self) -> Vec<u32> {
        self.ranks
            .iter()
            .filter(|r| !r.header.complete)
            .map(|r| r.header.rank)
            .collect()
    }

    /// The file of a rank, if it left one.
    pub fn rank(&self, rank: u32) -> Option<&RankTrace> {
        self.ranks
            .binary_search_by_key(&rank, |r| r.header.rank)
            .ok()
            .map(|i| &self.ranks[i])
    }

    /// Every record on the job's clock (its ticks through its rank's
    /// [`RankHeader::ns_after`]), relative to the earliest, with the flows:
    /// a [`Kind::StealFlow`] on the thief from the victim's track at `start`
    /// to its own at `end` (both times on the thief's clock); a
    /// [`Kind::JoinFlow`] from the child's rank (`peer`) at its `start` —
    /// the low bits of the peer's clock, restored with [`peer_ticks`] near
    /// the moment of `end` and placed through the peer's header — to this
    /// rank at `end`. Join flows whose peer left no file are counted.
    pub fn timeline(&self) -> Timeline {
        let base = self.ranks.iter().map(|r| r.header.origin_ns).min().unwrap_or(0);
        let mut ranks: Vec<RankEvents> = self
            .ranks
            .iter()
            .map(|r| RankEvents {
                rank: r.header.rank,
                events: r
                    .records
                    .iter()
                    .map(|rec| {
                        let kind = rec.kind().expect("load checked every kind");
                        let end_ns = r.header.ns_after(rec.end, base);
                        let start_ns = if kind.info().shape == Shape::PeerFlow {
                            // NaN where the peer left no file: not placed.
                            self.rank(rec.peer).map_or(f64::NAN, |p| {
                                let near = p.header.ticks_at(end_ns, base);
                                p.header.ns_after(peer_ticks(rec.start, near), base)
                            })
                        } else {
                            r.header.ns_after(rec.start, base)
                        };
                        Event {
                            kind,
                            rank: r.header.rank,
                            peer: rec.peer,
                            start_ns,
                            end_ns,
                            value: rec.value,
                        }
                    })
                    .collect(),
            })
            .collect();
        let first = ranks
            .iter()
            .flat_map(|r| r.events.iter().map(|e| e.start_ns))
            .filter(|t| t.is_finite())
            .fold(f64::INFINITY, f64::min);
        let first = if first.is_finite() { first } else { 0.0 };
        let mut last: f64 = 0.0;
        for r in &mut ranks {
            for e in &mut r.events {
                e.start_ns -= first;
                e.end_ns -= first;
                last = last.max(e.end_ns);
            }
        }
        let zero_ns = (base as f64 + first).round().max(0.0) as u64;
        let (flows, unplaced_join_flows) = flows(&ranks);
        Timeline {
            zero_ns,
            length_ns: last,
            ranks,
            flows,
            unplaced_join_flows,
        }
    }
}

/// The flows of the records, and how many join flows could not be placed.
fn flows(ranks: &[RankEvents]) -> (Vec<Flow>, u64) {
    let mut flows = Vec::new();
    let mut unplaced = 0;
    for e in ranks.iter().flat_map(|r| &r.events) {
        let kind = match e.kind.info().shape {
            Shape::Flow => FlowKind::Steal,
            Shape::PeerFlow if e.start_ns.is_finite() => FlowKind::Join,
            Shape::PeerFlow => {
                unplaced += 1;
                continue;
            }
            Shape::Interval | Shape::Instant => continue,
        };
        flows.push(Flow {
            kind,
            from_rank: e.peer,
            from_ns: e.start_ns,
            to_rank: e.rank,
            to_ns: e.end_ns,
            value: e.value,
        });
    }
    (flows, unplaced)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::{write_rank_file, RankHeader};

    fn header(rank: u32, ranks: u32, origin_ns: u64) -> RankHeader {
        RankHeader {
            rank,
            ranks,
            program: "t".into(),
            ticks_per_s: 1e9,
            origin_ticks: 0,
            origin_ns,
            complete: true,
            ..RankHeader::default()
        }
    }

    fn rec(kind: Kind, peer: u32, start: u64, end: u64, value: u64) -> Record {
        Record {
            kind: kind as u32,
            peer,
            start,
            end,
            value,
        }
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("uat-trace-load-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn write(dir: &Path, mut h: RankHeader, records: &[Record]) {
        h.recorded = records.len() as u64;
        write_rank_file(dir, &h, records).unwrap();
    }

    #[test]
    fn join_flows_start_on_their_peers_clock_and_steal_flows_on_the_thiefs() {
        let d = dir("joins");
        // Rank 1's clock is 1000 ns ahead of its ticks; its ticks are far
        // past 2^48, so a join flow's tail keeps only their low bits.
        let high = 5u64 << crate::record::PEER_TICK_BITS;
        let mut h1 = header(1, 3, 1000);
        h1.origin_ticks = high;
        let low = |t: u64| t & ((1 << crate::record::PEER_TICK_BITS) - 1);
        write(
            &d,
            header(0, 3, 0),
            &[
                // Child ended on rank 1 at its tick high + 300 (1300 ns on
                // the job clock), joined here at 1500 ns.
                rec(Kind::JoinFlow, 1, low(high + 300), 1500, 0xc0),
                // Its peer, rank 2, left no file.
                rec(Kind::JoinFlow, 2, 7, 3000, 0xd0),
            ],
        );
        write(&d, h1, &[rec(Kind::StealFlow, 0, high + 10, high + 20, 0)]);
        let trace = load(&d).unwrap();
        assert_eq!(trace.missing, vec![2]);
        let t = trace.timeline();
        // The earliest event: the steal flow's start at 1010 ns.
        assert_eq!(t.zero_ns, 1010);
        let steal = t.flows.iter().find(|f| f.kind == FlowKind::Steal).unwrap();
        assert_eq!((steal.from_rank, steal.to_rank), (0, 1));
        assert_eq!((steal.from_ns, steal.to_ns), (0.0, 10.0));
        let joins: Vec<_> = t.flows.iter().filter(|f| f.kind == FlowKind::Join).collect();
        assert_eq!(joins.len(), 1);
        assert_eq!((joins[0].from_rank, joins[0].to_rank), (1, 0));
        assert_eq!((joins[0].from_ns, joins[0].to_ns), (1300.0 - 1010.0, 1500.0 - 1010.0));
        assert_eq!(t.unplaced_join_flows, 1);
        assert_eq!(t.length_ns, 3000.0 - 1010.0);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn every_file_names_its_rank_host_and_the_files_agree_on_the_hosts() {
        let d = dir("hosts");
        let on = |rank: u32, host: u32, hosts: u32| RankHeader {
            host,
            hosts,
            ..header(rank, 5, 0)
        };
        // Ranks 2 and 4 left no file; host 2's only rank is rank 4.
        for (rank, host) in [(0, 0), (1, 1), (3, 1)] {
            write(&d, on(rank, host, 3), &[]);
        }
        let t = load(&d).unwrap();
        assert_eq!(t.job_hosts(), 3);
        assert_eq!(t.ranks_by_host(), vec![vec![0], vec![1, 3], vec![]]);
        assert_eq!((t.host_of(3), t.host_of(2)), (Some(1), None));
        assert_eq!(t.across_hosts(0, 1), Some(true));
        assert_eq!(t.across_hosts(3, 1), Some(false));
        assert_eq!(t.across_hosts(2, 0), None);

        let named = |e: String, what: &str| {
            assert!(e.contains("rank-3.uatrace"), "{e}");
            assert!(e.contains(what), "{e}");
        };
        write(&d, on(3, 3, 3), &[]);
        named(load(&d).unwrap_err(), "host 3 of 3 hosts");
        write(&d, on(3, 0, 0), &[]);
        named(load(&d).unwrap_err(), "0 hosts for 5 ranks");
        write(&d, on(3, 0, 6), &[]);
        named(load(&d).unwrap_err(), "6 hosts for 5 ranks");
        write(&d, on(3, 1, 2), &[]);
        named(load(&d).unwrap_err(), "counts 2 hosts");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn missing_ranks_are_listed_and_bad_files_are_named() {
        let d = dir("bad");
        write(&d, header(0, 4, 0), &[]);
        write(&d, header(2, 4, 0), &[rec(Kind::Task, 2, 5, 9, 0)]);
        let t = load(&d).unwrap();
        assert_eq!(t.missing, vec![1, 3]);
        assert_eq!(t.job_ranks(), 4);
        assert!(t.rank(2).is_some() && t.rank(1).is_none());

        let named = |e: String, what: &str| {
            assert!(e.contains("rank-2.uatrace"), "{e}");
            assert!(e.contains(what), "{e}");
        };
        write(&d, header(2, 4, 0), &[rec(Kind::Task, 2, 9, 5, 0)]);
        named(load(&d).unwrap_err(), "before its start");
        write(&d, header(2, 4, 0), &[rec(Kind::Task, 7, 5, 9, 0)]);
        named(load(&d).unwrap_err(), "peer 7 of 4");
        write(
            &d,
            header(2, 4, 0),
            &[Record {
                kind: 99,
                ..Record::default()
            }],
        );
        named(load(&d).unwrap_err(), "unknown kind code 99");
        write(&d, header(2, 3, 0), &[]);
        named(load(&d).unwrap_err(), "counts 3 ranks");
        let mut h = header(2, 4, 0);
        h.recorded = 5;
        write_rank_file(&d, &h, &[]).unwrap();
        named(load(&d).unwrap_err(), "truncated");
        std::fs::write(
            d.join("rank-2.uatrace"),
            format!("{}\n{{not json\n", crate::file::MAGIC),
        )
        .unwrap();
        named(load(&d).unwrap_err(), "header");
        let mut h = header(1, 4, 0);
        h.rank = 3;
        write_rank_file(&d, &h, &[]).unwrap();
        std::fs::rename(d.join("rank-3.uatrace"), d.join("rank-2.uatrace")).unwrap();
        named(load(&d).unwrap_err(), "says rank 3");
        std::fs::remove_dir_all(&d).unwrap();
        std::fs::create_dir_all(&d).unwrap();
        assert!(load(&d).unwrap_err().contains("no rank-<R>.uatrace"));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
