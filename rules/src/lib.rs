//! Facts that both the runtime and the launcher need, stated once (this
//! crate has no dependencies, so the launcher can use it without building
//! GASNet).
//!
//! **Oversubscription.** Every rank's worker spins (stealing, polling); in
//! `rdma-emulated` mode its communication-assisting thread spins too. A host
//! with more spinning threads than cores gives timings that are not
//! representative (a spinning thread waits for a time slice instead of a
//! message): the benchmarks label such runs `"oversubscribed": true`, the
//! reproduction skips them unless asked, and a poller yields instead of
//! spinning.
//!
//! **Which GASNet-EX** a build compiles against (an installed one, by
//! `GASNET_PREFIX` or pkg-config, or the bundled 2021.3.0), and whether an
//! installed one fits: [`gasnet`], for gasnet-sys's build script and the
//! launcher.

pub mod gasnet;
pub mod hosts;
mod names;

pub use names::{Conduit, FadMode};

/// Spinning threads per rank: the worker, plus the polling thread when the
/// mode has one (`rdma-emulated`).
pub fn spinning_threads_per_rank(has_polling_thread: bool) -> usize {
    1 + has_polling_thread as usize
}

/// Whether `ranks_on_host` ranks with `threads_per_rank` spinning threads
/// each outnumber `cores`.
pub fn oversubscribed(ranks_on_host: usize, threads_per_rank: usize, cores: usize) -> bool {
    ranks_on_host.saturating_mul(threads_per_rank) > cores
}

/// Whether a polling thread may spin: the host has a core for every rank's
/// worker and polling thread.
pub fn polling_thread_may_spin(ranks_on_host: usize, cores: usize) -> bool {
    !oversubscribed(ranks_on_host, spinning_threads_per_rank(true), cores)
}

/// This machine's cores (those the process may use).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polling_threads_count_as_spinning_threads() {
        assert!(!oversubscribed(2, spinning_threads_per_rank(false), 2));
        assert!(oversubscribed(2, spinning_threads_per_rank(true), 2));
        assert!(!oversubscribed(8, spinning_threads_per_rank(true), 16));
        assert!(polling_thread_may_spin(8, 16));
        assert!(!polling_thread_may_spin(2, 2));
    }
}
