//! Uni-address threads: a distributed, child-first work-stealing scheduler of
//! native threads on GASNet-EX (after Akiyama & Taura, HPDC'15 and IPSJ 2016).
//!
//! This is the facade users depend on. Build variants are cargo features:
//! one conduit (`smp` default, `udp`, `mpi`, `ibv`) and one remote
//! fetch-and-add mode (`fad-native` default, `fad-rdma-emulated`, `fad-am`).
//!
//! - [`gasnet`]: the safe GASNet-EX layer (what `gasnet-check` uses);
//! - [`cli`]: starting a program: `--help` before GASNet, options after it;
//! - the runtime: [`Runtime`], [`spawn`], [`JoinHandle::join`], [`join`],
//!   [`reduce`] (see the task model in `uni_threads`' docs).

pub use gasnet_sys as gasnet;
pub use uni_threads::*;

pub mod bench;
pub mod cli;

/// The conduit this build was made for.
pub const CONDUIT: gasnet::Conduit = gasnet::CONDUIT;
