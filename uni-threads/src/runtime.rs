//! Starting the runtime on every rank and running a root task (SPMD).

use std::fmt;
use std::marker::PhantomData;

use am_fad::DequeAtomics;
use gasnet_sys::Gasnet;

use crate::arena::{self, ArenaError, Layout, FINISHED_WORD, GUARD_RESERVE};
use crate::attention::Attention;
use crate::collective;
use crate::config::Config;
use crate::context::{save_context_and_call, start_on_stack, Word};
use crate::deque::{self, ArenaOwnWords, Deque, Thieves};
use crate::fatal::fmt_size;
use crate::future::{CellPool, CellRef, CELL_SIZE, MAX_RESULT_SIZE};
use crate::layer::{Acquire, Here, Layer, NoLayer, Release};
use crate::rdma::RdmaAlloc;
use crate::scheduler;
use crate::settings::Settings as _;
use crate::spawn::{complete, run_task};
use crate::stats::{Counters, Stats};
use crate::worker::{self, on_task_stack, on_worker_thread, worker, RunState, ThreadPlace, Waiters, Worker};

/// Bytes of the scheduler's native stack.
const SCHED_STACK: usize = 1 << 20;

/// Why the runtime could not start.
#[derive(Debug)]
pub enum StartError {
    /// The arena could not be mapped.
    Arena(ArenaError),
    /// Anything else, said in the message.
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
///
/// Its methods are collective (every rank calls them, in the same order)
/// and belong to the thread that started it, outside tasks: a `Runtime` is
/// neither `Send` nor `Sync`, and calling one of them from inside a task
/// ends the job with a message (only one rank would reach the collective,
/// and the others would wait for it forever).
///
/// ```compile_fail,E0277
/// fn needs_send<T: Send>(_: T) {}
/// fn give_away(rt: uni_threads::Runtime) {
///     needs_send(rt); // Runtime is not Send
/// }
/// ```
///
/// ```compile_fail,E0277
/// // Nor Sync: no static can hold one.
/// static RUNTIME: std::sync::OnceLock<uni_threads::Runtime> = std::sync::OnceLock::new();
/// ```
pub struct Runtime {
    gasnet: Gasnet,
    _not_send: PhantomData<*const ()>,
}

impl Runtime {
    /// Starts the runtime: maps the arena (attaching the GASNet segment),
    /// sets up the deque, the future cells, the stack guard, the poller
    /// (`rdma-emulated`) and the migration checker (`UAT_CHECK_MIGRATION`),
    /// and makes a panic on any thread end the whole job. Collective: every
    /// rank calls it once, after GASNet's init, with the same config.
    ///
    /// # Safety
    ///
    /// Every task run on this runtime — the closures given to [`Runtime::run`],
    /// [`spawn`](crate::spawn), [`join`](crate::join) and
    /// [`reduce`](crate::reduce), and everything they call — must keep **no
    /// pointer into process-local memory live across a `spawn`, `join` or
    /// `poll_point`**: no reference to or into a `Box`, `Vec`, `String`, `Rc`
    /// or other heap object, the native stack, a thread-local, or memory
    /// from `malloc`/`mmap`, may be used after such a call if it was
    /// obtained before it. After any of these calls the task may continue in
    /// another process, which has none of that memory: using such a pointer
    /// there reads or writes whatever that process has at the address.
    ///
    /// The closures' bounds (`Copy + Send + 'static`, results of plain data)
    /// keep borrows of locals and owning heap types out of what crosses
    /// between tasks, but not a `&'static` or raw pointer into process-local
    /// memory (a `Box::leak`ed value, a `static`'s heap contents): the caller
    /// guarantees that no closure, result or local holds one across the
    /// calls either. Values (numbers, plain structs), pointers into the task's own
    /// frames and statics are fine. `UAT_CHECK_MIGRATION=1` finds violations
    /// of this rule for heap memory (see the crate docs).
    ///
    /// And for global memory (the layer `uat::global`, when started with
    /// it: [`Runtime::start_with_layer`]): two tasks that may run at
    /// the same time (neither has joined the other, directly or through
    /// other joins) must not access overlapping elements (checkouts,
    /// `get`/`set`, a pattern's closure in its parallel leaves) when one of
    /// them writes; a task must not free memory that another such task may
    /// access, nor use any copy of a slice or atomic after its free; raw
    /// handles (`from_raw`) name live allocations. Checkouts hand out
    /// ordinary slices of memory that other processes may map; programs
    /// without such races see what global memory's consistency model says
    /// (`uat::global`). `uat::Runtime::start` lists every clause.
    ///
    /// And for the network: from here on every rank's GASNet segment is the
    /// runtime's arena (task stacks and frames, deques, control words), so
    /// `gasnet` and every copy of it must not write or read the segment
    /// with its RMA or atomic operations except where the caller's own
    /// protocol owns the bytes: a put into another rank's segment can
    /// overwrite a live frame. (That is why [`Runtime::gasnet`] is unsafe.)
    pub unsafe fn start(gasnet: Gasnet, config: Config) -> Result<Runtime, StartError> {
        // SAFETY: the caller's contract.
        unsafe { Runtime::start_with_layer(gasnet, config, &NoLayer) }
    }

    /// [`Runtime::start`] with a layer above the scheduler (global memory:
    /// `uat::Runtime::start` passes `uat::global`'s), which the scheduler
    /// calls at its release and acquire points ([`crate::layer`]).
    ///
    /// # Safety
    ///
    /// As [`Runtime::start`].
    pub unsafe fn start_with_layer(
        gasnet: Gasnet,
        config: Config,
        layer: &'static dyn Layer,
    ) -> Result<Runtime, StartError> {
        if worker::is_running() {
            return Err(StartError::Other(
                "the runtime is already started in this process".into(),
            ));
        }
        gasnet.exit_job_on_panic();
        let (rank, ranks) = (gasnet.rank(), gasnet.size());
        config.validate().map_err(|e| StartError::Other(e.to_string()))?;
        if let Some(settings) = layer.settings() {
            settings.validate().map_err(|e| StartError::Other(e.to_string()))?;
        }
        check_settings_agree(gasnet, &config, layer);
        gasnet.set_cross_host_delay(config.net_delay);
        let sizes = crate::arena::Sizes {
            deque_capacity: config.deque_capacity,
            future_cells: config.future_cells,
            rdma_region: config.rdma_region,
            stack_size: config.stack_size,
            zone: layer.zone_bytes(),
        };
        let layout = Layout::new(&sizes, ranks, deque::ENTRY_BYTES, CELL_SIZE);
        let atomics = DequeAtomics::new(gasnet).map_err(|e| StartError::Other(e.to_string()))?;
        gasnet
            .register_handlers(&crate::future::handlers())
            .map_err(|e| StartError::Other(e.to_string()))?;
        gasnet
            .register_handlers(&crate::lifeline::handlers())
            .map_err(|e| StartError::Other(e.to_string()))?;
        gasnet
            .register_handlers(&layer.handlers())
            .map_err(|e| StartError::Other(e.to_string()))?;
        gasnet
            .register_handlers(&crate::trace::clock::handlers())
            .map_err(|e| StartError::Other(e.to_string()))?;
        arena::map(gasnet, &layout).map_err(StartError::Arena)?;
        check_same_addresses(gasnet, &layout)?;
        if config.check_migration {
            crate::migration::enable(rank, ranks).map_err(StartError::Other)?;
        }
        let all_shared_memory = gasnet.neighbourhood().len() == ranks as usize;
        let poll_interval = config
            .poll_interval
            .unwrap_or(am_fad::default_poll_interval(all_shared_memory));
        // A timeline trace tags every completion (for its join flows); the
        // statistics only count joins.
        let per_task_trace = config.trace.is_some() && config.trace_mode == crate::config::TraceMode::Timeline;
        // SAFETY: the arena is mapped with `layout`; one deque, one pool and
        // one attention word per process.
        let (deque, cells, attention) = unsafe {
            (
                Deque::new(
                    ArenaOwnWords::new(gasnet, atomics),
                    config.deque_capacity,
                    config.steal_protocol,
                    if ranks > 1 { Thieves::Possible } else { Thieves::None },
                ),
                CellPool::new(&layout, rank),
                Attention::new(poll_interval, per_task_trace || config.workspan),
            )
        };
        let seed = config.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        });
        let sched_stack_top = map_native_stack(SCHED_STACK)
            .map_err(|e| StartError::Other(format!("cannot map the scheduler stack: {e}")))?;
        let poller = start_poller(gasnet, &config)?;
        let (guard_lo, guard_hi) = layout.guard();
        worker::install(Worker {
            gasnet,
            rank,
            ranks,
            config: config.clone(),
            layout,
            deque,
            cells,
            attention,
            victims: crate::victim::Victims::new(
                config.victims,
                seed,
                rank,
                gasnet.hosts().table(),
                config.lifelines.then_some(config.lifeline_attempts),
            ),
            lifelines: crate::lifeline::Lifelines::new(
                config.lifelines,
                config.keep_polling,
                config.lifeline_attempts,
                config
                    .lifeline_dimensions
                    .unwrap_or_else(|| crate::lifeline::default_dimensions(ranks)),
                rank,
                ranks,
                all_shared_memory,
                &gasnet.host_ranks(),
            ),
            thread: ThreadPlace {
                bottom_top: layout.stack_top().into(),
                sched_stack_top,
                main_ctx: 0.into(),
            },
            waiters: Waiters {
                rdma: RdmaAlloc::new(Layout::addr(layout.rdma), layout.rdma_size).into(),
                list: Vec::new().into(),
                suspending: None.into(),
            },
            run: RunState {
                id: 0.into(),
                counters: Counters::default(),
                lowest_ctx: usize::MAX.into(),
                handler_cycles_at_start: 0.into(),
                cpu_ns_at_start: 0.into(),
                process_cpu_ns_at_start: 0.into(),
            },
            poller: poller.into(),
            layer_state: std::cell::OnceCell::new(),
            trace: crate::trace::Tracer::new(
                config.trace.clone(),
                config.trace_mode,
                config.trace_events,
                rank,
                ranks,
            ),
            workspan: crate::workspan::WorkSpan::new(config.workspan),
            hooks: worker::Hooks::new(per_task_trace, config.workspan),
        });
        // After the deque's words (native mode: atomic domains are created
        // collectively, in the same order on every rank).
        let w = worker();
        crate::layer::install(layer);
        let state = layer.attach(Here::of(w));
        if w.layer_state.set(state).is_err() {
            unreachable!("one worker per process, attached once");
        }
        crate::guard::install(
            guard_lo,
            guard_hi,
            crate::fatal::stack_overflow_message(rank, layout.stack_size),
        )
        .map_err(|e| StartError::Other(format!("cannot install the stack-overflow handler: {e}")))?;
        if config.verbose && rank == 0 {
            eprintln!("{}", describe(&config, &layout, ranks));
        }
        if config.trace.is_some() {
            // Every rank traces (UAT_TRACE must agree: the alignment and
            // the end of the job are collective).
            worker().trace.set_clock(crate::trace::clock::align(gasnet));
            gasnet.at_exit(write_partial_trace_on_exit);
        }
        gasnet.barrier();
        Ok(Runtime {
            gasnet,
            _not_send: PhantomData,
        })
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
        collective_outside_tasks("Runtime::run");
        let w = worker();
        w.run.id.set(w.run.id.get() + 1);
        w.reset_stats();
        w.run.handler_cycles_at_start.set(am_fad::handler_cycles());
        w.run.cpu_ns_at_start.set(cpu_ns(libc::CLOCK_THREAD_CPUTIME_ID));
        w.run
            .process_cpu_ns_at_start
            .set(cpu_ns(libc::CLOCK_PROCESS_CPUTIME_ID));
        w.lifelines.reset();
        w.victims.reset();
        w.workspan.reset();
        crate::layer::installed().acquire(Here::of(w), Acquire::RunStart);
        let cell = if w.rank == 0 {
            Some(
                w.cells
                    .alloc()
                    .unwrap_or_else(|| crate::fatal::cells_exhausted(w.layout.cell_count)),
            )
        } else {
            None
        };
        self.gasnet.barrier();
        let root_cell = cell.map_or(0, |c| c.addr);
        if w.config.force_steal && w.ranks > 1 {
            let forced = move || {
                let waiter = crate::spawn(|| {
                    wait_until_parent_stolen();
                    0u8
                });
                let value = root();
                waiter.join();
                value
            };
            enter(forced, root_cell);
        } else {
            enter(root, root_cell);
        }
        let w = worker();
        crate::layer::installed().acquire(Here::of(w), Acquire::RunEnd);
        let cpu = cpu_ns(libc::CLOCK_THREAD_CPUTIME_ID).saturating_sub(w.run.cpu_ns_at_start.get());
        let process = cpu_ns(libc::CLOCK_PROCESS_CPUTIME_ID).saturating_sub(w.run.process_cpu_ns_at_start.get());
        let (work_strands, work_ticks) = w.workspan.work();
        w.run.counters.update(|c| {
            c.worker_cpu_ns = cpu;
            c.process_cpu_ns = process;
            c.work_strands = work_strands;
            c.work_cycles = work_ticks;
        });
        // Every spawned task must have been joined: a leaked handle leaves a
        // task that no one waits for (it may even still be running, on a
        // rank that reaches this gather only when it is done).
        let w = worker();
        let s = w.stats_snapshot();
        w.trace.add_run(w.run.id.get(), &s);
        let unjoined: u64 = collective::gather(self.gasnet, &w.layout, &[s.spawns.wrapping_sub(s.joins)])
            .iter()
            .fold(0u64, |a, v| a.wrapping_add(v[0]));
        if unjoined != 0 {
            crate::fatal::leaked_tasks(unjoined, "were never joined");
        }
        cell.map(|c| {
            assert!(c.is_done_local(), "the root task's result is missing");
            // SAFETY: done, holding the root's T.
            let v = unsafe { c.result_local::<T>() };
            worker().cells.free(c);
            v
        })
    }

    /// The scheduler's counters of the last run, rank by rank (collective).
    /// Valid on rank 0 (empty elsewhere).
    pub fn stats_per_rank(&self) -> Vec<Stats> {
        collective_outside_tasks("Runtime::stats_per_rank");
        self.gather_stats()
    }

    /// The trace's statistics so far, per kind of record, summed over the
    /// ranks (max of the maxima) (collective). Valid on rank 0, when it
    /// traces (`UAT_TRACE`); None elsewhere.
    pub fn trace_totals(&self) -> Option<Vec<crate::stats::TraceTotal>> {
        collective_outside_tasks("Runtime::trace_totals");
        let w = worker();
        let mine = if w.trace.on() {
            w.trace.totals_words()
        } else {
            vec![0; 3 * uat_trace::Kind::ALL.len()]
        };
        let all = collective::gather(self.gasnet, &w.layout, &mine);
        if self.gasnet.rank() != 0 || !w.trace.on() {
            return None;
        }
        Some(
            uat_trace::Kind::ALL
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    let (count, total, max) = all.iter().fold((0, 0, 0), |(c, t, m), r| {
                        (c + r[3 * i], t + r[3 * i + 1], m.max(r[3 * i + 2]))
                    });
                    crate::stats::TraceTotal {
                        kind: k.name,
                        count,
                        total_s: total as f64 * 1e-9,
                        max_s: max as f64 * 1e-9,
                    }
                })
                .collect(),
        )
    }

    /// How this job's lifelines are set: `off`, or `on w=W z=Z`.
    pub fn lifelines(&self) -> String {
        lifelines_setting(&worker().config)
    }

    /// The scheduler's counters of the last run, summed over all ranks
    /// (collective). Valid on rank 0.
    pub fn stats(&self) -> Stats {
        collective_outside_tasks("Runtime::stats");
        let mut total = Stats::default();
        for rank in self.gather_stats() {
            total.accumulate(&rank);
        }
        total
    }

    /// Every rank's counters of the last run, on rank 0 (collective).
    fn gather_stats(&self) -> Vec<Stats> {
        let w = worker();
        let mut mine = w.stats_snapshot();
        mine.msg_handling_cycles += am_fad::handler_cycles() - w.run.handler_cycles_at_start.get();
        collective::gather(self.gasnet, &w.layout, &mine.values())
            .iter()
            .map(|v| Stats::from_values(v))
            .collect()
    }

    /// A collective's global-memory ordering: a release point before it
    /// (this process's cached writes reach their home before any rank
    /// learns of them through it) and an acquire point after (what other
    /// ranks wrote before it is fetched anew). Global memory written on the
    /// runtime's thread between runs needs it: no task's end releases it.
    fn collective_fence<R>(&self, f: impl FnOnce() -> R) -> R {
        let w = worker();
        crate::layer::installed().release(Here::of(w), Release::Collective);
        let r = f();
        crate::layer::installed().acquire(Here::of(w), Acquire::Collective);
        r
    }

    /// A barrier over all ranks (collective), ordering global memory as a
    /// run's start and end do: every rank's writes before it are seen by
    /// every rank after it.
    pub fn barrier(&self) {
        collective_outside_tasks("Runtime::barrier");
        self.collective_fence(|| self.gasnet.barrier())
    }

    /// Rank 0's `value`, on every rank (collective; orders global memory as
    /// [`Runtime::barrier`] does).
    pub fn broadcast(&self, value: u64) -> u64 {
        collective_outside_tasks("Runtime::broadcast");
        self.collective_fence(|| collective::broadcast(self.gasnet, &worker().layout, &[value])[0])
    }

    /// Rank 0's `value` (which must be `Some` there), on every rank
    /// (collective): e.g. a root task's result. `T` is plain data of at
    /// most 48 bytes.
    pub fn broadcast_value<T: Copy + Send + 'static>(&self, value: Option<T>) -> T {
        const { assert!(std::mem::size_of::<T>() <= MAX_RESULT_SIZE, "at most 48 bytes") };
        collective_outside_tasks("Runtime::broadcast_value");
        if value.is_none() && self.gasnet.rank() == 0 {
            crate::fatal::fatal(format_args!("Runtime::broadcast_value: rank 0 has no value"));
        }
        self.collective_fence(|| collective::broadcast_value(self.gasnet, &worker().layout, value.as_ref()))
    }

    /// Sums `value` over all ranks (collective; orders global memory as
    /// [`Runtime::barrier`] does); the sum on rank 0, 0 elsewhere.
    pub fn sum_over_ranks(&self, value: u64) -> u64 {
        collective_outside_tasks("Runtime::sum_over_ranks");
        self.collective_fence(|| {
            collective::gather(self.gasnet, &worker().layout, &[value])
                .iter()
                .map(|w| w[0])
                .sum()
        })
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
        let per_rank = uat_rules::spinning_threads_per_rank(worker().poller.borrow().is_some());
        uat_rules::oversubscribed(self.gasnet.host_ranks().len(), per_rank, uat_rules::cores())
    }

    /// Stops the communication-assisting thread (if any) and ends the job
    /// with `code` on every rank (`gasnet_exit`). Call it after a final
    /// barrier, once no rank needs this one's service any more.
    pub fn exit(&self, code: i32) -> ! {
        collective_outside_tasks("Runtime::exit");
        let w = worker();
        crate::layer::installed().release(Here::of(w), Release::Collective);
        trace_end_of_job(self.gasnet);
        if let Some(poller) = worker().poller.borrow_mut().take() {
            poller.stop();
        }
        self.gasnet.exit(code)
    }

    /// This process's rank.
    pub fn rank(&self) -> u32 {
        self.gasnet.rank()
    }

    /// The number of ranks in the job.
    pub fn ranks(&self) -> u32 {
        self.gasnet.size()
    }

    /// The ranks on this machine (this one included), in rank order: every
    /// emulated host of it (`--hosts`) together, what counts against its
    /// cores.
    pub fn host_ranks(&self) -> Vec<u32> {
        self.gasnet.host_ranks()
    }

    /// Every rank's host: the ranks that share memory (GASNet
    /// neighbourhoods; on one machine, the emulated hosts of `cargo uat run
    /// --hosts`).
    pub fn hosts(&self) -> &'static gasnet_sys::Hosts {
        self.gasnet.hosts()
    }

    /// The GASNet-EX handle the runtime runs on.
    ///
    /// # Safety
    ///
    /// Every rank's segment is the runtime's arena: the handle's RMA and
    /// atomic operations must not touch it except at addresses the
    /// caller's own protocol owns (see [`Runtime::start`]); everything else
    /// on the handle (rank, size, barriers, polling) is harmless.
    pub unsafe fn gasnet(&self) -> Gasnet {
        self.gasnet
    }

    /// Every how many spawns a worker polls even when not asked (0: only
    /// when its attention word is raised): `UAT_POLL_INTERVAL` or this
    /// job's default.
    pub fn poll_interval(&self) -> u32 {
        worker().attention.interval()
    }

    /// The deque protocol of this job (`UAT_STEAL_PROTOCOL`).
    pub fn steal_protocol(&self) -> deque::Protocol {
        worker().deque.protocol()
    }

    /// The configuration the runtime started with.
    pub fn config(&self) -> &Config {
        &worker().config
    }
}

/// Runs `root` as the root task (rank 0) and the scheduler (every rank)
/// until the run is over.
fn enter<F, T>(root: F, root_cell: usize)
where
    F: FnOnce() -> T + Copy + 'static,
    T: Copy + 'static,
{
    let (task, cell) = (Word::new(&root as *const F as usize), Word::new(root_cell));
    let none = Word::uninit();
    // SAFETY: enter_run never returns; this native-stack frame is resumed
    // through main_ctx once the job is over, untouched meanwhile; `root`
    // stays in it until then.
    unsafe { save_context_and_call(enter_run::<F, T>, task, cell, none, none, none) };
}

/// Collective methods of [`Runtime`] run on the thread that started it and
/// outside tasks; end the job naming the mistake otherwise.
fn collective_outside_tasks(what: &str) {
    let rule = "Rule: the Runtime's methods are collective: every rank calls them, in the same order, on the \
                thread that started the runtime and outside tasks (from main, between runs)";
    if on_task_stack() {
        crate::fatal::fatal(format_args!(
            "{what} was called from inside a task; only this rank would reach it and the others would wait \
             forever. {rule}"
        ));
    }
    if !on_worker_thread() {
        crate::fatal::fatal(format_args!(
            "{what} was called from an OS thread other than the one that started the runtime. {rule}"
        ));
    }
}

unsafe extern "C-unwind" fn enter_run<F, T>(main_ctx: *mut u8, root: Word, root_cell: Word, _: Word, _: Word, _: Word)
where
    F: FnOnce() -> T + Copy + 'static,
    T: Copy + 'static,
{
    // SAFETY: enter passes both initialized.
    let (root, root_cell) = unsafe { (root.assume_init(), root_cell.assume_init()) };
    let w = worker();
    w.thread.main_ctx.set(main_ctx as usize);
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
    w.thread.bottom_top.set(w.layout.stack_top());
    w.trace.task_begins();
    if w.workspan.on() {
        w.workspan.begin(crate::workspan::Path::default());
    }
    let value = run_task(f);
    let w = worker();
    if w.workspan.on() {
        let span = w.workspan.end();
        w.run.counters.update(|c| {
            c.span_strands = span.strands;
            c.span_cycles = span.ticks;
            c.span_spawns = span.spawns;
        });
    }
    crate::layer::installed().release(Here::of(w), Release::TaskEnd);
    complete(
        CellRef {
            addr: root_cell,
            rank: 0,
        },
        &value,
    );
    // Tell every rank (this one included) that the job is over. The root
    // joined all its tasks, so no thread is left anywhere.
    let w = worker();
    for r in 0..w.ranks {
        w.gasnet.put_u64(r, FINISHED_WORD.on(w.gasnet, r), w.run.id.get());
    }
    // Sleeping ranks see it now, not at their next look (after the puts:
    // a woken rank finds the word set).
    if w.lifelines.on() {
        for r in (0..w.ranks).filter(|&r| r != w.rank) {
            crate::sleep_word::wake(w.gasnet, r);
        }
    }
    scheduler::enter()
}

/// How a polling thread waits: `UAT_POLLER` if set, else spin when this
/// host has a core for every rank's worker and poller.
pub(crate) fn poller_mode(gasnet: Gasnet, config: &Config) -> am_fad::poller::PollerMode {
    match config.poller {
        Some(crate::config::PollerWait::Yield) => am_fad::poller::PollerMode::Yield,
        Some(crate::config::PollerWait::Spin) => am_fad::poller::PollerMode::Spin,
        None => am_fad::poller::default_mode(gasnet.host_ranks().len()),
    }
}

/// Starts the communication-assisting thread in `rdma-emulated` mode,
/// pinned to this rank's core of `UAT_POLLER_CORE` (checked first).
fn start_poller(gasnet: Gasnet, config: &Config) -> Result<Option<am_fad::poller::Poller>, StartError> {
    if am_fad::MODE != am_fad::Mode::RdmaEmulated {
        return Ok(None);
    }
    let core = match &config.poller_core {
        None => None,
        Some(cores) => {
            let host = gasnet.host_ranks();
            let index = host.iter().position(|&r| r == gasnet.rank()).unwrap_or(0);
            let core = cores.core_for(index, host.len()).map_err(StartError::Other)?;
            am_fad::poller::check_core(core).map_err(|e| StartError::Other(format!("UAT_POLLER_CORE: {e}")))?;
            Some(core)
        }
    };
    am_fad::poller::Poller::start(gasnet, poller_mode(gasnet, config), core)
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
        layout.lo() as u64,
        layout.total as u64,
        exe_len,
    ];
    let theirs = collective::broadcast(gasnet, layout, &mine);
    if theirs != mine {
        let what = [
            "a function",
            "a static",
            "the arena (UAT_STACK_SIZE)",
            "the arena's size (UAT_* sizes)",
            "the executable's size",
        ];
        let i = (0..mine.len()).find(|&i| theirs[i] != mine[i]).unwrap_or(0);
        return Err(StartError::Other(format!(
            "rank {} differs from rank 0 in {}: {:#x} here, {:#x} on rank 0. All ranks must run the same executable, \
             from the same file on every node, at the same addresses: uat re-executes each process once with address \
             randomisation off (uat::addresses; check that UAT_FIX_ADDRESSES is not off and that personality(2) is allowed), \
             or link the program non-PIE (-C link-arg=-no-pie)",
            gasnet.rank(),
            what[i],
            mine[i],
            theirs[i]
        )));
    }
    Ok(())
}

/// The settings every rank must share (`agree` in `Config::SETTINGS` and
/// in the layer's table) are rank 0's on every rank: otherwise every rank that differs says which
/// variable and both values (as set: `auto` and an explicit value equal to
/// it differ), and the whole job ends, every rank together (a rank that
/// ended alone would leave the others in the next collective, where a
/// conduit may not see its exit). Runs before the arena is mapped (its
/// layout comes from some of these settings), with collectives that need
/// no segment.
fn check_settings_agree(gasnet: Gasnet, config: &Config, layer: &dyn Layer) {
    const BYTES: usize = 4096;
    let mut mine = config.agreement();
    mine.extend(layer.settings().map(|s| s.agreement()).unwrap_or_default());
    let text: String = mine.iter().map(|(var, show)| format!("{var}={show}\n")).collect();
    let mut buf = [0u8; BYTES];
    let n = text.len().min(BYTES);
    buf[..n].copy_from_slice(&text.as_bytes()[..n]);
    gasnet.broadcast(0, &mut buf);
    let root = String::from_utf8_lossy(&buf);
    let mismatch = mine.iter().zip(root.lines()).find_map(|((var, show), line)| {
        let theirs = line.strip_prefix(var).and_then(|l| l.strip_prefix('=')).unwrap_or(line);
        (theirs != show).then(|| {
            format!(
                "{var} must be the same on every rank: {var}={show} on rank {}, but {var}={theirs} on rank 0",
                gasnet.rank()
            )
        })
    });
    if gasnet.max_over_ranks(u64::from(mismatch.is_some())) == 0 {
        return;
    }
    if let Some(message) = mismatch {
        gasnet_sys::report(format_args!("error: {message}"));
    }
    gasnet.exit(1)
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

/// `off`, or `on w=W z=Z` (the dimensions of this job's graph; 0 on one
/// rank, where there is no one to steal from).
fn lifelines_setting(c: &Config) -> String {
    let ranks = worker().ranks;
    if !c.lifelines {
        return "off".to_string();
    }
    let z = c
        .lifeline_dimensions
        .unwrap_or_else(|| crate::lifeline::default_dimensions(ranks));
    format!("on w={} z={z}", c.lifeline_attempts)
}

/// CPU time of the calling thread or process (`clock`), in nanoseconds.
fn cpu_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: writes the timespec we own; the clock id is a valid one.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The start-up banner (`UAT_VERBOSE=1`).
pub(crate) fn describe(c: &Config, l: &Layout, ranks: u32) -> String {
    format!(
        "uni-address threads: conduit={} fad={} ranks={ranks} arena={:#x}+{} \
         stack={} deque={} entries future_cells={} rdma_region={} guard={} \
         steal_protocol={} poll_interval={} empty_check={} lifelines={} check_migration={} poller={}\n  settings: {}",
        gasnet_sys::CONDUIT.name(),
        am_fad::MODE.name(),
        l.lo(),
        fmt_size(l.total),
        fmt_size(l.stack_size),
        l.deque_capacity,
        l.cell_count,
        fmt_size(l.rdma_size),
        fmt_size(GUARD_RESERVE),
        c.steal_protocol.name(),
        worker().attention.interval(),
        if c.empty_check { "on" } else { "off" },
        lifelines_setting(c),
        if c.check_migration { "on" } else { "off" },
        worker()
            .poller
            .borrow()
            .as_ref()
            .map_or("none".to_string(), |p| format!(
                "{}{}",
                p.mode.name(),
                p.core.map_or(String::new(), |c| format!("@core{c}"))
            )),
        std::iter::once(c.describe_settings())
            .chain(crate::layer::installed().settings().map(|s| s.describe_settings()))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// Waits (polling) until another rank has stolen the
/// continuation of the calling task's parent, so that a test's steal is
/// certain rather than likely. Call it first thing in a spawned child, before
/// it spawns; returns at once on one rank.
pub(crate) fn wait_until_parent_stolen() {
    let w = crate::worker::worker_for_task("uat::wait_until_parent_stolen");
    if w.ranks < 2 {
        return;
    }
    // The parent's continuation is the newest entry pushed (by the spawn
    // that started the caller).
    let Some(parent) = w.deque.newest_pushed() else {
        return;
    };
    loop {
        let w = crate::worker::worker_in_task();
        if w.deque.stolen(parent) {
            return;
        }
        // A thief's request to expose the entry arrives here.
        w.attend(false);
        w.gasnet.poll();
        std::hint::spin_loop();
    }
}

// The trace at the end of the job (the worker's tracer, `crate::trace`).

/// The job fails on this rank (an exit hook, on the thread that ends the
/// job): write what was recorded so far, and say where.
pub(crate) fn write_partial_trace_on_exit() {
    if !crate::worker::on_worker_thread() || !crate::worker::is_running() {
        return;
    }
    let w = crate::worker::worker();
    if !w.trace.on() || w.trace.written() {
        return;
    }
    w.trace.instant(uat_trace::Kind::Failure, w.rank, 0);
    // The failing run's counters so far, unless it had ended.
    w.trace.add_run(w.run.id.get(), &w.stats_snapshot());
    match w.trace.write(false, w.gasnet.hosts()) {
        Some(Ok(path)) => gasnet_sys::report(format_args!(
            "uat: the partial trace of this rank is in {} (merge the ranks' files with `uat-trace merge {}`)",
            path.display(),
            w.trace.dir().map_or_else(String::new, |d| d.display().to_string())
        )),
        Some(Err(e)) => gasnet_sys::report(format_args!("uat: {e}")),
        None => {}
    }
}

/// Collective, at the end of the job (`Runtime::exit`): every rank writes
/// its file; then rank 0 merges them and says where the outputs are.
pub(crate) fn trace_end_of_job(gasnet: gasnet_sys::Gasnet) {
    let w = crate::worker::worker();
    let Some(dir) = w.trace.dir().map(|d| d.to_path_buf()) else {
        return;
    };
    let mine = w.trace.write(true, gasnet.hosts());
    if let Some(Err(e)) = &mine {
        gasnet_sys::report(format_args!("uat: {e}"));
    }
    let failed = gasnet.max_over_ranks(matches!(mine, Some(Err(_))) as u64) != 0;
    if gasnet.rank() != 0 {
        return;
    }
    if failed {
        gasnet_sys::report(format_args!(
            "uat: the trace in {} is incomplete (see above)",
            dir.display()
        ));
    }
    merge_trace(&dir);
}

/// Rank 0 makes the outputs from the ranks' files.
fn merge_trace(dir: &std::path::Path) {
    match uat_trace::write_outputs(dir) {
        Ok(written) => {
            // The statistics mode's table, at the end (a timeline's is in
            // stats.txt, next to it).
            if crate::worker::worker().config.trace_mode == crate::trace::TraceMode::Stats {
                if let Ok(table) = std::fs::read_to_string(&written.stats_text) {
                    eprint!("{table}");
                }
            }
            let paths: Vec<String> = written.paths().iter().map(|p| p.display().to_string()).collect();
            gasnet_sys::report(format_args!("uat: trace written: {}", paths.join(", ")));
            // Under the launcher (`cargo uat run --trace`), which writes
            // the OTF2 archive itself after the job.
            let launched = std::env::var_os("UAT_LAUNCHED").is_some();
            for note in written
                .notes
                .iter()
                .filter(|n| !(launched && *n == uat_trace::OTF2_NOT_BUILT))
            {
                gasnet_sys::report(format_args!("uat: trace: {note}"));
            }
        }
        Err(e) => gasnet_sys::report(format_args!(
            "uat: cannot merge the trace in {}: {e} (the ranks' files are there; `uat-trace merge {}` retries)",
            dir.display(),
            dir.display()
        )),
    }
}
