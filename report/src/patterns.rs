//! The patterns experiment (`uat::pattern`): each parallel pattern over
//! global memory against a plain serial loop over a `Vec` and against rayon
//! on the same keys (`benches/patterns.rs`, `op_s`: the operation alone),
//! and heat and uts-mem (global memory with real data) from 1 to 2 ranks
//! and over the network with the software cache on and off.
//! `scripts/reproduce.sh` runs every configuration once per round, so a
//! ratio here is the median over rounds of the two runs of one round, with
//! the pairs' spread beside it. A failed run leaves its round's pairs out
//! without shifting the other rounds (runs are grouped with failures kept
//! in place, and paired by position).

use std::collections::BTreeMap;

use crate::data::{Results, Run};
use crate::plot::{self, BarPanel, PALETTE};
use crate::section::{Ctx, Section};
use crate::table::{fmt, median, raw, secs, si, spread, Table};

/// The operations in the order the benchmark's help lists them.
pub const OPS: [&str; 6] = ["for-each-mut", "map-reduce", "scan", "histogram", "filter", "sort"];

/// Goal: a pattern on one rank within 10% of the serial loop (for the
/// element-wise patterns).
pub const LOOP_GOAL: f64 = 1.10;
/// The ops the loop goal applies to.
pub const LOOP_GOAL_OPS: [&str; 3] = ["for-each-mut", "map-reduce", "scan"];
/// Goal: a pattern on 2 ranks no slower than rayon on 2 threads.
pub const RAYON_GOAL: f64 = 1.00;

/// Who computed a `patterns` run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum System {
    /// The uat pattern over global memory at this many ranks.
    Pattern(u32),
    /// The plain serial loop over a `Vec` (one rank).
    Loop,
    /// rayon over a `Vec` in a pool of this many threads (one rank).
    Rayon(u32),
}

/// What a run of the experiment was.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// `patterns --op OP`.
    Op { op: String, system: System },
    /// heat or uts-mem on the run's own conduit.
    Mem { bench: String, ranks: u32 },
    /// heat or uts-mem over the network (the driver set `UAT_CACHE`).
    Net {
        bench: String,
        path: String,
        cache: &'static str,
    },
}

/// The word after `flag` in the driver's arguments.
fn arg(r: &Run, flag: &str) -> Option<String> {
    let mut words = r.args.split_whitespace();
    words.find(|w| *w == flag)?;
    words.next().map(str::to_string)
}

fn has(r: &Run, flag: &str) -> bool {
    r.args.split_whitespace().any(|w| w == flag)
}

fn out_str<'a>(r: &'a Run, k: &str) -> Option<&'a str> {
    r.output.as_ref()?.get(k)?.as_str()
}

/// What a run was: from its JSON line, else (a failed run) from the
/// driver's arguments and settings. None for runs of other benchmarks.
pub fn kind(r: &Run) -> Option<Kind> {
    match r.bench.as_str() {
        "patterns" => {
            let op = out_str(r, "op")
                .map(str::to_string)
                .or_else(|| arg(r, "--op"))
                .unwrap_or_else(|| "map-reduce".into());
            let threads = r
                .num(&["rayon_threads"])
                .map(|t| t as u32)
                .or_else(|| arg(r, "--rayon").and_then(|t| t.parse().ok()));
            let system = match out_str(r, "solver") {
                Some("loop") => System::Loop,
                Some("rayon") => System::Rayon(threads.unwrap_or(1)),
                Some(_) => System::Pattern(r.ranks),
                None if has(r, "--loop") => System::Loop,
                None => match threads {
                    Some(t) => System::Rayon(t),
                    None => System::Pattern(r.ranks),
                },
            };
            Some(Kind::Op { op, system })
        }
        "heat" | "uts-mem" if r.env.contains("UAT_CACHE=") => Some(Kind::Net {
            bench: r.bench.clone(),
            path: r.conduit.clone().unwrap_or_default(),
            cache: if r.env.contains("UAT_CACHE=off") { "off" } else { "on" },
        }),
        "heat" | "uts-mem" => Some(Kind::Mem {
            bench: r.bench.clone(),
            ranks: r.ranks,
        }),
        _ => None,
    }
}

/// The time a run is compared by: `op_s` (the operation alone), `sort_s`
/// (the sort alone), else `time_s`.
pub fn value(r: &Run) -> Option<f64> {
    match r.bench.as_str() {
        "patterns" => r.num(&["op_s"]),
        _ => r.time_s(),
    }
}

/// `a_i / b_i` of the i-th runs of two configurations (one round each),
/// for the rounds where both are usable.
pub fn paired(a: &[&Run], b: &[&Run]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .filter(|(x, y)| x.status.usable() && y.status.usable())
        .filter_map(|(x, y)| Some(value(x)? / value(y)?))
        .filter(|v| v.is_finite())
        .collect()
}

/// The median of the usable runs' `f`.
fn median_of(runs: &[&Run], f: impl Fn(&Run) -> Option<f64>) -> Option<f64> {
    median(runs.iter().filter(|r| r.status.usable()).filter_map(|r| f(r)).collect())
}

/// "1.05 (0.980–1.100)": the median of the pairs and their spread.
fn ratio_cell(pairs: &[f64]) -> String {
    match median(pairs.to_vec()) {
        Some(m) => format!("{m:.2} ({})", spread(pairs)),
        None => "–".into(),
    }
}

/// An element or key count: `2^20` for powers of two from 1024 on, else
/// `65.5 k`.
pub fn count(n: Option<f64>) -> String {
    match n {
        Some(v) if v >= 1024.0 && v.fract() == 0.0 && (v as u64).is_power_of_two() => {
            format!("2^{}", (v as u64).trailing_zeros())
        }
        _ => si(n),
    }
}

/// ✓ when the median ratio is within the goal, ✗ when not, – unmeasured.
pub fn goal_mark(ratio: Option<f64>, goal: f64) -> &'static str {
    match ratio {
        Some(r) if r <= goal => "✓",
        Some(_) => "✗",
        None => "–",
    }
}

/// One op's row: its medians and paired ratios.
#[derive(Debug, Default)]
pub struct OpRow {
    pub op: String,
    pub n: Option<f64>,
    pub loop_s: Option<f64>,
    pub pattern_s: [Option<f64>; 2],
    pub rayon_s: [Option<f64>; 2],
    /// pattern at 1 rank / the loop.
    pub vs_loop: Vec<f64>,
    /// pattern at k ranks / rayon on k threads, k = 1, 2.
    pub vs_rayon: [Vec<f64>; 2],
}

impl OpRow {
    pub fn loop_goal(&self) -> Option<&'static str> {
        LOOP_GOAL_OPS
            .contains(&self.op.as_str())
            .then(|| goal_mark(median(self.vs_loop.clone()), LOOP_GOAL))
    }

    pub fn rayon_goal(&self) -> &'static str {
        goal_mark(median(self.vs_rayon[1].clone()), RAYON_GOAL)
    }
}

/// The rows of the ops table, in `OPS` order (then any other op).
pub fn op_rows(groups: &BTreeMap<Kind, Vec<&Run>>) -> Vec<OpRow> {
    let mut ops: Vec<String> = Vec::new();
    for k in groups.keys() {
        if let Kind::Op { op, .. } = k {
            if !ops.contains(op) {
                ops.push(op.clone());
            }
        }
    }
    ops.sort_by_key(|o| OPS.iter().position(|x| x == o).unwrap_or(OPS.len()));
    let none: Vec<&Run> = Vec::new();
    ops.into_iter()
        .map(|op| {
            let at = |system: System| groups.get(&Kind::Op { op: op.clone(), system }).unwrap_or(&none);
            let (lp, p1, p2, r1, r2) = (
                at(System::Loop),
                at(System::Pattern(1)),
                at(System::Pattern(2)),
                at(System::Rayon(1)),
                at(System::Rayon(2)),
            );
            let n = [p1, lp, r1]
                .iter()
                .find_map(|rs| rs.iter().find_map(|r| r.num(&["params", "n"])));
            OpRow {
                n,
                loop_s: median_of(lp, value),
                pattern_s: [median_of(p1, value), median_of(p2, value)],
                rayon_s: [median_of(r1, value), median_of(r2, value)],
                vs_loop: paired(p1, lp),
                vs_rayon: [paired(p1, r1), paired(p2, r2)],
                op,
            }
        })
        .collect()
}

pub fn section(res: &Results, ctx: &mut Ctx) -> Option<Section> {
    let all: Vec<&Run> = res.of("patterns").collect();
    if all.is_empty() {
        return None;
    }
    // Every run, failures included, in round order: pairs go by position.
    let mut groups: BTreeMap<Kind, Vec<&Run>> = BTreeMap::new();
    for r in &all {
        if let Some(k) = kind(r) {
            groups.entry(k).or_default().push(r);
        }
    }
    let none: Vec<&Run> = Vec::new();
    let get = |k: Kind| groups.get(&k).unwrap_or(&none);
    let mut text = String::from(
        "Parallel patterns (`uat::pattern`, not in the paper) over global memory, against a plain serial \
         loop over a `Vec` on one rank and against rayon over a `Vec`, on the same pseudo-random `u64` keys; \
         the time is the operation alone (`op_s`: keys generated before, the answer checked after against a \
         serial checksum — every answer is verified). Ratios are medians of pairs run in the same round \
         (spread of the pairs in brackets); below 1 the pattern is faster. Goals: a pattern on 1 rank \
         within 1.10× of the loop for for-each-mut, map-reduce and scan; on 2 ranks no slower than rayon on \
         2 threads (✓ met, ✗ not, – not measured).\n\n",
    );

    // 1. Each op against the loop and rayon.
    let rows = op_rows(&groups);
    let mut t = Table::new(&[
        "op",
        "n",
        "loop",
        "pattern 1 rank",
        "pattern 2 ranks",
        "rayon 1 thread",
        "rayon 2 threads",
        "pattern 1 / loop",
        "≤ 1.10",
        "pattern 2 / rayon 2",
        "≤ 1.00",
        "pattern 1 / rayon 1",
    ]);
    for row in &rows {
        t.push(vec![
            row.op.clone(),
            count(row.n),
            secs(row.loop_s),
            secs(row.pattern_s[0]),
            secs(row.pattern_s[1]),
            secs(row.rayon_s[0]),
            secs(row.rayon_s[1]),
            ratio_cell(&row.vs_loop),
            row.loop_goal().unwrap_or("(no goal)").into(),
            ratio_cell(&row.vs_rayon[1]),
            row.rayon_goal().into(),
            ratio_cell(&row.vs_rayon[0]),
        ]);
    }
    if !t.is_empty() {
        text.push_str("**Each pattern against the loop and rayon** (`benches/patterns.rs`, `op_s` medians):\n\n");
        text.push_str(&t.markdown());
        text.push('\n');
    }

    // 2. heat and uts-mem from 1 to 2 ranks.
    let mut scale = Table::new(&[
        "benchmark",
        "size",
        "1 rank",
        "2 ranks",
        "speed-up 1 → 2",
        "steals (2 ranks)",
    ]);
    for b in ["heat", "uts-mem"] {
        let one = get(Kind::Mem {
            bench: b.into(),
            ranks: 1,
        });
        let two = get(Kind::Mem {
            bench: b.into(),
            ranks: 2,
        });
        if one.is_empty() && two.is_empty() {
            continue;
        }
        let sp = paired(one, two);
        scale.push(vec![
            b.into(),
            size(one.iter().chain(two).copied()),
            secs(median_of(one, value)),
            secs(median_of(two, value)),
            ratio_cell(&sp),
            fmt(median_of(two, |r| r.num(&["stats", "steals_succeeded"])), 0),
        ]);
    }
    if !scale.is_empty() {
        text.push_str(
            "\n**Global memory with real data, 1 → 2 ranks** (heat: a 5-point stencil over a grid in global \
             memory, checked bit for bit against a serial run; uts-mem: a UTS tree built node by node in \
             global memory, traversed and freed; speed-up = 1-rank time / 2-rank time, paired by round):\n\n",
        );
        text.push_str(&scale.markdown());
        text.push('\n');
    }

    // 4. Over the network, cache on against off.
    let mut cache = Table::new(&[
        "benchmark (2 ranks)",
        "path",
        "size",
        "cache on",
        "cache off",
        "off / on",
        "hit rate (on)",
        "fetched on / off (bytes)",
        "written on / off (bytes)",
    ]);
    let mut net: BTreeMap<(String, String), [Vec<&Run>; 2]> = BTreeMap::new();
    for (k, rs) in &groups {
        if let Kind::Net { bench, path, cache } = k {
            let slot = net.entry((bench.clone(), path.clone())).or_default();
            slot[usize::from(*cache == "off")] = rs.clone();
        }
    }
    for ((bench, path), [on, off]) in &net {
        let ratio = paired(off, on);
        let m = |rs: &[&Run], k: &str| median_of(rs, |r| r.num(&[k]));
        cache.push(vec![
            bench.clone(),
            path.clone(),
            size(on.iter().chain(off).copied()),
            secs(median_of(on, value)),
            secs(median_of(off, value)),
            ratio_cell(&ratio),
            fmt(m(on, "hit_rate"), 3),
            format!("{} / {}", si(m(on, "fetched_bytes")), si(m(off, "fetched_bytes"))),
            format!("{} / {}", si(m(on, "written_bytes")), si(m(off, "written_bytes"))),
        ]);
    }
    if !cache.is_empty() {
        text.push_str(
            "\n**Over the network, the software cache on and off** (other ranks' memory not mapped; \
             `UAT_CACHE=off` is one get per checkout and one put per write; medians; the hit rate is of \
             the cache's block look-ups):\n\n",
        );
        text.push_str(&cache.markdown());
        text.push('\n');
    }

    // The CSV: every run.
    let mut csv = Table::new(&[
        "id",
        "bench",
        "op",
        "system",
        "ranks",
        "hosts",
        "path",
        "cache",
        "status",
        "n",
        "time_s",
        "gbps",
        "hit_rate",
        "fetched_bytes",
        "written_bytes",
        "steals_succeeded",
        "steals_within_host",
        "steals_across_hosts",
    ]);
    for r in &all {
        let (op, system, cache) = match kind(r) {
            Some(Kind::Op { op, system }) => (
                op,
                match system {
                    System::Pattern(_) => "pattern".to_string(),
                    System::Loop => "loop".into(),
                    System::Rayon(t) => format!("rayon {t}"),
                },
                "",
            ),
            Some(Kind::Net { cache, .. }) => (String::new(), "uat".into(), cache),
            _ => (String::new(), "uat".into(), ""),
        };
        csv.push(vec![
            r.id.clone(),
            r.bench.clone(),
            op,
            system,
            r.ranks.to_string(),
            r.hosts().to_string(),
            r.conduit.clone().unwrap_or_default(),
            cache.into(),
            r.status.name().into(),
            raw(r.num(&["params", "n"])),
            raw(value(r)),
            raw(r.num(&["gbps"])),
            raw(r.num(&["hit_rate"])),
            raw(r.num(&["fetched_bytes"])),
            raw(r.num(&["written_bytes"])),
            raw(r.num(&["stats", "steals_succeeded"])),
            raw(r.num(&["stats", "steals_within_host"])),
            raw(r.num(&["stats", "steals_across_hosts"])),
        ]);
    }
    ctx.csv("patterns", &csv);

    if !rows.is_empty() {
        let groups: Vec<String> = rows.iter().map(|r| r.op.clone()).collect();
        let vs = |k: usize| rows.iter().map(|r| median(r.vs_rayon[k].clone())).collect::<Vec<_>>();
        let vs_loop: Vec<Option<f64>> = rows.iter().map(|r| median(r.vs_loop.clone())).collect();
        let img = ctx.plot("patterns", "patterns against rayon and the loop", |path| {
            let areas = plot::figure_sized(path, "Patterns over global memory against rayon and a loop", 1, 2, 1400)?;
            plot::bar_panel(
                &areas[0],
                &BarPanel {
                    title: "pattern / rayon (median of pairs; lower is better)",
                    y_desc: "× rayon",
                    groups: groups.clone(),
                    series: vec![
                        ("1 rank / 1 thread".into(), PALETTE[0], vs(0)),
                        ("2 ranks / 2 threads".into(), PALETTE[1], vs(1)),
                    ],
                    stacked: false,
                    log_y: false,
                    reference: Some((RAYON_GOAL, "rayon (goal at 2)".into())),
                    value_labels: true,
                    y_percent: false,
                },
            )?;
            plot::bar_panel(
                &areas[1],
                &BarPanel {
                    title: "pattern at 1 rank / serial loop",
                    y_desc: "× loop",
                    groups: groups.clone(),
                    series: vec![("1 rank / loop".into(), PALETTE[2], vs_loop.clone())],
                    stacked: false,
                    log_y: false,
                    reference: Some((LOOP_GOAL, "goal 1.10".into())),
                    value_labels: true,
                    y_percent: false,
                },
            )?;
            plot::finish(areas)
        });
        text.push('\n');
        text.push_str(&img);
    }
    Some(Section {
        title: "Patterns over global memory against a loop and rayon".into(),
        text,
    })
}

/// The size of a heat or uts-mem run, from its JSON line: `ROWS×COLS×ITERS`
/// or the node count.
fn size<'a>(mut runs: impl Iterator<Item = &'a Run>) -> String {
    runs.find_map(|r| {
        let o = r.output.as_ref()?;
        let n = |k: &str| o.get(k).and_then(|v| v.as_u64());
        match r.bench.as_str() {
            "heat" => Some(format!("{}×{}×{}", n("rows")?, n("cols")?, n("iters")?)),
            _ => Some(format!("{} nodes", si(n("nodes").map(|v| v as f64)))),
        }
    })
    .unwrap_or_else(|| "–".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Status;
    use serde_json::json;

    fn run(id: usize, bench: &str, args: &str, ranks: u32, out: Option<serde_json::Value>) -> Run {
        Run {
            id: format!("{id:03}"),
            experiment: "patterns".into(),
            bench: bench.into(),
            conduit: Some("smp".into()),
            mode: "native".into(),
            mechanisms: "new".into(),
            empty_check: "na".into(),
            ranks,
            args: args.into(),
            oversubscribed: false,
            env: String::new(),
            exit: if out.is_some() { 0 } else { 1 },
            status: if out.is_some() { Status::Ok } else { Status::Failed },
            wall_s: 1.0,
            output_path: String::new(),
            stderr_path: String::new(),
            output: out,
            stderr_tail: String::new(),
        }
    }

    fn op(id: usize, op: &str, ranks: u32, extra: &str, op_s: Option<f64>) -> Run {
        let (solver, threads) = if extra == "--loop" {
            ("loop", None)
        } else if let Some(t) = extra.strip_prefix("--rayon ") {
            ("rayon", Some(t.parse::<u32>().unwrap()))
        } else {
            ("pattern", None)
        };
        let out = op_s.map(|s| {
            json!({"op": op, "solver": solver, "rayon_threads": threads, "op_s": s, "time_s": 99.0,
                   "params": {"n": 1024}, "gbps": 1.0})
        });
        run(id, "patterns", &format!("--op {op} -n 1024 {extra}"), ranks, out)
    }

    #[test]
    fn runs_are_named_from_the_line_or_the_arguments() {
        let failed = run(1, "patterns", "--op scan -n 16 --rayon 2", 1, None);
        assert_eq!(
            kind(&failed),
            Some(Kind::Op {
                op: "scan".into(),
                system: System::Rayon(2)
            })
        );
        let failed = run(2, "patterns", "--op filter -n 16 --loop", 1, None);
        assert!(matches!(
            kind(&failed),
            Some(Kind::Op {
                system: System::Loop,
                ..
            })
        ));
        let ok = op(3, "sort", 2, "", Some(1.0));
        assert_eq!(
            kind(&ok),
            Some(Kind::Op {
                op: "sort".into(),
                system: System::Pattern(2)
            })
        );
        assert_eq!(kind(&run(4, "cilksort", "-n 64", 2, None)), None);
        let mut net = run(5, "heat", "--rows 8", 2, None);
        net.env = "UAT_CACHE=off".into();
        net.conduit = Some("udp --real-udp".into());
        assert_eq!(
            kind(&net),
            Some(Kind::Net {
                bench: "heat".into(),
                path: "udp --real-udp".into(),
                cache: "off"
            })
        );
        assert_eq!(kind(&run(6, "btc", "", 1, None)), None);
        assert_eq!(goal_mark(Some(1.10), LOOP_GOAL), "✓");
        assert_eq!(goal_mark(Some(1.2), LOOP_GOAL), "✗");
        assert_eq!(goal_mark(None, RAYON_GOAL), "–");
        assert_eq!(count(Some(1048576.0)), "2^20");
        assert_eq!(count(Some(65.0)), "65");
        assert_eq!(count(Some(3000.0)), "3.0 k");
    }

    #[test]
    fn ratios_are_medians_of_pairs_and_a_failed_run_drops_only_its_round() {
        let dir = std::env::temp_dir().join(format!("uat-report-patterns-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("plots")).unwrap();
        let mut runs = Vec::new();
        let mut id = 0;
        let mut next = || {
            id += 1;
            id
        };
        // Three rounds of map-reduce; rayon 2 fails in round 1.
        let rounds = [
            // (p1, p2, loop, r1, r2)
            (1.0, 0.5, 1.0, 2.0, Some(0.25)),
            (1.2, 0.6, 1.0, 2.0, None),
            (3.0, 0.5, 2.0, 2.0, Some(1.0)),
        ];
        for (p1, p2, lp, r1, r2) in rounds {
            runs.push(op(next(), "map-reduce", 1, "", Some(p1)));
            runs.push(op(next(), "map-reduce", 2, "", Some(p2)));
            runs.push(op(next(), "map-reduce", 1, "--loop", Some(lp)));
            runs.push(op(next(), "map-reduce", 1, "--rayon 1", Some(r1)));
            runs.push(op(next(), "map-reduce", 1, "--rayon 2", r2));
            // sort: no loop goal.
            runs.push(op(next(), "sort", 1, "", Some(2.0)));
            runs.push(op(next(), "sort", 1, "--loop", Some(1.0)));
            for (n, t) in [(1, 1.0), (2, 0.4)] {
                runs.push(run(
                    next(),
                    "heat",
                    "--rows 8",
                    n,
                    Some(json!({"time_s": t, "rows": 8, "cols": 8, "iters": 2})),
                ));
            }
            for (c, t, hit, fetched) in [("on", 2.0, 0.9, 1000.0), ("off", 5.0, 0.0, 3000.0)] {
                let mut r = run(
                    next(),
                    "uts-mem",
                    "-d 6",
                    2,
                    Some(
                        json!({"time_s": t, "nodes": 1000, "hit_rate": hit, "fetched_bytes": fetched,
                                "written_bytes": 8}),
                    ),
                );
                r.env = format!("UAT_CACHE={c}");
                r.conduit = Some("udp --real-udp".into());
                runs.push(r);
            }
        }
        let res = Results { meta: json!({}), runs };
        let mut groups: BTreeMap<Kind, Vec<&Run>> = BTreeMap::new();
        for r in &res.runs {
            groups.entry(kind(r).unwrap()).or_default().push(r);
        }
        let rows = op_rows(&groups);
        assert_eq!(
            rows.iter().map(|r| r.op.as_str()).collect::<Vec<_>>(),
            ["map-reduce", "sort"]
        );
        let mr = &rows[0];
        // Pairs of pattern 1 / loop: 1.0, 1.2, 1.5 -> median 1.2 (goal missed).
        assert_eq!(mr.vs_loop, vec![1.0, 1.2, 1.5]);
        assert_eq!(mr.loop_goal(), Some("✗"));
        // Pattern 2 / rayon 2: round 1 dropped, rounds 0 and 2 stay paired
        // with their own rounds: 0.5/0.25, 0.5/1.0.
        assert_eq!(mr.vs_rayon[1], vec![2.0, 0.5]);
        assert_eq!(mr.rayon_goal(), "✓"); // the lower median: 0.5
        assert_eq!(mr.vs_rayon[0], vec![0.5, 0.6, 1.5]);
        assert_eq!(rows[1].loop_goal(), None);

        let mut ctx = Ctx::new(&dir, false);
        let sec = section(&res, &mut ctx).unwrap();
        let t = &sec.text;
        assert!(t.contains("| map-reduce | 2^10 | 1.00 s | 1.20 s | 0.50 s | 2.00 s | 0.25 s | 1.20 (1.000–1.500) | ✗ | 0.50 (0.500–2.000) | ✓ | 0.60 (0.500–1.500) |"), "{t}");
        assert!(t.contains("| sort |") && t.contains("(no goal)"), "{t}");
        // heat: 1.0 -> 0.4 s, 2.50×.
        assert!(
            t.contains("| heat | 8×8×2 | 1.00 s | 0.40 s | 2.50 (2.500–2.500) |"),
            "{t}"
        );
        // uts-mem over UDP: off / on = 2.5, hit rate 0.9, bytes.
        assert!(
            t.contains("| uts-mem | udp --real-udp | 1.0 k nodes | 2.00 s | 5.00 s | 2.50 (2.500–2.500) | 0.900 | 1.0 k / 3.0 k | 8 / 8 |"),
            "{t}"
        );
        let csv = std::fs::read_to_string(dir.join("patterns.csv")).unwrap();
        assert!(
            csv.lines()
                .any(|l| l.starts_with("005,patterns,map-reduce,rayon 2,1,1,smp,,ok,1024,0.25,")),
            "{csv}"
        );
        assert!(
            csv.lines()
                .any(|l| l.contains(",uts-mem,,uat,2,1,udp --real-udp,off,ok,,5,,0,3000,8,")),
            "{csv}"
        );
        std::fs::remove_dir_all(&dir).unwrap();

        // No patterns runs: no section.
        let empty = Results {
            meta: json!({}),
            runs: Vec::new(),
        };
        assert!(section(&empty, &mut Ctx::new(&dir, false)).is_none());
    }
}
