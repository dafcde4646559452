//! `scripts/run.sh` refuses bad command lines before starting anything.

mod common;

use std::process::Command;

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
        (&["--", "gasnet-check"][..], "the number of ranks is required"),
        (&["-n", "two", "--", "gasnet-check"][..], "-n wants a positive integer"),
        (&["-n", "0", "--", "gasnet-check"][..], "-n wants a positive integer"),
        (&["-n", "-3", "--", "gasnet-check"][..], "-n wants a positive integer"),
        (&["-n"][..], "-n needs a value"),
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
            "no program '/nonexistent/prog' (not an executable file)",
        ),
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
        text.contains("Usage: scripts/run.sh") && text.contains("--real-udp"),
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
    ] {
        assert!(stdout.contains(needle), "--help lacks {needle}: {stdout}");
    }
}
