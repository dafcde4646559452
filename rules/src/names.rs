//! The names of a build variant's parts, declared once: the GASNet-EX
//! conduit and the remote fetch-and-add mode. gasnet-sys (and its build
//! script), am-fad and the launcher use these; the names are contracts
//! (cargo features, `--conduit`/`--fad`, JSON fields, target directories).

use std::fmt;
use std::str::FromStr;

/// A GASNet-EX conduit (network back end).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
    /// Every conduit.
    pub const ALL: [Conduit; 4] = [Conduit::Smp, Conduit::Udp, Conduit::Mpi, Conduit::Ibv];

    /// The name in cargo features, `--conduit`, scripts and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            Conduit::Smp => "smp",
            Conduit::Udp => "udp",
            Conduit::Mpi => "mpi",
            Conduit::Ibv => "ibv",
        }
    }
}

/// A remote fetch-and-add mode (IPSJ 2016's two, and GASNet-EX atomics).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FadMode {
    /// GASNet-EX remote atomics.
    Native,
    /// Active Messages served by the worker at its poll points.
    Am,
    /// Active Messages served by a communication-assisting polling thread.
    RdmaEmulated,
}

impl FadMode {
    /// Every mode.
    pub const ALL: [FadMode; 3] = [FadMode::Native, FadMode::Am, FadMode::RdmaEmulated];

    /// The name in `--fad`, scripts, target directories and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            FadMode::Native => "native",
            FadMode::Am => "am",
            FadMode::RdmaEmulated => "rdma-emulated",
        }
    }

    /// The cargo feature of `uat` (and am-fad) that selects it.
    pub fn feature(self) -> String {
        format!("fad-{}", self.name())
    }
}

fn parse<T: Copy>(all: &[T], name: fn(T) -> &'static str, what: &str, s: &str) -> Result<T, String> {
    all.iter().copied().find(|v| name(*v) == s).ok_or_else(|| {
        let names: Vec<_> = all.iter().map(|v| name(*v)).collect();
        format!("unknown {what} '{s}' (one of: {})", names.join(", "))
    })
}

impl FromStr for Conduit {
    type Err = String;
    fn from_str(s: &str) -> Result<Conduit, String> {
        parse(&Conduit::ALL, Conduit::name, "conduit", s)
    }
}

impl FromStr for FadMode {
    type Err = String;
    fn from_str(s: &str) -> Result<FadMode, String> {
        parse(&FadMode::ALL, FadMode::name, "fetch-and-add mode", s)
    }
}

impl fmt::Display for Conduit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for FadMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_listed() {
        for c in Conduit::ALL {
            assert_eq!(c.name().parse::<Conduit>(), Ok(c));
        }
        for m in FadMode::ALL {
            assert_eq!(m.name().parse::<FadMode>(), Ok(m));
            assert_eq!(m.feature(), format!("fad-{m}"));
        }
        assert_eq!("tcp".parse::<Conduit>().unwrap_err(), "unknown conduit 'tcp' (one of: smp, udp, mpi, ibv)");
        assert!("rdma".parse::<FadMode>().unwrap_err().contains("native, am, rdma-emulated"));
    }
}
