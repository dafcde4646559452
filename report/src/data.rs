//! What `scripts/reproduce.sh` left in a results directory: `meta.json` (the
//! machine and the options) and `runs.jsonl` (one record per run, pointing
//! at the run's stdout, whose last line is the benchmark's JSON object).

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a run ended, as the report tells it (in `runs.jsonl`: `ok`,
/// `counted`, `unverified`, `wrong`, `failed`, `timeout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Exit 0 and a verified answer.
    Ok,
    /// The UTS tree count itself (`--seq`, nothing to check it against).
    Counted,
    /// Exit 0 but no reference to check the answer against.
    Unverified,
    /// The answer did not match its reference.
    Wrong,
    /// Killed by the launcher at the time limit (`--timeout`).
    Timeout,
    /// Non-zero exit, or no JSON line (and any status this tool does not
    /// know: `serde(other)` wants it last).
    #[serde(other)]
    Failed,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Counted => "counted",
            Status::Unverified => "unverified",
            Status::Wrong => "WRONG",
            Status::Failed => "FAILED",
            Status::Timeout => "TIMEOUT",
        }
    }

    /// The status as `runs.jsonl` spells it (`ok`, `wrong`, `timeout`, ...).
    pub fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Counted => "counted",
            Status::Unverified => "unverified",
            Status::Wrong => "wrong",
            Status::Failed => "failed",
            Status::Timeout => "timeout",
        }
    }

    /// Whether the run's numbers may be reported as measurements.
    pub fn usable(self) -> bool {
        matches!(self, Status::Ok | Status::Counted)
    }
}

/// One run, as `runs.jsonl` holds it (one JSON object a line, written by
/// `uat-report record`): what ran, how it ended, and the benchmark's own
/// JSON line. The serialised names are a contract with older results
/// directories, whose records lack `line` and `stderr_tail` (the report
/// then reads the files `output` and `stderr` name) and some of the
/// later fields (their defaults below).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The run's number in its directory: `001`, `002`, ...
    pub id: String,
    /// The experiment (`scaling`, `peers`, ...; `verify` for the UTS count).
    pub experiment: String,
    /// `btc`, `uts`, `nqueens`, `micro-spawn`, `micro-latency`, `micro-steal`.
    pub bench: String,
    /// The conduit it ran on as the driver launched it (`smp`, `udp
    /// --real-udp`, ...); None in records that predate the field.
    #[serde(default)]
    pub conduit: Option<String>,
    /// `native`, `am` or `rdma-emulated`.
    pub mode: String,
    /// `new` (this runtime's defaults) or `paper` (the paper's steal
    /// protocol and, in `am` mode, its poll at every spawn); `new` in
    /// records that predate the field.
    #[serde(default = "new_mechanisms")]
    pub mechanisms: String,
    /// `on`, `off`, or `na` (not a scheduler run).
    pub empty_check: String,
    /// The job's rank count.
    pub ranks: u32,
    /// The benchmark's arguments, space-separated.
    pub args: String,
    /// More spinning threads than cores (the driver's or the runtime's view).
    #[serde(default)]
    pub oversubscribed: bool,
    /// Settings the driver added for this run (`UAT_CACHE=off
    /// GASNET_SUPERNODE_MAXSIZE=1`); empty in records that predate it.
    #[serde(default)]
    pub env: String,
    /// The launcher's exit code (-1 where a record has none).
    #[serde(default = "no_exit")]
    pub exit: i64,
    /// How the run ended.
    pub status: Status,
    /// Wall-clock seconds of the job, launcher included.
    #[serde(default)]
    pub wall_s: f64,
    /// The run's stdout, relative to the results directory.
    #[serde(rename = "output")]
    pub output_path: String,
    /// The run's stderr, relative to the results directory.
    #[serde(rename = "stderr")]
    pub stderr_path: String,
    /// The benchmark's JSON line (None when it printed none).
    #[serde(rename = "line", default)]
    pub output: Option<Value>,
    /// The last lines of the run's stderr, for failures.
    #[serde(default)]
    pub stderr_tail: String,
}

fn new_mechanisms() -> String {
    "new".into()
}

fn no_exit() -> i64 {
    -1
}

impl Run {
    /// A number from the benchmark's JSON line, by path.
    pub fn num(&self, path: &[&str]) -> Option<f64> {
        let mut v = self.output.as_ref()?;
        for key in path {
            v = v.get(key)?;
        }
        v.as_f64()
    }

    pub fn time_s(&self) -> Option<f64> {
        self.num(&["time_s"])
    }

    /// "am, EC off" — the configuration a scaling line stands for ("am,
    /// EC on, paper" with the paper's mechanisms).
    pub fn config(&self) -> String {
        with_mechanisms(config_name(&self.mode, &self.empty_check), &self.mechanisms)
    }

    /// What ran instead of uat: `rayon, N threads`, `frame
    /// model` or `call model` (a no-runtime child); None for uat. From the
    /// JSON line's `runtime`, `rayon_threads` and `model_child`, else (a
    /// failed run) from the driver's arguments.
    pub fn peer(&self) -> Option<String> {
        let out = self.output.as_ref();
        let field = |k: &str| out.and_then(|o| o.get(k)).filter(|v| !v.is_null());
        let arg = |flag: &str| {
            let mut words = self.args.split_whitespace();
            words.find(|w| *w == flag)?;
            words.next().map(str::to_string)
        };
        let threads = field("rayon_threads").and_then(|v| v.as_u64()).map(|t| t.to_string());
        if let Some(t) = threads.or_else(|| arg("--rayon")) {
            return Some(format!("rayon, {t} thread{}", if t == "1" { "" } else { "s" }));
        }
        let model = field("model_child").and_then(|v| v.as_str()).map(str::to_string);
        model.or_else(|| arg("--model-child")).map(|m| format!("{m} model"))
    }

    /// The workload of a peers run: the benchmark, `btc --join` for BTC in
    /// rayon's form.
    pub fn workload(&self) -> String {
        let join = self
            .output
            .as_ref()
            .and_then(|o| o.pointer("/params/form"))
            .and_then(|v| v.as_str())
            == Some("join")
            || self.args.split_whitespace().any(|w| w == "--join");
        if self.bench == "btc" && join {
            "btc --join".into()
        } else {
            self.bench.clone()
        }
    }

    /// The job's number of hosts (`cargo uat run --hosts`): the JSON line's
    /// `hosts`, else 1 — lines from before hosts were recorded all ran on
    /// one (a run that printed no line cannot say, and counts as one too).
    pub fn hosts(&self) -> u32 {
        self.output
            .as_ref()
            .and_then(|o| o.get("hosts"))
            .and_then(Value::as_u64)
            .and_then(|h| u32::try_from(h).ok())
            .filter(|&h| h >= 1)
            .unwrap_or(1)
    }

    /// Each rank's host, in rank order, from the line's `rank_hosts`
    /// (`0 0 1 1`: space-separated, so that a CSV cell needs no quotes);
    /// empty where the line has none or it is not a list of host numbers.
    pub fn rank_hosts(&self) -> String {
        let Some(list) = self
            .output
            .as_ref()
            .and_then(|o| o.get("rank_hosts"))
            .and_then(Value::as_array)
        else {
            return String::new();
        };
        let hosts: Option<Vec<String>> = list.iter().map(|h| h.as_u64().map(|h| h.to_string())).collect();
        hosts.map(|h| h.join(" ")).unwrap_or_default()
    }

    /// "4 ranks", or "4 ranks on 2 hosts" when the job had several.
    pub fn shape(&self) -> String {
        shape(self.ranks, self.hosts())
    }

    /// A steal count by host (`steals_within_host`, `steals_across_hosts`)
    /// for a table: None on one host, where every steal is within it and
    /// the split says nothing.
    pub fn steals_by_host(&self) -> Option<(f64, f64)> {
        if self.hosts() < 2 {
            return None;
        }
        Some((
            self.num(&["stats", "steals_within_host"])?,
            self.num(&["stats", "steals_across_hosts"])?,
        ))
    }

    /// The mode, marked "paper" when it ran with the paper's mechanisms (a
    /// micro-benchmark's row).
    pub fn label(&self) -> String {
        with_mechanisms(self.mode.clone(), &self.mechanisms)
    }
}

/// A job's shape as the report's tables name it: "1 rank", "4 ranks", or
/// "4 ranks on 2 hosts" — one host goes unsaid, as every run before hosts
/// were recorded had one.
pub fn shape(ranks: u32, hosts: u32) -> String {
    let mut s = format!("{ranks} rank{}", if ranks == 1 { "" } else { "s" });
    if hosts > 1 {
        s.push_str(&format!(" on {hosts} hosts"));
    }
    s
}

pub fn config_name(mode: &str, empty_check: &str) -> String {
    match empty_check {
        "on" | "off" if mode != "native" => format!("{mode}, EC {empty_check}"),
        _ => mode.to_string(),
    }
}

fn with_mechanisms(name: String, mechanisms: &str) -> String {
    if mechanisms == "paper" {
        format!("{name}, paper")
    } else {
        name
    }
}

/// A results directory, loaded.
pub struct Results {
    pub meta: Value,
    pub runs: Vec<Run>,
}

impl Results {
    pub fn load(dir: &Path) -> Result<Results, String> {
        let meta_path = dir.join("meta.json");
        let meta_text = fs::read_to_string(&meta_path).map_err(|e| {
            format!(
                "cannot read {}: {e} (is {} a results directory of scripts/reproduce.sh?)",
                meta_path.display(),
                dir.display()
            )
        })?;
        let meta: Value =
            serde_json::from_str(&meta_text).map_err(|e| format!("{}: not JSON: {e}", meta_path.display()))?;
        let runs_path = dir.join("runs.jsonl");
        let text = fs::read_to_string(&runs_path).map_err(|e| format!("cannot read {}: {e}", runs_path.display()))?;
        let mut runs = Vec::new();
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let rec: Value = serde_json::from_str(line)
                .map_err(|e| format!("{} line {}: not a JSON record: {e}", runs_path.display(), i + 1))?;
            // Older records point at logs/ for the benchmark's line; a
            // finished run's logs are packed.
            if rec.get("line").is_none() && !dir.join("logs").is_dir() && dir.join("logs.tar.xz").exists() {
                let d = dir.display();
                return Err(format!(
                    "{d}'s records predate the benchmark line in runs.jsonl and its logs are packed: \
                     unpack them first (tar -xJf {d}/logs.tar.xz -C {d})"
                ));
            }
            runs.push(Run::from_record(dir, &rec).map_err(|e| format!("{} line {}: {e}", runs_path.display(), i + 1))?);
        }
        Ok(Results { meta, runs })
    }

    pub fn meta_str(&self, key: &str) -> String {
        match self.meta.get(key) {
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => "?".into(),
        }
    }

    pub fn meta_u64(&self, key: &str) -> Option<u64> {
        self.meta.get(key)?.as_u64()
    }

    /// Runs of one experiment, in the order they ran.
    pub fn of(&self, experiment: &str) -> impl Iterator<Item = &Run> {
        let experiment = experiment.to_string();
        self.runs.iter().filter(move |r| r.experiment == experiment)
    }
}

impl Run {
    fn from_record(dir: &Path, rec: &Value) -> Result<Run, String> {
        let mut run = Run::deserialize(rec).map_err(|e| format!("not a run record: {e}"))?;
        // Records written by `uat-report record` carry the benchmark's
        // line and the stderr's tail; older ones point at the logs.
        if rec.get("line").is_none() {
            run.output = fs::read_to_string(dir.join(&run.output_path))
                .ok()
                .and_then(|t| json_line(&t));
        }
        run.output = run.output.filter(Value::is_object);
        if run.output.is_none() && !matches!(run.status, Status::Failed | Status::Timeout) {
            run.status = Status::Failed; // the driver saw a '{' line that is not JSON
        }
        if rec.get("stderr_tail").is_none() {
            run.stderr_tail = fs::read_to_string(dir.join(&run.stderr_path))
                .map(|t| stderr_tail(&t))
                .unwrap_or_default();
        }
        let runtime_oversubscribed = run
            .output
            .as_ref()
            .and_then(|o| o.get("oversubscribed"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        run.oversubscribed |= runtime_oversubscribed;
        Ok(run)
    }
}

/// The median of the usable runs' times (the report's value for repeated
/// scaling runs), with the run it came from.
pub fn median_run<'a>(runs: &[&'a Run]) -> Option<&'a Run> {
    let mut ok: Vec<&Run> = runs
        .iter()
        .copied()
        .filter(|r| r.status.usable() && r.time_s().is_some())
        .collect();
    ok.sort_by(|a, b| a.time_s().partial_cmp(&b.time_s()).unwrap());
    ok.get((ok.len().max(1) - 1) / 2).copied()
}

/// The benchmark's JSON line in a run's stdout: its last non-empty line,
/// when that is a JSON object.
pub fn json_line(stdout: &str) -> Option<Value> {
    let last = stdout.lines().rev().find(|l| !l.trim().is_empty())?;
    serde_json::from_str::<Value>(last).ok().filter(Value::is_object)
}

/// The last three non-empty lines of a run's stderr, joined with ` | `.
pub fn stderr_tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(status: Status, time: Option<f64>) -> Run {
        Run {
            id: "1".into(),
            experiment: "scaling".into(),
            bench: "btc".into(),
            conduit: None,
            mode: "am".into(),
            mechanisms: "new".into(),
            empty_check: "off".into(),
            ranks: 2,
            args: String::new(),
            oversubscribed: false,
            env: String::new(),
            exit: 0,
            status,
            wall_s: 0.0,
            output_path: String::new(),
            stderr_path: String::new(),
            output: time.map(|t| serde_json::json!({"time_s": t})),
            stderr_tail: String::new(),
        }
    }

    #[test]
    fn median_skips_failed_runs_and_takes_the_lower_middle() {
        let runs = [
            run(Status::Ok, Some(3.0)),
            run(Status::Failed, None),
            run(Status::Ok, Some(1.0)),
            run(Status::Ok, Some(2.0)),
            run(Status::Wrong, Some(0.1)),
        ];
        let refs: Vec<&Run> = runs.iter().collect();
        assert_eq!(median_run(&refs).and_then(Run::time_s), Some(2.0));
        assert!(median_run(&refs[1..2]).is_none());
    }

    #[test]
    fn peers_are_named_from_the_line_or_the_arguments() {
        let mut r = run(Status::Ok, Some(1.0));
        assert_eq!(r.peer(), None);
        r.output = Some(serde_json::json!({"runtime": "rayon", "rayon_threads": 2, "model_child": null}));
        assert_eq!(r.peer().as_deref(), Some("rayon, 2 threads"));
        r.output = None;
        r.args = "--depth 4 --join --model-child frame --vs-seq 3".into();
        assert_eq!(r.peer().as_deref(), Some("frame model"));
        assert_eq!(r.workload(), "btc --join");
        r.args = "--rayon 1".into();
        assert_eq!(r.peer().as_deref(), Some("rayon, 1 thread"));
    }

    #[test]
    fn hosts_come_from_the_line_and_default_to_one() {
        let mut r = run(Status::Ok, Some(1.0));
        r.ranks = 4;
        assert_eq!(
            (r.hosts(), r.rank_hosts(), r.shape()),
            (1, String::new(), "4 ranks".into())
        );
        assert_eq!(r.steals_by_host(), None);
        r.output = Some(serde_json::json!({"hosts": 2, "rank_hosts": [0, 0, 1, 1],
            "stats": {"steals_within_host": 5, "steals_across_hosts": 3}}));
        assert_eq!(
            (r.hosts(), r.rank_hosts(), r.shape()),
            (2, "0 0 1 1".into(), "4 ranks on 2 hosts".into())
        );
        assert_eq!(r.steals_by_host(), Some((5.0, 3.0)));
        // Nonsense is not a host count or a host list.
        r.output = Some(serde_json::json!({"hosts": 0, "rank_hosts": [0, "1"]}));
        assert_eq!((r.hosts(), r.rank_hosts()), (1, String::new()));
        r.output = Some(serde_json::json!({"hosts": "2", "rank_hosts": 7}));
        assert_eq!((r.hosts(), r.rank_hosts()), (1, String::new()));
        assert_eq!(shape(1, 1), "1 rank");
    }

    #[test]
    fn config_names_the_empty_check_only_where_it_varies() {
        assert_eq!(config_name("am", "off"), "am, EC off");
        assert_eq!(config_name("native", "on"), "native");
        assert_eq!(config_name("rdma-emulated", "na"), "rdma-emulated");
        let mut r = run(Status::Ok, None);
        r.mechanisms = "paper".into();
        assert_eq!(
            (r.config(), r.label()),
            ("am, EC off, paper".into(), "am, paper".into())
        );
    }
}
