//! Traces of uni-address threads.
//!
//! Every rank records what its scheduler does as [`record::Record`]s (kinds
//! declared once in [`record::Kind`]) and writes them, with a header, to
//! its own file ([`file`]). The outputs are made from those files: read
//! back and placed on the job's clock by [`load`], then written as Chrome
//! Trace Event JSON ([`chrome`]), a statistics table ([`stats`]) and, with
//! the `otf2` feature, an OTF2 archive (`otf2`).

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
pub use record::{Kind, KindInfo, Outcome, Record, Shape, RECORD_BYTES};
pub use stats::{stats_json, stats_text, Stats};
