//! `uat-report --import`: makes a results directory out of the benchmarks'
//! own JSON lines (from `scripts/scaling.sh`, or runs by hand), so that runs
//! made without `scripts/reproduce.sh` get the same report and plots.

use std::fs;
use std::path::Path;

use serde_json::{json, Value};

use crate::data::Run;
use crate::record::classify;

/// Which experiment a benchmark line belongs to, or None for lines the
/// report has no section for.
fn experiment(line: &Value) -> Option<(&'static str, String)> {
    let bench = line.get("bench")?.as_str()?;
    // A serial elision alone (--seq), or paired with one-rank runs (--vs-seq).
    let seq = line.get("seq").and_then(Value::as_bool).unwrap_or(false) || line.get("vs_seq").is_some();
    // rayon or a child model, or BTC in rayon's form: a peers
    // run unless paired with the serial elision.
    let peer = line.get("runtime").and_then(Value::as_str).is_some_and(|r| r != "uat")
        || line.pointer("/params/form").and_then(Value::as_str) == Some("join");
    match bench {
        "micro spawn" => Some(("spawn", "micro-spawn".into())),
        "micro latency" => Some(("latency", "micro-latency".into())),
        "micro steal" => Some(("steal", "micro-steal".into())),
        "micro fad" => Some(("fad", "micro-fad".into())),
        "btc" | "uts" | "nqueens" if seq => Some(("seq", bench.into())),
        "btc" | "uts" | "nqueens" | "cilksort" if peer => Some(("peers", bench.into())),
        "btc" | "uts" | "nqueens" => Some(("scaling", bench.into())),
        _ => None,
    }
}

/// Writes `dir` (which must not hold a run yet) from the JSON lines of
/// `files`; `meta` fills meta.json. Returns (lines imported, lines skipped).
pub fn import(files: &[String], dir: &Path, meta: Value) -> Result<(usize, usize), String> {
    if dir.join("runs.jsonl").exists() {
        return Err(format!("{} already holds a run", dir.display()));
    }
    fs::create_dir_all(dir.join("logs")).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let (mut records, mut n, mut skipped) = (String::new(), 0usize, 0usize);
    let mut first: Option<Value> = None;
    for file in files {
        let text = fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))?;
        for line in text.lines().filter(|l| l.trim_start().starts_with('{')) {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                skipped += 1;
                continue;
            };
            let Some((exp, bench)) = experiment(&v) else {
                skipped += 1;
                continue;
            };
            n += 1;
            let id = format!("{n:03}");
            let out = format!("logs/{id}.out");
            let err = format!("logs/{id}.err");
            fs::write(dir.join(&out), format!("{line}\n")).map_err(|e| e.to_string())?;
            fs::write(dir.join(&err), "").map_err(|e| e.to_string())?;
            // A failure record of scripts/scaling.sh (`failed`, `exit`)
            // is not the benchmark's line.
            let failed = v.get("failed").and_then(Value::as_bool) == Some(true);
            let exit = if failed {
                v.get("exit").and_then(Value::as_i64).unwrap_or(1)
            } else {
                0
            };
            let ec = match (exp, v.get("empty_check").and_then(Value::as_bool)) {
                ("scaling", Some(true)) => "on",
                ("scaling", Some(false)) => "off",
                _ => "na",
            };
            let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
            let record = Run {
                id,
                experiment: exp.into(),
                bench,
                conduit: text("conduit"),
                mode: text("fad").unwrap_or_else(|| "?".into()),
                mechanisms: "new".into(),
                empty_check: ec.into(),
                ranks: v.get("ranks").and_then(Value::as_u64).unwrap_or(1) as u32,
                args: text("label").unwrap_or_default(),
                oversubscribed: v.get("oversubscribed").and_then(Value::as_bool).unwrap_or(false),
                env: String::new(),
                exit,
                status: classify(exp, exit, (!failed).then_some(&v)),
                wall_s: v.get("time_s").and_then(Value::as_f64).unwrap_or(0.0),
                output_path: out,
                stderr_path: err,
                output: (!failed).then(|| v.clone()),
                stderr_tail: text("error").unwrap_or_default(),
            };
            let record = serde_json::to_string(&record).map_err(|e| e.to_string())?;
            records.push_str(&record);
            records.push('\n');
            first.get_or_insert(v);
        }
    }
    if n == 0 {
        return Err(format!("no benchmark JSON lines in {}", files.join(", ")));
    }
    let mut meta = meta;
    if let (Some(m), Some(f)) = (meta.as_object_mut(), first) {
        m.entry("conduit")
            .or_insert(f.get("conduit").cloned().unwrap_or(json!("?")));
        m.entry("imported_from").or_insert(json!(files.join(", ")));
    }
    fs::write(dir.join("runs.jsonl"), records).map_err(|e| e.to_string())?;
    fs::write(dir.join("meta.json"), meta.to_string()).map_err(|e| e.to_string())?;
    Ok((n, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_sorted_into_experiments() {
        let scaling = json!({"bench": "uts", "seq": false});
        let seq = json!({"bench": "nqueens", "seq": true});
        let steal = json!({"bench": "micro steal"});
        assert_eq!(experiment(&scaling), Some(("scaling", "uts".into())));
        assert_eq!(experiment(&seq), Some(("seq", "nqueens".into())));
        let paired = json!({"bench": "btc", "seq": false, "vs_seq": {"rounds": 3}});
        assert_eq!(experiment(&paired), Some(("seq", "btc".into())));
        let rayon = json!({"bench": "cilksort", "runtime": "rayon", "rayon_threads": 2});
        assert_eq!(experiment(&rayon), Some(("peers", "cilksort".into())));
        assert_eq!(experiment(&steal), Some(("steal", "micro-steal".into())));
        assert_eq!(
            experiment(&json!({"bench": "micro fad"})),
            Some(("fad", "micro-fad".into()))
        );
        assert_eq!(experiment(&json!({"bench": "gasnet-check"})), None);
        assert_eq!(experiment(&json!({"ok": true})), None);
    }
}
