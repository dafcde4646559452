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
