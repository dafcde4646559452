//! The launcher refuses bad command lines before starting anything, names
//! what is missing, says how a job ended (a killed rank, the timeout) and
//! returns the job's exit code; `scripts/run.sh` is its shorthand, and
//! `scripts/reproduce.sh` refuses bad options before building.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

fn run_sh(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(common::root().join("scripts/run.sh"))
        .args(args)
        .output()
        .expect("cannot start scripts/run.sh");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn missing_or_bad_rank_counts_are_usage_errors() {
    for (args, message) in [
        (
            &["--", "gasnet-check"][..],
            "the following required arguments were not provided",
        ),
        (
            &["-n", "two", "--", "gasnet-check"][..],
            "invalid value 'two' for '-n <RANKS>'",
        ),
        (
            &["-n", "0", "--", "gasnet-check"][..],
            "invalid value '0' for '-n <RANKS>'",
        ),
        (&["-n", "-3", "--", "gasnet-check"][..], "-n <RANKS>"),
        (&["-n"][..], "no program given"),
    ] {
        let (code, stderr) = run_sh(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

#[test]
fn bad_variants_and_programs_are_named() {
    for (args, message) in [
        (
            &["--conduit", "tcp", "-n", "2", "--", "gasnet-check"][..],
            "unknown conduit 'tcp'",
        ),
        (
            &["--fad", "rdma", "-n", "2", "--", "gasnet-check"][..],
            "unknown fetch-and-add mode 'rdma'",
        ),
        (
            &["--conduit", "smp", "--real-udp", "-n", "2", "--", "gasnet-check"][..],
            "--real-udp applies to the udp conduit only",
        ),
        (&["-n", "2"][..], "no program given"),
        (
            &["--no-build", "-n", "2", "--", "/nonexistent/prog"][..],
            "no program /nonexistent/prog (not a file)",
        ),
        (&["--no-build", "-n", "2", "--", "no-such-benchmark"][..], "no program"),
    ] {
        let (code, stderr) = run_sh(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

#[test]
fn help_explains_usage() {
    let out = Command::new(common::root().join("scripts/run.sh"))
        .arg("--help")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Usage: scripts/run.sh") && text.contains("--real-udp") && text.contains("--timeout"),
        "{text}"
    );
}

#[test]
fn run_sh_refuses_a_launcher_where_the_conduit_has_none() {
    let (code, stderr) = run_sh(&["--launcher", "srun", "-n", "2", "--", "gasnet-check"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--launcher applies to the mpi and ibv conduits only"),
        "{stderr}"
    );
}

/// The launcher itself, as `cargo uat` runs it.
fn launcher(args: &[&str]) -> (Option<i32>, String, Duration) {
    let start = Instant::now();
    let out = Command::new(common::bin("cargo-uat"))
        .arg("uat")
        .args(args)
        .env_remove("UAT_LAUNCHED")
        .output()
        .expect("cannot start cargo-uat");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        start.elapsed(),
    )
}

fn variant() -> [&'static str; 4] {
    [
        "--conduit",
        uat::runtime::CONDUIT.name(),
        "--fad",
        uat::runtime::MODE.name(),
    ]
}

#[test]
fn the_launcher_kills_a_job_that_runs_over_its_timeout() {
    let fault = common::example("fault");
    let mut args: Vec<&str> = vec!["run"];
    args.extend(variant());
    args.extend(["--timeout", "2", "-n", "2", fault.to_str().unwrap(), "--", "spin"]);
    let (code, stderr, took) = launcher(&args);
    assert_eq!(code, Some(124), "{stderr}");
    assert!(stderr.contains("ran over --timeout 2 s and was killed"), "{stderr}");
    assert!(took < Duration::from_secs(15), "took {took:?}");
}

#[test]
fn the_launcher_explains_itself_and_refuses_bad_options() {
    let out = Command::new(common::bin("cargo-uat"))
        .args(["uat", "run", "--help"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--conduit",
        "--fad",
        "--real-udp",
        "--launcher",
        "--timeout",
        "--release",
        "--bin",
        "--example",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}: {help}");
    }
    let (code, stderr, _) = launcher(&["run", "-n", "2", "--frobnicate"]);
    assert_eq!(code, Some(2), "{stderr}");
    let (code, stderr, _) = launcher(&["run", "-n", "2", "--conduit", "smp", "--launcher", "srun", "/bin/true"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--launcher applies to the mpi and ibv conduits only"),
        "{stderr}"
    );
    let (code, stderr, _) = launcher(&["frobnicate"]);
    assert_eq!(code, Some(2), "{stderr}");
}

fn reproduce_sh(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(common::root().join("scripts/reproduce.sh"))
        .args(args)
        .output()
        .expect("cannot start scripts/reproduce.sh");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn reproduce_sh_refuses_bad_options_before_building_anything() {
    for (args, message) in [
        (&["--ranks", "1,0"][..], "--ranks wants a positive integer, got '0'"),
        (&["--modes", "native,rdma"][..], "unknown fetch-and-add mode 'rdma'"),
        (
            &["--experiments", "scaling,figure9"][..],
            "unknown experiment 'figure9'",
        ),
        (&["--conduit", "tcp"][..], "unknown conduit 'tcp'"),
        (
            &["--launcher", "srun"][..],
            "--launcher applies to the mpi and ibv conduits",
        ),
        (&["--btc-depth", "60"][..], "would not finish"),
        (&["--reps", "x"][..], "--reps wants a positive integer"),
        (&["--bin-dir", "/nonexistent/bins"][..], "no such directory"),
        (&["--pack", "/tmp/x", "--no-build"][..], "--pack builds"),
        (&["--frobnicate"][..], "unknown option '--frobnicate'"),
        (&["--ranks"][..], "--ranks needs a value"),
    ] {
        let (code, _, stderr) = reproduce_sh(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!stderr.contains("building"), "{args:?} built before refusing: {stderr}");
    }
}

#[test]
fn reproduce_sh_help_names_the_experiments_and_outputs() {
    let (code, stdout, _) = reproduce_sh(&["--help"]);
    assert_eq!(code, Some(0));
    for needle in [
        "Table 2",
        "Fig. 11",
        "Fig. 13",
        "Table 4",
        "report.md",
        "--oversubscribe",
        "--bin-dir",
        "peers",
        "--rayon THREADS",
    ] {
        assert!(stdout.contains(needle), "--help lacks {needle}: {stdout}");
    }
}
