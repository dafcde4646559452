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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use gasnet_sys::Gasnet;

/// How the poller waits between polls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollerMode {
    Spin,
    Yield,
}

impl PollerMode {
    pub fn name(self) -> &'static str {
        match self {
            PollerMode::Spin => "spin",
            PollerMode::Yield => "yield",
        }
    }
}

/// A running communication-assisting thread.
pub struct Poller {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    pub mode: PollerMode,
    pub core: Option<usize>,
}

impl Poller {
    /// Starts polling on a new thread, pinned to `core` if given.
    pub fn start(gasnet: Gasnet, mode: PollerMode, core: Option<usize>) -> std::io::Result<Poller> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new().name("uat-poller".into()).spawn(move || {
            if let Some(core) = core {
                pin_to(core);
            }
            while !flag.load(Ordering::Relaxed) {
                gasnet.poll();
                match mode {
                    PollerMode::Spin => std::hint::spin_loop(),
                    PollerMode::Yield => std::thread::yield_now(),
                }
            }
        })?;
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
        self.stop.store(true, Ordering::Relaxed);
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

fn pin_to(core: usize) {
    // SAFETY: a zeroed cpu_set_t is empty; CPU_SET writes within it; the
    // call affects only this thread (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            eprintln!(
                "[am-fad] cannot pin the poller to core {core}: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// The default mode for `ranks_on_host` ranks on this host.
pub fn default_mode(ranks_on_host: usize) -> PollerMode {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores >= 2 * ranks_on_host {
        PollerMode::Spin
    } else {
        PollerMode::Yield
    }
}
