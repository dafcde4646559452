//! Traces of uni-address threads.
//!
//! Every rank records what its scheduler does as [`record::Record`]s (kinds
//! declared once in [`record::Kind`]) and writes them, with a header, to
//! its own file ([`file`]). The outputs are made from those files.

pub mod file;
pub mod record;

pub use file::{rank_file, read_rank_file, write_rank_file, KindTotal, RankHeader};
pub use record::{peer_ticks, Kind, KindInfo, Outcome, Record, Shape, PEER_TICK_BITS, RECORD_BYTES};
