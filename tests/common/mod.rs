//! Running real multi-process jobs from integration tests.
//!
//! Every job goes through `scripts/run.sh --no-build` with the test's own
//! build of the program (so the launcher is tested too), under a timeout that
//! kills the whole job, one job at a time (each rank spins on a core).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static ONE_JOB_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Seconds after which a job counts as hung.
pub(crate) const JOB_TIMEOUT_S: u32 = 120;

pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A binary of the workspace in this test's target dir (`cargo test
/// --workspace` builds them all: the benchmarks live in the uat-bench
/// package).
pub(crate) fn bin(name: &str) -> PathBuf {
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    deps.parent().unwrap().join(name)
}

/// An example of the uat package, in this test's target dir.
pub(crate) fn example(name: &str) -> PathBuf {
    bin("examples").join(name)
}

pub(crate) struct JobOutput {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl JobOutput {
    fn from(out: Output) -> JobOutput {
        JobOutput {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The last stdout line, parsed as the program's JSON result.
    pub(crate) fn json(&self) -> serde_json::Value {
        let line = self
            .stdout
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_else(|| panic!("no output; stderr:\n{}", self.stderr));
        serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("last line is not JSON ({e}): {line}\nstderr:\n{}", self.stderr))
    }

    pub(crate) fn describe(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Runs `scripts/run.sh <launcher_args> -- <exe> <args>` for this build's
/// conduit and mode.
pub(crate) fn run_job(launcher_args: &[&str], exe: &Path, args: &[&str]) -> JobOutput {
    run_job_with_env(launcher_args, exe, args, &[])
}

/// [`run_job`] with extra environment variables for the job.
pub(crate) fn run_job_with_env(launcher_args: &[&str], exe: &Path, args: &[&str], env: &[(&str, &str)]) -> JobOutput {
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let timeout = JOB_TIMEOUT_S.to_string();
    let out = Command::new(root().join("scripts/run.sh"))
        .args([
            "--no-build",
            "--conduit",
            uat::runtime::CONDUIT.name(),
            "--fad",
            uat::runtime::MODE.name(),
            "--timeout",
            &timeout,
        ])
        .args(launcher_args)
        .arg("--")
        .arg(exe)
        .args(args)
        .env_remove("UAT_LAUNCHED")
        .envs(env.iter().copied())
        .output()
        .expect("cannot start scripts/run.sh");
    let out = JobOutput::from(out);
    assert_ne!(
        out.code,
        Some(124),
        "job hung (killed after {JOB_TIMEOUT_S} s): {}",
        out.describe()
    );
    out
}

/// Runs the executable directly, without any launcher.
pub(crate) fn run_direct(exe: &Path, args: &[&str]) -> JobOutput {
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let out = Command::new("timeout")
        .arg("60")
        .arg(exe)
        .args(args)
        .env_remove("UAT_LAUNCHED")
        .env_remove("GASNET_PSHM_NODES")
        .env_remove("GASNET_SPAWNFN")
        .output()
        .expect("cannot start the program");
    JobOutput::from(out)
}

/// Rank counts the CI runs for this conduit: smp at 1, 2 and 4 (forking is
/// cheap), the exec-launched conduits at 2.
pub(crate) fn rank_counts() -> &'static [u32] {
    match uat::runtime::CONDUIT.name() {
        "smp" => &[1, 2, 4],
        _ => &[2],
    }
}

/// 2 ranks whose memory is apart where the conduit allows it: udp over
/// real UDP, mpi without shared memory (`GASNET_SUPERNODE_MAXSIZE=1`); on
/// smp shared (the same answers hold trivially). Launcher arguments and
/// environment.
pub(crate) fn two_ranks_apart() -> (Vec<&'static str>, Vec<(&'static str, &'static str)>) {
    match uat::runtime::CONDUIT.name() {
        "udp" => (vec!["--real-udp", "-n", "2"], vec![]),
        "mpi" => (vec!["-n", "2"], vec![("GASNET_SUPERNODE_MAXSIZE", "1")]),
        _ => (vec!["-n", "2"], vec![]),
    }
}

/// The `UAT_CACHE` values worth a job at [`two_ranks_apart`]: on and off
/// where the ranks' memory is apart; on smp every rank's memory is mapped,
/// nothing is ever cached, and a job with the cache off would repeat the
/// one with it on.
pub(crate) fn cache_settings() -> &'static [&'static str] {
    match uat::runtime::CONDUIT.name() {
        "smp" => &["on"],
        _ => &["on", "off"],
    }
}

/// Starts `examples/fault spin` with `launcher` (at least 2 ranks), kills
/// rank 1 with SIGKILL once it spins, and asserts that the whole job ends
/// within 10 s, non-zero, naming the death.
pub(crate) fn assert_a_killed_rank_ends_the_job(launcher: &[&str]) {
    let dir = std::env::temp_dir().join(format!("uat-kill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pid_file = dir.join("rank-1.pid");
    let _ = std::fs::remove_file(&pid_file);
    let killer = {
        let pid_file = pid_file.clone();
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(30);
            while !pid_file.exists() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            std::thread::sleep(Duration::from_millis(500));
            let pid = std::fs::read_to_string(&pid_file).expect("rank 1 wrote its pid");
            // A rank keeps its program's name after the address-fixing
            // re-execution (ps, top, pkill, perf show it).
            let comm = std::fs::read_to_string(format!("/proc/{}/comm", pid.trim())).unwrap_or_default();
            let killed_at = Instant::now();
            let status = std::process::Command::new("kill")
                .args(["-9", pid.trim()])
                .status()
                .unwrap();
            assert!(status.success());
            (killed_at, comm)
        })
    };
    let out = run_job(
        launcher,
        &bin("examples/fault"),
        &["spin", "--pid-dir", dir.to_str().unwrap()],
    );
    let ended = Instant::now();
    let (killed_at, comm) = killer.join().unwrap();
    assert_eq!(comm.trim(), "fault", "rank 1's name in /proc/<pid>/comm");
    assert!(
        ended - killed_at < Duration::from_secs(10),
        "the job went on {:?} after the kill",
        ended - killed_at
    );
    assert!(out.code.is_some_and(|c| c != 0 && c != 3), "{}", out.describe());
    assert!(
        // smp: GASNet reports the killed rank as 128 + 9 (the launcher names
        // signal 9); udp: the master exits 255 (the launcher says a rank
        // died); mpi: mpirun names the signal itself.
        out.stderr.contains("signal 9 (KILL)")
            || out.stderr.contains("code 255: a rank died")
            || out.stderr.contains("exited on signal 9"),
        "{}",
        out.describe()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The idle ranks' CPU per wall second while the root computes 400 ms
/// alone (`micro idle`), with lifelines `on` or `off`: (worker threads,
/// whole idle processes, the job).
pub(crate) fn idle_ranks_cpu(launcher: &[&str], env: &[(&str, &str)], lifelines: &str, ranks: u32) -> (f64, f64, f64) {
    let mut env = env.to_vec();
    env.push(("UAT_LIFELINES", lifelines));
    let out = run_job_with_env(
        launcher,
        &bin("micro"),
        &["idle", "--serial-ms", "400", "--depth", "18"],
        &env,
    );
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let json = out.json();
    assert_eq!(json["verified"], true, "{}", out.describe());
    assert_eq!(json["ranks"], ranks);
    let f = |k: &str| json[k].as_f64().unwrap_or_else(|| panic!("no {k}: {json}"));
    (
        f("idle_ranks_cpu_per_wall"),
        f("idle_ranks_process_cpu_per_wall"),
        f("job_cpu_per_wall"),
    )
}

/// Lifelines keep idle ranks quiet: at most a quarter of the CPU they use
/// with lifelines off (or next to nothing where the spinning baseline is
/// itself starved, below 0.2 of a core, as beside a CPU-bound process).
pub(crate) fn quiet(on: f64, off: f64) -> bool {
    on <= 0.25 * off || (off < 0.2 && on <= 0.05)
}

/// With lifelines on, the idle ranks' workers (and, but in `rdma-emulated`,
/// whose poller spins by design, their processes) are [`quiet`] against
/// lifelines off, in jobs started with `launcher`.
pub(crate) fn assert_idle_ranks_quiet(launcher: &[&str], env: &[(&str, &str)], ranks: u32) {
    let (on, off) = (
        idle_ranks_cpu(launcher, env, "on", ranks),
        idle_ranks_cpu(launcher, env, "off", ranks),
    );
    eprintln!("{launcher:?}: CPU per wall second (worker, idle processes, job): lifelines on {on:?}, off {off:?}");
    assert!(
        quiet(on.0, off.0),
        "{launcher:?}: idle workers used {} CPU s per wall s with lifelines on, {} off",
        on.0,
        off.0
    );
    if uat::runtime::MODE != uat::runtime::Mode::RdmaEmulated {
        assert!(
            quiet(on.1, off.1),
            "{launcher:?}: idle processes used {} CPU s per wall s with lifelines on, {} off",
            on.1,
            off.1
        );
    }
}
