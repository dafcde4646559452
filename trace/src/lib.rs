//! Traces of uni-address threads.
//!
//! Every rank records what its scheduler does as [`record::Record`]s (kinds
//! declared once in [`record::Kind`]) and writes them, with a header, to
//! its own file ([`mod@file`]). The outputs are made from those files: read
//! back and placed on the job's clock by [`load()`], then written as Chrome
//! Trace Event JSON ([`chrome`]), a statistics table ([`stats`]) and, with
//! the `otf2` feature, an OTF2 archive (`otf2`). [`write_outputs`] writes
//! them all; the `uat-trace merge DIR` command calls it.

use std::io::Write;
use std::path::{Path, PathBuf};

pub mod chrome;
pub mod file;
pub mod load;
#[cfg(feature = "otf2")]
pub mod otf2;
pub mod record;
pub mod stats;

pub use chrome::{chrome_json, write_chrome};
pub use file::{rank_file, read_rank_file, write_rank_file, KindTotal, RankHeader};
pub use load::{load, Event, Flow, FlowKind, RankEvents, RankTrace, Timeline, Trace};
#[cfg(feature = "otf2")]
pub use otf2::{write_otf2, Otf2Written};
pub use record::{peer_ticks, Kind, KindInfo, Outcome, Record, Shape, PEER_TICK_BITS, RECORD_BYTES};
pub use stats::{stats_json, stats_text, Stats};

/// Why there is no OTF2 archive when this crate is built without the
/// `otf2` feature.
pub const OTF2_NOT_BUILT: &str = "no OTF2 archive: this uat-trace was built without the `otf2` cargo feature. \
     OTF2 needs that feature and the OTF2 library libotf2 (Debian: libopen-trace-format2-dev; \
     `cargo uat setup` installs it); then `cargo build -p uat-trace --features otf2`";

/// What [`write_outputs`] wrote.
#[derive(Clone, Debug)]
pub struct Written {
    /// `DIR/trace.json`: Chrome Trace Event JSON.
    pub json: PathBuf,
    /// `DIR/stats.txt`: the statistics table.
    pub stats_text: PathBuf,
    /// `DIR/stats.json`: the same as JSON.
    pub stats_json: PathBuf,
    /// `DIR/trace.otf2`: the OTF2 archive's anchor file (with the `otf2`
    /// feature).
    pub otf2: Option<PathBuf>,
    /// What a reader must know: missing ranks, partial traces, dropped
    /// records, unpaired flows, what OTF2 clipped, or that it was not built.
    pub notes: Vec<String>,
}

impl Written {
    /// Every file written.
    pub fn paths(&self) -> Vec<&Path> {
        let mut p = vec![
            self.json.as_path(),
            self.stats_text.as_path(),
            self.stats_json.as_path(),
        ];
        p.extend(self.otf2.as_deref());
        p
    }
}

fn write_file(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), String> {
    let what = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(what)?);
    write(&mut out).map_err(what)?;
    out.flush().map_err(what)
}

/// Loads the rank files in `dir` ([`load()`]) and writes `dir/trace.json`,
/// `dir/stats.txt`, `dir/stats.json` and, with the `otf2` feature,
/// `dir/trace.otf2` (the archive's other files next to it).
pub fn write_outputs(dir: &Path) -> Result<Written, String> {
    let trace = load(dir)?;
    let timeline = trace.timeline();
    let stats = Stats::new(&trace, &timeline);
    let json = dir.join("trace.json");
    write_file(&json, |out| write_chrome(&trace, &timeline, out))?;
    let stats_text = dir.join("stats.txt");
    write_file(&stats_text, |out| out.write_all(stats.text(&trace).as_bytes()))?;
    let stats_json = dir.join("stats.json");
    write_file(&stats_json, |out| {
        serde_json::to_writer_pretty(&mut *out, &stats.json(&trace))?;
        writeln!(out)
    })?;
    let mut notes = stats.notes;
    #[cfg(feature = "otf2")]
    let otf2 = {
        let w = write_otf2(&trace, &timeline, dir).map_err(|e| {
            format!(
                "{e} (the other outputs are written: {}, {}, {})",
                json.display(),
                stats_text.display(),
                stats_json.display()
            )
        })?;
        notes.extend(w.notes);
        Some(w.anchor)
    };
    #[cfg(not(feature = "otf2"))]
    let otf2 = {
        notes.push(OTF2_NOT_BUILT.into());
        None
    };
    Ok(Written {
        json,
        stats_text,
        stats_json,
        otf2,
        notes,
    })
}
