//! When a job's timings are not representative (the rule itself lives in
//! `uat-rules`, shared with the runtime's `oversubscribed` label): more
//! spinning threads on a host than it has cores. The reproduction script
//! asks `cargo uat oversubscribed` before it runs a row.

use crate::variant::Fad;

pub use uat_rules::cores;

/// Whether `ranks_on_host` ranks in mode `fad` oversubscribe `cores`.
pub fn oversubscribed(ranks_on_host: usize, fad: Fad, cores: usize) -> bool {
    let per_rank = uat_rules::spinning_threads_per_rank(fad == Fad::RdmaEmulated);
    uat_rules::oversubscribed(ranks_on_host, per_rank, cores)
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
