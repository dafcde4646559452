//! `uat-sim`: a discrete-event simulator of uni-address threads'
//! scheduler.
//!
//! Simulated ranks run the runtime's own protocol steps (`uat_protocol`:
//! the deque's claim and release, the owner's push, pop and expose, the
//! lifelines' announce, serve and wake) in coroutines ([`rank`]); the
//! remote operations those steps make are messages that take the time a
//! machine file declares ([`machine`]) and are served where the conduit
//! and the fetch-and-add mode serve them ([`world`]). The task trees are
//! the benchmarks' own ([`workload`]); their bodies are not run but
//! charged the declared work per node.
//!
//! Single-threaded and seeded: the same inputs give the same result.

pub mod calibrate;
mod frames;
pub mod machine;
mod rank;
pub mod run;
mod serve;
pub mod workload;
pub mod world;
