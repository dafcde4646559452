//! The launcher of uni-address threads programs, as a library: what a build
//! variant is ([`variant`]), how a program's crate is built for one
//! ([`build`]), how a job is started on N ranks for each GASNet-EX conduit
//! and watched until it ends ([`job`]), what a machine needs first
//! ([`setup`]), and when a run has more spinning threads than cores
//! ([`rules`]). `cargo uat` (src/main.rs) is its command line; the
//! project's scripts call that, so each of these facts is stated once.

pub mod build;
pub mod job;
pub mod rules;
pub mod setup;
pub mod variant;
