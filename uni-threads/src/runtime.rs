//! Starting the runtime on every rank and running a root task (SPMD).

use std::fmt;

use am_fad::DequeLock;
use gasnet_sys::Gasnet;

use crate::arena::{self, ArenaError, Layout, ARENA_BASE, FINISHED_WORD, GUARD_SIZE, LOCK_WORD};
use crate::collective;
use crate::config::Config;
use crate::context::{save_context_and_call, start_on_stack};
use crate::deque::Deque;
use crate::future::{CellPool, CellRef, MAX_RESULT_SIZE};
use crate::rdma::RdmaAlloc;
use crate::scheduler;
use crate::spawn::{complete, run_task};
use crate::stats::{Counters, Stats};
use crate::worker::{self, worker, Worker};

/// Bytes of the scheduler's native stack.
const SCHED_STACK: usize = 1 << 20;

/// Why the runtime could not start.
#[derive(Debug)]
pub enum StartError {
    Arena(ArenaError),
    Other(String),
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartError::Arena(e) => e.fmt(f),
            StartError::Other(e) => f.write_str(e),
        }
    }
}

/// The runtime of this process, started on every rank.
pub struct Runtime {
    gasnet: Gasnet,
}

impl Runtime {
    /// Starts the runtime: maps the arena (attaching the GASNet segment),
    /// sets up the deque, the future cells and the stack guard. Collective:
    /// every rank calls it once, after GASNet's init, with the same config.
    pub fn start(gasnet: Gasnet, config: Config) -> Result<Runtime, StartError> {
        let (rank, ranks) = (gasnet.rank(), gasnet.size());
        let layout = Layout::new(&config, ranks);
        let lock = DequeLock::new(gasnet).map_err(|e| StartError::Other(e.to_string()))?;
        gasnet
            .register_handlers(&crate::future::handlers())
            .map_err(|e| StartError::Other(e.to_string()))?;
        arena::map(gasnet, &layout).map_err(StartError::Arena)?;
        check_same_addresses(gasnet, &layout)?;
        // SAFETY: the arena is mapped with `layout`; one deque and one pool
        // per process.
        let (deque, cells) = unsafe {
            (
                Deque::new(&layout, arena::remote(gasnet, rank, ARENA_BASE + LOCK_WORD)),
                CellPool::new(&layout, rank),
            )
        };
        deque.init(&lock);
        let seed = config.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        });
        let sched_stack_top = map_native_stack(SCHED_STACK)
            .map_err(|e| StartError::Other(format!("cannot map the scheduler stack: {e}")))?;
        worker::install(Worker {
            gasnet,
            rank,
            ranks,
            rdma: RdmaAlloc::new(Layout::addr(layout.rdma), layout.rdma_size).into(),
            config: config.clone(),
            layout,
            top: layout.stack_top().into(),
            deque,
            cells,
            lock,
            waiters: Vec::new().into(),
            suspending: None.into(),
            sched_stack_top,
            main_ctx: 0.into(),
            poll_countdown: config.poll_interval.into(),
            counters: Counters::default(),
            victims: crate::steal::VictimRng::new(seed, rank),
            run_id: 0.into(),
            handler_cycles_at_start: 0.into(),
            poller: start_poller(gasnet, &config)?.into(),
        });
        crate::guard::install(
            gasnet,
            Layout::addr(layout.guard),
            Layout::addr(layout.guard) + GUARD_SIZE,
            layout.stack_size,
        )
        .map_err(|e| StartError::Other(format!("cannot install the stack-overflow handler: {e}")))?;
        if config.verbose && rank == 0 {
            eprintln!("{}", describe(&config, &layout, ranks));
        }
        gasnet.barrier();
        Ok(Runtime { gasnet })
    }

    /// Runs `root` as the root task and returns its result on rank 0 (`None`
    /// on the other ranks, which serve and steal meanwhile). Collective:
    /// every rank calls it, in the same order.
    pub fn run<F, T>(&self, root: F) -> Option<T>
    where
        F: FnOnce() -> T + Send + Copy + 'static,
        T: Send + Copy + 'static,
    {
        const {
            assert!(
                std::mem::size_of::<T>() <= MAX_RESULT_SIZE,
                "the root task's result must fit a future cell (48 bytes)"
            )
        };
        let w = worker();
        w.run_id.set(w.run_id.get() + 1);
        w.counters.reset();
        w.handler_cycles_at_start.set(am_fad::handler_cycles());
        let cell = if w.rank == 0 { w.cells.alloc() } else { None };
        self.gasnet.barrier();
        let root_cell = cell.map_or(0, |c| c.addr);
        // SAFETY: enter_run never returns; this native-stack frame is resumed
        // through main_ctx once the job is over, untouched meanwhile.
        unsafe { save_context_and_call(enter_run::<F, T>, &root as *const F as usize, root_cell) };
        self.gasnet.barrier();
        cell.map(|c| {
            assert!(c.is_done_local(), "the root task's result is missing");
            // SAFETY: done, holding the root's T.
            let v = unsafe { c.result_local::<T>() };
            worker().cells.free(c);
            v
        })
    }

    /// The scheduler's counters of the last run, summed over all ranks
    /// (collective). Valid on rank 0.
    pub fn stats(&self) -> Stats {
        let w = worker();
        let mut mine = w.counters.snapshot();
        mine.msg_handling_cycles += am_fad::handler_cycles() - w.handler_cycles_at_start.get();
        let mut total = Stats::default();
        for words in collective::gather(self.gasnet, &w.layout, &mine.to_words()) {
            total.accumulate(&Stats::from_words(words.try_into().expect("a rank's stats words")));
        }
        total
    }

    /// Rank 0's `value`, on every rank (collective).
    pub fn broadcast(&self, value: u64) -> u64 {
        collective::broadcast(self.gasnet, &worker().layout, &[value])[0]
    }

    /// Sums `value` over all ranks (collective); the sum on rank 0, 0 elsewhere.
    pub fn sum_over_ranks(&self, value: u64) -> u64 {
        collective::gather(self.gasnet, &worker().layout, &[value])
            .iter()
            .map(|w| w[0])
            .sum()
    }

    /// How this build's remote fetch-and-adds travel on this job:
    /// `shared-memory` (native atomics in the PSHM neighbourhood: truly
    /// one-sided) or `active-messages` (the AM modes always; `native` when
    /// GASNet carries its atomic domain by AMs, i.e. ranks on other hosts or
    /// no shared supernode).
    pub fn fad_path(&self) -> &'static str {
        if am_fad::MODE == am_fad::Mode::Native && self.gasnet.neighbourhood().len() == self.gasnet.size() as usize {
            "shared-memory"
        } else {
            "active-messages"
        }
    }

    /// How a polling thread of this runtime waits (`UAT_POLLER`, or the
    /// default for this host's rank count).
    pub fn poller_mode(&self) -> am_fad::poller::PollerMode {
        poller_mode(self.gasnet, self.config())
    }

    /// Whether this host runs more spinning threads (workers, plus pollers in
    /// `rdma-emulated` mode) than it has cores: timings are then not
    /// representative, and reports label them.
    pub fn oversubscribed(&self) -> bool {
        let per_rank = if worker().poller.borrow().is_some() { 2 } else { 1 };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.gasnet.host_ranks().len() * per_rank > cores
    }

    /// Stops the communication-assisting thread (if any) and ends the job
    /// with `code` on every rank (`gasnet_exit`). Call it after a final
    /// barrier, once no rank needs this one's service any more.
    pub fn exit(&self, code: i32) -> ! {
        if let Some(poller) = worker().poller.borrow_mut().take() {
            poller.stop();
        }
        self.gasnet.exit(code)
    }

    pub fn gasnet(&self) -> Gasnet {
        self.gasnet
    }

    pub fn config(&self) -> &Config {
        &worker().config
    }
}

unsafe extern "C-unwind" fn enter_run<F, T>(main_ctx: *mut u8, root: usize, root_cell: usize)
where
    F: FnOnce() -> T + Copy + 'static,
    T: Copy + 'static,
{
    let w = worker();
    w.main_ctx.set(main_ctx as usize);
    if w.rank == 0 {
        // SAFETY: a fresh start at the top of the empty stack region.
        unsafe { start_on_stack(w.layout.stack_top(), root_thread::<F, T>, root, root_cell) }
    }
    scheduler::enter()
}

/// The root thread: the base of the first uni-address stack.
unsafe extern "C-unwind" fn root_thread<F, T>(root: usize, root_cell: usize)
where
    F: FnOnce() -> T + Copy + 'static,
    T: Copy + 'static,
{
    // SAFETY: `root` points to the closure in Runtime::run's frame, which
    // stays in place while the job runs; F is Copy.
    let f = unsafe { std::ptr::read(root as *const F) };
    let w = worker();
    w.top.set(w.layout.stack_top());
    let value = run_task(f);
    complete(
        CellRef {
            addr: root_cell,
            rank: 0,
        },
        value,
    );
    // Tell every rank (this one included) that the job is over. The root
    // joined all its tasks, so no thread is left anywhere.
    let w = worker();
    for r in 0..w.ranks {
        w.gasnet.put_u64(
            r,
            arena::remote(w.gasnet, r, ARENA_BASE + FINISHED_WORD),
            w.run_id.get(),
        );
    }
    scheduler::enter()
}

/// How a polling thread waits: `UAT_POLLER` if set, else spin when this
/// host has a core for every rank's worker and poller.
pub(crate) fn poller_mode(gasnet: Gasnet, config: &Config) -> am_fad::poller::PollerMode {
    match config.poller_yield {
        Some(true) => am_fad::poller::PollerMode::Yield,
        Some(false) => am_fad::poller::PollerMode::Spin,
        None => am_fad::poller::default_mode(gasnet.host_ranks().len()),
    }
}

/// Starts the communication-assisting thread in `rdma-emulated` mode.
fn start_poller(gasnet: Gasnet, config: &Config) -> Result<Option<am_fad::poller::Poller>, StartError> {
    if am_fad::MODE != am_fad::Mode::RdmaEmulated {
        return Ok(None);
    }
    am_fad::poller::Poller::start(gasnet, poller_mode(gasnet, config), config.poller_core)
        .map(Some)
        .map_err(|e| StartError::Other(format!("cannot start the communication-assisting thread: {e}")))
}

/// Every rank must run the same executable at the same addresses: a
/// continuation's return addresses and the statics it names must mean the
/// same thing wherever it resumes. Compares a function's, a static's and
/// the arena's address and the executable's size across ranks.
fn check_same_addresses(gasnet: Gasnet, layout: &Layout) -> Result<(), StartError> {
    static PROBE: u64 = 0;
    let exe_len = std::fs::metadata("/proc/self/exe").map_or(0, |m| m.len());
    let mine = [
        check_same_addresses as *const () as u64,
        &PROBE as *const u64 as u64,
        ARENA_BASE as u64,
        exe_len,
    ];
    let theirs = collective::broadcast(gasnet, layout, &mine);
    if theirs != mine {
        let what = ["a function", "a static", "the arena", "the executable's size"];
        let i = (0..4).find(|&i| theirs[i] != mine[i]).unwrap_or(0);
        return Err(StartError::Other(format!(
            "rank {} differs from rank 0 in {}: {:#x} here, {:#x} on rank 0. All ranks must run the same executable, \
             built non-PIE (the root package's build.rs passes -no-pie; a binary built elsewhere must be linked with -no-pie \
             or -C relocation-model=static), from the same file on every node",
            gasnet.rank(),
            what[i],
            mine[i],
            theirs[i]
        )));
    }
    Ok(())
}

/// A private read-write stack with a guard page below; returns its top.
fn map_native_stack(size: usize) -> std::io::Result<usize> {
    // SAFETY: a fresh anonymous mapping, never unmapped.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            size + 4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        if libc::mprotect(p, 4096, libc::PROT_NONE) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(p as usize + size + 4096)
    }
}

/// The start-up banner (`UAT_VERBOSE=1`).
pub fn describe(c: &Config, l: &Layout, ranks: u32) -> String {
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    format!(
        "uni-address threads: conduit={} fad={} ranks={ranks} arena={:#x}+{:.1}MiB \
         stack={:.1}MiB deque={} entries future_cells={} rdma_region={:.1}MiB guard={}KiB \
         poll_interval={} empty_check={} poller={}",
        gasnet_sys::CONDUIT.name(),
        am_fad::MODE.name(),
        ARENA_BASE,
        mib(l.total),
        mib(l.stack_size),
        l.deque_capacity,
        l.cell_count,
        mib(l.rdma_size),
        GUARD_SIZE >> 10,
        c.poll_interval,
        if c.empty_check { "on" } else { "off" },
        worker()
            .poller
            .borrow()
            .as_ref()
            .map_or("none".to_string(), |p| format!(
                "{}{}",
                p.mode.name(),
                p.core.map_or(String::new(), |c| format!("@core{c}"))
            )),
    )
}
