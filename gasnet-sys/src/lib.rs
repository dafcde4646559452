//! GASNet-EX for the uni-address threads runtime: the raw bindings and the one
//! safe layer over them.
//!
//! Everything above this crate (am-fad, uni-threads, the benchmarks) talks to
//! the network through the safe API here; the raw bindings (bindgen over
//! GASNet-EX's headers plus a C shim for its macro and inline API, see
//! `shim/uat_shim.h`) are private to this crate, so no other crate can call
//! raw FFI.
//!
//! # Model
//! GASNet-EX is a per-process singleton: [`Gasnet::init`] starts it once
//! (with the process's real arguments, some of which belong to the spawner),
//! and returns [`Gasnet`], a zero-sized `Copy` handle that proves the library
//! is up. Every operation is a method on it, so none can run before init.
//! One client, one endpoint and the primordial team per process.
//!
//! - [`Gasnet::attach_segment`]: the collective segment attach; afterwards
//!   every rank's segment bounds are known ([`Gasnet::segment`]).
//! - [`am`]: Active Message handlers (short AMs, typed by argument count),
//!   requests, replies and polling.
//! - RMA: [`Gasnet::get`], [`Gasnet::put`] and friends, bounds-checked against
//!   the target's segment.
//! - [`atomic::AtomicDomain`]: u64 remote atomics (`gex_AD`).
//! - [`Gasnet::barrier`] and the non-blocking [`Event`].
//! - [`ops`]: per-thread counts of the remote operations the wrappers started.
//! - [`Hosts`]: which ranks share memory ([`Gasnet::hosts`]), and an emulated
//!   delay on every operation between hosts ([`Gasnet::set_cross_host_delay`]).
//!
//! # Soundness
//! The RMA and atomic methods are safe because a segment is bytes that no
//! Rust reference covers, as long as the program that attached it keeps it
//! so. A layer that puts Rust state in the segments (uni-threads: task
//! stacks and frames) breaks that for everyone holding a handle, so it
//! hands none to safe code: getting a handle once GASNet is up
//! ([`Gasnet::current`]) is `unsafe`, and so are uni-threads'
//! `Runtime::start` (for the handle passed in) and `Runtime::gasnet`.
//!
//! # Build
//! Exactly one conduit feature: `smp`, `udp`, `mpi`, `ibv` (no default).
//! An installed GASNet-EX (2021.3.0 or newer, the conduit in PAR mode) is
//! used when `GASNET_PREFIX` names it or pkg-config finds it as
//! `gasnet-<conduit>-par`; otherwise, or with `UAT_GASNET=bundled`, GASNet-EX
//! 2021.3.0 is built once per conduit from the `gex-sys` 0.1.0 package's
//! source tree, put in cargo's cache by `cargo uat setup`, and cached once per
//! machine under `<cargo home>/uat/gasnet` (or `GASNET_CACHE_DIR`). See
//! `build/main.rs` and `uat_rules::gasnet`.

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
compile_error!("uni-address threads supports Linux on x86-64 only: the context switch is x86-64 assembly and the arena relies on Linux mmap/mremap");

#[cfg(not(any(feature = "smp", feature = "udp", feature = "mpi", feature = "ibv")))]
compile_error!("uat: select a conduit: build with exactly one of the cargo features `uat/smp`, `uat/udp`, `uat/mpi`, `uat/ibv` and one fetch-and-add mode (e.g. `cargo build --features uat/smp,uat/fad-native`), or run through the launcher, which chooses them: `cargo uat run --conduit smp --fad native` (none is selected)");

#[cfg(any(
    all(feature = "smp", any(feature = "udp", feature = "mpi", feature = "ibv")),
    all(feature = "udp", any(feature = "mpi", feature = "ibv")),
    all(feature = "mpi", feature = "ibv"),
))]
compile_error!("uat: select exactly one conduit: two or more of the cargo features `uat/smp`, `uat/udp`, `uat/mpi`, `uat/ibv` are on (cargo unifies features: look for another crate of the build enabling one)");

// Set by the build script once GASNet-EX is found and bound; without it only
// the configuration errors above are reported.
#[cfg(gasnet_configured)]
mod raw;

#[cfg(gasnet_configured)]
pub mod am;
#[cfg(gasnet_configured)]
pub mod atomic;
#[cfg(gasnet_configured)]
mod client;
#[cfg(gasnet_configured)]
mod coll;
mod conduit;
mod error;
#[cfg(gasnet_configured)]
mod hosts;
mod launch;
pub mod ops;
#[cfg(gasnet_configured)]
mod rma;
#[cfg(gasnet_configured)]
pub mod wait;

#[cfg(gasnet_configured)]
pub use client::{report, write_stderr, Gasnet, Segment, MAX_EXIT_HOOKS};
#[cfg(gasnet_configured)]
pub use coll::Event;
pub use conduit::Conduit;
#[cfg(gasnet_configured)]
pub use conduit::CONDUIT;
pub use error::Error;
#[cfg(gasnet_configured)]
pub use hosts::Hosts;
pub use launch::LAUNCHED_ENV;
