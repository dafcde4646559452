//! Uni-address threads: a distributed, child-first work-stealing scheduler of
//! native threads on GASNet-EX (after Akiyama & Taura, HPDC'15 and IPSJ 2016).
//!
//! This is the facade users depend on. Build variants are cargo features,
//! chosen by the program (none is on by default): one conduit (`smp`, `udp`,
//! `mpi`, `ibv`) and one remote fetch-and-add mode (`fad-native`,
//! `fad-rdma-emulated`, `fad-am`); e.g. `cargo build --features
//! uat/smp,uat/fad-native`, or let the launcher choose (`cargo uat run
//! --conduit smp --fad native`).
//!
//! - [`launch`]: a whole program in one call (set-up, root task, result,
//!   tear-down on every rank);
//! - the task API: [`spawn`], [`JoinHandle::join`], [`join`] and [`join!`]
//!   (2 to 6 closures), [`for_each`] and [`reduce`] over a range (see the
//!   task model in `uni_threads`' docs);
//! - [`Runtime`]: the lower level, for programs with several runs;
//! - [`gasnet`]: the safe GASNet-EX layer (what `gasnet-check` uses);
//! - [`cli`]: starting a program by hand: `--help` before GASNet, options
//!   after it; [`addresses`]: the same code addresses in every process.

/// clap, for a program's own options (`use uat::clap;` lets
/// `#[derive(clap::Parser)]` find it without a dependency of its own).
pub use clap;
pub use gasnet_sys as gasnet;
/// Test support (`testing` feature; this workspace's own builds enable it).
#[cfg(feature = "testing")]
pub use uni_threads::testing;
pub use uni_threads::{
    current_rank, fad_poller, for_each, is_running, join, poll_point, ranks, reduce, rules, spawn, stats, tsc_hz,
    Config, ConfigError, Field, JoinHandle, Mode, PollerCores, PollerWait, Setting, StartError, Stats, StealProtocol,
    TraceMode, Unit, VictimPolicy, MODE,
};

/// Global memory: slices and atomics every rank reaches, cached across the
/// network (the `uat-memory` crate, the layer above the scheduler).
pub use uat_memory as global;

pub mod addresses;
pub mod cli;
mod launch;
mod runtime;

pub use launch::{launch, launch_then, Args, Cli};
pub use runtime::Runtime;

/// The conduit this build was made for.
pub const CONDUIT: gasnet::Conduit = gasnet::CONDUIT;

/// Parallel patterns over global memory (`for_each`, `reduce`, `scan`,
/// `sort_unstable`, searches, `filter`, `GlobalVec`): the `uat-pattern`
/// crate.
pub use uat_pattern as pattern;
