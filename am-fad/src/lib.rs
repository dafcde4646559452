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

pub mod attention;
pub mod global;
mod mode;
mod op;
pub mod poller;
pub mod refusals;
#[cfg(not(feature = "fad-native"))]
pub mod service;
pub mod sleep;
mod words;

pub use attention::{raise_attention, AttentionBits};
pub use global::{AtomicOp, GlobalAtomics};
pub use mode::{default_poll_interval, Mode, MODE};
pub use words::DequeAtomics;

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
