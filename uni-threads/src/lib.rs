//! The uni-address threads runtime (Akiyama & Taura, HPDC'15 / IPSJ 2016):
//! native threads whose stacks live at the same virtual address in every
//! process, child-first spawn, and work stealing of continuations by RDMA.
//!
//! Status: the scheduler arrives with the one-rank and the distributed
//! work-stealing issues; this crate currently only fixes its place in the
//! dependency chain (gasnet-sys → am-fad → uni-threads → facade).

pub use am_fad::{Mode, MODE};
