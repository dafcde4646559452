//! Remote fetch-and-add in this build's mode (am-fad), through the micro
//! benchmarks a user runs: concurrent fetch-and-adds from every rank on one
//! word give the exact total, an unregistered address is refused (AM modes),
//! and steals report their phase times.

mod common;

use std::path::PathBuf;

use common::{rank_counts, run_job};

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
        assert_eq!(json["fad"], uat::MODE.name());
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
    if uat::MODE == uat::Mode::Native {
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
    for phase in ["lock", "claim", "transfer", "unlock"] {
        assert!(json["phase_ns"][phase].as_f64().unwrap() > 0.0, "{phase}: {json}");
    }
}
