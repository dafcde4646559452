//! What the reproduction's scripts ask of the tool while they run, so that
//! they only sequence builds and runs and never write JSON themselves:
//!
//! - `uat-report start DIR KEY=VALUE... KEY:=JSON...`: makes the results
//!   directory (`logs/`, an empty `runs.jsonl`) and writes `meta.json`;
//! - `uat-report record DIR --id ID --experiment E ... --exit RC`: after
//!   each run, reads the benchmark's JSON line from `logs/ID.out`,
//!   classifies the run and appends its record to `runs.jsonl`;
//! - `uat-report finish DIR`: stamps the end of the runs into `meta.json`
//!   (the report's duration line);
//! - `uat-report get FILE KEY`: prints one field of the last JSON line of
//!   FILE (the UTS count the driver caches);
//! - `uat-report scaling-line ...`: the line `scripts/scaling.sh` appends
//!   for one run.

use std::collections::HashMap;
use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use crate::data::{json_line, stderr_tail, Run, Status};

/// The launcher's exit code for a job it killed at `--timeout` (`cargo uat
/// run`'s contract, as GNU timeout's).
pub const TIMED_OUT_EXIT: i64 = 124;

/// How a run ended, from the launcher's exit code and the benchmark's JSON
/// line: killed at the time limit → timeout; an answer that does not match
/// its reference → wrong (the benchmark also exits 1 then); any other
/// non-zero exit, or no JSON line → failed; a verified answer → ok; no
/// reference to check against → counted for the UTS count itself (the
/// `verify` experiment), else unverified.
pub fn classify(experiment: &str, exit: i64, line: Option<&Value>) -> Status {
    if exit == TIMED_OUT_EXIT {
        return Status::Timeout;
    }
    let verified = line.and_then(|l| l.get("verified"));
    if verified == Some(&Value::Bool(false)) {
        return Status::Wrong;
    }
    match (exit, line, verified) {
        (0, Some(_), Some(Value::Bool(true))) => Status::Ok,
        (0, Some(_), _) if experiment == "verify" => Status::Counted,
        (0, Some(_), _) => Status::Unverified,
        _ => Status::Failed,
    }
}

/// Seconds since the Unix epoch, now.
fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// A number as the shell gives it (`$EPOCHREALTIME` may use the locale's
/// decimal comma).
fn parse_seconds(s: &str) -> Result<f64, String> {
    s.replace(',', ".")
        .parse::<f64>()
        .map_err(|_| format!("'{s}' is not a number of seconds"))
}

/// A subcommand's `--name value` pairs.
struct Flags<'a> {
    /// The subcommand, for messages.
    cmd: &'static str,
    map: HashMap<&'a str, &'a str>,
}

impl<'a> Flags<'a> {
    /// `args` as `--name value` pairs; every name must be one of `known`.
    fn parse(cmd: &'static str, args: &'a [String], known: &[&str]) -> Result<Flags<'a>, String> {
        let mut map = HashMap::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let name = a
                .strip_prefix("--")
                .filter(|n| known.contains(n))
                .ok_or_else(|| format!("unexpected argument '{a}' (want one of --{})", known.join(", --")))?;
            let value = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
            map.insert(name, value.as_str());
        }
        Ok(Flags { cmd, map })
    }

    /// A value the subcommand cannot go without.
    fn get(&self, name: &str) -> Result<&'a str, String> {
        self.map
            .get(name)
            .copied()
            .ok_or_else(|| format!("{} wants --{name}", self.cmd))
    }

    /// A value that may be left out, or `default`.
    fn or(&self, name: &str, default: &'a str) -> &'a str {
        self.map.get(name).copied().unwrap_or(default)
    }

    /// A number the subcommand cannot go without.
    fn number<T: std::str::FromStr>(&self, name: &str) -> Result<T, String> {
        let v = self.get(name)?;
        v.parse().map_err(|_| format!("--{name} wants a number, got '{v}'"))
    }
}

/// `record DIR --id ID ...`: classifies the run whose output is in
/// `DIR/logs/ID.{out,err}` and appends its record to `DIR/runs.jsonl`.
/// Returns the record (the caller prints its status).
pub fn record(args: &[String]) -> Result<Run, String> {
    const KNOWN: [&str; 14] = [
        "id",
        "experiment",
        "bench",
        "conduit",
        "mode",
        "mechanisms",
        "empty-check",
        "ranks",
        "args",
        "oversubscribed",
        "env",
        "exit",
        "started",
        "wall-s",
    ];
    let (dir, rest) = args.split_first().ok_or("record wants the results directory first")?;
    let dir = Path::new(dir);
    let f = Flags::parse("record", rest, &KNOWN)?;
    let id = f.get("id")?.to_string();
    let exit: i64 = f.number("exit")?;
    let ranks: u32 = f.number("ranks")?;
    let wall_s = match (f.map.get("wall-s"), f.map.get("started")) {
        (Some(w), _) => parse_seconds(w)?,
        (None, Some(t0)) => (now_unix() - parse_seconds(t0)?).max(0.0),
        (None, None) => return Err("record wants --started (the run's start, Unix seconds) or --wall-s".into()),
    };
    let output = format!("logs/{id}.out");
    let stderr = format!("logs/{id}.err");
    let line = fs::read_to_string(dir.join(&output)).ok().and_then(|t| json_line(&t));
    let tail = fs::read_to_string(dir.join(&stderr))
        .map(|t| stderr_tail(&t))
        .unwrap_or_default();
    let experiment = f.get("experiment")?.to_string();
    let rec = Run {
        status: classify(&experiment, exit, line.as_ref()),
        id,
        experiment,
        bench: f.get("bench")?.to_string(),
        conduit: Some(f.get("conduit")?.to_string()),
        mode: f.get("mode")?.to_string(),
        mechanisms: f.or("mechanisms", "new").to_string(),
        empty_check: f.or("empty-check", "na").to_string(),
        ranks,
        args: f.or("args", "").to_string(),
        oversubscribed: match f.or("oversubscribed", "false") {
            "true" => true,
            "false" => false,
            o => return Err(format!("--oversubscribed wants true or false, got '{o}'")),
        },
        env: f.or("env", "").to_string(),
        exit,
        wall_s: (wall_s * 1000.0).round() / 1000.0,
        output_path: output,
        stderr_path: stderr,
        output: line,
        stderr_tail: tail,
    };
    append(&dir.join("runs.jsonl"), &rec)?;
    Ok(rec)
}

/// Appends one record as a JSON line.
fn append(path: &Path, rec: &Run) -> Result<(), String> {
    let text = serde_json::to_string(rec).map_err(|e| e.to_string())?;
    let mut file = fs::OpenOptions::new().append(true).open(path).map_err(|e| {
        format!(
            "cannot append to {}: {e} (run `uat-report start` first)",
            path.display()
        )
    })?;
    writeln!(file, "{text}").map_err(|e| format!("cannot append to {}: {e}", path.display()))
}

/// `KEY=VALUE` (a string) or `KEY:=JSON` (a number, a boolean, ...) into
/// a map.
fn meta_pairs(args: &[String]) -> Result<Map<String, Value>, String> {
    let mut meta = Map::new();
    for a in args {
        let (key, value) = match (a.split_once(":="), a.split_once('=')) {
            (Some((k, json)), Some((k2, _))) if k.len() < k2.len() => (
                k,
                serde_json::from_str(json).map_err(|e| format!("{a}: the value after := is not JSON: {e}"))?,
            ),
            (_, Some((k, v))) => (k, Value::from(v)),
            _ => return Err(format!("'{a}': want KEY=VALUE or KEY:=JSON")),
        };
        if key.is_empty() {
            return Err(format!("'{a}': no key"));
        }
        meta.insert(key.to_string(), value);
    }
    Ok(meta)
}

/// `start DIR KEY=VALUE... KEY:=JSON...`: makes DIR and DIR/logs (refusing
/// a directory that already holds a run), writes meta.json from the pairs
/// plus `runs_started_unix` (now), and an empty runs.jsonl.
pub fn start(args: &[String]) -> Result<String, String> {
    let (dir, rest) = args.split_first().ok_or("start wants the results directory first")?;
    let dir = Path::new(dir);
    let mut meta = meta_pairs(rest)?;
    let logs = dir.join("logs");
    fs::create_dir_all(&logs).map_err(|e| format!("cannot create {}: {e}", logs.display()))?;
    let holds_logs = fs::read_dir(&logs).map(|mut d| d.next().is_some()).unwrap_or(false);
    let runs = dir.join("runs.jsonl");
    let holds_runs = fs::metadata(&runs).map(|m| m.len() > 0).unwrap_or(false);
    if holds_logs || holds_runs || dir.join("logs.tar.xz").exists() {
        return Err(format!("{} already holds a run; pick another --out", dir.display()));
    }
    meta.insert("runs_started_unix".into(), Value::from(now_unix() as u64));
    write_meta(dir, &meta)?;
    fs::write(&runs, "").map_err(|e| format!("cannot write {}: {e}", runs.display()))?;
    Ok(format!("started {}", dir.display()))
}

fn write_meta(dir: &Path, meta: &Map<String, Value>) -> Result<(), String> {
    let path = dir.join("meta.json");
    let text = serde_json::to_string_pretty(meta).map_err(|e| e.to_string())?;
    fs::write(&path, text + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `finish DIR`: adds `finished_unix` (now) to DIR/meta.json.
pub fn finish(args: &[String]) -> Result<String, String> {
    let [dir] = args else {
        return Err("finish wants one argument, the results directory".into());
    };
    let dir = Path::new(dir);
    let path = dir.join("meta.json");
    let text = fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut meta: Map<String, Value> =
        serde_json::from_str(&text).map_err(|e| format!("{}: not a JSON object: {e}", path.display()))?;
    meta.insert("finished_unix".into(), Value::from(now_unix() as u64));
    write_meta(dir, &meta)?;
    Ok(format!("finished {}", dir.display()))
}

/// `get FILE KEY`: the field KEY (a `/`-separated path) of the last JSON
/// line of FILE, as text (a string without its quotes).
pub fn get(args: &[String]) -> Result<String, String> {
    let [file, key] = args else {
        return Err("get wants a file and a key".into());
    };
    let text = fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))?;
    let line = json_line(&text).ok_or_else(|| format!("{file}: its last line is not a JSON object"))?;
    let pointer = format!("/{}", key.trim_start_matches('/'));
    match line.pointer(&pointer) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Null) | None => Err(format!("{file}: no \"{key}\" in its JSON line")),
        Some(v) => Ok(v.to_string()),
    }
}

/// `scaling-line --label L --fad M --ranks N --exit RC --oversubscribed B
/// --stdout FILE --stderr FILE`: the line `scripts/scaling.sh` appends for
/// one run — the benchmark's own JSON line with `label` and
/// `oversubscribed` added when it ran and verified (or had nothing to
/// verify against), else a failure record (`failed`, `exit`, `error`: the
/// last lines of stderr). Returns (the line, whether the run is fine).
pub fn scaling_line(args: &[String]) -> Result<(String, bool), String> {
    let f = Flags::parse(
        "scaling-line",
        args,
        &["label", "fad", "ranks", "exit", "oversubscribed", "stdout", "stderr"],
    )?;
    let exit: i64 = f.number("exit")?;
    let ranks: u64 = f.number("ranks")?;
    let oversubscribed = f.get("oversubscribed")? == "true";
    let line = fs::read_to_string(f.get("stdout")?).ok().and_then(|t| json_line(&t));
    let fine = exit == 0
        && matches!(
            line.as_ref().and_then(|l| l.get("verified")),
            Some(Value::Bool(true) | Value::Null)
        );
    let mut out = match line {
        Some(Value::Object(m)) if fine => m,
        _ => {
            let err = fs::read_to_string(f.get("stderr")?)
                .map(|t| stderr_tail(&t))
                .unwrap_or_default();
            let mut m = Map::new();
            m.insert("bench_args".into(), f.get("label")?.into());
            m.insert("fad".into(), f.get("fad")?.into());
            m.insert("ranks".into(), ranks.into());
            m.insert("failed".into(), true.into());
            m.insert("exit".into(), exit.into());
            m.insert("error".into(), err.into());
            m
        }
    };
    out.insert("label".into(), f.get("label")?.into());
    out.insert("oversubscribed".into(), oversubscribed.into());
    Ok((Value::Object(out).to_string(), fine))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(v: Value) -> Option<Value> {
        Some(v)
    }

    #[test]
    fn a_wrong_answer_a_crash_and_a_timeout_are_told_apart() {
        let ok = line(json!({"bench": "btc", "verified": true}));
        let wrong = line(json!({"bench": "btc", "verified": false}));
        let no_reference = line(json!({"bench": "uts", "verified": null}));
        assert_eq!(classify("scaling", 0, ok.as_ref()), Status::Ok);
        // A wrong answer exits 1 (the harness's rule) and is still wrong.
        assert_eq!(classify("scaling", 1, wrong.as_ref()), Status::Wrong);
        assert_eq!(classify("scaling", 0, wrong.as_ref()), Status::Wrong);
        // A crash: non-zero exit, with or without a line.
        assert_eq!(classify("scaling", 101, None), Status::Failed);
        assert_eq!(classify("scaling", 134, ok.as_ref()), Status::Failed);
        // Exit 0 but no line: nothing to report.
        assert_eq!(classify("scaling", 0, None), Status::Failed);
        assert_eq!(classify("scaling", TIMED_OUT_EXIT, None), Status::Timeout);
        assert_eq!(classify("verify", 0, no_reference.as_ref()), Status::Counted);
        assert_eq!(classify("scaling", 0, no_reference.as_ref()), Status::Unverified);
        assert!(!Status::Timeout.usable() && !Status::Wrong.usable() && !Status::Failed.usable());
    }

    #[test]
    fn the_line_is_the_last_one_and_must_be_an_object() {
        assert_eq!(json_line("noise\n{\"a\":1}\n\n"), Some(json!({"a": 1})));
        assert_eq!(json_line("{\"a\":1}\nrank 0: panicked\n"), None);
        assert_eq!(json_line("{\"a\":1"), None);
        assert_eq!(json_line("[1]"), None);
        assert_eq!(json_line(""), None);
        assert_eq!(stderr_tail("a\n\nb\nc\nd\n"), "b | c | d");
    }

    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("uat-report-record-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn records_are_json_whatever_the_arguments_hold() {
        let dir = temp_dir("records");
        let d = dir.to_str().unwrap();
        start(&strings(&[
            d,
            "host=a \"quoted\" host",
            "cores:=2",
            "commit=0123456",
            "quick:=true",
        ]))
        .unwrap();
        // A second start on the same directory is refused once it holds a run.
        fs::write(
            dir.join("logs/001.out"),
            "progress\n{\"bench\":\"btc\",\"verified\":false}\n",
        )
        .unwrap();
        fs::write(dir.join("logs/001.err"), "rank 0: \"wrong\" answer\\n\n").unwrap();
        fs::write(dir.join("logs/002.out"), "").unwrap();
        fs::write(dir.join("logs/002.err"), "thread 'main' panicked\n").unwrap();
        let common = [
            "--bench",
            "btc",
            "--conduit",
            "smp",
            "--mode",
            "am",
            "--ranks",
            "2",
            "--started",
            "1.5",
        ];
        let mut a = strings(&[d, "--id", "001", "--experiment", "scaling", "--exit", "1"]);
        a.extend(strings(&common));
        a.extend(strings(&["--args", "--depth 4 \"x\"\\", "--env", "UAT_CACHE=off"]));
        assert_eq!(record(&a).unwrap().status, Status::Wrong);
        let mut b = strings(&[d, "--id", "002", "--experiment", "scaling", "--exit", "101"]);
        b.extend(strings(&common));
        assert_eq!(record(&b).unwrap().status, Status::Failed);
        assert!(start(&strings(&[d])).unwrap_err().contains("already holds a run"));

        let meta: Value = serde_json::from_str(&fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        assert_eq!(meta["host"], json!("a \"quoted\" host"));
        assert_eq!((meta["cores"].clone(), meta["quick"].clone()), (json!(2), json!(true)));
        assert_eq!(meta["commit"], json!("0123456"));
        assert!(meta["runs_started_unix"].as_f64().unwrap() > 1.0e9);
        finish(&strings(&[d])).unwrap();
        let meta: Value = serde_json::from_str(&fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        assert!(meta["finished_unix"].as_f64().unwrap() >= meta["runs_started_unix"].as_f64().unwrap());

        let text = fs::read_to_string(dir.join("runs.jsonl")).unwrap();
        let recs: Vec<Run> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].args, "--depth 4 \"x\"\\");
        assert_eq!(recs[0].env, "UAT_CACHE=off");
        assert_eq!(recs[0].output, Some(json!({"bench": "btc", "verified": false})));
        assert_eq!(recs[0].stderr_tail, "rank 0: \"wrong\" answer\\n");
        assert_eq!((recs[1].output.clone(), recs[1].exit), (None, 101));
        assert!(
            text.contains("\"status\":\"wrong\"") && text.contains("\"status\":\"failed\""),
            "{text}"
        );
        // And the report reads them back.
        let res = crate::data::Results::load(&dir).unwrap();
        assert_eq!(res.runs[0].status, Status::Wrong);
        assert_eq!(res.runs[1].stderr_tail, "thread 'main' panicked");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn get_reads_a_field_and_refuses_what_is_not_there() {
        let dir = temp_dir("get");
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("uts.json");
        fs::write(&file, "{\"result\":4695,\"params\":{\"tree\":\"T1\"}}\n").unwrap();
        let f = file.to_str().unwrap();
        assert_eq!(get(&strings(&[f, "result"])).unwrap(), "4695");
        assert_eq!(get(&strings(&[f, "params/tree"])).unwrap(), "T1");
        assert!(get(&strings(&[f, "expected"])).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn scaling_lines_carry_the_label_or_say_what_failed() {
        let dir = temp_dir("scaling");
        fs::create_dir_all(&dir).unwrap();
        let (out, err) = (dir.join("out"), dir.join("err"));
        fs::write(&out, "{\"bench\":\"btc\",\"verified\":true}\n").unwrap();
        fs::write(&err, "a \"quoted\" error\n").unwrap();
        let args = |exit: &str| {
            strings(&[
                "--label",
                "btc --depth 4",
                "--fad",
                "am",
                "--ranks",
                "2",
                "--exit",
                exit,
                "--oversubscribed",
                "false",
                "--stdout",
                out.to_str().unwrap(),
                "--stderr",
                err.to_str().unwrap(),
            ])
        };
        let (line, fine) = scaling_line(&args("0")).unwrap();
        assert!(fine);
        assert_eq!(
            serde_json::from_str::<Value>(&line).unwrap(),
            json!({"bench": "btc", "verified": true, "label": "btc --depth 4", "oversubscribed": false})
        );
        let (line, fine) = scaling_line(&args("124")).unwrap();
        assert!(!fine);
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!((v["failed"].clone(), v["exit"].clone()), (json!(true), json!(124)));
        assert_eq!(v["error"], json!("a \"quoted\" error"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
