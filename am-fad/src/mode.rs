//! The fetch-and-add mode of this build (one cargo feature) and what it
//! decides for the worker's polling.

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
