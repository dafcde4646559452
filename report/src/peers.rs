//! The peers experiment: ours in each mode against rayon in the
//! same binaries (`--rayon THREADS`: the same kernels in a rayon pool) at
//! each rank/thread count, on BTC in both forms, UTS, NQueens and cilksort
//! (its sort time alone). `scripts/reproduce.sh` runs every workload, count
//! and system once per repetition, so the i-th runs of two systems ran
//! side by side: a ratio here is the median over repetitions of those
//! pairs, with their spread.

use std::collections::BTreeMap;

use crate::data::{Results, Run};
use crate::plot::{self, Line, LinePanel};
use crate::section::{Ctx, Section};
use crate::table::{fmt, median, raw, spread, Table};

/// The workloads in the report's order.
const WORKLOADS: [&str; 5] = ["btc", "btc --join", "uts", "nqueens", "cilksort"];

/// The system's name in this section: `rayon`, or our mode.
fn system(r: &Run) -> String {
    match r.peer() {
        Some(p) if p.starts_with("rayon") => "rayon".into(),
        Some(p) => p,
        None => r.mode.clone(),
    }
}

/// Worker threads: rayon's pool size, or our rank count.
fn threads(r: &Run) -> u32 {
    let arg = || {
        let mut w = r.args.split_whitespace();
        w.find(|x| *x == "--rayon")?;
        w.next()?.parse().ok()
    };
    r.num(&["rayon_threads"])
        .map(|t| t as u32)
        .or_else(arg)
        .unwrap_or(r.ranks)
}

/// The time compared: cilksort's sort alone (`sort_s`: both sides
/// generate and check their keys differently), the whole run otherwise.
fn time(r: &Run) -> Option<f64> {
    if r.bench == "cilksort" {
        r.num(&["sort_s"])
    } else {
        r.time_s()
    }
}

/// The input, from the first run's parameters.
fn size(runs: &[&Run]) -> String {
    let Some(out) = runs.iter().find_map(|r| r.output.as_ref()) else {
        return "–".into();
    };
    let p = |k: &str| {
        out.pointer(&format!("/params/{k}"))
            .map(|v| v.to_string())
            .unwrap_or_default()
    };
    match runs[0].bench.as_str() {
        "btc" => format!("depth {}", p("depth")),
        "uts" => format!("-t {} -b {} -r {} -a {} -d {}", p("t"), p("b"), p("r"), p("a"), p("d")),
        "nqueens" => format!("N = {}", p("n")),
        "cilksort" => format!("{} keys", p("n")),
        _ => "–".into(),
    }
}

pub fn section(res: &Results, ctx: &mut Ctx) -> Option<Section> {
    let title = "Peers: ours against rayon".to_string();
    let all: Vec<&Run> = res.of("peers").collect();
    if all.is_empty() {
        return Some(Section {
            title,
            text: "Not measured in this run (the `peers` experiment of `scripts/reproduce.sh` did not run: \
                   results from before it existed, or `--experiments` left it out).\n"
                .into(),
        });
    }
    // (workload, threads, system) -> usable runs, in the order they ran.
    let mut cells: BTreeMap<(String, u32, String), Vec<&Run>> = BTreeMap::new();
    for r in all.iter().filter(|r| r.status.usable()) {
        cells.entry((r.workload(), threads(r), system(r))).or_default().push(r);
    }
    let failed = all.iter().filter(|r| !r.status.usable()).count();
    let mut counts: Vec<u32> = cells.keys().map(|k| k.1).collect();
    counts.sort_unstable();
    counts.dedup();
    let mut systems: Vec<String> = cells.keys().map(|k| k.2.clone()).collect();
    // Our modes first (in the driver's order), rayon last.
    let order = |s: &String| {
        ["native", "am", "rdma-emulated", "rayon"]
            .iter()
            .position(|o| o == s)
            .unwrap_or(9)
    };
    systems.sort_by_key(order);
    systems.dedup();
    let none: Vec<&Run> = Vec::new();
    let at = |w: &str, n: u32, sys: &str| cells.get(&(w.to_string(), n, sys.to_string())).unwrap_or(&none);

    let mut md = Table::new(&[
        "workload",
        "size",
        "threads",
        "system",
        "median (s)",
        "min–max (s)",
        "runs",
        "/ rayon (median of pairs)",
    ]);
    let mut csv = Table::new(&[
        "workload",
        "size",
        "threads",
        "system",
        "median_s",
        "min_s",
        "max_s",
        "runs",
        "vs_rayon_median",
        "vs_rayon_min",
        "vs_rayon_max",
    ]);
    // Per workload: one line per system (median against threads) for the plot.
    let mut lines: Vec<(String, Vec<Line>)> = Vec::new();
    for w in WORKLOADS {
        let mut by_system: Vec<Line> = Vec::new();
        for sys in &systems {
            let mut points = Vec::new();
            for &n in &counts {
                let rs = at(w, n, sys);
                if rs.is_empty() {
                    continue;
                }
                let ts: Vec<f64> = rs.iter().filter_map(|r| time(r)).collect();
                let m = median(ts.clone());
                let (lo, hi) = (ts.iter().copied().reduce(f64::min), ts.iter().copied().reduce(f64::max));
                // The i-th repetition of ours against the i-th of rayon.
                let pairs: Vec<f64> = if sys == "rayon" {
                    Vec::new()
                } else {
                    rs.iter()
                        .zip(at(w, n, "rayon"))
                        .filter_map(|(a, b)| Some(time(a)? / time(b)?))
                        .collect()
                };
                let ratio = median(pairs.clone());
                md.push(vec![
                    w.into(),
                    size(rs),
                    n.to_string(),
                    sys.clone(),
                    fmt(m, 4),
                    if ts.is_empty() { "–".into() } else { spread(&ts) },
                    ts.len().to_string(),
                    if pairs.is_empty() {
                        "–".into()
                    } else {
                        format!("{}× ({})", fmt(ratio, 2), spread(&pairs))
                    },
                ]);
                csv.push(vec![
                    w.into(),
                    size(rs),
                    n.to_string(),
                    sys.clone(),
                    raw(m),
                    raw(lo),
                    raw(hi),
                    ts.len().to_string(),
                    raw(ratio),
                    raw(pairs.iter().copied().reduce(f64::min)),
                    raw(pairs.iter().copied().reduce(f64::max)),
                ]);
                // Milliseconds: the quick inputs' times have no digits in seconds.
                if let Some(m) = m {
                    points.push((n as f64, m * 1e3, rs.iter().any(|r| r.oversubscribed)));
                }
            }
            if !points.is_empty() {
                by_system.push(Line {
                    name: sys.clone(),
                    color: plot::config_color(sys),
                    points,
                });
            }
        }
        if !by_system.is_empty() {
            lines.push((w.to_string(), by_system));
        }
    }
    ctx.csv("peers", &csv);
    let ticks: Vec<f64> = counts.iter().map(|&n| n as f64).collect();
    let img = ctx.plot(
        "peers",
        "ours against rayon: time per workload and thread count",
        |path| {
            let cols = lines.len().clamp(1, 3);
            let rows = lines.len().div_ceil(cols).max(1);
            let areas = plot::figure(path, "Ours against rayon (lower is better)", rows, cols)?;
            for ((w, by_system), area) in lines.iter().zip(&areas) {
                let title = if w == "cilksort" {
                    "cilksort (sort time)".to_string()
                } else {
                    w.clone()
                };
                plot::line_panel(
                    area,
                    &LinePanel {
                        title: &title,
                        x_desc: "ranks / threads",
                        y_desc: "time (ms)",
                        x_ticks: ticks.clone(),
                        // Headroom above the data for the legend (upper left,
                        // where the one-thread points are).
                        y_range: Some((
                            0.0,
                            1.7 * by_system.iter().flat_map(|l| &l.points).fold(1e-9, |m, p| p.1.max(m)),
                        )),
                        y_percent: false,
                        legend: true,
                        lines: by_system.clone(),
                    },
                )?;
            }
            plot::finish(areas)
        },
    );
    let mut text = String::from(
        "Ours in each mode against rayon in the same binaries (`--rayon THREADS`: the same kernel code — the \
         UTS node function and SHA-1 block, the NQueens bit-mask search — under `rayon::join`; BTC in the \
         paper's form, both children spawned, under two `rayon::scope` spawns, and with `--join`, one child \
         spawned and the other in the continuation, under `uat::join`/`rayon::join`; cilksort's keys sorted \
         by rayon's `par_sort_unstable`, its time the sort alone on both sides, `sort_s`). rayon runs in one \
         process with a pool of that many threads; ours at that many ranks. Every answer verified. Each \
         repetition ran every workload, count and system once, so the ratio is the median of the \
         repetitions' pairs (their spread in brackets); below 1 ours is faster.\n\n",
    );
    if failed > 0 {
        text.push_str(&format!(
            "**{failed} run(s) failed or were wrong** and are left out (see the run list).\n\n"
        ));
    }
    text.push_str(&md.markdown());
    text.push('\n');
    text.push_str(&img);
    Some(Section { title, text })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Status;
    use std::path::Path;

    fn run(id: usize, bench: &str, args: &str, ranks: u32, out: serde_json::Value) -> Run {
        Run {
            id: format!("{id:03}"),
            experiment: "peers".into(),
            bench: bench.into(),
            conduit: Some("smp".into()),
            mode: "native".into(),
            mechanisms: "new".into(),
            empty_check: "na".into(),
            ranks,
            args: args.into(),
            oversubscribed: false,
            env: String::new(),
            exit: 0,
            status: Status::Ok,
            wall_s: 1.0,
            output_path: String::new(),
            stderr_path: String::new(),
            output: Some(out),
            stderr_tail: String::new(),
        }
    }

    #[test]
    fn ours_against_rayon_is_a_median_of_pairs_and_cilksort_compares_sort_times() {
        let dir = std::env::temp_dir().join(format!("uat-report-peers-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("plots")).unwrap();
        let mut runs = Vec::new();
        for (i, (ours, rayon)) in [(1.0, 2.0), (1.2, 2.0), (3.0, 2.0)].into_iter().enumerate() {
            let p = serde_json::json!({"depth": 20, "form": "join"});
            runs.push(run(
                4 * i,
                "btc",
                "--depth 20 --join",
                2,
                serde_json::json!({"time_s": ours, "params": p}),
            ));
            runs.push(run(
                4 * i + 1,
                "btc",
                "--depth 20 --join --rayon 2",
                1,
                serde_json::json!({"time_s": rayon, "params": p, "runtime": "rayon", "rayon_threads": 2}),
            ));
            // cilksort: time_s differs, sort_s is what counts.
            runs.push(run(
                4 * i + 2,
                "cilksort",
                "-n 64",
                1,
                serde_json::json!({"time_s": 9.0, "sort_s": 0.5, "params": {"n": 64}}),
            ));
            runs.push(run(
                4 * i + 3,
                "cilksort",
                "-n 64 --rayon 1",
                1,
                serde_json::json!({"time_s": 1.0, "sort_s": 1.0, "params": {"n": 64}}),
            ));
        }
        let res = Results {
            meta: serde_json::json!({}),
            runs,
        };
        let mut ctx = Ctx::new(&dir, false);
        let sec = section(&res, &mut ctx).unwrap();
        assert!(
            sec.text.contains("| btc --join | depth 20 | 2 | native |"),
            "{}",
            sec.text
        );
        // Pairs 0.5, 0.6, 1.5: median 0.6.
        assert!(sec.text.contains("0.60× (0.500–1.500)"), "{}", sec.text);
        assert!(sec.text.contains("0.50× (0.500–0.500)"), "{}", sec.text);
        let csv = std::fs::read_to_string(dir.join("peers.csv")).unwrap();
        assert!(
            csv.lines().any(|l| l.starts_with("cilksort,64 keys,1,rayon,1,")),
            "{csv}"
        );
        std::fs::remove_dir_all(&dir).unwrap();

        // An older results directory: the section says so.
        let old = Results {
            meta: serde_json::json!({}),
            runs: Vec::new(),
        };
        let sec = section(&old, &mut Ctx::new(Path::new("/nonexistent"), false)).unwrap();
        assert!(sec.text.starts_with("Not measured"), "{}", sec.text);
    }
}
