//! Errors a user can act on: bad launch, bad configuration, GASNet failures.

use std::fmt;

/// What went wrong, phrased so that the message says what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A udp/mpi/ibv program was started without its launcher.
    NotLaunched {
        /// The conduit's name.
        conduit: &'static str,
        /// What was missing.
        why: String,
        /// The variable the launcher sets (`LAUNCHED_ENV`).
        launched_env: &'static str,
    },
    /// `Gasnet::init` was called twice in one process.
    AlreadyInitialized,
    /// `Gasnet::init` was called while other threads ran (it sets
    /// environment variables, which no other thread may read meanwhile).
    ThreadsRunning {
        /// Threads of the process.
        threads: usize,
    },
    /// `gex_Client_Init` failed.
    Init {
        /// GASNet's error code.
        code: i32,
        /// Its name (`gasnet_ErrorName`).
        name: String,
    },
    /// A segment larger than GASNet allows on this machine was requested.
    SegmentTooLarge {
        /// Bytes asked for.
        requested: usize,
        /// The most GASNet allows here.
        max: usize,
    },
    /// `gex_Segment_Attach` failed.
    Attach {
        /// GASNet's error code.
        code: i32,
        /// Its name (`gasnet_ErrorName`).
        name: String,
        /// Bytes asked for.
        requested: usize,
    },
    /// Active Message handler registration was refused.
    Handlers {
        /// GASNet's reason.
        why: String,
    },
    /// The launcher asked for emulated hosts (`--hosts`) and GASNet made
    /// another number of neighbourhoods.
    Hosts {
        /// Hosts the launcher asked for.
        asked: u32,
        /// Neighbourhoods GASNet made.
        made: u32,
    },
    /// `UAT_LAUNCHED_HOSTS` is not a number.
    LaunchedHosts {
        /// Its value.
        text: String,
    },
    /// GASNet's neighbourhoods do not map every rank to one host.
    HostMap {
        /// The neighbourhoods GASNet reported.
        neighbourhoods: u32,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MIB: f64 = (1u64 << 20) as f64;
        match self {
            Error::NotLaunched { conduit, why, launched_env } => write!(
                f,
                "this is a {conduit}-conduit program and it was not started by its launcher ({why}).\n\
                 Start it with the launcher: cargo uat run --conduit {conduit} -n <ranks> [--bin <name> | <program>] [-- <args>...]\n\
                 (launching by hand with the conduit's own launcher also works: set {launched_env}=1 for it)"
            ),
            Error::AlreadyInitialized => write!(f, "GASNet-EX is already initialised in this process (Gasnet::init may be called once)"),
            Error::ThreadsRunning { threads } => write!(
                f,
                "Gasnet::init was called while {threads} threads run: call it (or uat::cli::start) first thing in main, \
                 before any thread is started"
            ),
            Error::Init { code, name } => write!(f, "GASNet-EX client initialisation failed: {name} (code {code})"),
            Error::SegmentTooLarge { requested, max } => write!(
                f,
                "a GASNet segment of {:.1} MiB was requested but this machine allows at most {:.1} MiB per process; \
                 ask for less, or raise GASNet's limit with GASNET_MAX_SEGSIZE (e.g. GASNET_MAX_SEGSIZE=4G, at most the physical memory shared by the ranks of a host)",
                *requested as f64 / MIB,
                *max as f64 / MIB
            ),
            Error::Attach { code, name, requested } => write!(
                f,
                "attaching a GASNet segment of {:.1} MiB failed: {name} (code {code}); try a smaller segment or a larger GASNET_MAX_SEGSIZE",
                *requested as f64 / MIB
            ),
            Error::Handlers { why } => write!(f, "Active Message handler registration failed: {why}"),
            Error::LaunchedHosts { text } => write!(
                f,
                "{}={text}: expected the number of hosts the launcher asked for",
                uat_rules::hosts::LAUNCHED_HOSTS_ENV
            ),
            Error::HostMap { neighbourhoods } => write!(
                f,
                "GASNet reported {neighbourhoods} shared-memory neighbourhoods that do not map every rank to one \
                 host (the ranks this one shares memory with differ from its neighbourhood's): cannot place ranks on hosts"
            ),
            Error::Hosts { asked, made } => write!(
                f,
                "the launcher asked for {asked} hosts ({}) but GASNet made {made} shared-memory neighbourhoods: \
                 this GASNet build may lack PSHM, or {} was changed by hand",
                uat_rules::hosts::LAUNCHED_HOSTS_ENV,
                uat_rules::hosts::SUPERNODE_MAXSIZE_ENV
            ),
        }
    }
}

impl std::error::Error for Error {}
