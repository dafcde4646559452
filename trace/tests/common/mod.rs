//! A synthetic traced job for the tests: four ranks on two hosts (ranks 0
//! and 1 on host 0, ranks 2 and 3 on host 1), one without a file (rank 2),
//! each with its own clock rate and offset, with known intervals,
//! instants, steal flows (one from the missing rank, one across hosts),
//! join flows (one drawn, one from the missing rank) and dropped records.

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};

use uat_trace::{write_rank_file, Kind, KindTotal, Outcome, RankHeader, Record};

/// A record of the job, with its times in ns on the job's clock.
#[derive(Clone, Copy, Debug)]
pub struct Rec {
    pub rank: u32,
    pub kind: Kind,
    pub peer: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub value: u64,
}

/// The job: its rank headers (without totals and counts) and records.
pub struct Job {
    pub dir: PathBuf,
    pub headers: Vec<RankHeader>,
    pub records: Vec<Rec>,
    /// Task records dropped on rank 3 (in its totals, not in its file).
    pub dropped: u64,
}

/// The job's clock at the first record.
pub const T0: u64 = 1_000_000;
pub const RANKS: u32 = 4;
pub const MISSING: u32 = 2;
/// Hosts, and each rank's (the missing rank's is named by no file).
pub const HOSTS: u32 = 2;
pub const HOST_OF: [u32; RANKS as usize] = [0, 0, 1, 1];
/// Steal flows: 0→1, 3→0, 2→1.
pub const STEAL_FLOWS: usize = 3;
/// Steal flows between ranks with a file on different hosts: 3→0.
pub const STEAL_FLOWS_ACROSS_HOSTS: usize = 1;
/// Join flows that are drawn: 1→0 (2→3's child ended on the missing rank).
pub const JOIN_FLOWS: usize = 1;

fn header(rank: u32, ticks_per_s: f64, origin_ticks: u64, origin_ns: u64, error: u64) -> RankHeader {
    RankHeader {
        rank,
        ranks: RANKS,
        host: HOST_OF[rank as usize],
        hosts: HOSTS,
        program: "synthetic".into(),
        ticks_per_s,
        origin_ticks,
        origin_ns,
        clock_error_ns: error,
        complete: true,
        ..RankHeader::default()
    }
}

fn r(rank: u32, kind: Kind, peer: u32, start: u64, end: u64, value: u64) -> Rec {
    Rec {
        rank,
        kind,
        peer,
        start_ns: T0 + start,
        end_ns: T0 + end,
        value,
    }
}

/// A fresh directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("uat-trace-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Removes a test's directory, unless UAT_TRACE_TEST_KEEP is set (to look
/// at the outputs).
pub fn done(dir: &Path) {
    if std::env::var_os("UAT_TRACE_TEST_KEEP").is_none() {
        std::fs::remove_dir_all(dir).unwrap();
    } else {
        eprintln!("kept {}", dir.display());
    }
}

impl Job {
    pub fn new(dir: &Path) -> Job {
        use Kind::*;
        let s = |o: Outcome| o as u64;
        let headers = vec![
            // Rank 0's clock is the job's: ns from 0.
            header(0, 1e9, 0, 0, 0),
            // Two ticks a ns, tick 5000 at job ns 1_000_100.
            header(1, 2e9, 5000, 1_000_100, 40),
            header(2, 1e9, 0, 0, 0),
            // 2.5 ticks a ns, tick 1_000_000 at job ns 999_000; the job
            // failed here.
            RankHeader {
                complete: false,
                ..header(3, 2.5e9, 1_000_000, 999_000, 70)
            },
        ];
        let records = vec![
            r(0, Task, 0, 1000, 5000, 0),
            r(0, Poll, 0, 2000, 2300, 0),
            r(0, Fetch, 1, 2500, 2900, 64),
            r(0, Suspended, 0, 4000, 9000, 4096),
            r(0, Steal, 1, 5100, 5400, s(Outcome::Empty)),
            r(0, Steal, 3, 5500, 6000, s(Outcome::Success)),
            r(0, StealFlow, 3, 5800, 6100, 0),
            r(0, Task, 0, 6100, 9500, 0),
            r(0, WriteBack, 1, 9000, 9200, 128),
            r(0, JoinFlow, 1, 7900, 9000, 0xc0),
            r(0, Quiescent, 0, 9600, 12000, 0),
            r(0, Wakeup, 1, 12000, 12000, 0),
            r(1, Task, 1, 0, 3000, 0),
            r(1, Steal, 0, 3050, 3300, s(Outcome::Success)),
            r(1, StealFlow, 0, 3100, 3300, 0),
            r(1, Task, 1, 3300, 8000, 0),
            r(1, Steal, 2, 8100, 8200, s(Outcome::Asleep)),
            r(1, Steal, 2, 8250, 8500, s(Outcome::Success)),
            r(1, StealFlow, 2, 8300, 8500, 0),
            r(1, Task, 1, 8500, 8800, 0),
            r(3, Task, 3, 500, 7000, 0),
            r(3, Steal, 0, 7100, 7200, s(Outcome::ClaimFailed)),
            r(3, Steal, 1, 7300, 7400, s(Outcome::Lost)),
            r(3, JoinFlow, 2, 7400, 7450, 0xe0),
            r(3, Failure, 3, 7500, 7500, 0),
        ];
        Job {
            dir: dir.to_path_buf(),
            headers,
            records,
            dropped: 3,
        }
    }

    pub fn header(&self, rank: u32) -> &RankHeader {
        &self.headers[rank as usize]
    }

    fn ticks(h: &RankHeader, ns: u64) -> u64 {
        let t = h.origin_ticks as f64 + (ns as f64 - h.origin_ns as f64) * h.ticks_per_s / 1e9;
        assert_eq!(t, t.round(), "whole ticks");
        t as u64
    }

    /// Writes every rank's file but rank 2's, with totals that count the
    /// dropped records, and returns the headers as written.
    pub fn write(&self) -> Vec<RankHeader> {
        let mut written = Vec::new();
        for h in &self.headers {
            if h.rank == MISSING {
                continue;
            }
            let records: Vec<Record> = self
                .records
                .iter()
                .filter(|x| x.rank == h.rank)
                .map(|x| Record {
                    kind: x.kind as u32,
                    peer: x.peer,
                    // A join flow's tail: the low bits of the peer's clock.
                    start: if x.kind == Kind::JoinFlow {
                        Self::ticks(&self.headers[x.peer as usize], x.start_ns) & ((1 << uat_trace::PEER_TICK_BITS) - 1)
                    } else {
                        Self::ticks(h, x.start_ns)
                    },
                    end: Self::ticks(h, x.end_ns),
                    value: x.value,
                })
                .collect();
            let mut h = h.clone();
            h.recorded = records.len() as u64;
            for k in Kind::ALL {
                let of: Vec<&Record> = records.iter().filter(|x| x.kind == k.code).collect();
                let mut total = KindTotal {
                    kind: k.name.into(),
                    count: of.len() as u64,
                    ticks: of.iter().map(|x| x.end.saturating_sub(x.start)).sum(),
                    max_ticks: of.iter().map(|x| x.end.saturating_sub(x.start)).max().unwrap_or(0),
                };
                if h.rank == 3 && k.code == Kind::Task as u32 {
                    // Three dropped tasks of 100 ticks each.
                    h.dropped = self.dropped;
                    total.count += self.dropped;
                    total.ticks += 100 * self.dropped;
                }
                if total.count > 0 {
                    h.totals.push(total);
                }
            }
            let succeeded = self
                .records
                .iter()
                .filter(|x| x.rank == h.rank && x.kind == Kind::StealFlow)
                .count();
            h.stats = serde_json::json!({ "steals_succeeded": succeeded, "tasks": 7 });
            write_rank_file(&self.dir, &h, &records).unwrap();
            written.push(h);
        }
        written
    }

    /// The job's records of one kind.
    pub fn of(&self, kind: Kind) -> impl Iterator<Item = &Rec> {
        self.records.iter().filter(move |x| x.kind == kind)
    }
}
