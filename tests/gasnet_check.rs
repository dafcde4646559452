//! `gasnet-check` as a user runs it: real multi-rank jobs on this build's
//! conduit, and the launch and configuration errors a user can make.

mod common;

use std::path::PathBuf;

use common::{bin, rank_counts, run_direct, run_job};

fn exe() -> PathBuf {
    bin("gasnet-check")
}

fn assert_passes(launcher: &[&str], ranks: u32) {
    let out = run_job(launcher, &exe(), &["--iters", "200"]);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let json = out.json();
    assert_eq!(json["ok"], true, "{}", out.describe());
    assert_eq!(json["ranks"], ranks);
    assert_eq!(json["conduit"], uat::runtime::CONDUIT.name());
    assert_eq!(
        json["pshm"], true,
        "GASNet must be built with PSHM (the arena aliases the segment)"
    );
    assert_eq!(json["segment_bytes"], 16 << 20);
    for key in ["get", "put", "am_roundtrip", "fadd"] {
        let us = json["latency_us"][key].as_f64().unwrap_or(-1.0);
        assert!(us > 0.0, "latency {key} = {us}: {}", out.describe());
    }
}

#[test]
fn passes_on_every_rank_count() {
    for &n in rank_counts() {
        let ranks = n.to_string();
        assert_passes(&["-n", &ranks], n);
    }
}

#[test]
fn passes_over_real_udp() {
    if uat::runtime::CONDUIT.name() != "udp" {
        return;
    }
    let out = run_job(&["--real-udp", "-n", "2"], &exe(), &["--iters", "100"]);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let json = out.json();
    assert_eq!(json["ok"], true);
    // No shared memory between the ranks: each is its own neighbourhood.
    assert_eq!(json["nbrhd_size"], 1, "{}", out.describe());
}

#[test]
fn a_rank_that_fails_a_check_fails_the_job() {
    let n = if uat::runtime::CONDUIT.name() == "smp" { 3 } else { 2 };
    let last = (n - 1).to_string();
    let out = run_job(
        &["-n", &n.to_string()],
        &exe(),
        &["--iters", "10", "--fail-rank", &last],
    );
    assert_ne!(out.code, Some(0), "{}", out.describe());
    assert!(
        out.stderr
            .contains(&format!("[rank {last}] check failed: deliberate failure")),
        "{}",
        out.describe()
    );
    let json = out.json();
    assert_eq!(json["ok"], false);
    assert_eq!(json["failed_checks"], 1);
}

#[test]
fn help_and_version_work_without_a_launcher() {
    let out = run_direct(&exe(), &["--help"]);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert!(out.stdout.contains("Usage: gasnet-check"), "{}", out.describe());
    let out = run_direct(&exe(), &["--version"]);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert!(out.stdout.starts_with("gasnet-check "), "{}", out.describe());
}

#[test]
fn a_multi_process_conduit_refuses_to_start_without_its_launcher() {
    if uat::runtime::CONDUIT.name() == "smp" {
        // One smp rank may be started directly: it must just work.
        let out = run_direct(&exe(), &["--iters", "10"]);
        assert_eq!(out.code, Some(0), "{}", out.describe());
        assert_eq!(out.json()["ranks"], 1);
        return;
    }
    // For udp, "8000" would be read as a rank count: it must not fork anything.
    let out = run_direct(&exe(), &["8000"]);
    assert_eq!(out.code, Some(2), "{}", out.describe());
    assert!(
        out.stderr
            .contains(&format!("cargo uat run --conduit {}", uat::runtime::CONDUIT.name())),
        "{}",
        out.describe()
    );
}

#[test]
fn a_segment_larger_than_the_machine_allows_is_a_clear_error() {
    let out = run_job(&["-n", "2"], &exe(), &["--segment-mb", "100000000"]);
    assert_ne!(out.code, Some(0), "{}", out.describe());
    assert!(out.stderr.contains("GASNET_MAX_SEGSIZE"), "{}", out.describe());
}

#[test]
fn bad_options_end_the_job_with_usage() {
    let out = run_job(&["-n", "2"], &exe(), &["--no-such-option"]);
    assert_eq!(out.code, Some(2), "{}", out.describe());
    assert!(
        out.stderr.contains("unexpected argument '--no-such-option'"),
        "{}",
        out.describe()
    );
}

#[test]
fn the_readme_example_runs() {
    // cargo test builds examples next to the test executables' deps/ folder.
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    let example = deps.parent().unwrap().join("examples/hello-gasnet");
    assert!(example.exists(), "{} not built", example.display());
    let n = rank_counts().last().copied().unwrap();
    let out = run_job(&["-n", &n.to_string()], &example, &["--scale", "3"]);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert_eq!(out.json()["ok"], true);
    assert_eq!(out.json()["ranks"], n);
}
