//! The parallel patterns (`uat::pattern`) in real multi-rank jobs: every
//! pattern, on sizes from 0 to 2^20 under default and small policies, equal
//! to a serial computation (examples/patterns.rs) at every rank count of
//! this conduit, and at 2 ranks whose memory is apart (udp over real UDP,
//! mpi without shared memory) with the software cache on and off; misuse
//! ends the job with a message naming the pattern.

mod common;

use common::{example, rank_counts, run_job_with_env, JobOutput};

fn patterns(launcher: &[&str], args: &[&str], env: &[(&str, &str)]) -> JobOutput {
    run_job_with_env(launcher, &example("patterns"), args, env)
}

fn assert_every_pattern_exact(out: &JobOutput, what: &str) {
    assert_eq!(out.code, Some(0), "{what}: {}", out.describe());
    let json = out.json();
    let fields = json.as_object().expect("a JSON object");
    assert!(fields.len() > 40, "{what}: {json}");
    for (name, value) in fields {
        if name != "runs" {
            assert_eq!(value, true, "{what}: pattern {name}: {}", out.describe());
        }
    }
    assert_eq!(json["runs"], 15, "{what}: {json}");
}

/// 2 ranks whose memory is apart where the conduit allows it (as in
/// tests/global.rs).
fn two_ranks_apart() -> (Vec<&'static str>, Vec<(&'static str, &'static str)>) {
    match uat::CONDUIT.name() {
        "udp" => (vec!["--real-udp", "-n", "2"], vec![]),
        "mpi" => (vec!["-n", "2"], vec![("GASNET_SUPERNODE_MAXSIZE", "1")]),
        _ => (vec!["-n", "2"], vec![]),
    }
}

#[test]
fn every_pattern_equals_its_serial_computation_at_every_rank_count() {
    for &n in rank_counts() {
        let out = patterns(&["-n", &n.to_string()], &[], &[]);
        assert_every_pattern_exact(&out, &format!("{n} ranks"));
    }
}

#[test]
fn every_pattern_is_exact_at_two_ranks_apart_with_the_cache_on_and_off() {
    let (launcher, env) = two_ranks_apart();
    for cache in ["on", "off"] {
        let mut env = env.clone();
        env.push(("UAT_CACHE", cache));
        let out = patterns(&launcher, &[], &env);
        assert_every_pattern_exact(&out, &format!("2 ranks apart, cache {cache}"));
    }
}

#[test]
fn misuse_ends_the_job_with_a_message_naming_the_pattern() {
    for (misuse, message) in [
        ("unequal-lengths", "for_each: the zipped slices differ in length ([10, 9])"),
        ("short-destination", "transform: the destination has 9 elements, the source 10"),
    ] {
        let out = patterns(&["-n", "2"], &["--misuse", misuse], &[]);
        assert!(out.code.is_some_and(|c| c != 0), "{misuse}: {}", out.describe());
        assert!(out.stderr.contains(message), "{misuse}: {}", out.describe());
    }
}
