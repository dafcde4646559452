//! How this thread waits for a remote operation it cannot go on without.
//!
//! Every blocking operation of this crate whose completion needs the target
//! to poll (RMA and atomics outside this process's shared-memory
//! neighbourhood; on udp and mpi the target's CPU carries them) is started
//! non-blocking and completed here, and so is every wait for an Active
//! Message reply that a caller paces with [`until`]. By default the wait
//! spins, polling, as GASNet's own blocking calls do: the fastest answer.
//!
//! A thread may instead wait with [`Patience`] ([`patiently`]): it spins for
//! [`Patience::spin`], then sleeps between polls, from
//! [`Patience::first_sleep`] doubling up to [`Patience::max_sleep`]. The
//! scheduler's thieves wait so when lifelines are on: a victim computing
//! without polling (a root in a serial phase, a rank of another node) may
//! not answer for seconds, and a thief spinning on it would keep its core
//! busy with nothing to do. An answer that comes within the spin costs what
//! it cost before; a later one is seen at most one sleep late.
//!
//! Polling while waiting keeps this rank's own duties served: its handlers
//! (other ranks' requests, a dead peer's exit) run at every poll, so they
//! wait at most [`Patience::max_sleep`].

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::Gasnet;

/// How long a patient wait spins before it sleeps, and how it sleeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Patience {
    /// Spinning (polling) for this long first: an answer within it is seen
    /// at once.
    pub spin: Duration,
    /// The first sleep after the spin.
    pub first_sleep: Duration,
    /// The longest sleep between two polls (each sleep doubles the last).
    pub max_sleep: Duration,
}

/// What this thread's waits did, for the caller's statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitCounts {
    /// Waits that outlasted their spin and slept.
    pub slept_waits: u64,
    /// Time those waits spent after their spin (sleeping and polling).
    pub slept: Duration,
}

thread_local! {
    static PATIENCE: Cell<Option<Patience>> = const { Cell::new(None) };
    static COUNTS: Cell<WaitCounts> = const {
        Cell::new(WaitCounts { slept_waits: 0, slept: Duration::ZERO })
    };
}

/// Runs `f` with this thread's waits patient (restored after, also when
/// `f` unwinds).
pub fn patiently<R>(patience: Patience, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Patience>);
    impl Drop for Restore {
        fn drop(&mut self) {
            PATIENCE.with(|p| p.set(self.0));
        }
    }
    let _restore = Restore(PATIENCE.with(|p| p.replace(Some(patience))));
    f()
}

/// Ends this thread's patience for the rest of the [`patiently`] scope it
/// is in: the target answered, and the operations that follow it go at
/// full speed (a thief that claimed an entry must not sleep while its
/// victim waits for the release).
pub fn end_patience() {
    PATIENCE.with(|p| p.set(None));
}

/// This thread's wait counts so far.
pub fn counts() -> WaitCounts {
    COUNTS.with(Cell::get)
}

/// Polls until `done()` holds, spinning, or with this thread's patience
/// (see the module docs). `done` is tested before each poll is awaited, so
/// a condition that already holds costs one call.
#[inline]
pub fn until(gasnet: Gasnet, mut done: impl FnMut() -> bool) {
    if done() {
        return;
    }
    match PATIENCE.with(Cell::get) {
        None => loop {
            gasnet.poll();
            if done() {
                return;
            }
            std::hint::spin_loop();
        },
        Some(patience) => patient(gasnet, patience, &mut done),
    }
}

#[cold]
fn patient(gasnet: Gasnet, patience: Patience, done: &mut dyn FnMut() -> bool) {
    let start = Instant::now();
    loop {
        gasnet.poll();
        if done() {
            return;
        }
        if start.elapsed() >= patience.spin {
            break;
        }
        std::hint::spin_loop();
    }
    let asleep = Instant::now();
    let mut sleep = patience.first_sleep;
    loop {
        std::thread::sleep(sleep);
        sleep = (sleep * 2).min(patience.max_sleep);
        gasnet.poll();
        if done() {
            break;
        }
    }
    let slept = asleep.elapsed();
    COUNTS.with(|c| {
        let mut v = c.get();
        v.slept_waits += 1;
        v.slept += slept;
        c.set(v);
    });
}
