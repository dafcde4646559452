//! The runtime on one rank, as a user runs it: the benchmarks' exact answers
//! (UTS T1/T3/T5/T3L, NQueens 12 and 13, BTC), and failures that must end the
//! job with a clear message within seconds.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{bin, run_job, run_job_with_env, JobOutput};

fn run1(exe: &Path, args: &[&str]) -> JobOutput {
    run_job(&["-n", "1"], exe, args)
}

fn assert_verified(out: &JobOutput, result: u64) -> serde_json::Value {
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let json = out.json();
    assert_eq!(json["verified"], true, "{}", out.describe());
    assert_eq!(json["result"], result, "{}", out.describe());
    assert_eq!(json["ranks"], 1);
    json
}

#[test]
fn uts_counts_the_published_trees_exactly() {
    let uts = bin("uts");
    for (args, nodes, depth) in [
        ("-t 1 -a 3 -d 10 -b 4 -r 19", 4_130_071u64, 10u64),
        ("-t 0 -b 2000 -q 0.124875 -m 8 -r 42", 4_112_897, 1_572),
        ("-t 1 -a 0 -d 20 -b 4 -r 34", 4_147_582, 20),
    ] {
        let argv: Vec<&str> = args.split(' ').collect();
        let json = assert_verified(&run1(&uts, &argv), nodes);
        assert_eq!(json["depth"], depth, "{args}");
        assert!(
            json["stats"]["spawns"].as_u64().unwrap() > 0,
            "{args}: the parallel version spawns"
        );
        let seq: Vec<&str> = argv.iter().copied().chain(["--seq"]).collect();
        let json = assert_verified(&run1(&uts, &seq), nodes);
        assert_eq!(json["stats"]["spawns"], 0, "{args}: --seq is the serial elision");
    }
}

#[test]
fn uts_runs_the_deep_t3l_tree_with_default_limits() {
    let json = assert_verified(
        &run1(
            &bin("uts"),
            &"-t 0 -b 2000 -q 0.200014 -m 5 -r 7".split(' ').collect::<Vec<_>>(),
        ),
        111_345_631,
    );
    assert_eq!(json["depth"], 17_844);
    assert_eq!(json["leaves"], 89_076_904);
}

#[test]
fn uts_checks_a_given_expectation() {
    let out = run1(&bin("uts"), &["-d", "4", "--expect-nodes", "12345"]);
    assert_eq!(
        out.code,
        Some(1),
        "a wrong expectation fails the job: {}",
        out.describe()
    );
    assert_eq!(out.json()["verified"], false);
}

#[test]
fn nqueens_finds_every_solution() {
    for (n, solutions, nodes) in [("12", 14_200u64, 856_189u64), ("13", 73_712, 4_674_890)] {
        let json = assert_verified(&run1(&bin("nqueens"), &[n]), solutions);
        assert_eq!(json["nodes"], nodes);
    }
}

#[test]
fn btc_creates_exactly_the_formula_s_tasks() {
    assert_verified(&run1(&bin("btc"), &["--depth", "20"]), (1 << 21) - 1);
    assert_verified(
        &run1(&bin("btc"), &["--depth", "10", "--iter", "2"]),
        (4u64.pow(11) - 1) / 3,
    );
}

#[test]
fn micro_spawn_reports_and_verifies() {
    let json = run1(&bin("micro"), &["spawn", "--iters", "200000", "--reps", "1"]).json();
    assert_eq!(json["verified"], true);
    for key in ["plain_call", "spawn_join", "uat_join", "rayon_join"] {
        assert!(json[key]["ns"].as_f64().unwrap() > 0.0, "{key}: {json}");
    }
}

fn assert_fails_fast(args: &[&str], env: &[(&str, &str)], message: &str) {
    let example = bin("examples/fault");
    let start = Instant::now();
    let out = run_job_with_env(&["-n", "1"], &example, args, env);
    assert!(start.elapsed() < Duration::from_secs(20), "took {:?}", start.elapsed());
    assert!(out.code.is_some_and(|c| c != 0 && c != 3), "{}", out.describe());
    assert!(out.stderr.contains(message), "expected {message:?}: {}", out.describe());
}

#[test]
fn unbounded_recursion_ends_with_the_stack_overflow_message() {
    assert_fails_fast(&["stack-overflow"], &[], "uni-address stack overflow");
    assert_fails_fast(&["stack-overflow"], &[], "raise UAT_STACK_SIZE");
}

#[test]
fn unbounded_spawning_ends_with_a_limit_message() {
    // Whichever limit trips first names its setting.
    let example = bin("examples/fault");
    let out = run1(&example, &["spawn-forever"]);
    assert!(out.code.is_some_and(|c| c != 0 && c != 3), "{}", out.describe());
    assert!(
        ["UAT_STACK_SIZE", "UAT_DEQUE_CAPACITY", "UAT_FUTURE_CELLS"]
            .iter()
            .any(|s| out.stderr.contains(s)),
        "{}",
        out.describe()
    );
    // With a small deque, the deque's limit is the one that trips.
    assert_fails_fast(
        &["spawn-forever"],
        &[("UAT_DEQUE_CAPACITY", "1000")],
        "raise UAT_DEQUE_CAPACITY",
    );
    assert_fails_fast(
        &["spawn-forever"],
        &[("UAT_FUTURE_CELLS", "500")],
        "raise UAT_FUTURE_CELLS",
    );
}

#[test]
fn a_panicking_task_ends_the_job_with_its_message() {
    assert_fails_fast(&["panic"], &[], "deliberate panic in a task");
    assert_fails_fast(&["panic"], &[], "[rank 0]");
}

#[test]
fn bad_settings_are_named() {
    let out = run1(&bin("uts"), &["-d", "3"]);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let out = run_job_with_env(&["-n", "1"], &bin("uts"), &["-d", "3"], &[("UAT_STACK_SIZE", "lots")]);
    assert_ne!(out.code, Some(0));
    assert!(out.stderr.contains("UAT_STACK_SIZE=lots"), "{}", out.describe());
}
