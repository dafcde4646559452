//! The parallel patterns (`uat::pattern`) in real multi-rank jobs: every
//! pattern, on sizes from 0 to 2^20 under default and small policies, equal
//! to a serial computation (examples/patterns.rs) at every rank count of
//! this conduit, and at 2 ranks whose memory is apart (udp over real UDP,
//! mpi without shared memory) with the software cache on and off; misuse
//! ends the job with a message naming the pattern. The tour of every
//! pattern (`examples/patterns_tour.rs`) passes every one of its checks in
//! the same jobs, and the README's pattern example is `examples/dot.rs`,
//! which prints its exact answer.

mod common;

use common::{cache_settings, example, rank_counts, root, run_job_with_env, two_ranks_apart, JobOutput};

/// A job's launcher arguments and environment.
type Job = (Vec<String>, Vec<(&'static str, &'static str)>);

fn patterns(launcher: &[&str], args: &[&str], env: &[(&str, &str)]) -> JobOutput {
    run_job_with_env(launcher, &example("patterns"), args, env)
}

fn assert_every_pattern_exact(out: &JobOutput, what: &str, runs: u32) {
    assert_eq!(out.code, Some(0), "{what}: {}", out.describe());
    let json = out.json();
    let fields = json.as_object().expect("a JSON object");
    assert!(fields.len() > 40, "{what}: {json}");
    for (name, value) in fields {
        if name != "runs" {
            assert_eq!(value, true, "{what}: pattern {name}: {}", out.describe());
        }
    }
    assert_eq!(json["runs"], runs, "{what}: {json}");
}

#[test]
fn every_pattern_equals_its_serial_computation_at_every_rank_count() {
    for &n in rank_counts() {
        let out = patterns(&["-n", &n.to_string()], &[], &[]);
        // Six sizes, three policies each.
        assert_every_pattern_exact(&out, &format!("{n} ranks"), 18);
    }
}

#[test]
fn every_pattern_is_exact_at_two_ranks_apart_with_the_cache_on_and_off() {
    let (launcher, env) = two_ranks_apart();
    for &cache in cache_settings() {
        let mut env = env.clone();
        env.push(("UAT_CACHE", cache));
        // Sizes up to 4099 (rank boundaries, many leaves and chunks): each
        // checkout crosses the network here, the small policies' too (with
        // the cache off, hundreds of thousands of 40-byte gets and puts,
        // served while the other rank sleeps on its lifelines because it
        // is asked to keep polling).
        let out = patterns(&launcher, &["--max-n", "4099", "--small-max-n", "4099"], &env);
        assert_every_pattern_exact(&out, &format!("2 ranks apart, cache {cache}"), 12);
    }
}

#[test]
fn misuse_ends_the_job_with_a_message_naming_the_pattern() {
    for (misuse, message) in [
        (
            "unequal-lengths",
            "for_each: the zipped slices differ in length ([10, 9])",
        ),
        (
            "short-destination",
            "transform: the destination has 9 elements, the source 10",
        ),
        ("overlap", "transform: the destination overlaps a source"),
        (
            "impure-filter",
            "filter_map: f answered differently for the same item on its two calls",
        ),
        (
            "stale-list",
            "GlobalVec: a list was used after free, into_slice or append consumed it",
        ),
        (
            "stale-list-reused",
            "GlobalVec: a list was used after free, into_slice or append consumed it",
        ),
    ] {
        let out = patterns(&["-n", "2"], &["--misuse", misuse], &[]);
        assert!(out.code.is_some_and(|c| c != 0), "{misuse}: {}", out.describe());
        assert!(out.stderr.contains(message), "{misuse}: {}", out.describe());
    }
}

/// The rust block after the README's `<!-- pattern example -->` marker.
fn readme_pattern_example() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let after = readme
        .split_once("<!-- pattern example -->")
        .expect("README.md has a <!-- pattern example --> marker")
        .1;
    let body = after.split_once("```rust\n").expect("a rust block after the marker").1;
    body.split_once("\n```").expect("the block ends").0.to_string() + "\n"
}

#[test]
fn the_readme_pattern_example_is_examples_dot_and_prints_its_answer() {
    let dot = std::fs::read_to_string(root().join("examples/dot.rs")).expect("examples/dot.rs");
    assert!(
        readme_pattern_example() == dot,
        "README.md's pattern example differs from examples/dot.rs: copy the example into the README"
    );
    // dot(n) = sum of i * 2 over 0..n = n * (n - 1); 100003 elements span
    // several ranks' blocks and many leaves.
    let n: u64 = 100_003;
    for ranks in rank_counts() {
        let out = run_job_with_env(&["-n", &ranks.to_string()], &example("dot"), &[&n.to_string()], &[]);
        assert_eq!(out.code, Some(0), "{ranks} ranks: {}", out.describe());
        assert_eq!(
            out.stdout.trim(),
            (n * (n - 1)).to_string(),
            "{ranks} ranks: {}",
            out.describe()
        );
    }
}

#[test]
fn the_tour_of_every_pattern_passes_every_check() {
    let tour = std::fs::read_to_string(root().join("examples/patterns_tour.rs")).expect("the tour");
    // The number of checks the tour makes: one `check(` call per line.
    let checks = tour.lines().filter(|l| l.trim_start().starts_with("check(")).count();
    assert!(checks >= 20, "the tour makes {checks} checks");
    let expect = checks.to_string();
    let mut jobs: Vec<Job> = rank_counts()
        .iter()
        .map(|n| (vec!["-n".to_string(), n.to_string()], vec![]))
        .collect();
    let (launcher, env) = two_ranks_apart();
    for &cache in cache_settings() {
        let mut env = env.clone();
        env.push(("UAT_CACHE", cache));
        jobs.push((launcher.iter().map(|s| s.to_string()).collect(), env));
    }
    for (launcher, env) in jobs {
        let launcher: Vec<&str> = launcher.iter().map(String::as_str).collect();
        let out = run_job_with_env(&launcher, &example("patterns_tour"), &["100003"], &env);
        let what = format!("{launcher:?} {env:?}");
        assert_eq!(out.code, Some(0), "{what}: {}", out.describe());
        assert_eq!(out.stdout.trim(), expect, "{what}: {}", out.describe());
    }
}

#[test]
fn scratch_is_reused_so_many_rounds_fit_a_small_heap() {
    // 64 rounds of sort (a 512 KiB scratch), filter, a 2 KiB-accumulator
    // histogram and a scan on a live distributed array, in a 16 MiB heap
    // (8 MiB symmetric): 32 MiB of scratch if none were reused.
    let out = patterns(&["-n", "2"], &["--scratch-rounds", "64"], &[("UAT_GLOBAL_HEAP", "16M")]);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert_eq!(out.json()["runs"], 64, "{}", out.describe());
}
