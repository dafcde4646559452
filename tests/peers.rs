//! Side by side with rayon: the benchmarks' `--rayon THREADS`
//! (the same kernels in a rayon pool), `btc --join` (one child spawned, the
//! other in the continuation) and `--model-child call|frame` (the serial
//! elision with a no-runtime model of a child), as real jobs: every answer
//! verified, the JSON line says what ran.

mod common;

use common::{bin, rank_counts, run_job, JobOutput};

fn bench(ranks: u32, name: &str, args: &str) -> JobOutput {
    let argv: Vec<&str> = args.split_whitespace().collect();
    run_job(&["-n", &ranks.to_string()], &bin(name), &argv)
}

/// Exit 0 and a verified answer; the JSON line.
fn verified(out: &JobOutput) -> serde_json::Value {
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let json = out.json();
    assert_eq!(json["verified"], true, "{}", out.describe());
    json
}

/// Each benchmark of the comparison with an input of well under a second.
const RAYON_RUNS: [(&str, &str); 5] = [
    ("btc", "--depth 16"),
    ("btc", "--depth 16 --join"),
    ("uts", "-t 1 -a 3 -d 10 -b 4 -r 19"),
    ("nqueens", "11"),
    ("cilksort", "-n 65536"),
];

#[test]
fn rayon_gives_verified_answers_on_every_benchmark_and_refuses_more_ranks() {
    for (name, args) in RAYON_RUNS {
        let json = verified(&bench(1, name, &format!("{args} --rayon 2")));
        assert_eq!(json["runtime"], "rayon", "{json}");
        assert_eq!(json["rayon_threads"], 2, "{json}");
        assert_eq!(json["ranks"], 1, "{json}");
        if name == "cilksort" {
            assert_eq!(json["solver"], "par_sort_unstable", "{json}");
            assert!(json["sort_s"].as_f64().unwrap() > 0.0, "{json}");
        }
        // Ours says so too.
        let json = verified(&bench(1, name, args));
        assert_eq!(json["runtime"], "uat", "{json}");
        assert_eq!(json["rayon_threads"], serde_json::Value::Null, "{json}");
    }
    // A rayon pool lives in one process: a job of more ranks is refused
    // with a message, not a panic.
    let out = bench(2, "uts", "-t 1 -a 3 -d 10 -b 4 -r 19 --rayon 2");
    assert_eq!(out.code, Some(1), "{}", out.describe());
    assert!(
        out.stderr.contains("--rayon") && out.stderr.contains("-n 1") && !out.stderr.contains("panicked"),
        "{}",
        out.describe()
    );
    // rayon paired with the serial elision in one process.
    let json = verified(&bench(1, "nqueens", "11 --rayon 1 --vs-seq 2"));
    assert!(json["vs_seq"]["ratio"].as_f64().unwrap() > 0.0, "{json}");
}

#[test]
fn btc_join_is_exact_at_one_and_two_ranks() {
    for n in rank_counts().iter().copied().filter(|&n| n <= 2) {
        let force = if n > 1 { " --force-steal" } else { "" };
        let out = bench(n, "btc", &format!("--depth 18 --join{force}"));
        let json = verified(&out);
        assert_eq!(json["result"], (1u64 << 19) - 1, "{json}");
        assert_eq!(json["params"]["form"], "join", "{json}");
        if n > 1 {
            assert!(json["stats"]["steals_succeeded"].as_u64().unwrap() > 0, "{json}");
        }
        let json = verified(&bench(n, "btc", "--depth 8 --iter 2 --join"));
        assert_eq!(json["result"], (4u64.pow(9) - 1) / 3, "{json}");
    }
    let json = verified(&bench(1, "btc", "--depth 10"));
    assert_eq!(json["params"]["form"], "spawn", "{json}");
}

#[test]
fn the_child_models_give_verified_answers_against_the_serial_elision() {
    for (name, args) in [
        ("btc", "--depth 16"),
        ("btc", "--depth 16 --join"),
        ("uts", "-t 1 -a 3 -d 10 -b 4 -r 19"),
        ("nqueens", "11"),
    ] {
        for model in ["call", "frame"] {
            let json = verified(&bench(1, name, &format!("{args} --model-child {model} --vs-seq 2")));
            assert_eq!(json["model_child"], model, "{json}");
            assert_eq!(json["runtime"], "none", "{json}");
            assert_eq!(json["stats"]["spawns"], 0, "no runtime ran: {json}");
            assert!(json["vs_seq"]["ratio"].as_f64().unwrap() > 0.0, "{json}");
        }
    }
    let out = bench(2, "nqueens", "11 --model-child frame");
    assert_eq!(out.code, Some(1), "{}", out.describe());
    assert!(out.stderr.contains("--model-child"), "{}", out.describe());
}
