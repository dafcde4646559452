//! Remote fetch-and-add on u64 words of any rank: the lock of a remote
//! work-stealing deque, served in the mode selected at build time.
//!
//! - `fad-rdma-emulated`: Active Messages served by a communication-assisting
//!   thread that polls continuously (the victim's worker is never interrupted);
//! - `fad-am`: Active Messages served by the worker when it polls (at every
//!   spawn, in scheduler loops, while waiting);
//! - `fad-native`: GASNet-EX atomic domains (`gex_AD`).
//!
//! The deque lock word obeys docs/design/fetch-and-add.md's "Remote atomics rules": in `native`
//! mode every access to it goes through the atomic domain (the owner too); in
//! the AM modes the owner and the AM handler use CPU atomics on it and nothing
//! uses the atomic domain.
//!
//! [`DequeAtomics`] is what the scheduler's deque uses (its lock or its
//! packed head/split word, and the attention word); the AM modes' request
//! service is [`service`], the communication-assisting thread [`poller`].

#[cfg(not(any(feature = "fad-rdma-emulated", feature = "fad-am", feature = "fad-native")))]
compile_error!("uat: select a fetch-and-add mode: build with exactly one of the cargo features `uat/fad-native`, `uat/fad-am`, `uat/fad-rdma-emulated` (e.g. `cargo build --features uat/smp,uat/fad-native`), or run through the launcher, which chooses them: `cargo uat run --fad native` (none is selected)");

#[cfg(any(
    all(feature = "fad-rdma-emulated", any(feature = "fad-am", feature = "fad-native")),
    all(feature = "fad-am", feature = "fad-native"),
))]
compile_error!("uat: select exactly one fetch-and-add mode: two or more of the cargo features `uat/fad-native`, `uat/fad-am`, `uat/fad-rdma-emulated` are on (cargo unifies features: look for another crate of the build enabling one)");

/// A fetch-and-add mode (its names are declared in `uat-rules`).
pub use uat_rules::FadMode as Mode;

/// The mode selected by this build's cargo feature.
#[cfg(all(feature = "fad-rdma-emulated", not(any(feature = "fad-am", feature = "fad-native"))))]
pub const MODE: Mode = Mode::RdmaEmulated;
/// The mode selected by this build's cargo feature.
#[cfg(all(feature = "fad-am", not(feature = "fad-native")))]
pub const MODE: Mode = Mode::Am;
/// The mode selected by this build's cargo feature.
#[cfg(all(feature = "fad-native", not(any(feature = "fad-am", feature = "fad-rdma-emulated"))))]
pub const MODE: Mode = Mode::Native;

pub mod attention;
pub mod global;
mod op;
pub mod poller;
pub mod refusals;
#[cfg(not(feature = "fad-native"))]
pub mod service;
pub mod sleep;
mod words;

pub use attention::AttentionBits;
pub use global::{AtomicOp, GlobalAtomics};
pub use words::{raise_attention, DequeAtomics};

/// TSC cycles this process has spent in fetch-and-add request handlers
/// (0 in `native` mode, where GASNet serves the atomics itself).
pub fn handler_cycles() -> u64 {
    #[cfg(not(feature = "fad-native"))]
    return service::handled().1;
    #[cfg(feature = "fad-native")]
    0
}

/// Fetch-and-add requests this process has served (0 in `native` mode).
pub fn requests_served() -> u64 {
    #[cfg(not(feature = "fad-native"))]
    return service::handled().0;
    #[cfg(feature = "fad-native")]
    0
}

/// Test support: in the AM modes, sends `rank` a malformed fetch-and-add
/// request whose reply is malformed too (see
/// `service::send_malformed_request`) and returns true; in `native` mode
/// (no fetch-and-add handlers) returns false.
#[doc(hidden)]
pub fn send_malformed_request(gasnet: gasnet_sys::Gasnet, rank: u32) -> bool {
    #[cfg(not(feature = "fad-native"))]
    {
        service::send_malformed_request(gasnet, rank, 7, 12345);
        true
    }
    #[cfg(feature = "fad-native")]
    {
        let _ = (gasnet, rank);
        false
    }
}

/// Test support: in the AM modes, sends `rank` `count` fetch-and-add and
/// `count` global atomic requests with random payloads at the handlers'
/// edges (see `service::fuzz`) and returns how many; in `native` mode (no
/// such handlers) sends nothing and returns 0.
#[doc(hidden)]
pub fn fuzz_service(gasnet: gasnet_sys::Gasnet, rank: u32, count: u32, next: &mut dyn FnMut() -> u64) -> u64 {
    #[cfg(not(feature = "fad-native"))]
    return service::fuzz(gasnet, rank, count, next);
    #[cfg(feature = "fad-native")]
    {
        let _ = (gasnet, rank, count, next);
        0
    }
}

/// Test support: fetch-and-add replies this process has refused (0 in
/// `native` mode).
#[doc(hidden)]
pub fn fuzz_replies_refused() -> u64 {
    #[cfg(not(feature = "fad-native"))]
    return service::replies_refused();
    #[cfg(feature = "fad-native")]
    0
}

/// How often (in spawns) the worker polls for Active Messages at spawn
/// anyway, by default (0: only when its attention word is raised).
/// `all_shared_memory`: every rank of the job is in this rank's shared-memory
/// (PSHM) neighbourhood, so requesters can raise its attention word with a
/// plain store.
///
/// - smp: 0 in every mode (all is shared memory; the job ends by signals);
/// - `rdma-emulated`: 0 (the communication-assisting thread polls);
/// - `am`: every 64 spawns when all ranks share memory (requests raise the
///   attention word; the countdown only keeps the conduit's own traffic,
///   such as a failing rank's exit, flowing); else every spawn (the
///   paper's AM-based design: a put to raise the word would itself need the
///   target to poll);
/// - `native`: every 64 spawns (the conduit carries its own traffic, and
///   atomics and RMA outside shared memory, by Active Messages).
pub const fn default_poll_interval(all_shared_memory: bool) -> u32 {
    match (gasnet_sys::CONDUIT, MODE) {
        (gasnet_sys::Conduit::Smp, _) | (_, Mode::RdmaEmulated) => 0,
        (_, Mode::Am) if !all_shared_memory => 1,
        _ => 64,
    }
}
