//! When a job's timings are not representative: more spinning threads on a
//! host than it has cores. Every rank's worker spins; in `rdma-emulated`
//! mode its communication-assisting thread spins too. The runtime labels
//! its JSON with the same rule (`oversubscribed`), and the reproduction
//! script asks `cargo uat oversubscribed` before it runs a row.

use crate::variant::Fad;

/// Spinning threads per rank in mode `fad`.
pub fn spinning_threads_per_rank(fad: Fad) -> usize {
    match fad {
        Fad::RdmaEmulated => 2,
        Fad::Native | Fad::Am => 1,
    }
}

/// Whether `ranks_on_host` ranks in mode `fad` oversubscribe `cores`.
pub fn oversubscribed(ranks_on_host: usize, fad: Fad, cores: usize) -> bool {
    ranks_on_host * spinning_threads_per_rank(fad) > cores
}

/// This machine's cores (what the process may use).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pollers_count_as_spinning_threads() {
        assert!(!oversubscribed(2, Fad::Native, 2));
        assert!(oversubscribed(2, Fad::RdmaEmulated, 2));
        assert!(!oversubscribed(8, Fad::RdmaEmulated, 16));
        assert!(oversubscribed(3, Fad::Am, 2));
    }
}
