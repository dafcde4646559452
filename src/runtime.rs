//! [`Runtime`]: the scheduler's runtime with global memory attached, and
//! the scheduler's knobs and counters — what a program that tunes or
//! measures the runtime names, and a plain program does not.
//!
//! - the build variant: [`CONDUIT`], [`MODE`] ([`Mode`]) and the
//!   fetch-and-add poller ([`fad_poller`]);
//! - the settings' types ([`Config`] and the values of its fields:
//!   [`StealProtocol`], [`VictimPolicy`], [`TraceMode`], [`PollerCores`],
//!   [`PollerWait`]; [`Setting`] describes one setting; global memory's
//!   settings are [`crate::global::Config`]);
//! - the run's counters: [`stats`], [`Stats`], [`Field`], [`Unit`],
//!   [`tsc_hz`] (cycles to seconds);
//! - inside tasks: [`poll_point`] (serve thieves in a long loop that spawns
//!   nothing), [`is_running`];
//! - [`rules`]: facts shared with the launcher (when a host is
//!   oversubscribed).

use std::ops::Deref;

use crate::gasnet::Gasnet;
pub use uni_threads::{
    fad_poller, is_running, poll_point, rules, stats, tsc_hz, Config, ConfigError, Field, Mode, PollerCores,
    PollerWait, Setting, StartError, Stats, StealProtocol, TraceMode, Unit, VictimPolicy, MODE,
};

/// The conduit this build was made for.
pub const CONDUIT: crate::gasnet::Conduit = crate::gasnet::CONDUIT;

/// The runtime of one process: the scheduler ([`uni_threads::Runtime`],
/// whose methods it has) started with global memory ([`crate::global`]) as
/// the layer above it. Neither `Send` nor `Sync`.
pub struct Runtime(uni_threads::Runtime);

impl Runtime {
    /// Starts the runtime with global memory: [`uni_threads::Runtime::start`]
    /// (its documentation says what starts and the contract below in full),
    /// with [`crate::global`] called at the scheduler's release and acquire
    /// points. Collective: every rank calls it once, after GASNet's init,
    /// with the same config.
    ///
    /// Global memory's settings are read from the environment
    /// ([`crate::global::Config::from_env`]); [`Runtime::start_with_memory`]
    /// takes them from the caller.
    ///
    /// # Safety
    ///
    /// The contract of [`crate::launch`] too (the same list, from one file;
    /// [`uni_threads::Runtime::start`]'s with global memory's clauses):
    ///
    #[doc = include_str!("contract.md")]
    pub unsafe fn start(gasnet: Gasnet, config: Config) -> Result<Runtime, StartError> {
        let memory = crate::global::Config::from_env().map_err(|e| StartError::Other(e.to_string()))?;
        // SAFETY: the caller's contract, which is start_with_memory's.
        unsafe { Runtime::start_with_memory(gasnet, config, memory) }
    }

    /// [`Runtime::start`] with global memory's settings `memory`.
    ///
    /// # Safety
    ///
    /// As [`Runtime::start`].
    pub unsafe fn start_with_memory(
        gasnet: Gasnet,
        config: Config,
        memory: crate::global::Config,
    ) -> Result<Runtime, StartError> {
        // One layer per process, for the rest of it (the scheduler keeps a
        // `&'static` to it; a second start is refused).
        let layer: &'static crate::global::GlobalMemory = Box::leak(Box::new(crate::global::GlobalMemory::new(memory)));
        // SAFETY: the caller's contract, which is start_with_layer's.
        unsafe { uni_threads::Runtime::start_with_layer(gasnet, config, layer) }.map(Runtime)
    }
}

impl Deref for Runtime {
    type Target = uni_threads::Runtime;

    fn deref(&self) -> &uni_threads::Runtime {
        &self.0
    }
}
