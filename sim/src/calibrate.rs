//! `uat-sim calibrate`: measures this machine's costs with real jobs of the
//! runtime's micro-benchmarks and benchmarks, and writes a machine file
//! (name `here`) whose every value names the command, the JSON field and
//! the measured numbers it comes from, or says it is an assumption.
//!
//! Jobs are launched as the integration tests launch them:
//! `scripts/run.sh --no-build --conduit C --fad M -n N [--real-udp] -- BIN ARGS`
//! from the repository root, with the binaries of `--bin-dir` (default
//! `target/{conduit}-{fad}/release`). Every job runs once per repetition;
//! the repetitions are interleaved (all jobs, then all jobs again), so that
//! a slow moment of the machine hits every measurement alike. A value is
//! the median over the repetitions of what each repetition gives; its
//! source also gives the minimum and maximum.
//!
//! **Which measurement gives which cost** (each also said in the value's
//! source):
//!
//! | cost | measurement |
//! |---|---|
//! | `net_latency_ns`, `net_latency_poller_ns` | half of `micro latency`'s `get` and `get_with_poller` between 2 ranks apart (`native` build; udp over real UDP, mpi without shared memory); on smp, where there is no network, the shared-memory get itself. Over udp and mpi a get is itself an Active Message, so its round trip holds the target's service; the source also gives the half round trip without `handler_ns` and `timer_ns` |
//! | `shm_op_ns` | smp `micro latency` `get` at 2 ranks (the ranks share memory), for every conduit: inside a host udp and mpi use the same shared memory |
//! | `handler_ns` | `micro fad` in `am` mode polling at every work unit: the victim's extra time while hammered per request served during it, less the handler's timer |
//! | `poll_empty_ns` | `micro fad` in `am` mode: the victim's time alone per work unit polling at every unit (`UAT_POLL_INTERVAL=1`) minus the same never polling (`UAT_POLL_INTERVAL=0`), same binary, same job shape |
//! | `own_atomic_ns` | `micro latency`'s `fadd` at 1 rank in the `native` build: a fetch-and-add through the atomic domain on the rank's own word |
//! | `spawn_ns`, `layout.ghz` | smp `micro spawn`: `spawn_join` minus `plain_call` (the child's body); the TSC rate it reports |
//! | `suspend_ns`, `resume_ns`, `frame_bytes` | smp `micro steal` at 2 ranks |
//! | `work.*_ns` | one-rank smp `native` runs of `btc --depth 20`, `uts -t 1 -b 4 -r 19 -a 3 -d 9`, `nqueens 11`: time per node minus spawns per node × `spawn_ns` |
//! | `timer_ns` | two `rdtsc` reads (how `am-fad` times a handler), timed in this process |
//! | `shm_bytes_per_ns` | a 4 KiB copy, timed in this process |
//! | `sleep_poll_ns` | the runtime's `SLEEP_PERIOD` (a setting, read from its source) |
//! | `ranks_per_host` | `nproc` |
//! | `nic_gap_ns`, `net_bytes_per_ns`, `poll_per_peer_ns` | stated assumptions (no micro-benchmark measures them here) |
//!
//! The calibration inputs of the work per node differ from the validation
//! inputs (`btc --depth 22`, UTS T1 at `-d 10` and T3, `nqueens 12`), so
//! that no validated run is its own calibration.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

use crate::machine::Machine;

/// Seconds after which the launcher kills a job (`run.sh --timeout`).
const JOB_TIMEOUT_S: u32 = 120;

/// What to calibrate and where to write it.
#[derive(Clone, Debug)]
pub struct Options {
    /// The machine file to write.
    pub out: PathBuf,
    /// Conduits to write a profile for (`smp`, `udp`, `mpi`).
    pub conduits: Vec<String>,
    /// Where each variant's binaries are: a path in which `{conduit}` and
    /// `{fad}` are replaced (default `target/{conduit}-{fad}/release`).
    pub bin_dir: String,
    /// Repetitions of every job.
    pub reps: u32,
    /// The command line that asked for this (written into the header).
    pub invocation: String,
}

/// Why a calibration failed: a job that could not start, failed or gave
/// no usable JSON (the message names its command), or a file that could
/// not be written or read back.
#[derive(Debug)]
pub struct CalibrationError(pub String);

impl std::fmt::Display for CalibrationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CalibrationError {}

fn fail<T>(message: String) -> Result<T, CalibrationError> {
    Err(CalibrationError(message))
}

/// One job of the calibration.
#[derive(Clone, Debug)]
pub struct Job {
    /// What it measures (its key among the results).
    pub key: String,
    /// The conduit it is built for.
    pub conduit: String,
    /// The fetch-and-add mode it is built for.
    pub fad: String,
    /// Ranks.
    pub ranks: u32,
    /// Ranks whose memory is apart (udp over real UDP, mpi without shared
    /// memory); smp ranks share memory whatever this says.
    pub apart: bool,
    /// Extra environment of the job.
    pub env: Vec<(String, String)>,
    /// The binary's name (`micro`, `btc`, ...).
    pub bin: String,
    /// Its arguments.
    pub args: Vec<String>,
}

impl Job {
    /// The binary's path for the bin-dir pattern.
    pub fn exe(&self, bin_dir: &str) -> PathBuf {
        Path::new(&bin_dir.replace("{conduit}", &self.conduit).replace("{fad}", &self.fad)).join(&self.bin)
    }

    /// The launcher's arguments, before `--`.
    fn launcher_args(&self) -> Vec<String> {
        let mut a: Vec<String> = [
            "--no-build",
            "--conduit",
            &self.conduit,
            "--fad",
            &self.fad,
            "--timeout",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.push(JOB_TIMEOUT_S.to_string());
        if self.apart && self.conduit == "udp" {
            a.push("--real-udp".into());
        }
        a.push("-n".into());
        a.push(self.ranks.to_string());
        a
    }

    /// The whole environment of the job (the mpi ranks apart: no shared
    /// memory between them, one rank per supernode).
    fn all_env(&self) -> Vec<(String, String)> {
        let mut env = self.env.clone();
        if self.apart && self.conduit == "mpi" {
            env.push(("GASNET_SUPERNODE_MAXSIZE".into(), "1".into()));
        }
        env
    }

    /// The command as a shell would run it from the repository root.
    pub fn command(&self, bin_dir: &str) -> String {
        let mut s = String::new();
        for (k, v) in self.all_env() {
            let _ = write!(s, "{k}={v} ");
        }
        let _ = write!(
            s,
            "scripts/run.sh {} -- {} {}",
            self.launcher_args().join(" "),
            self.exe(bin_dir).display(),
            self.args.join(" ")
        );
        s
    }
}

/// What runs a job: the real launcher, or canned output in tests.
pub trait Runner {
    /// Runs `job` and returns its standard output, or why it failed (the
    /// caller adds the command).
    fn run(&mut self, job: &Job, bin_dir: &str) -> Result<String, String>;
}

/// Runs jobs with `scripts/run.sh` from the repository root `root`.
pub struct Launcher {
    /// The repository root.
    pub root: PathBuf,
}

impl Runner for Launcher {
    fn run(&mut self, job: &Job, bin_dir: &str) -> Result<String, String> {
        let exe = job.exe(bin_dir);
        let exe = if exe.is_absolute() { exe } else { self.root.join(exe) };
        if !exe.is_file() {
            return Err(format!(
                "binary {} not found (build it: cargo uat build --release --conduit {} --fad {})",
                exe.display(),
                job.conduit,
                job.fad
            ));
        }
        let out = Command::new(self.root.join("scripts/run.sh"))
            .current_dir(&self.root)
            .args(job.launcher_args())
            .arg("--")
            .arg(&exe)
            .args(&job.args)
            .env_remove("UAT_LAUNCHED")
            .env_remove("UAT_POLL_INTERVAL")
            .env_remove("GASNET_SUPERNODE_MAXSIZE")
            .envs(job.all_env())
            .output()
            .map_err(|e| format!("cannot start scripts/run.sh: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            let why = match out.status.code() {
                Some(124) => format!("killed after {JOB_TIMEOUT_S} s (hung)"),
                Some(c) => format!("exit {c}"),
                None => "killed by a signal".into(),
            };
            return Err(format!("{why}; stderr ends:\n{}", tail.join("\n")));
        }
        Ok(stdout)
    }
}

/// Facts of this machine measured or read in this process.
#[derive(Clone, Debug)]
pub struct Host {
    /// `uname -n`.
    pub name: String,
    /// The CPU's model name (`/proc/cpuinfo`).
    pub cpu: String,
    /// `nproc`.
    pub cores: u32,
    /// The date (UTC) of the calibration, `YYYY-MM-DD`.
    pub date: String,
    /// Two TSC reads, ns, over several timings.
    pub timer_ns: Vec<f64>,
    /// A 4 KiB copy's bytes per ns, over several timings.
    pub copy_bytes_per_ns: Vec<f64>,
    /// The runtime's `SLEEP_PERIOD` in ns, or why it could not be read.
    pub sleep_period_ns: Result<f64, String>,
}

/// Where the runtime's sleep period is set.
const SLEEP_PERIOD_FILE: &str = "uni-threads/src/lifeline/mod.rs";

impl Host {
    /// Probes this machine (the repository at `root` for the runtime's
    /// sleep period).
    pub fn probe(root: &Path) -> Result<Host, CalibrationError> {
        let run = |cmd: &str, args: &[&str]| -> Result<String, CalibrationError> {
            let out = Command::new(cmd)
                .args(args)
                .output()
                .map_err(|e| CalibrationError(format!("cannot run `{cmd}`: {e}")))?;
            if !out.status.success() {
                return fail(format!("`{cmd} {}` failed: {}", args.join(" "), out.status));
            }
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        };
        let cores: u32 = run("nproc", &[])?
            .parse()
            .map_err(|e| CalibrationError(format!("`nproc` printed no number: {e}")))?;
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown CPU".into());
        let sleep_period_ns = std::fs::read_to_string(root.join(SLEEP_PERIOD_FILE))
            .map_err(|e| format!("cannot read {SLEEP_PERIOD_FILE}: {e}"))
            .and_then(|t| sleep_period(&t).ok_or_else(|| format!("no `const SLEEP_PERIOD` in {SLEEP_PERIOD_FILE}")));
        Ok(Host {
            name: run("uname", &["-n"])?,
            cpu,
            cores,
            date: utc_date(),
            timer_ns: (0..5).map(|_| time_timer()).collect(),
            copy_bytes_per_ns: (0..5).map(|_| time_copy()).collect(),
            sleep_period_ns,
        })
    }
}

/// The sleep period's ns from the source text of its `const`.
fn sleep_period(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.contains("const SLEEP_PERIOD:"))?;
    for (call, ns) in [
        ("from_millis(", 1e6),
        ("from_micros(", 1e3),
        ("from_nanos(", 1.0),
        ("from_secs(", 1e9),
    ] {
        if let Some(at) = line.find(call) {
            let rest = &line[at + call.len()..];
            let number: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '_').collect();
            return number.replace('_', "").parse::<f64>().ok().map(|v| v * ns);
        }
    }
    None
}

/// ns of two TSC reads (x86-64; elsewhere two clock reads).
fn time_timer() -> f64 {
    const N: u32 = 1_000_000;
    let t = Instant::now();
    let mut acc = 0u64;
    for _ in 0..N {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: rdtsc has no preconditions on x86-64.
            let (a, b) = unsafe { (core::arch::x86_64::_rdtsc(), core::arch::x86_64::_rdtsc()) };
            acc = acc.wrapping_add(b.wrapping_sub(a));
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let a = Instant::now();
            acc = acc.wrapping_add(a.elapsed().as_nanos() as u64);
        }
    }
    std::hint::black_box(acc);
    t.elapsed().as_nanos() as f64 / f64::from(N)
}

/// Bytes per ns of a 4 KiB copy.
fn time_copy() -> f64 {
    const BYTES: usize = 4096;
    const N: u32 = 100_000;
    let src = vec![7u8; BYTES];
    let mut dst = vec![0u8; BYTES];
    let t = Instant::now();
    for i in 0..N {
        let s = std::hint::black_box(&src[..]);
        dst.copy_from_slice(s);
        dst[i as usize % BYTES] ^= 1;
        std::hint::black_box(&mut dst);
    }
    (BYTES as f64 * f64::from(N)) / t.elapsed().as_nanos() as f64
}

/// The current UTC date, `YYYY-MM-DD`.
fn utc_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil(secs / 86_400)
}

/// The calendar date of a day count since 1970-01-01 (proleptic
/// Gregorian), by eras of 400 years.
fn civil(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Median, minimum and maximum.
#[derive(Clone, Copy, Debug)]
struct Spread {
    median: f64,
    min: f64,
    max: f64,
}

fn spread(v: &[f64]) -> Spread {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let median = if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    Spread {
        median,
        min: s.first().copied().unwrap_or(f64::NAN),
        max: s.last().copied().unwrap_or(f64::NAN),
    }
}

/// A number for a source: a few significant digits.
fn num(x: f64) -> String {
    let a = x.abs();
    if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.4}")
    }
}

fn describe(s: Spread) -> String {
    format!("{} (min {} - max {})", num(s.median), num(s.min), num(s.max))
}

/// The jobs of one repetition.
pub fn jobs(conduits: &[String]) -> Vec<Job> {
    let job = |key: &str, conduit: &str, fad: &str, ranks: u32, bin: &str, args: &str| Job {
        key: key.into(),
        conduit: conduit.into(),
        fad: fad.into(),
        ranks,
        apart: ranks > 1,
        env: Vec::new(),
        bin: bin.into(),
        args: args.split_whitespace().map(String::from).collect(),
    };
    // The rank's own costs and the work per node: smp, native, always.
    let mut v = vec![
        job(
            "smp spawn",
            "smp",
            "native",
            1,
            "micro",
            "spawn --iters 2000000 --reps 3",
        ),
        job("smp steal", "smp", "native", 2, "micro", "steal"),
        job("smp latency", "smp", "native", 2, "micro", "latency --iters 20000"),
        job("smp own", "smp", "native", 1, "micro", "latency --iters 20000"),
        // Calibration inputs; the validation's are btc --depth 22, UTS T1
        // at -d 10 and T3, nqueens 12.
        job("smp btc", "smp", "native", 1, "btc", "--depth 20"),
        job("smp uts", "smp", "native", 1, "uts", "-t 1 -b 4 -r 19 -a 3 -d 9"),
        job("smp nqueens", "smp", "native", 1, "nqueens", "11"),
    ];
    for c in conduits {
        let c = c.as_str();
        // The hammering rank must keep asking for the whole of the
        // victim's work (~0.3-0.6 s polling at every unit), so that the
        // handlers' share of its time stands above the machine's noise: as
        // many requests as fit at this conduit's round trip (~1.5 us smp,
        // ~2.5 us mpi, ~10-15 us udp here). Across the network a get costs
        // µs: fewer latency iterations.
        let (lat_iters, per_rank, work) = match c {
            "smp" => (20_000, 300_000, 2_000_000),
            "mpi" => (2000, 200_000, 1_000_000),
            _ => (2000, 60_000, 1_000_000),
        };
        if c != "smp" {
            // The poll at every spawn as the runtime times it, and as it
            // costs: BTC at 2 ranks apart, am (a poll per spawn) against
            // native (one per 64).
            for fad in ["am", "native"] {
                v.push(job(&format!("{c} btc {fad}"), c, fad, 2, "btc", "--depth 20"));
            }
            v.push(job(
                &format!("{c} latency"),
                c,
                "native",
                2,
                "micro",
                &format!("latency --iters {lat_iters}"),
            ));
            v.push(job(
                &format!("{c} own"),
                c,
                "native",
                1,
                "micro",
                "latency --iters 20000",
            ));
        }
        // The victim never polling is the baseline of the smp poll only
        // (over a network the poll comes from the BTC pair above).
        let intervals: &[u32] = if c == "smp" { &[1, 0] } else { &[1] };
        for &interval in intervals {
            // Without polls the hammering rank waits for the victim's end:
            // a handful of requests only.
            let per_rank = if interval == 1 { per_rank } else { 10 };
            let mut j = job(
                &format!("{c} fad poll {interval}"),
                c,
                "am",
                2,
                "micro",
                &format!("fad --per-rank {per_rank} --work {work}"),
            );
            j.env.push(("UAT_POLL_INTERVAL".into(), interval.to_string()));
            v.push(j);
        }
    }
    v
}

/// Every job's JSON per repetition, and how to turn fields into costs.
struct Results<'a> {
    jobs: &'a BTreeMap<String, Job>,
    json: BTreeMap<String, Vec<Value>>,
    bin_dir: &'a str,
    date: String,
    reps: u32,
}

/// A computed cost: its value and its source.
struct Entry {
    value: f64,
    source: String,
}

impl Results<'_> {
    fn command(&self, key: &str) -> String {
        self.jobs
            .get(key)
            .map_or_else(|| key.to_string(), |j| j.command(self.bin_dir))
    }

    /// Field `field` (dotted) of job `key`'s JSON, per repetition.
    fn field(&self, key: &str, field: &str) -> Result<Vec<f64>, CalibrationError> {
        let Some(per_rep) = self.json.get(key) else {
            return fail(format!("no output of `{}`", self.command(key)));
        };
        per_rep
            .iter()
            .map(|j| {
                let mut v = j;
                for part in field.split('.') {
                    v = v.get(part).unwrap_or(&Value::Null);
                }
                v.as_f64().ok_or_else(|| {
                    CalibrationError(format!(
                        "field {field} missing or not a number in the JSON of `{}`",
                        self.command(key)
                    ))
                })
            })
            .collect()
    }

    /// A cost computed per repetition by `f` from the fields `inputs`
    /// (job key, field); its source says `what`, each input's command,
    /// field and spread, and the per-repetition results' spread.
    fn measure(
        &self,
        what: &str,
        inputs: &[(&str, &str)],
        f: impl Fn(&[f64]) -> f64,
    ) -> Result<Entry, CalibrationError> {
        let columns: Vec<Vec<f64>> = inputs
            .iter()
            .map(|(k, fd)| self.field(k, fd))
            .collect::<Result<_, _>>()?;
        let reps = columns.first().map_or(0, Vec::len);
        let results: Vec<f64> = (0..reps)
            .map(|r| f(&columns.iter().map(|c| c[r]).collect::<Vec<_>>()))
            .collect();
        let s = spread(&results);
        if !s.median.is_finite() {
            return fail(format!("{what}: no finite result from {inputs:?}"));
        }
        let mut source = format!("measured {} ({} reps): {what}. ", self.date, self.reps);
        let mut seen: Vec<&str> = Vec::new();
        for (i, (k, fd)) in inputs.iter().enumerate() {
            if !seen.contains(k) {
                let _ = write!(source, "Job `{}`: ", self.command(k));
                seen.push(k);
            }
            let _ = write!(source, "{fd} = {}; ", describe(spread(&columns[i])));
        }
        let _ = write!(source, "value = median over reps {}", describe(s));
        Ok(Entry {
            value: s.median.max(0.0),
            source,
        })
    }
}

fn assumption(value: f64, why: &str) -> Entry {
    Entry {
        value,
        source: format!("assumption: {why}"),
    }
}

/// Runs the calibration with the real launcher from the current directory
/// (the repository root) and writes `o.out`.
pub fn calibrate(o: &Options) -> Result<(), CalibrationError> {
    let root = std::env::current_dir().map_err(|e| CalibrationError(format!("no current directory: {e}")))?;
    if !root.join("scripts/run.sh").is_file() {
        return fail(format!(
            "{} has no scripts/run.sh: run uat-sim calibrate from the repository root",
            root.display()
        ));
    }
    let host = Host::probe(&root)?;
    let started = Instant::now();
    let text = calibrate_with(o, &host, &mut Launcher { root })?;
    std::fs::write(&o.out, &text).map_err(|e| CalibrationError(format!("cannot write {}: {e}", o.out.display())))?;
    Machine::load(&o.out).map_err(|e| CalibrationError(format!("the written file does not load: {e}")))?;
    eprintln!(
        "calibrate: wrote {} in {:.0} s",
        o.out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Runs every job `o.reps` times with `runner` and returns the machine
/// file's text.
pub fn calibrate_with(o: &Options, host: &Host, runner: &mut dyn Runner) -> Result<String, CalibrationError> {
    for c in &o.conduits {
        if !["smp", "udp", "mpi"].contains(&c.as_str()) {
            return fail(format!("cannot calibrate conduit {c:?} here (smp, udp, mpi)"));
        }
    }
    if o.conduits.is_empty() {
        return fail("no conduit to calibrate".into());
    }
    if o.reps == 0 {
        return fail("--reps must be at least 1".into());
    }
    let list = jobs(&o.conduits);
    let by_key: BTreeMap<String, Job> = list.iter().map(|j| (j.key.clone(), j.clone())).collect();
    let mut json: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let total = list.len() as u32 * o.reps;
    let mut done = 0;
    for rep in 1..=o.reps {
        for job in &list {
            done += 1;
            let cmd = job.command(&o.bin_dir);
            eprintln!("calibrate: [{done}/{total}] rep {rep}: {cmd}");
            let t = Instant::now();
            let out = runner
                .run(job, &o.bin_dir)
                .map_err(|e| CalibrationError(format!("job `{cmd}` failed: {e}")))?;
            let line = out
                .lines()
                .rev()
                .map(str::trim)
                .find(|l| l.starts_with('{'))
                .ok_or_else(|| CalibrationError(format!("job `{cmd}` printed no JSON line")))?;
            let value: Value = serde_json::from_str(line)
                .map_err(|e| CalibrationError(format!("job `{cmd}`: its last JSON line does not parse ({e})")))?;
            if value.get("verified") == Some(&Value::Bool(false)) {
                return fail(format!("job `{cmd}` reports \"verified\": false: {line}"));
            }
            eprintln!("calibrate:   {:.1} s", t.elapsed().as_secs_f64());
            json.entry(job.key.clone()).or_default().push(value);
        }
    }
    let r = Results {
        jobs: &by_key,
        json,
        bin_dir: &o.bin_dir,
        date: host.date.clone(),
        reps: o.reps,
    };
    write_file(o, host, &r)
}

fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn cost_line(out: &mut String, name: &str, e: &Entry) {
    let _ = writeln!(
        out,
        "{name} = {{ value = {:.3}, source = {} }}",
        e.value,
        toml_string(&e.source)
    );
}

/// The rank's own costs, the work per node and the layout.
fn local_costs(host: &Host, r: &Results<'_>) -> Result<Vec<(&'static str, &'static str, Entry)>, CalibrationError> {
    let spawn = ("smp spawn", "spawn_join.ns");
    let plain = ("smp spawn", "plain_call.ns");
    let mut v = vec![
        (
            "layout",
            "ranks_per_host",
            Entry {
                value: f64::from(host.cores),
                source: format!(
                    "measured {}: `nproc` = {} on {} ({}): one rank per core. A job over real UDP or mpi without shared memory puts one rank on each emulated host: predict those with --ranks-per-host 1",
                    host.date, host.cores, host.name, host.cpu
                ),
            },
        ),
        (
            "layout",
            "ghz",
            r.measure("the TSC rate the runtime reports (tsc_ghz)", &[("smp spawn", "tsc_ghz")], |x| x[0])?,
        ),
        (
            "local",
            "spawn_ns",
            r.measure(
                "spawn(f).join() not stolen minus a plain call of the same body (best of micro's own reps each), smp native, 1 rank: no poll in the path",
                &[spawn, plain],
                |x| x[0] - x[1],
            )?,
        ),
        (
            "local",
            "suspend_ns",
            r.measure("suspend_ns (per suspension, steals of a BTC run), smp native, 2 ranks", &[("smp steal", "suspend_ns")], |x| x[0])?,
        ),
        (
            "local",
            "resume_ns",
            r.measure("resume_ns (per resume), smp native, 2 ranks", &[("smp steal", "resume_ns")], |x| x[0])?,
        ),
        (
            "local",
            "frame_bytes",
            r.measure("frame_bytes_avg (bytes of frames per successful steal), smp native, 2 ranks", &[("smp steal", "frame_bytes_avg")], |x| x[0])?,
        ),
    ];
    let times = r.field("smp btc", "time_s")?;
    let t = spread(&times);
    v.push((
        "local",
        "speed_spread",
        Entry {
            value: if times.len() > 1 { (t.max - t.min) / (t.max + t.min) } else { 0.0 },
            source: format!(
                "measured {} ({} reps): how far one run of the same work differs from another on this machine, as a stand-in for how far one rank's speed differs from another's: (max - min) / (max + min) of time_s of `{}`: {}",
                r.date,
                r.reps,
                r.command("smp btc"),
                describe(t)
            ),
        },
    ));
    let calib = "calibration input, not a validation input (those are btc --depth 22, UTS T1 -d 10 and T3, nqueens 12)";
    for (name, key, nodes) in [
        ("btc_ns", "smp btc", "result"),
        ("uts_ns", "smp uts", "result"),
        ("nqueens_ns", "smp nqueens", "nodes"),
    ] {
        let what = format!(
            "one-rank smp native run ({calib}): time_s x 1e9 / {nodes} (nodes) minus stats.spawns / {nodes} x local.spawn_ns (spawn_join.ns - plain_call.ns of `{}`, same rep); clamped at 0",
            r.command("smp spawn")
        );
        let e = r.measure(
            &what,
            &[(key, "time_s"), (key, nodes), (key, "stats.spawns"), spawn, plain],
            |x| x[0] * 1e9 / x[1] - x[2] / x[1] * (x[3] - x[4]),
        )?;
        v.push(("work", name, e));
    }
    Ok(v)
}

/// One conduit's profile.
fn conduit_costs(c: &str, host: &Host, r: &Results<'_>) -> Result<Vec<(&'static str, Entry)>, CalibrationError> {
    let timer = spread(&host.timer_ns);
    let copy = spread(&host.copy_bytes_per_ns);
    let timer_entry = Entry {
        value: timer.median,
        source: format!(
            "measured {} in uat-sim calibrate's own process: two rdtsc reads (am-fad/src/service.rs times each handler with two), 1e6 pairs timed 5 times: ns per pair {}",
            host.date,
            describe(timer)
        ),
    };
    let copy_entry = || {
        Entry {
        value: copy.median,
        source: format!(
            "measured {} in uat-sim calibrate's own process: copy_from_slice of 4 KiB, 1e5 copies timed 5 times: bytes per ns {}",
            host.date,
            describe(copy)
        ),
    }
    };
    let shm = r.measure(
        "latency_us.get x 1000: an 8-byte get between 2 ranks of one smp job (shared memory; inside a host udp and mpi use the same PSHM)",
        &[("smp latency", "latency_us.get")],
        |x| x[0] * 1000.0,
    )?;
    let lat_key = format!("{c} latency");
    let (net, net_poller) = if c == "smp" {
        (
            r.measure(
                "no network on smp: the same as shm_op_ns (latency_us.get x 1000, the whole shared-memory get)",
                &[("smp latency", "latency_us.get")],
                |x| x[0] * 1000.0,
            )?,
            r.measure(
                "no network on smp: latency_us.get_with_poller x 1000, the shared-memory get with a polling thread beside each rank",
                &[("smp latency", "latency_us.get_with_poller")],
                |x| x[0] * 1000.0,
            )?,
        )
    } else {
        let apart = if c == "udp" {
            "real UDP over loopback, each rank its own host"
        } else {
            "no shared memory between the ranks"
        };
        (
            r.measure(
                &format!("half of latency_us.get x 1000: an 8-byte get round trip between 2 ranks apart ({apart}), no polling thread"),
                &[(&lat_key, "latency_us.get")],
                |x| x[0] * 500.0,
            )?,
            r.measure(
                &format!("half of latency_us.get_with_poller x 1000: the same with a polling thread beside each rank ({apart})"),
                &[(&lat_key, "latency_us.get_with_poller")],
                |x| x[0] * 500.0,
            )?,
        )
    };
    let poll_on = format!("{c} fad poll 1");
    let poll_off = format!("{c} fad poll 0");
    let work_units = "params.work";
    // Over a network the poll at a spawn is measured where the runtime
    // measures it: its timer around GASNet's poll (msg_handling_s) gives
    // the timed part; what an am spawn costs beyond a native one, the rest
    // (the poll point's own work).
    let (poll_empty, poll_point) = if c == "smp" {
        let poll_whole = r.measure(
            "the victim's time alone per work unit polling at every unit minus the same never polling, am mode, 2 ranks: (victim_busy_s.alone of the UAT_POLL_INTERVAL=1 job - that of the UAT_POLL_INTERVAL=0 job) x 1e9 / params.work; the other rank waits in a barrier and sends nothing, so the polls are empty, with one peer",
            &[(&poll_on, "victim_busy_s.alone"), (&poll_on, work_units), (&poll_off, "victim_busy_s.alone")],
            |x| (x[0] - x[2]) * 1e9 / x[1],
        )?;
        (
            poll_whole,
            assumption(
                0.0,
                "0 on smp: a spawn polls only when a thief asked (poll interval 0), and poll_empty_ns is the whole poll point there",
            ),
        )
    } else {
        let (am, native) = (format!("{c} btc am"), format!("{c} btc native"));
        let timed = r.measure(
            "the runtime's own timer around GASNet's poll at a spawn: stats.msg_handling_s x 1e9 / stats.spawns of BTC at 2 ranks apart in am mode, which polls at every spawn (calibration input btc --depth 20)",
            &[(&am, "stats.msg_handling_s"), (&am, "stats.spawns")],
            |x| x[0] * 1e9 / x[1],
        )?;
        let whole = r.measure(
            "what a poll at a spawn costs in time: 2 x (time_s of am - time_s of native) x 1e9 / (stats.spawns x (1 - 1/64)), BTC at 2 ranks apart (native polls every 64 spawns)",
            &[(&am, "time_s"), (&native, "time_s"), (&am, "stats.spawns")],
            |x| 2.0 * (x[0] - x[1]) * 1e9 / (x[2] * (1.0 - 1.0 / 64.0)),
        )?;
        let point = Entry {
            value: (whole.value - timed.value).max(0.0),
            source: format!(
                "measured as the difference of two measurements: the poll's cost beyond what the runtime's timer sees: ({} - {}) ns, at least 0, where the first is {} and the second is poll_empty_ns",
                num(whole.value),
                num(timed.value),
                whole.source
            ),
        };
        (timed, point)
    };
    let timer_ns = timer.median;
    let handler = r.measure(
        &format!(
            "per-request CPU at the victim, am mode, 2 ranks, victim polling at every work unit: (victim_busy_s.hammered - victim_busy_s.alone) x 1e9 / requests served while it computed, less timer_ns ({}) which the simulator charges apart; served = min(params.per_rank, victim_busy_s.hammered / fadd_latency_us); the reply's send is inside",
            num(timer_ns)
        ),
        &[
            (&poll_on, "victim_busy_s.hammered"),
            (&poll_on, "victim_busy_s.alone"),
            (&poll_on, "params.per_rank"),
            (&poll_on, "fadd_latency_us"),
        ],
        move |x| {
            let served = x[2].min(x[0] * 1e6 / x[3].max(1e-9)).max(1.0);
            (x[0] - x[1]) * 1e9 / served - timer_ns
        },
    )?;
    let shm_handler = r.measure(
        &format!(
            "per-request CPU at a victim on the same host (an Active Message through shared memory): the smp job of handler_ns, am mode, 2 ranks, victim polling at every work unit: (victim_busy_s.hammered - victim_busy_s.alone) x 1e9 / requests served, less timer_ns ({})",
            num(timer_ns)
        ),
        &[
            ("smp fad poll 1", "victim_busy_s.hammered"),
            ("smp fad poll 1", "victim_busy_s.alone"),
            ("smp fad poll 1", "params.per_rank"),
            ("smp fad poll 1", "fadd_latency_us"),
        ],
        move |x| {
            let served = x[2].min(x[0] * 1e6 / x[3].max(1e-9)).max(1.0);
            (x[0] - x[1]) * 1e9 / served - timer_ns
        },
    )?;
    let own = r.measure(
        &format!(
            "latency_us.fadd x 1000 of a 1-rank {c} native job: a fetch-and-add through the atomic domain on the rank's own word. Assumption: with ranks apart, GASNet-EX's domain serves the owner's own (GEX_FLAG_AD_MY_RANK) operations locally too, at about this cost"
        ),
        &[(&format!("{c} own"), "latency_us.fadd")],
        |x| x[0] * 1000.0,
    )?;
    let frames = r
        .field("smp steal", "frame_bytes_avg")
        .map(|v| spread(&v).median)
        .unwrap_or(f64::NAN);
    let (net_bytes, nic_gap) = if c == "smp" {
        (
            Entry {
                value: copy.median,
                source: format!(
                    "no network on smp: the same as shm_bytes_per_ns ({})",
                    copy_entry().source
                ),
            },
            assumption(
                0.0,
                "0: smp has no NIC; every operation is a load or a store through shared memory",
            ),
        )
    } else {
        (
            assumption(
                1.0,
                &format!(
                    "1 byte/ns; no micro-benchmark here times a large transfer between ranks apart ({c}: the kernel copies each message on each side). A stolen frame of {} B then adds ~{} us to a measured one-way latency of {} us, so the value matters little",
                    num(frames),
                    num(frames / 1000.0),
                    num(net.value / 1000.0)
                ),
            ),
            assumption(
                0.0,
                &format!(
                    "0; no NIC is shared here: over {c} on one machine every rank sends through its own endpoint in the kernel, and the sender's CPU per message is inside the measured latency; no micro-benchmark measures a message rate"
                ),
            ),
        )
    };
    let sleep = match &host.sleep_period_ns {
        Ok(ns) => Entry {
            value: *ns,
            source: format!(
                "a setting, not a measurement: the runtime's SLEEP_PERIOD in {SLEEP_PERIOD_FILE} (read {}), a sleeping rank's time between polls",
                host.date
            ),
        },
        Err(why) => assumption(1e6, &format!("1 ms, the runtime's sleep period when last read; {why}")),
    };
    let per_peer = assumption(
        0.0,
        &format!(
            "0; measuring the empty poll at 4 ranks needs 4 ranks on this machine's {} cores, where the ranks besides the victim spin in a barrier on its cores and its wall time measures the sharing, not the poll. GASNet-EX's {c} conduit polls one endpoint for all peers (outside knowledge of its design, unverified here)",
            host.cores
        ),
    );
    let (mut net, mut net_poller) = (net, net_poller);
    if c != "smp" {
        // Over udp and mpi a get is itself an Active Message served at the
        // target's poll, whose service the model charges as handler_ns +
        // timer_ns at the target: the one-way latency is what is left of
        // the round trip.
        for e in [&mut net, &mut net_poller] {
            let round_trip = 2.0 * e.value;
            let one_way = (round_trip - handler.value - timer_ns) / 2.0;
            e.value = one_way.max(0.0);
            let _ = write!(
                e.source,
                "; over {c} a get is an Active Message served at the target, charged there as handler_ns + timer_ns: one way = (round trip {} - handler_ns - timer_ns) / 2, at least 0",
                num(round_trip)
            );
            if one_way < 0.0 {
                let _ = write!(
                    e.source,
                    ". CLAMPED: the measured handler_ns exceeds the whole round trip, so the two measurements disagree (handler_ns comes from a hammered victim, whose slowdown includes more than the handler); the one-way latency is not known"
                );
                eprintln!("calibrate: warning: {c}: handler_ns exceeds a get's round trip; net latency clamped at 0 (see its source)");
            }
        }
    }
    Ok(vec![
        ("net_latency_ns", net),
        ("net_latency_poller_ns", net_poller),
        ("net_bytes_per_ns", net_bytes),
        ("nic_gap_ns", nic_gap),
        ("shm_op_ns", shm),
        ("shm_bytes_per_ns", copy_entry()),
        ("poll_empty_ns", poll_empty),
        ("poll_point_ns", poll_point),
        ("poll_per_peer_ns", per_peer),
        ("handler_ns", handler),
        ("shm_handler_ns", shm_handler),
        ("own_atomic_ns", own),
        ("sleep_poll_ns", sleep),
        ("timer_ns", timer_entry),
    ])
}

fn write_file(o: &Options, host: &Host, r: &Results<'_>) -> Result<String, CalibrationError> {
    let mut out = String::new();
    let _ = writeln!(out, "# Written by `{}`", o.invocation);
    let _ = writeln!(
        out,
        "# on {} ({}, {} cores), {} (UTC), from the repository root.",
        host.name, host.cpu, host.cores, host.date
    );
    let _ = writeln!(
        out,
        "# Every value is measured here by the job its source names (median over {} repetitions, min - max\n# beside it) or is an assumption said as such; sim/src/calibrate.rs says which measurement gives\n# which cost. The work per node comes from calibration inputs (btc --depth 20, uts -t 1 -b 4 -r 19\n# -a 3 -d 9, nqueens 11), not from the validation inputs (btc --depth 22, UTS T1 -d 10 and T3,\n# nqueens 12). No value is fitted to a result the model is compared with.",
        o.reps
    );
    out.push('\n');
    let _ = writeln!(out, "name = \"here\"");
    let description = format!(
        "This machine ({}: {}, {} cores), measured by uat-sim calibrate on {}; conduits: {} (udp over real UDP on loopback, mpi without shared memory between ranks)",
        host.name,
        host.cpu,
        host.cores,
        host.date,
        o.conduits.join(", ")
    );
    let _ = writeln!(out, "description = {}", toml_string(&description));
    let mut section = "";
    for (s, name, e) in local_costs(host, r)? {
        if s != section {
            let _ = writeln!(out, "\n[{s}]");
            section = s;
        }
        cost_line(&mut out, name, &e);
    }
    for c in &o.conduits {
        let _ = writeln!(out, "\n[conduit.{c}]");
        if c == "smp" {
            let _ = writeln!(
                out,
                "# smp: every rank is on one host; a get, put or atomic is a load or a store (the target's CPU\n# does nothing, as with a NIC). Between-host costs repeat the shared-memory ones."
            );
            let _ = writeln!(out, "rma = \"nic\"");
        } else {
            let _ = writeln!(
                out,
                "# {c}: GASNet-EX emulates RMA and atomics between hosts with Active Messages served at the\n# target's poll (docs/design/fetch-and-add.md)."
            );
            let _ = writeln!(out, "rma = \"target-poll\"");
        }
        for (name, e) in conduit_costs(c, host, r)? {
            cost_line(&mut out, name, &e);
        }
    }
    Machine::parse(&out).map_err(|e| CalibrationError(format!("the file calibrate made does not parse: {e}")))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Canned output per job key, as the real jobs print it.
    struct Canned {
        fail_key: Option<String>,
    }

    impl Runner for Canned {
        fn run(&mut self, job: &Job, _: &str) -> Result<String, String> {
            if self.fail_key.as_deref() == Some(job.key.as_str()) {
                return Err("exit 1; stderr ends:\nerror: something broke".into());
            }
            let latency = |get: f64| {
                format!(
                    r#"{{"bench":"micro latency","latency_us":{{"get":{get},"put":0.01,"get_with_poller":{},"put_with_poller":0.01,"fadd":0.02}},"verified":true}}"#,
                    get * 1.2
                )
            };
            let line = match job.key.as_str() {
                "smp spawn" => r#"{"bench":"micro spawn","plain_call":{"ns":1.3},"spawn_join":{"ns":19.7},"tsc_ghz":2.1,"verified":true}"#.to_string(),
                "smp steal" => r#"{"bench":"micro steal","frame_bytes_avg":264.0,"suspend_ns":390.0,"resume_ns":110.0,"verified":true}"#.to_string(),
                "smp latency" | "smp own" | "udp own" | "mpi own" => latency(0.03),
                "udp latency" => latency(25.0),
                "mpi latency" => latency(2.5),
                "smp btc" => r#"{"bench":"btc","time_s":0.085,"result":2097151,"stats":{"spawns":2097150},"verified":true}"#.to_string(),
                "smp uts" => r#"{"bench":"uts","time_s":0.165,"result":1031269,"stats":{"spawns":825407},"verified":null}"#.to_string(),
                "smp nqueens" => r#"{"bench":"nqueens","time_s":0.0046,"nodes":166926,"stats":{"spawns":61075},"verified":true}"#.to_string(),
                k if k.ends_with("btc am") => r#"{"bench":"btc","time_s":1.0,"result":2097151,"stats":{"spawns":2097150,"msg_handling_s":0.5},"verified":true}"#.to_string(),
                k if k.ends_with("btc native") => r#"{"bench":"btc","time_s":0.1,"result":2097151,"stats":{"spawns":2097150,"msg_handling_s":0.01},"verified":true}"#.to_string(),
                k if k.ends_with("fad poll 1") => r#"{"bench":"micro fad","params":{"per_rank":500,"work":500000},"fadd_latency_us":120.0,"victim_busy_s":{"alone":0.409,"hammered":0.508},"verified":true}"#.to_string(),
                k if k.ends_with("fad poll 0") => r#"{"bench":"micro fad","params":{"per_rank":10,"work":500000},"fadd_latency_us":6000.0,"victim_busy_s":{"alone":0.022,"hammered":0.026},"verified":true}"#.to_string(),
                k => return Err(format!("no canned output for {k}")),
            };
            Ok(format!("some launcher chatter\n{line}\n"))
        }
    }

    fn host() -> Host {
        Host {
            name: "testhost".into(),
            cpu: "Test CPU \"quoted\"".into(),
            cores: 2,
            date: "2026-01-02".into(),
            timer_ns: vec![10.0, 11.0, 12.0],
            copy_bytes_per_ns: vec![8.0, 9.0, 10.0],
            sleep_period_ns: Ok(1e6),
        }
    }

    fn options(out: PathBuf) -> Options {
        Options {
            out,
            conduits: vec!["smp".into(), "udp".into(), "mpi".into()],
            bin_dir: "target/{conduit}-{fad}/release".into(),
            reps: 3,
            invocation: "uat-sim calibrate --out here.toml".into(),
        }
    }

    #[test]
    fn a_file_made_from_canned_output_loads() {
        let dir = std::env::temp_dir().join(format!("uat-sim-calibrate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("here.toml");
        let text = calibrate_with(&options(path.clone()), &host(), &mut Canned { fail_key: None }).unwrap();
        std::fs::write(&path, &text).unwrap();
        let m = Machine::load(&path).unwrap();
        assert_eq!(m.name, "here");
        assert_eq!(m.conduit.keys().cloned().collect::<Vec<_>>(), ["mpi", "smp", "udp"]);
        let udp = m.conduit("udp").unwrap();
        // A 25 µs round trip less the target's 198 µs service: clamped at 0.
        assert_eq!(udp.net_latency_ns.value, 0.0);
        assert!(
            udp.net_latency_ns.source.contains("round trip 25000"),
            "{}",
            udp.net_latency_ns.source
        );
        assert!(
            udp.net_latency_ns.source.contains("--real-udp"),
            "{}",
            udp.net_latency_ns.source
        );
        assert!(udp
            .net_latency_ns
            .source
            .contains("latency_us.get = 25.000 (min 25.000 - max 25.000)"));
        // The runtime's timer: 0.5 s / 2,097,150 spawns.
        let timed = 0.5e9 / 2_097_150.0;
        assert!(
            (udp.poll_empty_ns.value - timed).abs() < 1e-3,
            "{}",
            udp.poll_empty_ns.value
        );
        // The time: 2 x (1.0 - 0.1) s / (2,097,150 x 63/64), less the timed part.
        let whole = 2.0 * 0.9e9 / (2_097_150.0 * (1.0 - 1.0 / 64.0));
        assert!(
            (udp.poll_point_ns.value - (whole - timed)).abs() < 1e-2,
            "{}",
            udp.poll_point_ns.value
        );
        // (0.508 - 0.409) s / 500 requests - the timer's 11 ns.
        assert!((udp.handler_ns.value - (198_000.0 - 11.0)).abs() < 1e-6);
        let mpi = m.conduit("mpi").unwrap();
        assert!(mpi.net_latency_ns.source.contains("GASNET_SUPERNODE_MAXSIZE=1"));
        assert!((m.local.spawn_ns.value - 18.4).abs() < 1e-9);
        // BTC: 0.085 s / 2,097,151 nodes - ~1 spawn per node x 18.4 ns.
        let btc = 0.085e9 / 2_097_151.0 - 2_097_150.0 / 2_097_151.0 * 18.4;
        assert!((m.work.btc_ns.value - btc).abs() < 1e-3);
        assert!(m.work.btc_ns.source.contains("btc --depth 20"));
        assert!(text.starts_with("# Written by `uat-sim calibrate --out here.toml`"));
        for (name, c) in m.costs() {
            assert!(
                c.source.starts_with("measured")
                    || c.source.starts_with("assumption")
                    || c.source.starts_with("a setting")
                    || c.source.starts_with("no network"),
                "{name}: {}",
                c.source
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_failed_job_is_an_error_naming_its_command() {
        let mut runner = Canned {
            fail_key: Some("udp fad poll 1".into()),
        };
        let e = calibrate_with(&options(PathBuf::from("x.toml")), &host(), &mut runner).unwrap_err();
        assert!(
            e.0.contains("UAT_POLL_INTERVAL=1 scripts/run.sh --no-build --conduit udp --fad am")
                && e.0
                    .contains("target/udp-am/release/micro fad --per-rank 60000 --work 1000000")
                && e.0.contains("something broke"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_binary_is_an_error_naming_the_command() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut o = options(PathBuf::from("x.toml"));
        o.bin_dir = "/nonexistent/{conduit}-{fad}".into();
        let e = calibrate_with(&o, &host(), &mut Launcher { root }).unwrap_err();
        assert!(
            e.0.contains("job `scripts/run.sh --no-build --conduit smp --fad native"),
            "{e}"
        );
        assert!(e.0.contains("/nonexistent/smp-native/micro not found"), "{e}");
    }

    #[test]
    fn a_job_without_a_field_is_an_error_naming_field_and_command() {
        struct NoField;
        impl Runner for NoField {
            fn run(&mut self, job: &Job, b: &str) -> Result<String, String> {
                let out = Canned { fail_key: None }.run(job, b)?;
                Ok(if job.key == "smp steal" {
                    out.replace("resume_ns", "renamed")
                } else {
                    out
                })
            }
        }
        let e = calibrate_with(&options(PathBuf::from("x.toml")), &host(), &mut NoField).unwrap_err();
        assert!(e.0.contains("field resume_ns") && e.0.contains("micro steal"), "{e}");
    }

    #[test]
    fn helpers() {
        assert_eq!(civil(0), "1970-01-01");
        assert_eq!(civil(20_454), "2026-01-01");
        assert_eq!(civil(11_016), "2000-02-29");
        assert_eq!(
            sleep_period("pub(crate) const SLEEP_PERIOD: Duration = Duration::from_millis(1);"),
            Some(1e6)
        );
        assert_eq!(toml_string("a\"b\\c"), r#""a\"b\\c""#);
        let s = spread(&[3.0, 1.0, 2.0]);
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = std::fs::read_to_string(root.join(SLEEP_PERIOD_FILE)).unwrap();
        assert!(sleep_period(&text).is_some(), "the runtime's SLEEP_PERIOD is readable");
    }
}
