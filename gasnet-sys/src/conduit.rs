//! The conduit this build was made for.

/// A GASNet-EX conduit (network back end).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conduit {
    /// Shared memory on one host; `GASNET_PSHM_NODES=N` forks N ranks.
    Smp,
    /// UDP; ranks spawned by amudp (`GASNET_SPAWNFN`, `amudprun`).
    Udp,
    /// MPI as transport; ranks started by `mpirun`.
    Mpi,
    /// InfiniBand verbs; ranks started by `gasnetrun_ibv`.
    Ibv,
}

impl Conduit {
    /// The conduit's name as used in features, scripts and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            Conduit::Smp => "smp",
            Conduit::Udp => "udp",
            Conduit::Mpi => "mpi",
            Conduit::Ibv => "ibv",
        }
    }
}

impl std::fmt::Display for Conduit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The conduit selected by this build's cargo feature.
#[cfg(feature = "smp")]
pub const CONDUIT: Conduit = Conduit::Smp;
/// The conduit selected by this build's cargo feature.
#[cfg(feature = "udp")]
pub const CONDUIT: Conduit = Conduit::Udp;
/// The conduit selected by this build's cargo feature.
#[cfg(feature = "mpi")]
pub const CONDUIT: Conduit = Conduit::Mpi;
/// The conduit selected by this build's cargo feature.
#[cfg(feature = "ibv")]
pub const CONDUIT: Conduit = Conduit::Ibv;
