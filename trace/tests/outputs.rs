//! The outputs of a synthetic job (tests/common): what load reports, the
//! Chrome JSON against the records, the statistics against the headers'
//! totals, the command, and malformed files.

mod common;

use std::collections::{HashMap, HashSet};
use std::process::Command;

use common::{temp_dir, Job, HOSTS, HOST_OF, JOIN_FLOWS, MISSING, RANKS, STEAL_FLOWS, STEAL_FLOWS_ACROSS_HOSTS, T0};
use serde_json::Value;
use uat_trace::{load, stats_json, stats_text, write_outputs, Kind, Shape};

fn us(ns: u64) -> f64 {
    (ns - T0) as f64 / 1000.0
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn load_reports_missing_and_partial_ranks() {
    let dir = temp_dir("load");
    let job = Job::new(&dir);
    job.write();
    let trace = load(&dir).unwrap();
    assert_eq!(trace.missing, vec![MISSING]);
    assert_eq!(
        trace.ranks.iter().map(|r| r.header.rank).collect::<Vec<_>>(),
        vec![0, 1, 3]
    );
    assert_eq!(trace.job_ranks(), RANKS);
    assert_eq!(trace.incomplete_ranks(), vec![3]);
    assert!(!trace.complete());
    assert_eq!(trace.dropped(), job.dropped);
    assert_eq!(trace.clock_error_ns(), 70);
    assert_eq!(trace.job_hosts(), HOSTS);
    assert_eq!(trace.ranks_by_host(), vec![vec![0, 1], vec![3]]);
    let t = trace.timeline();
    assert_eq!(t.zero_ns, T0);
    assert_eq!(t.unplaced_join_flows, 1);
    common::done(&dir);
}

#[test]
fn the_chrome_json_draws_every_record_where_it_happened() {
    let dir = temp_dir("chrome");
    let job = Job::new(&dir);
    job.write();
    let written = write_outputs(&dir).unwrap();
    let json: Value = serde_json::from_slice(&std::fs::read(&written.json).unwrap()).unwrap();
    assert_eq!(json["displayTimeUnit"], "ns");
    let events = json["traceEvents"].as_array().unwrap();
    let ph = |e: &Value| e["ph"].as_str().unwrap().to_string();

    // One named track per rank of the job, named with its host, and one
    // for rank 0's joins.
    let names: Vec<(u64, &str)> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| (e["tid"].as_u64().unwrap(), e["args"]["name"].as_str().unwrap()))
        .collect();
    for rank in 0..u64::from(RANKS) {
        let of: Vec<_> = names.iter().filter(|(tid, _)| *tid == rank).collect();
        assert_eq!(of.len(), 1, "thread_name of rank {rank}: {names:?}");
        let expected = if rank == u64::from(MISSING) {
            format!("rank {rank} (no file)")
        } else {
            format!("rank {rank} (host {})", HOST_OF[rank as usize])
        };
        assert_eq!(of[0].1, expected);
    }
    assert!(names.contains(&(1000, "rank 0 joins")));
    assert_eq!(names.len(), RANKS as usize + 1);

    // Every interval and instant at its time on the job's clock.
    let mut drawn: Vec<(u64, String, f64, f64)> = events
        .iter()
        .filter(|e| e["ph"] == "X" || e["ph"] == "i")
        .map(|e| {
            (
                e["tid"].as_u64().unwrap(),
                e["name"].as_str().unwrap().to_string(),
                e["ts"].as_f64().unwrap(),
                e["dur"].as_f64().unwrap_or(0.0),
            )
        })
        .collect();
    let mut expected: Vec<(u64, String, f64, f64)> = job
        .records
        .iter()
        .filter(|x| matches!(x.kind.info().shape, Shape::Interval | Shape::Instant))
        .map(|x| {
            let tid = if x.kind == Kind::Suspended { 1000 } else { 0 } + u64::from(x.rank);
            (
                tid,
                x.kind.info().name.to_string(),
                us(x.start_ns),
                (x.end_ns - x.start_ns) as f64 / 1000.0,
            )
        })
        .collect();
    let key = |a: &(u64, String, f64, f64), b: &(u64, String, f64, f64)| {
        (a.0, &a.1).cmp(&(b.0, &b.1)).then(a.2.total_cmp(&b.2))
    };
    drawn.sort_by(key);
    expected.sort_by(key);
    assert_eq!(drawn.len(), expected.len());
    for (d, e) in drawn.iter().zip(&expected) {
        assert!(
            d.0 == e.0 && d.1 == e.1 && close(d.2, e.2) && close(d.3, e.3),
            "drawn {d:?}, expected {e:?}"
        );
    }
    let steal = events
        .iter()
        .find(|e| e["name"] == "steal" && e["tid"] == 3 && e["ph"] == "X")
        .unwrap();
    assert_eq!(steal["args"]["outcome"], "claim_failed");
    assert_eq!(steal["args"]["peer"], 0);
    let fetch = events.iter().find(|e| e["name"] == "fetch").unwrap();
    assert_eq!(
        (fetch["args"]["peer"].as_u64(), fetch["args"]["bytes"].as_u64()),
        (Some(1), Some(64))
    );
    assert!(events.iter().filter(|e| e["ph"] == "i").all(|e| e["s"] == "t"));

    // One "s" and one "f" per flow, with its own id, where the flow's ends
    // are.
    let mut by_id: HashMap<u64, Vec<&Value>> = HashMap::new();
    for e in events.iter().filter(|e| ph(e) == "s" || ph(e) == "f") {
        by_id.entry(e["id"].as_u64().unwrap()).or_default().push(e);
    }
    assert_eq!(by_id.len(), STEAL_FLOWS + JOIN_FLOWS);
    let mut ends = HashSet::new();
    for pair in by_id.values() {
        assert_eq!(pair.len(), 2, "{pair:?}");
        let s = pair.iter().find(|e| e["ph"] == "s").expect("a start");
        let f = pair.iter().find(|e| e["ph"] == "f").expect("an end");
        assert_eq!(f["bp"], "e");
        assert_eq!(s["name"], f["name"]);
        ends.insert((
            s["name"].as_str().unwrap().to_string(),
            s["tid"].as_u64().unwrap(),
            (s["ts"].as_f64().unwrap() * 1000.0).round() as u64,
            f["tid"].as_u64().unwrap(),
            (f["ts"].as_f64().unwrap() * 1000.0).round() as u64,
        ));
    }
    let mut expected_ends: HashSet<_> = job
        .of(Kind::StealFlow)
        .map(|x| {
            (
                "steal".to_string(),
                u64::from(x.peer),
                x.start_ns - T0,
                u64::from(x.rank),
                x.end_ns - T0,
            )
        })
        .collect();
    expected_ends.insert(("join".to_string(), 1, 7900, 0, 9000));
    assert_eq!(ends, expected_ends);

    let other = &json["otherData"];
    assert_eq!(other["clock_error_ns"], 70);
    assert_eq!(other["ranks"], RANKS);
    assert_eq!(other["hosts"], HOSTS);
    assert_eq!(other["host_of_rank"], serde_json::json!([0, 0, null, 1]));
    assert_eq!(other["missing_ranks"], serde_json::json!([MISSING]));
    assert_eq!(other["incomplete_ranks"], serde_json::json!([3]));
    assert_eq!(other["complete"], false);
    assert_eq!(other["dropped"], job.dropped);
    assert_eq!(other["dropped_per_rank"]["3"], job.dropped);
    assert_eq!(other["zero_ns"], T0);
    assert_eq!(
        (other["steal_flows"].as_u64(), other["join_flows"].as_u64()),
        (Some(3), Some(1))
    );
    assert_eq!(other["unplaced_join_flows"].as_u64(), Some(1));
    common::done(&dir);
}

#[test]
fn the_statistics_agree_with_the_headers_totals() {
    let dir = temp_dir("stats");
    let job = Job::new(&dir);
    let headers = job.write();
    let trace = load(&dir).unwrap();
    let stats = stats_json(&trace);
    for k in Kind::ALL {
        let mut count = 0;
        let mut total_ns = 0.0;
        let mut max_ns: f64 = 0.0;
        for (h, per_rank) in headers.iter().zip(stats["per_rank"].as_array().unwrap()) {
            assert_eq!(per_rank["rank"], h.rank);
            assert_eq!(per_rank["host"], HOST_OF[h.rank as usize]);
            let t = h.totals.iter().find(|t| t.kind == k.name);
            let (c, ns, max) = t.map_or((0, 0.0, 0.0), |t| {
                (
                    t.count,
                    t.ticks as f64 * 1e9 / h.ticks_per_s,
                    t.max_ticks as f64 * 1e9 / h.ticks_per_s,
                )
            });
            let s = &per_rank["kinds"][k.name];
            assert_eq!(s["count"], c, "{} on rank {}", k.name, h.rank);
            if matches!(k.shape, Shape::Interval | Shape::Flow) {
                assert!(
                    close(s["total_ns"].as_f64().unwrap(), ns),
                    "{} on rank {}: {s}",
                    k.name,
                    h.rank
                );
                assert!(
                    close(s["max_ns"].as_f64().unwrap(), max),
                    "{} on rank {}: {s}",
                    k.name,
                    h.rank
                );
            }
            count += c;
            total_ns += ns;
            max_ns = max_ns.max(max);
        }
        let all = &stats["kinds"][k.name];
        assert_eq!(all["count"], count, "{}", k.name);
        if matches!(k.shape, Shape::Interval | Shape::Flow) {
            assert!(close(all["total_ns"].as_f64().unwrap(), total_ns), "{}: {all}", k.name);
            assert!(close(all["max_ns"].as_f64().unwrap(), max_ns), "{}: {all}", k.name);
            if count > 0 {
                assert!(
                    close(all["mean_ns"].as_f64().unwrap(), total_ns / count as f64),
                    "{}: {all}",
                    k.name
                );
            }
        } else {
            assert!(all.get("total_ns").is_none());
        }
    }
    // The dropped tasks are counted: 2 + 3 kept elsewhere, 1 kept and 3
    // dropped on rank 3.
    assert_eq!(stats["kinds"]["task"]["count"], 9);
    assert_eq!(
        stats["steal_outcomes"],
        serde_json::json!({"success": 3, "empty": 1, "claim_failed": 1, "lost": 1, "asleep": 1, "unknown": 0})
    );
    let flows = &stats["flows"];
    assert_eq!(flows["steal_recorded"], 3);
    assert_eq!(flows["steal_drawn"], 3);
    assert_eq!(flows["steals_succeeded"], 3);
    assert_eq!(flows["join_drawn"], 1);
    assert_eq!(flows["join_unplaced"].as_u64(), Some(1));
    // 3→0 crosses hosts; 2→1 may, but rank 2 left no file to say so.
    assert_eq!(flows["steal_drawn_across_hosts"], STEAL_FLOWS_ACROSS_HOSTS);
    assert_eq!(flows["join_drawn_across_hosts"], 0);
    // The synthetic ranks' stats have no such counter.
    assert_eq!(flows["steals_across_hosts"], Value::Null);
    assert_eq!(stats["hosts"], HOSTS);
    assert_eq!(stats["ranks_by_host"], serde_json::json!([[0, 1], [3]]));
    assert_eq!(stats["dropped"], job.dropped);
    assert_eq!(stats["missing_ranks"], serde_json::json!([MISSING]));
    let notes = stats["notes"].to_string();
    assert!(notes.contains("3 records dropped"), "{notes}");
    assert!(notes.contains("no file from rank 2"), "{notes}");
    assert!(notes.contains("partial traces (the job failed) from rank 3"), "{notes}");
    assert!(
        !notes.contains("steals_succeeded"),
        "the runtime's count agrees: {notes}"
    );

    let text = stats_text(&trace);
    assert!(text.contains("NOTE: 3 records dropped"), "{text}");
    assert!(text.contains("4 ranks on 2 hosts (3 with a file)"), "{text}");
    for line in ["host 0: ranks 0-1", "host 1: rank 3", "unknown (no file): rank 2"] {
        assert!(text.lines().any(|l| l == line), "{line}: {text}");
    }
    let task_all = text
        .lines()
        .find(|l| l.starts_with("task") && l.contains(" all "))
        .unwrap();
    // kind, rank, host, count.
    assert_eq!(task_all.split_whitespace().nth(3), Some("9"), "{task_all}");
    let task_3: Vec<&str> = text
        .lines()
        .find(|l| l.starts_with("task") && l.split_whitespace().nth(1) == Some("3"))
        .unwrap()
        .split_whitespace()
        .collect();
    // Rank 3 on host 1: its kept task and the three dropped.
    assert_eq!(task_3[2..4], ["1", "4"], "{task_3:?}");
    assert!(
        text.contains("steal flows: 3 recorded, 3 drawn; 3 steals_succeeded"),
        "{text}"
    );
    assert!(
        text.contains("across hosts (drawn, between ranks with a file): 1 steal flows, 0 join flows"),
        "{text}"
    );
    common::done(&dir);
}

#[test]
fn malformed_files_are_refused_by_name() {
    let dir = temp_dir("malformed");
    Job::new(&dir).write();
    let file = dir.join("rank-1.uatrace");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.pop();
    std::fs::write(&file, &bytes).unwrap();
    let e = load(&dir).unwrap_err();
    assert!(
        e.contains("rank-1.uatrace") && e.contains("not a multiple of 32"),
        "{e}"
    );
    std::fs::write(&file, b"UATRACE 0\n{}\n").unwrap();
    let e = load(&dir).unwrap_err();
    assert!(e.contains("rank-1.uatrace") && e.contains("format 0"), "{e}");
    std::fs::write(&file, b"uatrace\n{}\n").unwrap();
    let e = load(&dir).unwrap_err();
    assert!(
        e.contains("rank-1.uatrace") && e.contains("not a uat trace file"),
        "{e}"
    );
    // A file of format 1 (before the hosts), and one of this format that
    // leaves them out.
    let mut header = Job::new(&dir).header(1).clone();
    header.recorded = 0;
    let mut json = serde_json::to_value(&header).unwrap();
    let fields = json.as_object_mut().unwrap();
    fields.remove("host");
    fields.remove("hosts");
    std::fs::write(&file, format!("UATRACE 1\n{json}\n")).unwrap();
    let e = load(&dir).unwrap_err();
    assert!(
        e.contains("rank-1.uatrace") && e.contains("format 1") && e.contains("trace the job again"),
        "{e}"
    );
    std::fs::write(&file, format!("{}\n{json}\n", uat_trace::file::MAGIC)).unwrap();
    let e = load(&dir).unwrap_err();
    assert!(e.contains("rank-1.uatrace") && e.contains("missing field `host"), "{e}");
    std::fs::write(dir.join("rank-one.uatrace"), b"").unwrap();
    std::fs::remove_file(&file).unwrap();
    let e = load(&dir).unwrap_err();
    assert!(e.contains("rank-one.uatrace"), "{e}");
    common::done(&dir);
}

#[test]
fn the_command_merges_and_says_what_is_missing() {
    let exe = env!("CARGO_BIN_EXE_uat-trace");
    let help = Command::new(exe).arg("--help").output().unwrap();
    assert!(help.status.success());
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("merge") && help.contains("trace.json") && help.contains("otf2"),
        "{help}"
    );

    let dir = temp_dir("command");
    Job::new(&dir).write();
    let out = Command::new(exe).arg("merge").arg(&dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    for f in ["trace.json", "stats.txt", "stats.json"] {
        assert!(stdout.contains(&dir.join(f).display().to_string()), "{stdout}");
        assert!(dir.join(f).exists());
    }
    assert!(stdout.contains("note: no file from rank 2"), "{stdout}");
    if cfg!(feature = "otf2") {
        assert!(
            stdout.contains(&dir.join("trace.otf2").display().to_string()),
            "{stdout}"
        );
    } else {
        assert!(stdout.contains("without the `otf2` cargo feature"), "{stdout}");
    }
    // Twice: the outputs (the OTF2 archive too) are replaced.
    let again = Command::new(exe).arg("merge").arg(&dir).output().unwrap();
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));

    let empty = temp_dir("command-empty");
    let out = Command::new(exe).arg("merge").arg(&empty).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("uat-trace: cannot merge") && stderr.contains("no rank-<R>.uatrace"),
        "{stderr}"
    );
    common::done(&dir);
    common::done(&empty);
}
