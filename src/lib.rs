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
//!   tear-down on every rank); its arguments are [`Args`] (a number, or the
//!   program's own clap options as [`Cli`]);
//! - the task API: [`spawn`], [`JoinHandle::join`], [`join()`] and [`join!`]
//!   (2 to 6 closures); see the task model in `uni_threads`' docs;
//! - data parallelism: [`for_each`], [`reduce`] and [`map_reduce`] over an
//!   index range or global memory — one family, the source decides:
//!   `uat::map_reduce(0..n, |i| i * i, Sum::new())` and
//!   `uat::reduce(slice, Sum::new())`; the whole [`pattern`] layer (scans,
//!   sorts, searches, filters, and every pattern under a chosen
//!   [`pattern::Policy`]);
//! - [`global`]: global memory (slices and atomics every rank reaches);
//! - [`Runtime`] and [`Config`]: the lower level, for programs with several
//!   runs; [`runtime`] holds the scheduler's knobs and counters;
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
pub use uni_threads::{current_rank, join, ranks, spawn, Config, ConfigError, JoinHandle, StartError};

/// Global memory: slices and atomics every rank reaches, cached across the
/// network (the `uat-memory` crate, the layer above the scheduler).
pub use uat_memory as global;

/// Parallel patterns over global memory and index ranges (`for_each`,
/// `reduce`, `scan`, `sort_unstable`, searches, `filter`, `GlobalVec`,
/// [`Policy`](pattern::Policy)): the `uat-pattern` crate.
pub use uat_pattern as pattern;
pub use uat_pattern::for_each::for_each;
pub use uat_pattern::reduce::{map_reduce, reduce};

pub mod addresses;
pub mod cli;
mod launch;
pub mod runtime;

pub use launch::{launch, launch_then, Args, Cli};
pub use runtime::Runtime;
