//! Running real multi-process jobs from integration tests.
//!
//! Every job goes through `scripts/run.sh --no-build` with the test's own
//! build of the program (so the launcher is tested too), under a timeout that
//! kills the whole job, one job at a time (each rank spins on a core).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

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
            uat::CONDUIT.name(),
            "--fad",
            uat::MODE.name(),
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
    match uat::CONDUIT.name() {
        "smp" => &[1, 2, 4],
        _ => &[2],
    }
}

/// 2 ranks whose memory is apart where the conduit allows it: udp over
/// real UDP, mpi without shared memory (`GASNET_SUPERNODE_MAXSIZE=1`); on
/// smp shared (the same answers hold trivially). Launcher arguments and
/// environment.
pub(crate) fn two_ranks_apart() -> (Vec<&'static str>, Vec<(&'static str, &'static str)>) {
    match uat::CONDUIT.name() {
        "udp" => (vec!["--real-udp", "-n", "2"], vec![]),
        "mpi" => (vec!["-n", "2"], vec![("GASNET_SUPERNODE_MAXSIZE", "1")]),
        _ => (vec!["-n", "2"], vec![]),
    }
}
