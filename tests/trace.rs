//! Traces and work/span on real multi-rank jobs of this build's
//! conduit: `cargo uat run --trace DIR` leaves one location per rank, each
//! rank under its host, and a steal flow per stolen continuation in every
//! output; a failed job leaves
//! its partial trace and says where; `UAT_WORKSPAN=on` counts work and span
//! in strands exactly as the closed forms of fib and BTC say.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{bin, example, run_job_with_env, JobOutput};

fn trace_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "uat-trace-{name}-{}-{}",
        uat::runtime::CONDUIT.name(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A way to run a job: its name, launcher flags, environment, and the
/// hosts (GASNet neighbourhoods) its 4 ranks make.
type Setup = (&'static str, Vec<&'static str>, Vec<(&'static str, &'static str)>, u32);

/// The ways this conduit runs 4 ranks: as they come (one host), and where
/// it can, with no memory shared (udp over real UDP, mpi without PSHM:
/// each rank its own host) and on 2 emulated hosts (`--hosts 2`).
fn setups() -> Vec<Setup> {
    let mut s = vec![("as launched", vec![], vec![], 1)];
    match uat::runtime::CONDUIT.name() {
        "udp" => {
            s.push(("real UDP", vec!["--real-udp"], vec![], 4));
            s.push(("2 hosts", vec!["--hosts", "2"], vec![], 2));
        }
        "mpi" => {
            s.push(("no shared memory", vec![], vec![("GASNET_SUPERNODE_MAXSIZE", "1")], 4));
            s.push(("2 hosts", vec!["--hosts", "2"], vec![], 2));
        }
        _ => {}
    }
    s
}

/// Whether the launcher writes OTF2 (scripts/launcher.sh builds it so
/// where the OTF2 library is installed, as `cargo uat setup` does).
/// `UAT_TEST_OTF2=required` (scripts/test.sh) makes its absence a failure.
fn otf2_expected() -> bool {
    let installed = Path::new("/usr/include/otf2/otf2.h").exists() || std::env::var_os("OTF2_PREFIX").is_some();
    if std::env::var("UAT_TEST_OTF2").as_deref() == Ok("required") {
        assert!(
            installed,
            "UAT_TEST_OTF2=required, but the OTF2 library is not installed (cargo uat setup)"
        );
    }
    installed
}

/// What `otf2-print` reads in an archive.
struct Otf2Read {
    /// LOCATION definitions.
    locations: usize,
    /// SYSTEM_TREE_NODE definitions.
    nodes: usize,
    /// Per LOCATION_GROUP (id = rank), the name of its parent node.
    group_parents: Vec<(u64, String)>,
    /// Sends and receives on the `steals` communicator.
    sends: usize,
    recvs: usize,
}

fn otf2_read(anchor: &Path) -> Otf2Read {
    let print = |args: &[&str]| {
        let out = Command::new("otf2-print")
            .args(args)
            .arg(anchor)
            .output()
            .unwrap_or_else(|e| panic!("cannot run otf2-print ({e}): install otf2-tools (cargo uat setup does)"));
        assert!(
            out.status.success(),
            "otf2-print {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let defs = print(&["-G"]);
    let of = |kind: &'static str| defs.lines().filter(move |l| l.starts_with(kind));
    // `KIND  ID  Name: "NAME" <string>, ..., Parent: "CLASS::NAME" <node>, ...`
    let id = |l: &str| l.split_whitespace().nth(1).and_then(|w| w.parse::<u64>().ok());
    let name = |l: &str| l.split('"').nth(1).unwrap_or_default().to_string();
    let parent = |l: &str| {
        let after = l.split("Parent: ").nth(1)?;
        let value = &after[..after.find(',').unwrap_or(after.len())];
        value[value.rfind('<')? + 1..].strip_suffix('>')?.parse::<u64>().ok()
    };
    let node_names: std::collections::HashMap<u64, String> = of("SYSTEM_TREE_NODE ")
        .filter_map(|l| Some((id(l)?, name(l))))
        .collect();
    let group_parents = of("LOCATION_GROUP ")
        .map(|l| {
            let group = id(l).unwrap_or_else(|| panic!("a LOCATION_GROUP without an id: {l}"));
            let node = parent(l).and_then(|p| node_names.get(&p).cloned());
            (group, node.unwrap_or_else(|| format!("no parent node: {l}")))
        })
        .collect();
    let events = print(&["-Werror"]);
    let on_steals = |kind: &str| {
        events
            .lines()
            .filter(|l| l.starts_with(kind) && l.contains("\"steals\""))
            .count()
    };
    Otf2Read {
        locations: of("LOCATION ").count(),
        nodes: of("SYSTEM_TREE_NODE ").count(),
        group_parents,
        sends: on_steals("MPI_SEND "),
        recvs: on_steals("MPI_RECV "),
    }
}

#[test]
fn a_traced_job_has_one_location_per_rank_and_a_flow_per_steal() {
    for (how, launcher, env, hosts) in setups() {
        let dir = trace_dir("uts");
        let d = dir.display().to_string();
        let mut args = vec!["-n", "4", "--trace", d.as_str()];
        args.extend(launcher.iter());
        let out = run_job_with_env(
            &args,
            &bin("uts"),
            &["-t", "1", "-a", "3", "-d", "10", "-b", "4", "-r", "19", "--force-steal"],
            &env,
        );
        assert_eq!(out.code, Some(0), "{how}: {}", out.describe());
        assert_eq!(out.json()["verified"], true, "{how}: {}", out.describe());
        // The ranks' own count of the steals, over every traced run.
        let stats = read_json(&dir.join("stats.json"));
        let stolen = stats["flows"]["steals_succeeded"].as_u64().unwrap();
        assert!(stolen > 0, "{how}: {stats}");
        assert_eq!(stats["flows"]["steal_recorded"], stolen, "{how}: {stats}");
        assert_eq!(stats["dropped"], 0, "{how}");
        // Every rank's host, as the runtime learnt it: `hosts` of them,
        // each holding a rank.
        assert_eq!(stats["hosts"], hosts, "{how}: {stats}");
        let host_of: Vec<u64> = (0..4).map(|r| stats["per_rank"][r]["host"].as_u64().unwrap()).collect();
        let used: std::collections::BTreeSet<u64> = host_of.iter().copied().collect();
        assert_eq!(used.len() as u32, hosts, "{how}: {host_of:?}");
        // The trace's steals between hosts are the runtime's.
        let flows = &stats["flows"];
        if !flows["steals_across_hosts"].is_null() {
            assert_eq!(
                flows["steal_drawn_across_hosts"], flows["steals_across_hosts"],
                "{how}: {stats}"
            );
        }
        // Chrome JSON: a track per rank, a flow start and end per steal.
        let chrome = read_json(&dir.join("trace.json"));
        let events = chrome["traceEvents"].as_array().unwrap();
        let count = |ph: &str, cat: &str| events.iter().filter(|e| e["ph"] == ph && e["cat"] == cat).count() as u64;
        assert_eq!((count("s", "steal"), count("f", "steal")), (stolen, stolen), "{how}");
        let tracks: std::collections::BTreeMap<u64, &str> = events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["tid"].as_u64() < Some(1000))
            .map(|e| (e["tid"].as_u64().unwrap(), e["args"]["name"].as_str().unwrap()))
            .collect();
        assert_eq!(tracks.keys().copied().collect::<Vec<_>>(), vec![0, 1, 2, 3], "{how}");
        for (&rank, &name) in &tracks {
            assert_eq!(name, format!("rank {rank} (host {})", host_of[rank as usize]), "{how}");
        }
        assert_eq!(chrome["otherData"]["complete"], true, "{how}");
        // OTF2, read back by the reference reader.
        let anchor = dir.join("trace.otf2");
        if otf2_expected() {
            assert!(anchor.exists(), "{how}: no {}: {}", anchor.display(), out.describe());
            let read = otf2_read(&anchor);
            assert_eq!(read.locations, 4, "{how}");
            assert_eq!((read.sends as u64, read.recvs as u64), (stolen, stolen), "{how}");
            // The system tree: the job, a node per host, each rank's
            // process under its host's.
            assert_eq!(read.nodes as u32, 1 + hosts, "{how}");
            let expected: Vec<(u64, String)> = (0..4).map(|r| (r, format!("host {}", host_of[r as usize]))).collect();
            assert_eq!(read.group_parents, expected, "{how}");
        } else {
            eprintln!("skipped the OTF2 check: the OTF2 library is not installed (cargo uat setup installs it)");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_failed_job_leaves_its_partial_trace_and_says_where() {
    let dir = trace_dir("fault");
    let d = dir.display().to_string();
    let out = run_job_with_env(
        &["-n", "2", "--trace", d.as_str()],
        &example("fault"),
        &["panic", "--rank", "1"],
        &[],
    );
    assert_ne!(out.code, Some(0), "{}", out.describe());
    assert!(
        out.stderr.contains("the partial trace of this rank is in"),
        "{}",
        out.describe()
    );
    let file = dir.join("rank-1.uatrace");
    assert!(out.stderr.contains(&file.display().to_string()), "{}", out.describe());
    let (header, _) = uat_trace::read_rank_file(&file).unwrap();
    assert!(!header.complete);
    assert!(
        header.totals.iter().any(|t| t.kind == "failure" && t.count == 1),
        "{header:?}"
    );
    // The launcher merged what there is, and says the trace is partial.
    let chrome = read_json(&dir.join("trace.json"));
    assert_eq!(chrome["otherData"]["complete"], false);
    assert!(out.stderr.contains("cargo-uat: trace:"), "{}", out.describe());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// fib(n)'s spawns: one per call with n ≥ 2.
fn fib_spawns(n: u64) -> u64 {
    if n < 2 {
        0
    } else {
        1 + fib_spawns(n - 1) + fib_spawns(n - 2)
    }
}

/// `uat: work … (W strands), span … (S strands)` from a `launch` job.
fn strands(out: &JobOutput) -> (u64, u64) {
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains("uat: work "))
        .unwrap_or_else(|| panic!("no work/span line: {}", out.describe()));
    let numbers: Vec<u64> = line
        .split('(')
        .skip(1)
        .filter_map(|p| p.split_whitespace().next()?.parse().ok())
        .collect();
    (numbers[0], numbers[1])
}

/// BTC's span in strands after a task's first strand, by the counting of
/// `uni-threads/src/workspan.rs`: `join` form (one child spawned, the
/// other run in the continuation) or spawn form (both spawned).
fn btc_span_after_first(depth: u32, iter: u32, join: bool) -> u64 {
    if depth == 0 {
        return 0;
    }
    let child = btc_span_after_first(depth - 1, iter, join);
    let mut x = 0; // strands on the path so far, after the first
    for _ in 0..iter {
        if join {
            // spawn A; run B inline in the continuation; join A.
            let a = x + 1 + child;
            let cont = x + 1 + child; // the continuation's strand, then B's strands
            x = a.max(cont) + 1;
        } else {
            // spawn A; spawn B; join A; join B.
            let a = x + 1 + child;
            let b = x + 2 + child;
            let j = (x + 2).max(a) + 1;
            x = j.max(b) + 1;
        }
    }
    x
}

#[test]
fn work_and_span_in_strands_match_the_closed_forms() {
    let on = [("UAT_WORKSPAN", "on")];
    for ranks in ["1", "2"] {
        for n in [10u64, 15, 20] {
            let out = run_job_with_env(&["-n", ranks], &example("fib"), &[&n.to_string()], &on);
            assert_eq!(out.code, Some(0), "{}", out.describe());
            assert_eq!(
                strands(&out),
                (1 + 3 * fib_spawns(n), 2 * n - 1),
                "fib({n}) on {ranks} ranks"
            );
        }
        for (depth, join) in [(4u32, false), (9, false), (6, true), (12, true)] {
            let mut args = vec!["--depth".to_string(), depth.to_string()];
            if join {
                args.push("--join".into());
            }
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = run_job_with_env(&["-n", ranks], &bin("btc"), &argv, &on);
            assert_eq!(out.code, Some(0), "{}", out.describe());
            let json = out.json();
            let tasks = json["result"].as_u64().unwrap();
            let spawns = if join { (tasks - 1) / 2 } else { tasks - 1 };
            let ws = &json["workspan"];
            assert_eq!(
                ws["work_strands"],
                1 + 3 * spawns,
                "btc {args:?} on {ranks} ranks: {json}"
            );
            assert_eq!(
                ws["span_strands"],
                1 + btc_span_after_first(depth, 1, join),
                "btc {args:?} on {ranks} ranks: {json}"
            );
            // In time: the span is part of the work, and both are measured.
            let (work, span) = (ws["work_s"].as_f64().unwrap(), ws["span_s"].as_f64().unwrap());
            assert!(span > 0.0 && span <= work, "{json}");
        }
    }
}

#[test]
fn work_in_time_grows_with_the_tree() {
    // BTC in the join form: 2^(d+1) - 1 tasks; the span's strands grow by
    // 2 per level. Work in time must follow the tasks (×16 for 4 more
    // levels; at least ×4 allows for timer and cache effects under load,
    // and the least of three runs for preemptions)
    // and stay above the span. The span in time is a maximum over paths of
    // a few µs each: one preempted strand moves it, so only its bound is
    // checked.
    let on = [("UAT_WORKSPAN", "on")];
    let measure = |depth: u32| {
        let out = run_job_with_env(
            &["-n", "1"],
            &bin("btc"),
            &["--depth", &depth.to_string(), "--join"],
            &on,
        );
        assert_eq!(out.code, Some(0), "{}", out.describe());
        let ws = out.json()["workspan"].clone();
        (
            ws["work_s"].as_f64().unwrap(),
            ws["span_s"].as_f64().unwrap(),
            ws["parallelism"].as_f64().unwrap(),
        )
    };
    // A preemption only adds time: the least of three runs each.
    let least = |depth: u32| {
        (0..3)
            .map(|_| measure(depth))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .expect("three runs")
    };
    let (w12, s12, _) = least(12);
    let (w16, s16, p16) = least(16);
    assert!(w16 > 4.0 * w12, "work {w12} s at depth 12, {w16} s at depth 16");
    assert!(
        s12 <= w12 && s16 <= w16 && p16 > 1.0,
        "span {s12} s and {s16} s, parallelism {p16} at depth 16"
    );
}

#[test]
fn the_statistics_mode_keeps_no_timeline_and_reports_in_the_json_line_and_a_table() {
    let dir = trace_dir("stats");
    let d = dir.display().to_string();
    let out = run_job_with_env(
        &["-n", "2", "--trace", d.as_str()],
        &bin("uts"),
        &["-t", "1", "-a", "3", "-d", "10", "-b", "4", "-r", "19", "--force-steal"],
        &[("UAT_TRACE_MODE", "stats")],
    );
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let json = out.json();
    let trace = &json["trace"];
    assert_eq!(
        trace["steal_flow"]["count"], json["stats"]["steals_succeeded"],
        "{json}"
    );
    assert!(trace["task"]["count"].as_u64().unwrap() > 0, "{json}");
    assert!(trace["task"]["max_s"].as_f64().unwrap() > 0.0, "{json}");
    assert!(
        out.stderr.contains("uat trace statistics"),
        "the table at the end: {}",
        out.describe()
    );
    let stats = read_json(&dir.join("stats.json"));
    assert_eq!(stats["recorded"], 0, "no timeline kept: {stats}");
    assert_eq!(stats["flows"]["steals_succeeded"], json["stats"]["steals_succeeded"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_full_trace_buffer_keeps_counting_and_says_so() {
    let dir = trace_dir("full");
    let d = dir.display().to_string();
    let out = run_job_with_env(
        &["-n", "2", "--trace", d.as_str()],
        &bin("uts"),
        &["-t", "1", "-a", "3", "-d", "10", "-b", "4", "-r", "19", "--force-steal"],
        &[("UAT_TRACE_EVENTS", "16")],
    );
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert!(out.stderr.contains("trace buffer full"), "{}", out.describe());
    let stats = read_json(&dir.join("stats.json"));
    let recorded = stats["recorded"].as_u64().unwrap();
    assert!(recorded <= 2 * 16, "at most UAT_TRACE_EVENTS per rank: {stats}");
    assert!(stats["dropped"].as_u64().unwrap() > 0, "{stats}");
    // The counts include what was dropped.
    let kept_tasks = read_json(&dir.join("trace.json"))["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "task" && e["ph"] == "X")
        .count() as u64;
    assert!(
        stats["kinds"]["task"]["count"].as_u64().unwrap() >= kept_tasks,
        "{stats}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
