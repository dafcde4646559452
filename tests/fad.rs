//! Remote fetch-and-add in this build's mode (am-fad), through the micro
//! benchmarks a user runs: concurrent fetch-and-adds from every rank on one
//! word give the exact total, an unregistered address is refused (AM modes),
//! and steals report their phase times.

mod common;

use std::path::PathBuf;

use common::{rank_counts, run_job, run_job_with_env};

fn micro() -> PathBuf {
    common::bin("micro")
}

#[test]
fn concurrent_fetch_and_adds_give_the_exact_total() {
    for &n in rank_counts().iter().filter(|&&n| n >= 2) {
        let out = run_job(
            &["-n", &n.to_string()],
            &micro(),
            &["fad", "--per-rank", "3000", "--work", "200000"],
        );
        assert_eq!(out.code, Some(0), "{}", out.describe());
        let json = out.json();
        assert_eq!(json["verified"], true, "{}", out.describe());
        assert_eq!(json["counter"], 3000 * (n as u64 - 1), "{json}");
        assert_eq!(json["fad"], uat::runtime::MODE.name());
        assert!(json["fadd_latency_us"].as_f64().unwrap() > 0.0, "{json}");
    }
}

#[test]
fn latency_is_measured_and_unregistered_words_are_refused() {
    let out = run_job(&["-n", "2"], &micro(), &["latency", "--iters", "2000"]);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let json = out.json();
    assert_eq!(json["verified"], true, "{}", out.describe());
    for key in ["get", "put", "get_with_poller", "put_with_poller", "fadd"] {
        assert!(json["latency_us"][key].as_f64().unwrap() > 0.0, "{key}: {json}");
    }
    if uat::runtime::MODE == uat::runtime::Mode::Native {
        assert!(json["unregistered_address_refused"].is_null(), "{json}");
    } else {
        assert_eq!(json["unregistered_address_refused"], true, "{json}");
        assert!(
            out.stderr.contains("refused a fetch-and-add from rank 0"),
            "{}",
            out.describe()
        );
    }
}

#[test]
fn steals_report_their_phases() {
    let out = run_job(
        &["-n", "2"],
        &micro(),
        &["steal", "--depth", "16", "--min-steals", "20", "--max-reps", "500"],
    );
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let json = out.json();
    assert_eq!(json["verified"], true, "{}", out.describe());
    assert!(json["steals"].as_u64().unwrap() > 0, "{json}");
    for phase in ["claim", "entry", "transfer", "release"] {
        assert!(json["phase_ns"][phase].as_f64().unwrap() > 0.0, "{phase}: {json}");
    }
    // Counted by the gasnet-sys wrappers: empty check, claim, entry, frames.
    let round_trips = json["round_trips_per_steal"].as_f64().unwrap();
    assert!((3.0..=4.0).contains(&round_trips), "{round_trips}: {json}");
    assert_eq!(json["steal_protocol"], "split", "{json}");
}

#[test]
fn the_paper_protocol_stays_selectable() {
    let out = run_job_with_env(
        &["-n", "2"],
        &micro(),
        &["steal", "--depth", "14", "--min-steals", "5", "--max-reps", "200"],
        &[("UAT_STEAL_PROTOCOL", "paper"), ("UAT_POLL_INTERVAL", "1")],
    );
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let json = out.json();
    assert_eq!(json["verified"], true, "{}", out.describe());
    assert_eq!(
        (json["steal_protocol"].as_str(), json["poll_interval"].as_u64()),
        (Some("paper"), Some(1))
    );
    // Lock, head/tail, advance head, re-read tail, entry, frames and the
    // unlock, after the empty check: 8.
    assert_eq!(json["round_trips_per_steal"].as_f64(), Some(8.0), "{json}");
}

#[test]
fn a_rank_that_only_spawns_answers_fetch_and_adds() {
    for &n in rank_counts().iter().filter(|&&n| n >= 2) {
        let out = run_job(&["-n", &n.to_string()], &micro(), &["attention", "--fads", "3000"]);
        assert_eq!(out.code, Some(0), "{}", out.describe());
        let json = out.json();
        assert_eq!(json["verified"], true, "{}", out.describe());
        assert_eq!(json["answered"], 3000, "{json}");
        if uat::runtime::MODE == uat::runtime::Mode::Am {
            // Each request is answered by a spawn that polled because it
            // asked; no spawn polls unasked (two ranks: see micro.rs).
            assert!(json["serving_spawns"].as_u64().unwrap() > 0, "{json}");
            if n == 2 && json["poll_interval"] == 0 {
                assert!(json["polling_spawns"].as_u64().unwrap() <= 3002, "{json}");
            }
        }
    }
}
