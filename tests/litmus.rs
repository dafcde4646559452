//! The litmus matrix (`examples/litmus.rs`): every generated cell's
//! outcomes within what the consistency model allows, on 4 ranks whose
//! memory is apart where the conduit allows it (udp over real UDP, mpi
//! without shared memory; smp shared), cache on and off (on alone on
//! smp, where nothing is cached); the
//! use-after-free probe reads 7 twice or is refused; and over real UDP a
//! cache broken on purpose (`UAT_CACHE_FAULT`) makes cells fail, so the
//! matrix can fail.

mod common;

use common::{cache_settings, example, run_job_with_env, two_ranks_apart, JobOutput};
use serde_json::Value;

/// Cells of the full matrix: message passing 72 (the probe's publication,
/// element or checkout, 4 checkout cases, 9 pairs of homes) + 168 (7 other
/// publications, element or checkout, 4 checkout cases, 3 homes), store
/// buffering 24 and IRIW 24 (2 orderings, 4 checkout cases, 3 homes).
const CELLS: usize = 288;

/// [`two_ranks_apart`]'s launcher and environment with `n` ranks.
fn ranks_apart(n: &'static str) -> (Vec<&'static str>, Vec<(&'static str, &'static str)>) {
    let (launcher, env) = two_ranks_apart();
    (
        launcher.into_iter().map(|a| if a == "2" { n } else { a }).collect(),
        env,
    )
}

fn litmus(launcher: &[&str], args: &[&str], env: &[(&str, &str)]) -> JobOutput {
    run_job_with_env(launcher, &example("litmus"), args, env)
}

/// The cells' lines of a matrix job.
fn cells(out: &JobOutput) -> Vec<Value> {
    out.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|j| j.get("cell").is_some())
        .collect()
}

fn name(cell: &Value) -> &str {
    cell["cell"].as_str().unwrap()
}

/// The cells whose outcomes the model forbids, one line each.
fn violating(cells: &[Value]) -> Vec<String> {
    cells
        .iter()
        .filter(|c| c["allowed"] != true)
        .map(|c| c.to_string())
        .collect()
}

#[test]
fn every_cell_of_the_matrix_sees_only_what_the_model_allows() {
    let (launcher, env) = ranks_apart("4");
    for &cache in cache_settings() {
        let mut env = env.clone();
        env.push(("UAT_CACHE", cache));
        let out = litmus(&launcher, &["--reps", "3"], &env);
        let cells = cells(&out);
        let bad = violating(&cells);
        assert!(
            bad.is_empty(),
            "cache {cache}: {} cells saw forbidden outcomes:\n{}\nstderr:\n{}",
            bad.len(),
            bad.join("\n"),
            out.stderr
        );
        assert_eq!(out.code, Some(0), "cache {cache}: {}", out.describe());
        let summary = out.json();
        assert_eq!(summary["summary"], "litmus", "{summary}");
        assert_eq!(summary["cache"], cache, "{summary}");
        assert_eq!(
            (
                summary["cells"].as_u64(),
                summary["skipped"].as_u64(),
                summary["violations"].as_u64()
            ),
            (Some(CELLS as u64), Some(0), Some(0)),
            "{summary}"
        );
        assert_eq!(cells.len(), CELLS, "one line per cell: {}", out.describe());
        for shape in ["mp", "sb", "iriw"] {
            assert!(cells.iter().any(|c| c["shape"] == shape), "no {shape} cell");
        }
        for c in &cells {
            assert_eq!(c["outcomes"].as_array().map(Vec::len), Some(3), "three runs: {c}");
        }
        // The probe's cells: [after, final, flag] = [42, 42, 1], with a read
        // checkout of the data's neighbours open on the writer, the reader,
        // both, or neither.
        let probe: Vec<&Value> = cells.iter().filter(|c| c["probe"] == "p1").collect();
        assert_eq!(probe.len(), 36, "4 checkout cases × 9 pairs of homes");
        for side in [
            "writer-open/reader-closed",
            "writer-closed/reader-open",
            "writer-open/reader-open",
        ] {
            assert!(probe.iter().any(|c| name(c).contains(side)), "no p1 cell with {side}");
        }
        for c in probe {
            for o in c["outcomes"].as_array().unwrap() {
                assert_eq!(
                    [&o["after"], &o["final"], &o["flag"]],
                    [42, 42, 1],
                    "cache {cache}: {}",
                    name(c)
                );
            }
        }
    }
}

#[test]
fn the_use_after_free_probe_reads_7_twice_or_is_refused() {
    let (launcher, env) = two_ranks_apart();
    for home in ["self", "other"] {
        for &cache in cache_settings() {
            let mut env = env.clone();
            env.push(("UAT_CACHE", cache));
            let out = litmus(&launcher, &["--probe", "use-after-free", "--home", home], &env);
            let what = format!("home {home}, cache {cache}: {}", out.describe());
            let line = out.stdout.lines().find(|l| l.contains("\"use-after-free\""));
            match line {
                // The probe ran to its end: the reference read 7 both times.
                Some(line) => {
                    let json: Value = serde_json::from_str(line).unwrap();
                    assert_eq!(json["seen"], serde_json::json!([7, 7]), "{what}");
                    assert_eq!(out.code, Some(0), "{what}");
                }
                // Refused: the runtime ended the job with its message.
                None => {
                    assert!(out.code.is_some_and(|c| c != 0), "{what}");
                    assert!(out.stderr.contains("a checkout of freed memory"), "{what}");
                }
            }
        }
    }
}

#[test]
fn over_real_udp_a_broken_cache_fails_the_message_passing_cells() {
    if uat::runtime::CONDUIT.name() != "udp" {
        return;
    }
    let udp = ["--real-udp", "-n", "2"];
    // Without write-back the writer's data never reaches the reader's
    // memory; without invalidation the reader keeps its copy from before
    // the flag. Each fault breaks every ordered cell of its home, with a
    // checkout of the data's block open across the orderings on either
    // side or on none (the open cells are the pinned blocks the release
    // and the acquire must not skip).
    for (fault, home) in [("no-write-back", "data-reader"), ("no-invalidate", "data-writer")] {
        let out = litmus(
            &udp,
            &["--shapes", "mp", "--reps", "1"],
            &[("UAT_CACHE", "on"), ("UAT_CACHE_FAULT", fault)],
        );
        assert_eq!(out.code, Some(1), "{fault}: {}", out.describe());
        let summary = out.json();
        assert_eq!(summary["cache_fault"], fault, "{summary}");
        assert!(summary["violations"].as_u64() > Some(0), "{summary}");
        let first = summary["first_violation"].as_str().unwrap();
        assert!(
            out.stderr.contains(&format!("the first: {first}")),
            "{fault}: the exit names the first violating cell: {}",
            out.describe()
        );
        let cells = cells(&out);
        let hit: Vec<&Value> = cells
            .iter()
            .filter(|c| {
                let n = name(c);
                n.contains(home) && !n.contains("relaxed") && !n.contains("flag-third")
            })
            .collect();
        for case in ["writer-closed/reader-closed", "writer-open", "reader-open"] {
            assert!(
                hit.iter().any(|c| name(c).contains(case)),
                "{fault}: no {case} cell: {}",
                out.describe()
            );
        }
        for c in hit {
            assert_eq!(c["allowed"], false, "{fault} must break {c}");
        }
    }
}
