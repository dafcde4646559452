//! The benchmarks' shared harness (this package, `uat-bench`, keeps the
//! benchmark-only dependencies — rayon, sha1, serde_json — out of `uat`): common flags, the runtime, timing,
//! verification and the one JSON line (docs/design/settings-and-names.md).
//!
//! Every benchmark verifies its answer on every run: `verified` is true when
//! the result matches a known value, false when it does not (the job then
//! exits 1), null when no reference exists.

use std::time::Instant;

use serde_json::{json, Map, Value};

use uat::gasnet::Gasnet;
use uat::runtime::Stats;
use uat::{Config, Runtime};

/// `on` | `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    /// On.
    On,
    /// Off.
    Off,
}

/// Flags every benchmark takes.
#[derive(clap::Args, Debug, Clone)]
pub struct Common {
    /// Run the serial elision (the same code with spawn/join replaced by plain
    /// calls) on rank 0, without the scheduler.
    #[arg(long)]
    pub seq: bool,
    /// Check a victim's deque with one read before claiming from it.
    /// Default: UAT_EMPTY_CHECK, else on.
    #[arg(long, value_enum)]
    pub empty_check: Option<OnOff>,
    /// How thieves and owners share a deque: split (private/shared parts,
    /// claims by one fetch-and-add) or paper (IPSJ 2016's THE protocol with
    /// a remote lock). Default: UAT_STEAL_PROTOCOL, else split.
    #[arg(long, value_parser = ["split", "paper"])]
    pub steal_protocol: Option<String>,
    /// For tests: make a steal certain, not likely (UAT_FORCE_STEAL=1 does
    /// the same). On 2 or more ranks the root first spawns a child that
    /// waits until another rank has stolen the root's continuation (one
    /// extra spawn).
    #[arg(long)]
    pub force_steal: bool,
}

/// `--vs-seq ROUNDS` (btc, uts, nqueens: the benchmarks of Fig. 12; heat,
/// uts-mem).
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct VsSeq {
    /// Measure the one-rank overhead over the serial elision in this one
    /// process: alternate a parallel run and a --seq run ROUNDS times (every
    /// answer checked) and report the fastest of each and their ratio (JSON
    /// "vs_seq"; time_s is the fastest parallel run). Paired runs in one
    /// process see the same machine, so a noisy host moves both. One rank.
    #[arg(long, value_name = "ROUNDS", conflicts_with = "seq",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub vs_seq: Option<u32>,
}

/// `--rayon THREADS` (btc, uts, nqueens, cilksort, patterns).
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct RayonArg {
    /// Run the same kernel in a rayon pool of THREADS threads instead of
    /// uat (its `join`/`scope` where ours spawns), verified the same way;
    /// JSON "runtime": "rayon". The job must have one rank. With --vs-seq,
    /// rayon is paired with the serial elision.
    #[arg(long, value_name = "THREADS", conflicts_with_all = ["seq", "force_steal"],
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub rayon: Option<u32>,
}

/// `--model-child call|frame` (btc, uts, nqueens).
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct ModelArg {
    /// Run the serial elision with each child through a model of a
    /// child-first spawn with no runtime (no deque, record or result
    /// cell): `call`, the child's closure passed by value to an
    /// out-of-line function; `frame`, the child in a frame of its own with
    /// a copy of its closure, in a panic guard. The floor under any
    /// child-first runtime; with --vs-seq paired with the plain serial
    /// elision. One rank.
    #[arg(long, value_enum, conflicts_with_all = ["seq", "rayon", "force_steal"])]
    pub model_child: Option<Model>,
}

/// The no-runtime child models of `--model-child`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Model {
    /// The child closure passed by value to an out-of-line function.
    Call,
    /// The child copies its closure into a frame of its own, in a panic
    /// guard (the data path a child-first runtime cannot avoid).
    Frame,
}

impl Model {
    /// The name in `--model-child` and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Model::Call => "call",
            Model::Frame => "frame",
        }
    }
}

/// A child task as uat takes one: a closure it may copy to another rank.
pub trait Child<R>: FnOnce() -> R + Send + Copy + 'static {}
impl<R, T: FnOnce() -> R + Send + Copy + 'static> Child<R> for T {}

/// A child's result as uat takes one.
pub trait ChildResult: Send + Copy + 'static {}
impl<T: Send + Copy + 'static> ChildResult for T {}

/// How a kernel's two children run: each system under test, written once,
/// so that every benchmark's kernel is the same code whichever runs it.
pub trait Fork {
    /// `a` and `b`, `a` possibly in parallel with the rest: the shape of
    /// `uat::join` (`a` spawned, `b` in the continuation) and of
    /// `rayon::join` (`b` stealable while `a` runs).
    fn join<RA: ChildResult, RB: ChildResult>(a: impl Child<RA>, b: impl Child<RB>) -> (RA, RB);

    /// Both children as tasks of their own, then both joined (the IPSJ
    /// paper's BTC).
    fn spawn_both<RA: ChildResult, RB: ChildResult>(a: impl Child<RA>, b: impl Child<RB>) -> (RA, RB);
}

/// uat: child-first spawns whose continuations are stolen.
pub struct Uat;
/// The serial elision: plain calls.
pub struct Serial;
/// rayon: `join` (`b` stealable), and `scope` spawns for both children.
pub struct Rayon;
/// `--model-child call`.
pub struct CallModel;
/// `--model-child frame`.
pub struct FrameModel;

/// One [`Fork`] implementation from its two bodies.
macro_rules! fork_impl {
    ($ty:ty, |$a:ident, $b:ident| join: $join:expr, spawn_both: $both:expr) => {
        impl Fork for $ty {
            #[inline(always)]
            fn join<RA: ChildResult, RB: ChildResult>($a: impl Child<RA>, $b: impl Child<RB>) -> (RA, RB) {
                $join
            }

            #[inline(always)]
            fn spawn_both<RA: ChildResult, RB: ChildResult>($a: impl Child<RA>, $b: impl Child<RB>) -> (RA, RB) {
                $both
            }
        }
    };
}

fork_impl!(Uat, |a, b| join: uat::join(a, b), spawn_both: {
    let (ha, hb) = (uat::spawn(a), uat::spawn(b));
    (ha.join(), hb.join())
});
fork_impl!(Serial, |a, b| join: (a(), b()), spawn_both: (a(), b()));
fork_impl!(Rayon, |a, b| join: rayon::join(a, b), spawn_both: {
    // rayon's form of "spawn both, join both": two scope spawns (each a
    // heap-allocated job), joined at the scope's end.
    let (mut ra, mut rb) = (None, None);
    let (into_a, into_b) = (&mut ra, &mut rb);
    rayon::scope(move |s| {
        s.spawn(move |_| *into_a = Some(a()));
        s.spawn(move |_| *into_b = Some(b()));
    });
    (
        ra.expect("a scope ends after its spawns"),
        rb.expect("a scope ends after its spawns"),
    )
});
fork_impl!(CallModel, |a, b| join: (call_out_of_line(a), b()),
           spawn_both: (call_out_of_line(a), call_out_of_line(b)));
fork_impl!(FrameModel, |a, b| join: (in_own_frame(&a), b()),
           spawn_both: (in_own_frame(&a), in_own_frame(&b)));

/// The cheapest child a runtime could have: the closure, built in the
/// parent's frame, passed by value to a function the compiler may not
/// inline (docs/results/2026-11-25-zen4-one-rank).
#[inline(never)]
fn call_out_of_line<F: FnOnce() -> T, T>(f: F) -> T {
    f()
}

/// A child-first spawn's data path with no runtime: the child copies its
/// closure out of the parent's frame into a frame of its own (a stolen
/// parent's frame leaves with it) and runs it inside a panic guard, as
/// uat's child does. `black_box` keeps the copy a copy.
#[inline(never)]
fn in_own_frame<F: FnOnce() -> T + Copy, T>(f: &F) -> T {
    let g: F = *std::hint::black_box(f);
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(g)) {
        Ok(v) => v,
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

/// A benchmark's computation, generic over who runs its children: the
/// harness instantiates it for uat, rayon, the serial elision and the
/// models.
pub trait Kernel: Copy + Send + 'static {
    /// What it computes (verified against a known answer).
    type Output: Copy + Send + 'static + PartialEq + std::fmt::Debug;
    /// Computes it with `F` running the children.
    fn run<F: Fork>(self) -> Self::Output;
}

/// What runs the parallel side of a benchmark.
pub enum System {
    /// This runtime.
    Uat,
    /// rayon, in a pool of its own.
    Rayon {
        /// The pool.
        pool: rayon::ThreadPool,
        /// Its threads (`--rayon THREADS`).
        threads: u32,
    },
    /// A no-runtime child model (`--model-child`).
    Model(Model),
}

/// The JSON field naming which system ran (the JSON names are declared
/// here once).
pub const RUNTIME_FIELD: &str = "runtime";
/// The JSON field of rayon's thread count.
pub const RAYON_THREADS_FIELD: &str = "rayon_threads";
/// The JSON field of the child model.
pub const MODEL_CHILD_FIELD: &str = "model_child";

impl System {
    /// `uat`, `rayon` or `none` (a child model: no runtime at all).
    pub fn name(&self) -> &'static str {
        match self {
            System::Uat => "uat",
            System::Rayon { .. } => "rayon",
            System::Model(_) => "none",
        }
    }
}

/// A started benchmark: GASNet, the runtime and the common flags.
pub struct Harness {
    /// The GASNet-EX handle (private: the runtime owns the segments).
    gasnet: Gasnet,
    /// The runtime (started on every rank, whichever system measures).
    pub runtime: Runtime,
    /// The common flags.
    pub common: Common,
    /// Who runs the parallel side.
    pub system: System,
}

impl Harness {
    /// This process's rank.
    pub fn rank(&self) -> u32 {
        self.gasnet.rank()
    }
}

/// What a benchmark found and how long it took (rank 0).
pub struct Outcome<T> {
    /// The answer.
    pub value: T,
    /// Seconds.
    pub time_s: f64,
}

impl Harness {
    /// Starts the runtime with the `UAT_*` settings and the common flags.
    ///
    /// # Safety
    ///
    /// [`Runtime::start`]'s contract: the benchmark's tasks keep no pointer
    /// into process-local memory across `spawn` and `join`, and `gasnet`
    /// is not used for segment operations from here on.
    pub unsafe fn start(gasnet: Gasnet, common: Common) -> Harness {
        let config = Config::from_env().unwrap_or_else(|e| gasnet.fail(e));
        let force_steal = config.get_force_steal() || common.force_steal;
        let mut config = config.force_steal(force_steal);
        if let Some(on) = common.empty_check {
            config = config.empty_check(on == OnOff::On);
        }
        if let Some(p) = &common.steal_protocol {
            config = config.steal_protocol(uat::runtime::StealProtocol::parse(p).expect("clap checked the name"));
        }
        // SAFETY: the caller's contract, which is Runtime::start's.
        let runtime = unsafe { Runtime::start(gasnet, config) }.unwrap_or_else(|e| gasnet.fail(e));
        Harness {
            gasnet,
            runtime,
            common,
            system: System::Uat,
        }
    }

    /// [`start`](Self::start), then `--rayon` or `--model-child` chooses
    /// the system (both want a one-rank job: refused otherwise, exit 1).
    ///
    /// # Safety
    ///
    /// As for [`start`](Self::start).
    pub unsafe fn start_system(gasnet: Gasnet, common: Common, rayon: RayonArg, model: Option<Model>) -> Harness {
        // SAFETY: the caller's contract.
        let mut h = unsafe { Harness::start(gasnet, common) };
        let one_rank = |what: &str| {
            if gasnet.size() != 1 {
                gasnet.fail(format_args!(
                    "{what} runs in one process; this job has {} ranks (run it with -n 1)",
                    gasnet.size()
                ));
            }
        };
        if let Some(threads) = rayon.rayon {
            one_rank("--rayon (a rayon pool)");
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads as usize)
                .build()
                .unwrap_or_else(|e| gasnet.fail(format_args!("cannot start a rayon pool of {threads} threads: {e}")));
            h.system = System::Rayon { pool, threads };
        } else if let Some(m) = model {
            one_rank("--model-child (the serial elision with a child model)");
            h.system = System::Model(m);
        }
        h
    }

    /// The rayon pool of `--rayon`, if that is the system.
    pub fn rayon_pool(&self) -> Option<&rayon::ThreadPool> {
        match &self.system {
            System::Rayon { pool, .. } => Some(pool),
            _ => None,
        }
    }

    /// Times `par` as the root task on all ranks, or `seq` on rank 0 with
    /// `--seq`. Returns the outcome on rank 0.
    pub fn measure<F, T>(&self, par: F, mut seq: impl FnMut() -> T) -> Option<Outcome<T>>
    where
        F: FnOnce() -> T + Send + Copy + 'static,
        T: Send + Copy + 'static,
    {
        self.gasnet.barrier();
        let start = Instant::now();
        let value = if self.common.seq {
            (self.gasnet.rank() == 0).then(&mut seq)
        } else {
            self.runtime.run(par)
        };
        let time_s = start.elapsed().as_secs_f64();
        value.map(|value| Outcome { value, time_s })
    }

    /// Times `f` on this rank after a barrier (a one-rank system's run).
    pub fn measure_here<T>(&self, f: impl FnOnce() -> T) -> Outcome<T> {
        self.gasnet.barrier();
        let start = Instant::now();
        let value = f();
        Outcome {
            value,
            time_s: start.elapsed().as_secs_f64(),
        }
    }

    /// Runs `k` once on the chosen system: uat as the root task on all
    /// ranks, rayon in its pool, a model on this (the only) rank. The
    /// result on rank 0.
    fn run_system<K: Kernel>(&self, k: K) -> Option<K::Output> {
        match &self.system {
            System::Uat => self.runtime.run(move || k.run::<Uat>()),
            System::Rayon { pool, .. } => Some(pool.install(move || k.run::<Rayon>())),
            System::Model(Model::Call) => Some(k.run::<CallModel>()),
            System::Model(Model::Frame) => Some(k.run::<FrameModel>()),
        }
    }

    /// Times kernel `k` on the chosen system (or its serial elision on
    /// rank 0 with `--seq`); with `--vs-seq ROUNDS` the system's run and
    /// the serial elision alternated ROUNDS times on one rank: the outcome
    /// is the fastest run of the system, and the returned map holds the
    /// JSON field `vs_seq` (`rounds`, `seq_time_s` the fastest serial run,
    /// `ratio` fastest over fastest, `ratio_median` the median of each
    /// round's ratio, `par_times_s`, `seq_times_s`). A serial answer that
    /// differs from the system's ends the job (exit 1).
    pub fn measure_kernel<K: Kernel>(&self, vs: VsSeq, k: K) -> (Option<Outcome<K::Output>>, Map<String, Value>) {
        let Some(rounds) = vs.vs_seq else {
            self.gasnet.barrier();
            let start = Instant::now();
            let value = if self.common.seq {
                (self.gasnet.rank() == 0).then(|| k.run::<Serial>())
            } else {
                self.run_system(k)
            };
            let time_s = start.elapsed().as_secs_f64();
            return (value.map(|value| Outcome { value, time_s }), Map::new());
        };
        if self.gasnet.size() != 1 {
            self.gasnet.fail(format_args!(
                "--vs-seq measures one rank against the serial elision; this job has {} ranks (run it with -n 1)",
                self.gasnet.size()
            ));
        }
        let (mut par_times, mut seq_times) = (Vec::new(), Vec::new());
        let mut value = None;
        for round in 1..=rounds {
            let start = Instant::now();
            let p = self.run_system(k).expect("one rank: rank 0 has the root's result");
            let tp = start.elapsed().as_secs_f64();
            let start = Instant::now();
            let q = k.run::<Serial>();
            let tq = start.elapsed().as_secs_f64();
            if p != q {
                self.gasnet.fail(format_args!(
                    "round {round} of --vs-seq: the parallel run computed {p:?}, the serial elision {q:?}"
                ));
            }
            value = Some(p);
            par_times.push(tp);
            seq_times.push(tq);
            // Progress on long runs (a round of a second or more).
            if tp + tq >= 1.0 && round < rounds {
                eprintln!("vs-seq: round {round}/{rounds}: parallel {tp:.3} s, serial {tq:.3} s");
            }
        }
        let fastest = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let (par_s, seq_s) = (fastest(&par_times), fastest(&seq_times));
        let mut ratios: Vec<f64> = par_times.iter().zip(&seq_times).map(|(p, q)| p / q).collect();
        ratios.sort_by(f64::total_cmp);
        let median = ratios[ratios.len() / 2];
        let mut extra = Map::new();
        extra.insert(
            "vs_seq".into(),
            json!({
                "rounds": rounds,
                "seq_time_s": round(seq_s, 6),
                "ratio": round(par_s / seq_s, 4),
                "ratio_median": round(median, 4),
                "par_times_s": par_times.iter().map(|t| round(*t, 6)).collect::<Vec<_>>(),
                "seq_times_s": seq_times.iter().map(|t| round(*t, 6)).collect::<Vec<_>>(),
            }),
        );
        let outcome = value.map(|value| Outcome { value, time_s: par_s });
        (outcome, extra)
    }

    /// Prints the JSON line on rank 0 and ends the job: exit 0 when verified
    /// or unverifiable, 1 when the result is wrong. Collective.
    pub fn finish(
        self,
        bench: &str,
        params: Value,
        outcome: Option<Outcome<u64>>,
        expected: Option<u64>,
        extra: Map<String, Value>,
    ) -> ! {
        let stats = self.runtime.stats();
        let trace = self.runtime.trace_totals();
        let g = self.gasnet;
        let mut wrong = false;
        if let Some(Outcome { value, time_s }) = outcome {
            let verified = expected.map(|e| e == value);
            wrong = verified == Some(false);
            let mut line = Map::new();
            line.insert("bench".into(), json!(bench));
            line.insert(RUNTIME_FIELD.into(), json!(self.system.name()));
            let threads = match &self.system {
                System::Rayon { threads, .. } => Some(*threads),
                _ => None,
            };
            line.insert(RAYON_THREADS_FIELD.into(), json!(threads));
            let model = match &self.system {
                System::Model(m) => Some(m.name()),
                _ => None,
            };
            line.insert(MODEL_CHILD_FIELD.into(), json!(model));
            line.insert("conduit".into(), json!(uat::runtime::CONDUIT.name()));
            line.insert("fad".into(), json!(uat::runtime::MODE.name()));
            line.insert("fad_path".into(), json!(self.runtime.fad_path()));
            line.insert("oversubscribed".into(), json!(self.runtime.oversubscribed()));
            line.insert("ranks".into(), json!(g.size()));
            line.insert("hosts".into(), json!(g.hosts().count()));
            line.insert("rank_hosts".into(), json!(g.hosts().table()));
            line.insert("victims".into(), json!(self.runtime.config().get_victims().name()));
            line.insert(
                "net_delay_us".into(),
                json!(round(g.cross_host_delay().as_secs_f64() * 1e6, 3)),
            );
            line.insert("seq".into(), json!(self.common.seq));
            line.insert("empty_check".into(), json!(self.runtime.config().get_empty_check()));
            line.insert("steal_protocol".into(), json!(self.runtime.steal_protocol().name()));
            line.insert("lifelines".into(), json!(self.runtime.lifelines()));
            line.insert("poll_interval".into(), json!(self.runtime.poll_interval()));
            line.insert("params".into(), params);
            line.insert("result".into(), json!(value));
            line.insert("expected".into(), json!(expected));
            line.insert("verified".into(), json!(verified));
            line.insert("time_s".into(), json!(round(time_s, 6)));
            line.insert("throughput".into(), json!(round(value as f64 / time_s.max(1e-9), 1)));
            line.insert("stats".into(), stats_json(&stats));
            if let Some(ws) = stats.workspan() {
                line.insert("workspan".into(), workspan_json(&ws));
            }
            if let Some(t) = &trace {
                line.insert("trace".into(), trace_json(t));
            }
            line.extend(extra);
            if wrong {
                eprintln!(
                    "error: {bench} computed {value}, expected {}: WRONG ANSWER",
                    expected.unwrap_or(0)
                );
            }
            println!("{}", Value::Object(line));
        }
        // Rank 0 knows the verdict; it ends the job for everyone.
        if g.rank() == 0 && wrong {
            self.runtime.exit(1);
        }
        g.barrier();
        self.runtime.exit(0)
    }
}

/// splitmix64 of (seed, i): the benchmarks' pseudo-random numbers (one
/// definition, in `uat::testing`).
pub use uat::testing::splitmix;

/// Mean µs per call of `f` over `iters` calls (after a warm-up of a tenth
/// as many): the latency loop of `gasnet-check` and `micro latency`.
pub fn mean_us(iters: u32, mut f: impl FnMut()) -> f64 {
    for _ in 0..iters / 10 {
        f();
    }
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    start.elapsed().as_secs_f64() * 1e6 / iters.max(1) as f64
}

/// The stats object of the JSON line: every field of [`Stats`], by its
/// declared name (cycle counts in seconds, as `<name>_s`).
pub fn stats_json(s: &Stats) -> Value {
    let fields = Stats::FIELDS.iter().zip(s.values()).map(|(field, value)| {
        let v = match field.unit {
            uat::runtime::Unit::Cycles => json!(secs(value)),
            uat::runtime::Unit::Nanos => json!(round(value as f64 * 1e-9, 9)),
            _ => json!(value),
        };
        (field.json_name().into_owned(), v)
    });
    let means = s.means().into_iter().map(|(name, total, count)| {
        let mean = (count > 0).then(|| secs(total) / count as f64);
        (format!("{name}_s"), json!(mean))
    });
    Value::Object(fields.chain(means).collect())
}

/// The `trace` object of the JSON line (`UAT_TRACE`): per kind of record,
/// over all ranks and the whole job so far, `count`, `total_s`, `mean_s`,
/// `max_s` (instants and join flows: counts only).
pub fn trace_json(totals: &[uat::runtime::stats::TraceTotal]) -> Value {
    let kinds = totals.iter().map(|t| {
        let timed = t.total_s > 0.0 || t.max_s > 0.0;
        let v = if timed {
            json!({
                "count": t.count,
                "total_s": round(t.total_s, 9),
                "mean_s": round(t.total_s / t.count.max(1) as f64, 9),
                "max_s": round(t.max_s, 9),
            })
        } else {
            json!({ "count": t.count })
        };
        (t.kind.to_string(), v)
    });
    Value::Object(kinds.collect())
}

/// The `workspan` object of the JSON line (`UAT_WORKSPAN=on`).
pub fn workspan_json(w: &uat::runtime::stats::WorkSpan) -> Value {
    json!({
        "work_strands": w.work_strands,
        "span_strands": w.span_strands,
        "parallelism_strands": round(w.work_strands as f64 / w.span_strands.max(1) as f64, 3),
        "work_s": round(w.work_s, 9),
        "span_s": round(w.span_s, 9),
        "parallelism": round(w.parallelism, 3),
        "steal_s": w.steal_s.map(|s| round(s, 9)),
        "burdened_span_s": w.burdened_span_s.map(|s| round(s, 9)),
        "burdened_parallelism": w.burdened_parallelism.map(|p| round(p, 3)),
    })
}

fn secs(cycles: u64) -> f64 {
    round(cycles as f64 / uat::runtime::tsc_hz(), 9)
}

fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

/// The global-memory fields of the JSON line of the benchmarks over global
/// memory (uts-mem, heat), from a run's [`Stats`]: `fetched_bytes`,
/// `written_bytes` (to and from other processes' segments: over the
/// network, where the software cache serves them), `cache_hits`,
/// `cache_misses` and `hit_rate` (hits over hits and misses; null where no
/// checkout went through the cache: every rank's memory is mapped).
pub fn memory_fields(s: &Stats) -> Map<String, Value> {
    let looks = s.cache_hits + s.cache_misses;
    let mut m = Map::new();
    m.insert("fetched_bytes".into(), json!(s.global_fetched_bytes));
    m.insert("written_bytes".into(), json!(s.global_written_bytes));
    m.insert("cache_hits".into(), json!(s.cache_hits));
    m.insert("cache_misses".into(), json!(s.cache_misses));
    let rate = (looks > 0).then(|| round(s.cache_hits as f64 / looks as f64, 4));
    m.insert("hit_rate".into(), json!(rate));
    m
}
