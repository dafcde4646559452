//! The communication-assisting thread of the `rdma-emulated` mode: one per
//! process, polling GASNet continuously so that remote fetch-and-add
//! requests are served without interrupting the worker (IPSJ 2016 §6.2).
//!
//! The trade-off: it needs a core of its own. Measured with `micro fad` on a
//! 16-core Xeon (docs/results/2026-11-22-xeon16-scaling): with 1, 7 and 15
//! ranks hammering one victim, the victim ran at 0.96–1.00× its unloaded
//! speed (the AM mode: 1.19×, 1.59×, 1.76×), while a request took 1.9, 4.0
//! and 10.9 µs (the AM mode: 1.1, 3.0, 6.1 µs; native atomics 0.02–0.6 µs).
//! With more spinning threads than cores (2 workers + 2 pollers on 2 cores
//! measured ~8 ms per fetch-and-add) the pollers starve the workers and each
//! other; `yield` mode (`sched_yield` after every empty poll) keeps the
//! latency near 1.5 µs there, at some cost on an idle machine. The default
//! is `spin` when the host has at least two cores per rank, `yield`
//! otherwise; the runtime labels runs with more spinning threads than cores
//! as oversubscribed.
//!
//! Blocking GASNet calls of the worker (RMA, barriers) also poll internally:
//! while the worker waits in one, it serves messages too.
//!
//! The thread stops before GASNet shuts down on every exit path: a normal
//! exit, a fatal error on any thread, a panic ([`Gasnet::at_exit`]).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gasnet_sys::Gasnet;

/// How the poller waits between polls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollerMode {
    /// Polls continuously (a core of its own).
    Spin,
    /// Yields between polls (sharing a core).
    Yield,
}

impl PollerMode {
    /// The name in `UAT_POLLER` and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            PollerMode::Spin => "spin",
            PollerMode::Yield => "yield",
        }
    }
}

/// Set when the job ends: every poller stops.
static EXITING: AtomicBool = AtomicBool::new(false);
/// Poller threads running in this process.
static RUNNING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread is a poller (the exit hook must not wait for
    /// itself).
    static IS_POLLER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A running communication-assisting thread.
pub struct Poller {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// How it waits between polls.
    pub mode: PollerMode,
    /// The core it is pinned to, if any.
    pub core: Option<usize>,
}

impl Poller {
    /// Starts polling on a new thread, pinned to `core` if given (the caller
    /// has checked that this process may run on it: [`check_core`]).
    pub fn start(gasnet: Gasnet, mode: PollerMode, core: Option<usize>) -> std::io::Result<Poller> {
        static HOOKED: std::sync::Once = std::sync::Once::new();
        HOOKED.call_once(|| gasnet.at_exit(stop_for_exit));
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        RUNNING.fetch_add(1, Ordering::AcqRel);
        let spawned = std::thread::Builder::new().name("uat-poller".into()).spawn(move || {
            IS_POLLER.with(|p| p.set(true));
            let pinned = core.map_or(Ok(()), pin_to);
            let ok = pinned.is_ok();
            let _ = started_tx.send(pinned);
            while ok && !flag.load(Ordering::Acquire) && !EXITING.load(Ordering::Acquire) {
                gasnet.poll();
                match mode {
                    PollerMode::Spin => std::hint::spin_loop(),
                    PollerMode::Yield => std::thread::yield_now(),
                }
            }
            RUNNING.fetch_sub(1, Ordering::AcqRel);
        });
        let thread = match spawned {
            Ok(t) => t,
            Err(e) => {
                RUNNING.fetch_sub(1, Ordering::AcqRel);
                return Err(e);
            }
        };
        match started_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(e);
            }
            Err(_) => return Err(std::io::Error::other("the poller thread died at start")),
        }
        Ok(Poller {
            stop,
            thread: Some(thread),
            mode,
            core,
        })
    }

    /// Stops the thread and waits for it.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The exit hook: stops every poller before GASNet shuts down. Called on the
/// thread that ends the job; waits (at most 2 s: a poll returns in
/// microseconds) for the pollers to leave GASNet, except for the caller
/// itself when it is a poller (a handler failed).
fn stop_for_exit() {
    EXITING.store(true, Ordering::Release);
    let own = IS_POLLER.with(|p| p.get()) as usize;
    let deadline = Instant::now() + Duration::from_secs(2);
    while RUNNING.load(Ordering::Acquire) > own && Instant::now() < deadline {
        std::thread::yield_now();
    }
}

/// Cores this process may run on (its affinity mask), in ascending order.
pub fn allowed_cores() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Whether this process may pin a thread to `core`; an error naming the
/// allowed cores otherwise.
pub fn check_core(core: usize) -> Result<(), String> {
    let allowed = allowed_cores();
    if allowed.contains(&core) {
        return Ok(());
    }
    Err(format!(
        "core {core} is not one this process may run on (allowed: {})",
        describe_cores(&allowed)
    ))
}

/// "0-3,8" for [0, 1, 2, 3, 8].
fn describe_cores(cores: &[usize]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < cores.len() {
        let mut j = i;
        while j + 1 < cores.len() && cores[j + 1] == cores[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cores[i].to_string()
        } else {
            format!("{}-{}", cores[i], cores[j])
        });
        i = j + 1;
    }
    if out.is_empty() {
        "none".into()
    } else {
        out.join(",")
    }
}

fn pin_to(core: usize) -> std::io::Result<()> {
    if core >= libc::CPU_SETSIZE as usize {
        return Err(std::io::Error::other(format!("core {core} is out of range")));
    }
    // SAFETY: a zeroed cpu_set_t is empty; CPU_SET writes within it (core
    // checked above); the call affects only this thread (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The default mode for `ranks_on_host` ranks on this host: spin when the
/// host has a core for every worker and poller (`uat-rules`).
pub fn default_mode(ranks_on_host: usize) -> PollerMode {
    if uat_rules::polling_thread_may_spin(ranks_on_host, uat_rules::cores()) {
        PollerMode::Spin
    } else {
        PollerMode::Yield
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_lists_are_described_as_ranges() {
        assert_eq!(describe_cores(&[0, 1, 2, 3, 8]), "0-3,8");
        assert_eq!(describe_cores(&[5]), "5");
        assert_eq!(describe_cores(&[]), "none");
    }

    #[test]
    fn a_core_outside_the_affinity_mask_is_refused() {
        assert!(check_core(libc::CPU_SETSIZE as usize + 5).is_err());
        let allowed = allowed_cores();
        assert!(!allowed.is_empty());
        assert!(check_core(allowed[0]).is_ok());
    }
}
