//! Remote fetch-and-add on u64 words of any rank: the lock of a remote
//! work-stealing deque, served in the mode selected at build time.
//!
//! - `fad-rdma-emulated`: Active Messages served by a communication-assisting
//!   thread that polls continuously (the victim's worker is never interrupted);
//! - `fad-am`: Active Messages served by the worker when it polls (at every
//!   spawn, in scheduler loops, while waiting);
//! - `fad-native`: GASNet-EX atomic domains (`gex_AD`).
//!
//! The deque lock word obeys DESIGN.md's "Remote atomics rules": in `native`
//! mode every access to it goes through the atomic domain (the owner too); in
//! the AM modes the owner and the AM handler use CPU atomics on it and nothing
//! uses the atomic domain.
//!
//! [`DequeLock`] is the lock interface the scheduler's deque uses; the AM
//! modes' request service is [`service`], the communication-assisting thread
//! [`poller`].

#[cfg(not(any(feature = "fad-rdma-emulated", feature = "fad-am", feature = "fad-native")))]
compile_error!("uat: select a fetch-and-add mode: build with exactly one of the cargo features `uat/fad-native`, `uat/fad-am`, `uat/fad-rdma-emulated` (e.g. `cargo build --features uat/smp,uat/fad-native`), or run through the launcher, which chooses them: `cargo uat run --fad native` (none is selected)");

#[cfg(any(
    all(feature = "fad-rdma-emulated", any(feature = "fad-am", feature = "fad-native")),
    all(feature = "fad-am", feature = "fad-native"),
))]
compile_error!("uat: select exactly one fetch-and-add mode: two or more of the cargo features `uat/fad-native`, `uat/fad-am`, `uat/fad-rdma-emulated` are on (cargo unifies features: look for another crate of the build enabling one)");

/// A fetch-and-add mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// AMs served by a communication-assisting polling thread.
    RdmaEmulated,
    /// AMs served by the worker at its poll points.
    Am,
    /// GASNet-EX remote atomics.
    Native,
}

impl Mode {
    /// The mode's name in JSON and on command lines.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::RdmaEmulated => "rdma-emulated",
            Mode::Am => "am",
            Mode::Native => "native",
        }
    }
}

/// The mode selected by this build's cargo feature.
#[cfg(all(feature = "fad-rdma-emulated", not(any(feature = "fad-am", feature = "fad-native"))))]
pub const MODE: Mode = Mode::RdmaEmulated;
/// The mode selected by this build's cargo feature.
#[cfg(all(feature = "fad-am", not(feature = "fad-native")))]
pub const MODE: Mode = Mode::Am;
/// The mode selected by this build's cargo feature.
#[cfg(all(feature = "fad-native", not(any(feature = "fad-am", feature = "fad-rdma-emulated"))))]
pub const MODE: Mode = Mode::Native;

mod lock;
pub mod poller;
#[cfg(not(feature = "fad-native"))]
pub mod service;

pub use lock::DequeLock;

/// TSC cycles this process has spent in fetch-and-add request handlers
/// (0 in `native` mode, where GASNet serves the atomics itself).
pub fn handler_cycles() -> u64 {
    #[cfg(not(feature = "fad-native"))]
    return service::handled().1;
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

/// How often (in spawns) the worker polls for Active Messages at spawn, by
/// default: every spawn in `am` mode (the paper's AM-based design); never in
/// `rdma-emulated` mode (the communication-assisting thread polls); in
/// `native` mode never on smp (atomics and RMA are shared memory) and every
/// 64 spawns elsewhere (the conduit carries atomics and RMA by AMs).
pub const fn default_poll_interval() -> u32 {
    match MODE {
        Mode::Am => 1,
        Mode::RdmaEmulated => 0,
        Mode::Native => match gasnet_sys::CONDUIT {
            gasnet_sys::Conduit::Smp => 0,
            _ => 64,
        },
    }
}
