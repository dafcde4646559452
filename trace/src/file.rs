//! A rank's trace file, `DIR/rank-<R>.uatrace`: the line `UATRACE 2` (the
//! format's version, [`FORMAT`]), one line of JSON ([`RankHeader`]), then
//! the records ([`RECORD_BYTES`] each, [`Record::to_bytes`]) until the end
//! of the file.
//!
//! Every rank writes its own at the end of the job, or when the job fails
//! (with `complete: false`); the merged outputs are made from these files.
//!
//! Format 1 had no `host` and `hosts` in its header. Such a file is refused
//! with an error naming its format, rather than read as if every rank were
//! on one host: the outputs would then draw a multi-host job's ranks as
//! sharing memory, and the files are remade by tracing the job again.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::record::{Record, RECORD_BYTES};

/// The version of the format this crate writes and reads: 2 added the
/// header's `host` and `hosts`.
pub const FORMAT: u32 = 2;

/// The first line of a rank's file: this word, a space, the format.
const MAGIC_WORD: &str = "UATRACE";

/// The first line of a rank's file of this [`FORMAT`]: `UATRACE <FORMAT>`.
pub const MAGIC: &str = "UATRACE 2";

/// What a rank's file says about its records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankHeader {
    /// This rank.
    pub rank: u32,
    /// Ranks in the job.
    pub ranks: u32,
    /// This rank's host, in `0..hosts`: its GASNet neighbourhood, the ranks
    /// that share memory (a node of a cluster; on one machine, an emulated
    /// host of `cargo uat run --hosts`). Required (no serde default): a
    /// file without it is not of this format.
    pub host: u32,
    /// Hosts in the job.
    pub hosts: u32,
    /// The program (its file name).
    pub program: String,
    /// Clock ticks per second of this rank's records.
    pub ticks_per_s: f64,
    /// A tick of this rank's clock ...
    pub origin_ticks: u64,
    /// ... and the same moment on the job's clock (rank 0's), in ns.
    pub origin_ns: u64,
    /// Bound on the error of `origin_ns` (half the best round trip of the
    /// alignment), in ns; 0 on rank 0's host (one kernel clock).
    pub clock_error_ns: u64,
    /// The round trips' estimate of rank 0's clock minus this rank's, in
    /// ns, and its bound (on rank 0's host, where the offset used is
    /// exactly 0, a measure of the alignment's error).
    #[serde(default)]
    pub clock_estimate_ns: i64,
    /// The bound of `clock_estimate_ns` (half the shortest round trip).
    #[serde(default)]
    pub clock_estimate_error_ns: u64,
    /// Records kept.
    pub recorded: u64,
    /// Records lost because the buffer was full (the counts of the
    /// statistics include them).
    pub dropped: u64,
    /// Whether the job ended normally (false: a partial trace of a failure).
    pub complete: bool,
    /// Per kind: count, total ticks, max ticks (every record, kept or not).
    pub totals: Vec<KindTotal>,
    /// This rank's counters over the traced runs (the `stats` JSON object
    /// of the runtime), for checks against the records.
    pub stats: serde_json::Value,
}

/// One kind's statistics on one rank.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KindTotal {
    /// The kind's name.
    pub kind: String,
    /// Records of that kind.
    pub count: u64,
    /// Their total duration in ticks (intervals and flows).
    pub ticks: u64,
    /// The longest, in ticks.
    pub max_ticks: u64,
}

impl Default for RankHeader {
    /// An empty header on host 0 of one host (so that a header built from
    /// it, as tests do, is valid without naming the hosts).
    fn default() -> RankHeader {
        RankHeader {
            rank: 0,
            ranks: 0,
            host: 0,
            hosts: 1,
            program: String::new(),
            ticks_per_s: 0.0,
            origin_ticks: 0,
            origin_ns: 0,
            clock_error_ns: 0,
            clock_estimate_ns: 0,
            clock_estimate_error_ns: 0,
            recorded: 0,
            dropped: 0,
            complete: false,
            totals: Vec::new(),
            stats: serde_json::Value::Null,
        }
    }
}

impl RankHeader {
    /// A tick of this rank's clock on the job's clock, in ns.
    pub fn ns(&self, ticks: u64) -> f64 {
        self.origin_ns as f64 + (ticks as f64 - self.origin_ticks as f64) * 1e9 / self.ticks_per_s
    }

    /// A tick of this rank's clock on the job's clock, in ns after `base_ns`
    /// (a moment on the job's clock near the trace): [`RankHeader::ns`]
    /// without its rounding when the job's clock counts from far away (an
    /// `f64` holds whole ns only up to 2^53).
    pub fn ns_after(&self, ticks: u64, base_ns: u64) -> f64 {
        let origin = (i128::from(self.origin_ns) - i128::from(base_ns)) as f64;
        let since = (i128::from(ticks) - i128::from(self.origin_ticks)) as f64;
        origin + since * 1e9 / self.ticks_per_s
    }

    /// The inverse of [`RankHeader::ns_after`]: this rank's tick at `ns`
    /// after `base_ns` on the job's clock (nearest; saturating at 0).
    pub fn ticks_at(&self, ns: f64, base_ns: u64) -> u64 {
        let origin = (i128::from(self.origin_ns) - i128::from(base_ns)) as f64;
        let ticks = self.origin_ticks as f64 + (ns - origin) * self.ticks_per_s / 1e9;
        ticks.round().max(0.0) as u64
    }

    /// A number of this rank's ticks as a duration in ns.
    pub fn duration_ns(&self, ticks: u64) -> f64 {
        ticks as f64 * 1e9 / self.ticks_per_s
    }
}

/// The path of `rank`'s file in `dir`.
pub fn rank_file(dir: &Path, rank: u32) -> PathBuf {
    dir.join(format!("rank-{rank}.uatrace"))
}

/// Writes a rank's file (creating `dir` if needed).
pub fn write_rank_file(dir: &Path, header: &RankHeader, records: &[Record]) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = rank_file(dir, header.rank);
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
    writeln!(out, "{MAGIC}")?;
    serde_json::to_writer(&mut out, header)?;
    writeln!(out)?;
    for r in records {
        out.write_all(&r.to_bytes())?;
    }
    out.flush()?;
    Ok(path)
}

/// Checks a file's first line: [`MAGIC`], else an error that names the
/// format of another version's file.
fn check_magic(first: &str) -> Result<(), String> {
    if first == MAGIC {
        return Ok(());
    }
    let format = first
        .strip_prefix(MAGIC_WORD)
        .and_then(|rest| rest.strip_prefix(' '))
        .and_then(|v| v.parse::<u32>().ok());
    Err(match format {
        Some(1) => format!(
            "a trace file of format 1 (first line {first:?}), from a uat before hosts were recorded; \
             this uat-trace reads format {FORMAT} ({MAGIC:?}): trace the job again with this build"
        ),
        Some(v) => format!(
            "a trace file of format {v} (first line {first:?}); this uat-trace reads format {FORMAT} ({MAGIC:?})"
        ),
        None => format!("not a uat trace file (first line {first:?}, expected {MAGIC:?})"),
    })
}

/// Reads a rank's file.
pub fn read_rank_file(path: &Path) -> Result<(RankHeader, Vec<Record>), String> {
    let what = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let mut input = BufReader::new(std::fs::File::open(path).map_err(|e| what(&e))?);
    let mut line = String::new();
    input.read_line(&mut line).map_err(|e| what(&e))?;
    check_magic(line.trim_end()).map_err(|e| what(&e))?;
    line.clear();
    input.read_line(&mut line).map_err(|e| what(&e))?;
    let header: RankHeader = serde_json::from_str(&line).map_err(|e| what(&format!("header: {e}")))?;
    let mut bytes = Vec::new();
    input.read_to_end(&mut bytes).map_err(|e| what(&e))?;
    if bytes.len() % RECORD_BYTES != 0 {
        return Err(what(&format!(
            "{} bytes of records: not a multiple of {RECORD_BYTES} (truncated?)",
            bytes.len()
        )));
    }
    let records = bytes
        .chunks_exact(RECORD_BYTES)
        .map(|c| Record::from_bytes(c.try_into().expect("a whole record")))
        .collect();
    Ok((header, records))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Kind;

    #[test]
    fn a_rank_file_round_trips() {
        let dir = std::env::temp_dir().join(format!("uat-trace-file-{}", std::process::id()));
        let header = RankHeader {
            rank: 3,
            ranks: 4,
            host: 1,
            hosts: 2,
            program: "uts".into(),
            ticks_per_s: 2.5e9,
            origin_ticks: 1000,
            origin_ns: 77,
            clock_error_ns: 12,
            clock_estimate_ns: -5,
            clock_estimate_error_ns: 9,
            recorded: 2,
            dropped: 1,
            complete: false,
            totals: vec![KindTotal {
                kind: "task".into(),
                count: 2,
                ticks: 30,
                max_ticks: 20,
            }],
            stats: serde_json::json!({ "steals_succeeded": 1 }),
        };
        let records = [
            Record {
                kind: Kind::Task as u32,
                peer: 3,
                start: 1,
                end: 21,
                value: 0,
            },
            Record {
                kind: Kind::Task as u32,
                peer: 3,
                start: 30,
                end: 40,
                value: 0,
            },
        ];
        let path = write_rank_file(&dir, &header, &records).unwrap();
        assert_eq!(path, rank_file(&dir, 3));
        let (h, r) = read_rank_file(&path).unwrap();
        assert_eq!(h, header);
        assert_eq!(r, records);
        assert_eq!(h.ns(1000), 77.0);
        assert_eq!(h.ns(3500), 77.0 + 1000.0);
        assert_eq!(h.ns_after(3500, 70), 7.0 + 1000.0);
        assert_eq!(h.ns_after(0, 77), -400.0);
        assert_eq!(h.duration_ns(25), 10.0);
        std::fs::write(&path, "hello\n").unwrap();
        assert!(read_rank_file(&path).unwrap_err().contains("not a uat trace file"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn other_formats_are_refused_by_version() {
        let dir = std::env::temp_dir().join(format!("uat-trace-format-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(MAGIC, format!("{MAGIC_WORD} {FORMAT}"));
        let path = dir.join("rank-0.uatrace");
        // A format 1 header: everything but the hosts.
        let old = "{\"rank\":0,\"ranks\":1,\"program\":\"t\",\"ticks_per_s\":1e9,\"origin_ticks\":0,\
                   \"origin_ns\":0,\"clock_error_ns\":0,\"recorded\":0,\"dropped\":0,\"complete\":true,\
                   \"totals\":[],\"stats\":{}}";
        std::fs::write(&path, format!("UATRACE 1\n{old}\n")).unwrap();
        let e = read_rank_file(&path).unwrap_err();
        assert!(
            e.contains("rank-0.uatrace") && e.contains("format 1") && e.contains("reads format 2"),
            "{e}"
        );
        std::fs::write(&path, "UATRACE 7\n{}\n").unwrap();
        assert!(read_rank_file(&path).unwrap_err().contains("of format 7"));
        std::fs::write(&path, "UATRACE x\n{}\n").unwrap();
        assert!(read_rank_file(&path).unwrap_err().contains("not a uat trace file"));
        // This format's header must name the hosts.
        std::fs::write(&path, format!("{MAGIC}\n{old}\n")).unwrap();
        let e = read_rank_file(&path).unwrap_err();
        assert!(e.contains("header") && e.contains("host"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
