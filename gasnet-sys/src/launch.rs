//! Refuses to start a multi-process conduit without its launcher.
//!
//! A udp program started by hand reads its first argument as the number of
//! ranks to spawn (`nqueens 8000` would fork 8,000 processes), and mpi or ibv
//! programs started without `mpirun`/`gasnetrun_ibv` run as a lonely singleton
//! or fail deep inside GASNet. So before GASNet sees the arguments, we check
//! that a launcher started us:
//!
//! - [`LAUNCHED_ENV`] (set by `cargo uat run`, or by hand when launching with
//!   the conduit's own tools), or
//! - a process the conduit's spawner itself started (amudp workers carry
//!   `AMUDP_WORKER_ARGS`; MPI and PMI launchers set their own variables;
//!   GASNet's ssh spawner passes `-GASNET-SPAWN-` arguments).
//!
//! A udp master additionally needs its rank count, a positive integer, as the
//! first argument. smp needs no launcher (`GASNET_PSHM_NODES` forks the ranks;
//! unset means one rank).

use crate::{Conduit, Error};

/// Environment variable that says "a launcher started this process".
pub const LAUNCHED_ENV: &str = "UAT_LAUNCHED";

/// Variables set by MPI/PMI launchers in every process they start.
const MPI_LAUNCH_ENV: [&str; 6] = [
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "PMI_RANK",
    "PMIX_RANK",
    "MPI_LOCALNRANKS",
    "MV2_COMM_WORLD_SIZE",
];

/// Checks `args` (the whole argv) and the environment (`env`) for `conduit`.
pub(crate) fn check(conduit: Conduit, args: &[String], env: impl Fn(&str) -> Option<String>) -> Result<(), Error> {
    let set = |var: &str| env(var).is_some_and(|v| !v.is_empty());
    let by_us = set(LAUNCHED_ENV);
    let not_launched = |why: &str| {
        Err(Error::NotLaunched {
            conduit: conduit.name(),
            why: why.to_string(),
            launched_env: LAUNCHED_ENV,
        })
    };
    match conduit {
        Conduit::Smp => Ok(()),
        Conduit::Udp => {
            if set("AMUDP_WORKER_ARGS") {
                return Ok(()); // a worker spawned by the udp master
            }
            if !by_us {
                return not_launched(&format!("{LAUNCHED_ENV} is not set"));
            }
            match args.get(1).map(|a| a.parse::<u32>()) {
                Some(Ok(n)) if n > 0 => Ok(()),
                _ => not_launched("a udp program's first argument must be its rank count"),
            }
        }
        Conduit::Mpi => {
            if by_us || MPI_LAUNCH_ENV.iter().any(|v| set(v)) {
                Ok(())
            } else {
                not_launched("no MPI launcher environment found")
            }
        }
        Conduit::Ibv => {
            let spawned = args.iter().any(|a| a.starts_with("-GASNET-SPAWN-")) || set("GASNET_SPAWN_CONTROL");
            if by_us || spawned || MPI_LAUNCH_ENV.iter().any(|v| set(v)) {
                Ok(())
            } else {
                not_launched("no gasnetrun_ibv, ssh-spawner or MPI environment found")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn smp_needs_no_launcher() {
        assert!(check(Conduit::Smp, &argv(&["prog", "12"]), env_of(&[])).is_ok());
    }

    #[test]
    fn udp_refuses_a_direct_start_even_with_a_number() {
        // `nqueens 8000` must never become 8,000 processes.
        let e = check(Conduit::Udp, &argv(&["nqueens", "8000"]), env_of(&[])).unwrap_err();
        assert!(e.to_string().contains("cargo uat run --conduit udp"), "{e}");
    }

    #[test]
    fn udp_master_needs_its_rank_count() {
        let env = env_of(&[(LAUNCHED_ENV, "udp")]);
        assert!(check(Conduit::Udp, &argv(&["prog", "4", "--x"]), &env).is_ok());
        assert!(check(Conduit::Udp, &argv(&["prog", "--x"]), &env).is_err());
        assert!(check(Conduit::Udp, &argv(&["prog", "0"]), &env).is_err());
        assert!(check(Conduit::Udp, &argv(&["prog"]), &env).is_err());
    }

    #[test]
    fn udp_worker_is_accepted() {
        assert!(check(Conduit::Udp, &argv(&["prog"]), env_of(&[("AMUDP_WORKER_ARGS", "x")])).is_ok());
    }

    #[test]
    fn mpi_accepts_mpirun_and_refuses_a_direct_start() {
        assert!(check(Conduit::Mpi, &argv(&["prog"]), env_of(&[("OMPI_COMM_WORLD_SIZE", "2")])).is_ok());
        assert!(check(Conduit::Mpi, &argv(&["prog"]), env_of(&[])).is_err());
        assert!(check(Conduit::Mpi, &argv(&["prog"]), env_of(&[(LAUNCHED_ENV, "")])).is_err());
    }

    #[test]
    fn ibv_accepts_its_spawners() {
        assert!(check(Conduit::Ibv, &argv(&["prog", "-GASNET-SPAWN-slave"]), env_of(&[])).is_ok());
        assert!(check(Conduit::Ibv, &argv(&["prog"]), env_of(&[(LAUNCHED_ENV, "1")])).is_ok());
        assert!(check(Conduit::Ibv, &argv(&["prog"]), env_of(&[])).is_err());
    }
}
