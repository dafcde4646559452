//! `uat-report DIR`: turns a results directory of `scripts/reproduce.sh`
//! (meta.json, runs.jsonl, logs/) into `report.md`, one CSV per experiment
//! and PNG plots under `plots/`, and prints the summary table.
//! `uat-report timeline TRACE_DIR OUT.png` draws a traced job's timeline.
//! `uat-report start|record|finish|get|scaling-line` record runs for the
//! scripts (module `record`), which never write JSON themselves.

mod data;
mod global;
mod import;
mod lifelines;
mod micro;
mod paper;
mod patterns;
mod peers;
mod plot;
mod record;
mod report;
mod scaling;
mod section;
mod table;
mod timeline;

use std::path::Path;
use std::process::ExitCode;

use data::Results;
use scaling::Scaling;
use section::Ctx;

const HELP: &str = "\
uat-report DIR
uat-report --import DIR FILE... [--meta KEY=VALUE]...
uat-report timeline TRACE_DIR OUT.png
uat-report start DIR [KEY=VALUE | KEY:=JSON]...
uat-report record DIR --id ID --experiment E --bench B --conduit C --mode M
           --ranks N --exit RC (--started UNIX_S | --wall-s S) [--mechanisms
           new|paper] [--empty-check on|off|na] [--args ARGS] [--env VARS]
           [--oversubscribed true|false]
uat-report finish DIR
uat-report get FILE KEY
uat-report scaling-line --label L --fad M --ranks N --exit RC
           --oversubscribed true|false --stdout FILE --stderr FILE

Writes the paper-reproduction report for DIR, a results directory of
scripts/reproduce.sh (meta.json, runs.jsonl, logs/):
  DIR/report.md      the report: findings, our numbers next to the paper's
  DIR/*.csv          scaling.csv (every benchmark run), spawn.csv,
                     latency.csv, steal.csv, fad.csv, lifelines.csv,
                     lifelines-idle.csv, global.csv, patterns.csv, peers.csv
  DIR/plots/*.png    scaling, steals, overhead, msg-handling,
                     steal-breakdown, latency, spawn, fad, global, patterns,
                     peers, timeline-uts (from DIR/trace-uts/, the traced
                     UTS run)
and prints the summary table. Plots need a TrueType font: DejaVu Sans
(Debian: fonts-dejavu-core) or UAT_REPORT_FONT=/path/to/font.ttf.
With --import, DIR is first made from the benchmarks' own JSON lines in
FILE... (scripts/scaling.sh output, or runs by hand): each line becomes a
run (--seq lines the serial elisions, --rayon and --model-child lines
and btc --join the peers section, micro spawn/latency/steal their
sections); --meta sets what the report says of the machine (host, cpu,
cores, date, commit).
With timeline, draws the trace in TRACE_DIR (a job run with `cargo uat run
--trace TRACE_DIR` or UAT_TRACE=TRACE_DIR: its rank-R.uatrace files) as a
PNG: one lane per rank (`rank R (host H)` when the job had several
hosts), time across in ms from the first event, each
rank's state coloured (task, steal attempt, quiescent on lifelines; polls
and global memory's fetches and write-backs as a band inside; threads
suspended in joins as a strip under the lane), steals as black lines from
the victim's claim to the thief's resumption, remote joins as thin blue
ones; the title gives the program, the ranks and the clock alignment error.
It exits 0 when drawn, 2 when the trace cannot be read or drawn.
The recording commands are what scripts/reproduce.sh calls around its runs:
start makes DIR (logs/, an empty runs.jsonl) and writes meta.json from the
pairs (KEY=VALUE a string, KEY:=JSON a number or boolean) and the time;
record reads the run's DIR/logs/ID.out (its last line: the benchmark's
JSON line) and DIR/logs/ID.err, classifies the run (ok: a verified answer;
wrong: an answer that does not match its reference; failed: another
non-zero exit or no JSON line; timeout: the launcher's exit 124; counted:
the UTS count itself, experiment verify; unverified: nothing to check
against), appends the record to DIR/runs.jsonl, prints the status and
the wall time (ok (1.2 s)) and exits 0 for ok or counted, 1 otherwise; finish stamps the end of the
runs into meta.json (the report's duration line); get prints one field
(a /-separated path) of FILE's last JSON line; scaling-line prints the
line scripts/scaling.sh appends for one run (exit 1 for a failed run).
A report exits 0 when it is complete; 1 when a part of it could not be made
(said in the report); 2 for a bad command line or an unreadable DIR.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{HELP}");
        return ExitCode::SUCCESS;
    }
    if let Some(code) = recording_command(&args) {
        return code;
    }
    if args.first().map(String::as_str) == Some("timeline") {
        return match timeline::command(&args[1..]) {
            Ok(msg) => {
                eprintln!("{msg}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("uat-report: error: {e}");
                ExitCode::from(2)
            }
        };
    }
    let dir = if args.first().map(String::as_str) == Some("--import") {
        match import_args(&args[1..]) {
            Ok(dir) => dir,
            Err(e) => {
                eprintln!("uat-report: error: {e}");
                return ExitCode::from(2);
            }
        }
    } else if let [dir] = args.as_slice() {
        dir.clone()
    } else {
        eprintln!("uat-report: error: want one argument, the results directory (see --help)");
        return ExitCode::from(2);
    };
    let dir = &dir;
    let made = match generate(Path::new(dir)) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("uat-report: error: {e}");
            return ExitCode::from(2);
        }
    };
    println!("{}", made.stdout);
    for w in &made.ctx.warnings {
        eprintln!("uat-report: warning: {w}");
    }
    eprintln!(
        "uat-report: wrote {} ({} CSV, {} plots)",
        Path::new(dir).join("report.md").display(),
        made.ctx.csvs.len(),
        made.ctx.plots.len()
    );
    if report::complete(&made.ctx) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The recording commands (`start`, `record`, `finish`, `get`,
/// `scaling-line`), or None for another command line.
fn recording_command(args: &[String]) -> Option<ExitCode> {
    let (cmd, rest) = args.split_first()?;
    let result = match cmd.as_str() {
        "start" => record::start(rest).map(|msg| {
            eprintln!("uat-report: {msg}");
            ExitCode::SUCCESS
        }),
        "finish" => record::finish(rest).map(|_| ExitCode::SUCCESS),
        "get" => record::get(rest).map(|v| {
            println!("{v}");
            ExitCode::SUCCESS
        }),
        "record" => record::record(rest).map(|r| {
            println!("{} ({:.1} s)", r.status.word(), r.wall_s);
            if r.status.usable() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }),
        "scaling-line" => record::scaling_line(rest).map(|(line, fine)| {
            println!("{line}");
            if fine {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }),
        _ => return None,
    };
    Some(result.unwrap_or_else(|e| {
        eprintln!("uat-report {cmd}: error: {e}");
        ExitCode::from(2)
    }))
}

/// `--import DIR FILE... [--meta KEY=VALUE]...`: makes DIR, returns it.
fn import_args(args: &[String]) -> Result<String, String> {
    let (dir, rest) = args
        .split_first()
        .ok_or("--import wants a directory and JSON-lines files")?;
    let mut files = Vec::new();
    let mut meta = serde_json::Map::new();
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        if a == "--meta" {
            let kv = it.next().ok_or("--meta wants KEY=VALUE")?;
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("--meta {kv}: want KEY=VALUE"))?;
            let v = v
                .parse::<u64>()
                .map(serde_json::Value::from)
                .unwrap_or_else(|_| v.into());
            meta.insert(k.to_string(), v);
        } else {
            files.push(a.clone());
        }
    }
    if files.is_empty() {
        return Err("--import wants at least one JSON-lines file after the directory".into());
    }
    let (n, skipped) = import::import(&files, Path::new(dir), serde_json::Value::Object(meta))?;
    eprintln!("uat-report: imported {n} runs into {dir} ({skipped} lines skipped)");
    Ok(dir.clone())
}

/// What `generate` made: where things went, and the text for stdout.
struct Made {
    ctx: Ctx,
    stdout: String,
}

/// Loads DIR and writes report.md, the CSV files and the plots into it.
fn generate(dir: &Path) -> Result<Made, String> {
    let res = Results::load(dir)?;
    let mut warnings = Vec::new();
    let fonts = match plot::register_fonts() {
        Ok(()) => true,
        Err(e) => {
            warnings.push(e);
            false
        }
    };
    std::fs::create_dir_all(dir.join("plots"))
        .map_err(|e| format!("cannot create {}: {e}", dir.join("plots").display()))?;
    let mut ctx = Ctx::new(dir, fonts);
    ctx.warnings.extend(warnings);
    let s = Scaling::new(&res);
    scaling::csv(&res, &mut ctx);
    let summary = scaling::summary(&res, &s);
    let sections: Vec<_> = [
        micro::spawn(&res, &mut ctx),
        micro::latency(&res, &mut ctx),
        scaling::overhead(&res, &s, &mut ctx),
        micro::steal(&res, &mut ctx),
        micro::fad(&res, &mut ctx),
        scaling::scaling(&res, &s, &mut ctx),
        scaling::steals(&res, &s, &mut ctx),
        scaling::messages(&res, &s, &mut ctx),
        timeline::section(&res, &mut ctx),
        lifelines::section(&res, &mut ctx),
        global::section(&res, &mut ctx),
        patterns::section(&res, &mut ctx),
        peers::section(&res, &mut ctx),
    ]
    .into_iter()
    .flatten()
    .collect();
    let md = report::render(&res, &s, &summary, &sections, &ctx);
    let path = dir.join("report.md");
    std::fs::write(&path, md).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let mut stdout = report::run_summary(&res);
    if !summary.is_empty() {
        stdout.push_str(&format!("\n\n{}", summary.markdown()));
    }
    stdout.push_str(&format!("\n{}\n", report::findings(&res, &s)));
    if let Some(d) = report::duration(&res) {
        stdout.push_str(&format!("\n{d}\n"));
    }
    Ok(Made { ctx, stdout })
}

#[cfg(test)]
mod tests {
    //! The whole pipeline on a synthetic results directory: what a reader
    //! relies on (failures shown, efficiencies computed, files written).

    use super::*;
    use std::fs;

    fn bench_line(bench: &str, fad: &str, ranks: u32, time_s: f64, steals: u64, msg_s: f64) -> String {
        serde_json::json!({
            "bench": bench, "conduit": "smp", "fad": fad, "ranks": ranks, "seq": false,
            "oversubscribed": false, "empty_check": true, "params": {}, "result": 1000,
            "expected": 1000, "verified": true, "time_s": time_s, "throughput": 1000.0 / time_s,
            "stats": {"spawns": 999, "steals_attempted": steals * 2, "steals_succeeded": steals,
                      "max_stack_bytes": 4096, "msg_handling_s": msg_s}
        })
        .to_string()
    }

    /// One run of a fixture: experiment, bench, mode, empty check, ranks,
    /// the benchmark's JSON line (None: it printed none), status.
    type Fixture<'a> = (&'a str, &'a str, &'a str, &'a str, u32, Option<String>, &'a str);

    /// A results directory `name` in the temporary directory, holding
    /// `runs` (ids 001, 002, ...; every run's stderr says "rank 1: boom").
    fn results_dir(name: &str, runs: &[Fixture<'_>]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("uat-report-test-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("logs")).unwrap();
        fs::write(
            dir.join("meta.json"),
            r#"{"date":"2026-11-22","host":"test","cpu":"cpu","cores":4,"commit":"abc","conduit":"smp",
                "modes":"native am","ranks":"1 2","reps":1,"btc_depth":20,"uts_args":"-d 3","nqueens":8,
                "started_unix":1000,"runs_started_unix":1060,"finished_unix":1125}"#,
        )
        .unwrap();
        let mut records = String::new();
        for (i, (experiment, bench, mode, ec, ranks, line, status)) in runs.iter().enumerate() {
            let id = format!("{:03}", i + 1);
            fs::write(dir.join(format!("logs/{id}.out")), line.clone().unwrap_or_default()).unwrap();
            fs::write(dir.join(format!("logs/{id}.err")), "rank 1: boom\n").unwrap();
            records.push_str(
                &serde_json::json!({
                    "id": id, "experiment": experiment, "bench": bench, "mode": mode, "empty_check": ec,
                    "ranks": ranks, "args": "--depth 20", "oversubscribed": false,
                    "exit": if *status == "ok" { 0 } else { 101 }, "status": status, "wall_s": 1.0,
                    "output": format!("logs/{id}.out"), "stderr": format!("logs/{id}.err")
                })
                .to_string(),
            );
            records.push('\n');
        }
        fs::write(dir.join("runs.jsonl"), records).unwrap();
        dir
    }

    #[test]
    fn a_results_directory_becomes_a_report() {
        let scaling = |mode, ranks, line, status| ("scaling", "btc", mode, "on", ranks, line, status);
        let dir = results_dir(
            "report",
            &[
                scaling("native", 1, Some(bench_line("btc", "native", 1, 2.0, 0, 0.0)), "ok"),
                scaling("native", 2, Some(bench_line("btc", "native", 2, 1.25, 7, 0.0)), "ok"),
                scaling("am", 1, Some(bench_line("btc", "am", 1, 4.0, 0, 1.0)), "ok"),
                scaling("am", 2, None, "failed"),
            ],
        );
        let made = generate(&dir).unwrap();
        let md = fs::read_to_string(dir.join("report.md")).unwrap();
        // The script's stamps: its own duration, in the report and last on stdout.
        let duration = "Duration: 4 runs in 2 min 5 s (building 1 min 0 s, running 1 min 5 s)";
        assert!(md.contains(duration), "{md}");
        assert!(
            made.stdout.trim_end().lines().last().unwrap().starts_with(duration),
            "{}",
            made.stdout
        );
        // 2.0 s on one rank, 1.25 s on two: speed-up 1.6, efficiency 80%.
        assert!(md.contains("1.25 s (80%)"), "{md}");
        assert!(made.stdout.contains("1.60×"), "{}", made.stdout);
        // The failed run is named, with its error, and counted.
        assert!(
            md.contains("run 004") && md.contains("FAILED") && md.contains("rank 1: boom"),
            "{md}"
        );
        assert!(md.contains("| BTC | am, EC on |") && md.contains("1/2"), "{md}");
        // AM poll share: 1.0 s of 4.0 s on one rank = 25%.
        let csv = fs::read_to_string(dir.join("scaling.csv")).unwrap();
        assert_eq!(csv.lines().count(), 5, "{csv}");
        assert!(
            csv.lines().any(|l| l.starts_with("003,") && l.contains(",25,")),
            "{csv}"
        );
        if made.ctx.fonts {
            for plot in ["scaling", "steals", "msg-handling"] {
                let png = fs::read(dir.join(format!("plots/{plot}.png"))).unwrap();
                assert_eq!(&png[1..4], b"PNG", "{plot}.png");
            }
            assert!(made.ctx.warnings.is_empty(), "{:?}", made.ctx.warnings);
        } else {
            assert!(md.contains("no font"), "{md}");
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A native BTC line on `hosts` hosts (ranks in blocks), its steals
    /// split by host.
    fn hosts_line(ranks: u32, hosts: u32, time_s: f64, within: u64, across: u64) -> String {
        let line = bench_line("btc", "native", ranks, time_s, within + across, 0.0);
        let mut v: serde_json::Value = serde_json::from_str(&line).unwrap();
        v["hosts"] = hosts.into();
        v["rank_hosts"] = (0..ranks).map(|r| r * hosts / ranks).collect::<Vec<_>>().into();
        v["stats"]["steals_within_host"] = within.into();
        v["stats"]["steals_across_hosts"] = across.into();
        v.to_string()
    }

    /// A CSV's rows as maps from its header's names.
    fn csv_rows(text: &str) -> Vec<std::collections::HashMap<String, String>> {
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        lines
            .map(|l| {
                // The fixtures' cells hold no commas: no quoting to undo.
                let cells = l.split(',').map(str::to_string);
                header.iter().map(|h| h.to_string()).zip(cells).collect()
            })
            .collect()
    }

    #[test]
    fn runs_on_several_hosts_say_so_and_older_lines_count_one() {
        let latency = serde_json::json!({
            "bench": "micro latency", "conduit": "udp", "fad": "native", "ranks": 4, "hosts": 2,
            "rank_hosts": [0, 0, 1, 1], "net_delay_us": 100.0, "oversubscribed": false, "verified": true,
            "latency_us": {"get": 14.0, "put": 14.5, "get_with_poller": 15.0, "put_with_poller": 15.5,
                           "fadd": 30.0},
            "latency_by_host_us": {"near": 1, "far": 2, "get_within_host": 0.021, "get_across_hosts": 114.2,
                                   "get_across_hosts_no_delay": 14.0, "delay_added": 100.2,
                                   "delayed_ops": 2200, "delayed_ops_expected": 2200}
        });
        // micro latency from before hosts: no latency_by_host_us.
        let old_latency = serde_json::json!({
            "bench": "micro latency", "conduit": "smp", "fad": "am", "ranks": 2, "verified": true,
            "latency_us": {"get": 0.5, "put": 0.5, "get_with_poller": 0.5, "put_with_poller": 0.5, "fadd": 1.0}
        });
        let btc = |ranks, line, status| ("scaling", "btc", "native", "na", ranks, line, status);
        let dir = results_dir(
            "hosts",
            &[
                // An older line, without hosts: one host.
                btc(1, Some(bench_line("btc", "native", 1, 2.0, 0, 0.0)), "ok"),
                btc(4, Some(hosts_line(4, 2, 1.0, 5, 3)), "ok"),
                // No line: its hosts are unknown, the column stays "on 2 hosts".
                btc(4, None, "failed"),
                (
                    "latency",
                    "micro-latency",
                    "native",
                    "na",
                    4,
                    Some(latency.to_string()),
                    "ok",
                ),
                (
                    "latency",
                    "micro-latency",
                    "am",
                    "na",
                    2,
                    Some(old_latency.to_string()),
                    "ok",
                ),
            ],
        );
        let made = generate(&dir).unwrap();
        let md = fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(md.contains("| configuration | 1 rank | 4 ranks on 2 hosts |"), "{md}");
        assert!(!md.contains("or 2 hosts"), "{md}");
        assert!(
            md.contains("| 4 ranks on 2 hosts: stolen / tried |") && md.contains("| 8 / 16 (3 across hosts) |"),
            "{md}"
        );
        assert!(md.contains("1.00 s @4 on 2 hosts"), "{}", made.stdout);
        // The failed run has no line: its shape is the driver's rank count.
        assert!(md.contains("empty check na, 4 ranks: **FAILED**"), "{md}");
        // Fig. 11's runs on several hosts: within / across / without the
        // delay / added / set; the one-host run has no row there.
        assert!(
            md.contains("| native | 4 ranks on 2 hosts | 0.021 | 114.200 | 14.000 | 100.200 | 100.000 |"),
            "{md}"
        );
        assert!(!md.contains("| am | 2 ranks |"), "{md}");

        let scaling = csv_rows(&fs::read_to_string(dir.join("scaling.csv")).unwrap());
        let cols = [
            "hosts",
            "rank_hosts",
            "steals_succeeded",
            "steals_within_host",
            "steals_across_hosts",
        ];
        let row = |i: usize| cols.map(|c| scaling[i][c].as_str());
        assert_eq!(row(0), ["1", "", "0", "", ""]);
        assert_eq!(row(1), ["2", "0 0 1 1", "8", "5", "3"]);
        assert_eq!(row(2), ["1", "", "", "", ""]);
        let latency = csv_rows(&fs::read_to_string(dir.join("latency.csv")).unwrap());
        let cols = [
            "hosts",
            "get_within_host_us",
            "get_across_hosts_us",
            "get_across_hosts_no_delay_us",
            "delay_added_us",
            "net_delay_us",
        ];
        assert_eq!(
            cols.map(|c| latency[0][c].as_str()),
            ["2", "0.021", "114.2", "14", "100.2", "100"]
        );
        assert_eq!(cols.map(|c| latency[1][c].as_str()), ["1", "", "", "", "", ""]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_rank_count_run_on_different_hosts_says_so() {
        let btc = |line| ("scaling", "btc", "native", "na", 2, Some(line), "ok");
        let dir = results_dir(
            "mixed-hosts",
            &[
                btc(bench_line("btc", "native", 2, 2.0, 1, 0.0)),
                btc(hosts_line(2, 2, 3.0, 0, 1)),
            ],
        );
        generate(&dir).unwrap();
        let md = fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(md.contains("| configuration | 2 ranks on 1 or 2 hosts |"), "{md}");
        assert!(md.contains("median over all of them"), "{md}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_that_is_not_a_result_is_named() {
        let e = generate(Path::new("/nonexistent/results")).err().unwrap();
        assert!(e.contains("meta.json") && e.contains("reproduce.sh"), "{e}");
    }
}
