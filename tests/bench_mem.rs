//! The benchmarks over real data in global memory, in real multi-rank
//! jobs: `uts-mem` (a UTS tree built, traversed and freed in global
//! memory) and `heat` (a Jacobi stencil over row-distributed global
//! arrays), exact at every rank count of this conduit with steals certain,
//! and at 2 ranks whose memory is apart (udp over real UDP, mpi without
//! shared memory) with the software cache on and off; their serial
//! elisions, `--vs-seq`, `--help` and bad options.

mod common;

use common::{bin, cache_settings, rank_counts, run_direct, run_job_with_env, two_ranks_apart, JobOutput};

/// Whether `two_ranks_apart` really puts the ranks' memory apart.
fn apart() -> bool {
    matches!(uat::runtime::CONDUIT.name(), "udp" | "mpi")
}

fn job(name: &str, launcher: &[&str], args: &[&str], env: &[(&str, &str)]) -> serde_json::Value {
    let out = run_job_with_env(launcher, &bin(name), args, env);
    assert_eq!(out.code, Some(0), "{name} {args:?} {env:?}: {}", out.describe());
    let json = out.json();
    assert_eq!(json["verified"], true, "{name} {args:?}: {}", out.describe());
    json
}

/// A small geometric tree (-a 3 -d 6: 16,000 nodes) and a deep binomial
/// one (27,593 nodes, depth 154).
const UTS_SMALL: &[&str] = &["-t", "1", "-a", "3", "-b", "4", "-d", "6", "-r", "19"];
const UTS_BINOMIAL: &[&str] = &["-t", "0", "-b", "500", "-q", "0.24", "-m", "4", "-r", "3"];
/// An odd grid (rows not a multiple of the ranks, blocks across ranks).
const HEAT_SMALL: &[&str] = &[
    "--rows", "67", "--cols", "33", "--iters", "7", "--grain", "4", "--seed", "5",
];

fn check_uts_mem(json: &serde_json::Value) {
    assert_eq!(json["nodes"], json["plain_nodes"], "{json}");
    assert_eq!(json["depth"], json["plain_depth"], "{json}");
    assert_eq!(json["mismatch"], 0, "{json}");
}

#[test]
fn uts_mem_is_exact_at_every_rank_count_with_the_cache_on_and_off() {
    for &n in rank_counts() {
        for &cache in cache_settings() {
            for tree in [UTS_SMALL, UTS_BINOMIAL] {
                let mut args = tree.to_vec();
                args.push("--force-steal");
                let json = job("uts-mem", &["-n", &n.to_string()], &args, &[("UAT_CACHE", cache)]);
                check_uts_mem(&json);
                if n > 1 {
                    assert!(json["stats"]["steals_succeeded"].as_u64().unwrap() > 0, "{json}");
                }
            }
        }
    }
    let json = job("uts-mem", &["-n", "1"], UTS_SMALL, &[]);
    assert_eq!(json["nodes"], 16000, "{json}");
}

#[test]
fn heat_is_exact_at_every_rank_count_with_the_cache_on_and_off() {
    for &n in rank_counts() {
        for &cache in cache_settings() {
            let mut args = HEAT_SMALL.to_vec();
            args.push("--force-steal");
            let json = job("heat", &["-n", &n.to_string()], &args, &[("UAT_CACHE", cache)]);
            assert_eq!(json["cells_differing"], 0, "{json}");
            if n > 1 {
                assert!(json["stats"]["steals_succeeded"].as_u64().unwrap() > 0, "{json}");
            }
        }
    }
    // Edge shapes: one row, one column, a grain larger than the grid, no
    // iterations, an odd number of iterations (the result in the second
    // array).
    for args in [
        &["--rows", "1", "--cols", "9", "--iters", "3"][..],
        &["--rows", "9", "--cols", "1", "--iters", "3"],
        &["--rows", "40", "--cols", "40", "--iters", "5", "--grain", "1000"],
        &["--rows", "40", "--cols", "40", "--iters", "0"],
    ] {
        job("heat", &["-n", "2"], args, &[]);
    }
}

#[test]
fn apart_both_are_exact_with_the_cache_on_and_off_and_the_cache_is_used() {
    let (launcher, env) = two_ranks_apart();
    for &cache in cache_settings() {
        let mut env = env.clone();
        env.push(("UAT_CACHE", cache));
        let mut uts = UTS_SMALL.to_vec();
        uts.push("--force-steal");
        let mut heat = HEAT_SMALL.to_vec();
        heat.push("--force-steal");
        let u = job("uts-mem", &launcher, &uts, &env);
        check_uts_mem(&u);
        let h = job("heat", &launcher, &heat, &env);
        assert_eq!(h["cells_differing"], 0, "{h}");
        if apart() {
            for json in [&u, &h] {
                assert!(json["fetched_bytes"].as_u64().unwrap() > 0, "{json}");
                let hits = json["cache_hits"].as_u64().unwrap();
                if cache == "on" {
                    assert!(hits > 0, "the cache was used: {json}");
                } else {
                    assert_eq!(hits, 0, "{json}");
                }
            }
        } else {
            assert_eq!(u["hit_rate"], serde_json::Value::Null, "{u}");
        }
    }
}

#[test]
fn the_serial_elisions_and_vs_seq_agree() {
    let seq = job("uts-mem", &["-n", "1"], &[UTS_SMALL, &["--seq"]].concat(), &[]);
    assert_eq!(seq["stats"]["spawns"], 0, "{seq}");
    check_uts_mem(&seq);
    let vs = job("uts-mem", &["-n", "1"], &[UTS_SMALL, &["--vs-seq", "2"]].concat(), &[]);
    assert_eq!(vs["vs_seq"]["rounds"], 2, "{vs}");
    let seq = job("heat", &["-n", "1"], &[HEAT_SMALL, &["--seq"]].concat(), &[]);
    assert_eq!(seq["stats"]["spawns"], 0, "{seq}");
    let par = job("heat", &["-n", "1"], HEAT_SMALL, &[]);
    assert_eq!(seq["result"], par["result"], "{seq}\n{par}");
    let vs = job("heat", &["-n", "1"], &[HEAT_SMALL, &["--vs-seq", "2"]].concat(), &[]);
    assert_eq!(vs["vs_seq"]["rounds"], 2, "{vs}");
}

fn refused(out: &JobOutput, what: &str) {
    assert!(
        out.code.is_some_and(|c| c != 0),
        "a bad option ends the job with an error: {}",
        out.describe()
    );
    assert!(
        out.stderr.contains(what),
        "the message names {what}: {}",
        out.describe()
    );
}

#[test]
fn help_explains_and_bad_options_are_refused_with_a_message() {
    let help = run_direct(&bin("heat"), &["--help"]);
    assert_eq!(help.code, Some(0), "{}", help.describe());
    for word in ["Jacobi", "--rows", "--grain", "bit for bit", "hit_rate"] {
        assert!(
            help.stdout.contains(word),
            "heat --help mentions {word}: {}",
            help.stdout
        );
    }
    let help = run_direct(&bin("uts-mem"), &["--help"]);
    assert_eq!(help.code, Some(0), "{}", help.describe());
    for word in ["global memory", "-d", "traverse_s", "UAT_GLOBAL_HEAP"] {
        assert!(
            help.stdout.contains(word),
            "uts-mem --help mentions {word}: {}",
            help.stdout
        );
    }
    refused(
        &run_job_with_env(&["-n", "1"], &bin("heat"), &["--rows", "0"], &[]),
        "--rows",
    );
    refused(
        &run_job_with_env(&["-n", "1"], &bin("heat"), &["--grain", "x"], &[]),
        "--grain",
    );
    refused(
        &run_job_with_env(
            &["-n", "1"],
            &bin("heat"),
            &["--rows", "16777216", "--cols", "16777216"],
            &[],
        ),
        "too large",
    );
    refused(
        &run_job_with_env(&["-n", "1"], &bin("uts-mem"), &["-d", "0"], &[]),
        "invalid tree",
    );
    refused(
        &run_job_with_env(&["-n", "1"], &bin("uts-mem"), &["-q", "2"], &[]),
        "invalid tree",
    );
    refused(
        &run_job_with_env(&["-n", "1"], &bin("uts-mem"), &["-t", "3"], &[]),
        "-t",
    );
}
