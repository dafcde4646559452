//! The Markdown report: what ran where, the findings paragraph, then one
//! section per experiment.

use std::fmt::Write as _;

use crate::data::Results;
use crate::scaling::{bench_title, Scaling, BENCHES};
use crate::section::{Ctx, Section};
use crate::table::Table;

pub fn render(res: &Results, s: &Scaling<'_>, summary: &Table, sections: &[Section], ctx: &Ctx) -> String {
    let mut md = String::new();
    let m = |k: &str| res.meta_str(k);
    let _ = writeln!(md, "# Uni-address threads: reproducing the IPSJ JIP 2016 experiments\n");
    let _ = writeln!(
        md,
        "Run of {} on `{}` ({}, {} cores), commit `{}`, conduit `{}`; modes {}; ranks {}; {} repetition(s) \
         per scaling point. Inputs: BTC {}, UTS `{}`, NQueens {}.{}\n",
        m("date"),
        m("host"),
        m("cpu"),
        m("cores"),
        m("commit"),
        m("conduit"),
        m("modes"),
        m("ranks"),
        m("reps"),
        crate::scaling::size_of(res, "btc"),
        crate::scaling::size_of(res, "uts"),
        crate::scaling::size_of(res, "nqueens"),
        if res.meta.get("quick").and_then(|v| v.as_bool()) == Some(true) {
            " **Quick mode: tiny inputs, a test of the pipeline, not a measurement.**"
        } else {
            ""
        }
    );
    if let Some(cmd) = res.meta.get("command").and_then(|v| v.as_str()) {
        let _ = writeln!(md, "Command: `{cmd}`\n");
    }
    if let Some(d) = duration(res) {
        let _ = writeln!(md, "{d}\n");
    }
    let _ = writeln!(md, "{}\n", run_summary(res));
    let _ = writeln!(md, "## Findings\n\n{}\n", findings(res, s));
    if !summary.is_empty() {
        let _ = writeln!(
            md,
            "## Summary\n\nPer benchmark and configuration: time on one rank and on the largest rank count \
             run, speed-up and efficiency between them, successful steals and the AM handler share there. \
             † = oversubscribed.\n\n{}",
            summary.markdown()
        );
    }
    for sec in sections {
        let _ = writeln!(md, "## {}\n\n{}", sec.title, sec.text);
    }
    let _ = writeln!(md, "## Verification\n\n{}\n", verification(res));
    let _ = writeln!(
        md,
        "## Files\n\n`runs.jsonl` (one record per run, with the benchmark's JSON line), `meta.json`, \
         `logs.tar.xz` (each run's stdout and stderr: `logs/` while the script runs, packed at its end), CSV: {}; \
         plots: {}.\n",
        ctx.csvs.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", "),
        ctx.plots
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if !ctx.warnings.is_empty() {
        let _ = writeln!(md, "## Warnings\n");
        for w in &ctx.warnings {
            let _ = writeln!(md, "- {w}");
        }
    }
    md
}

/// "12 min 5 s", "41 s".
fn minutes(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, sec) => format!("{sec} s"),
        (0, min, sec) => format!("{min} min {sec} s"),
        (h, min, sec) => format!("{h} h {min} min {sec} s"),
    }
}

/// The reproduction's own duration, as its script measured it: from its
/// start (`started_unix`, before building) through the first run
/// (`runs_started_unix`) to the end of the last (`finished_unix`); None
/// for results directories that predate the stamps.
pub fn duration(res: &Results) -> Option<String> {
    let at = |k: &str| res.meta.get(k).and_then(serde_json::Value::as_f64);
    let (runs_started, finished) = (at("runs_started_unix")?, at("finished_unix")?);
    let n = res.runs.len();
    let runs = format!("{n} run{}", if n == 1 { "" } else { "s" });
    Some(match at("started_unix") {
        Some(started) => format!(
            "Duration: {runs} in {} (building {}, running {}), measured by the script from its start to the \
             end of its last run; the report is not counted.",
            minutes(finished - started),
            minutes(runs_started - started),
            minutes(finished - runs_started)
        ),
        None => format!(
            "Duration: {runs} in {}, measured from the first run to the end of the last.",
            minutes(finished - runs_started)
        ),
    })
}

/// How many runs there were and how each that is not fine ended.
pub fn run_summary(res: &Results) -> String {
    let total = res.runs.len();
    let bad: Vec<_> = res.runs.iter().filter(|r| !r.status.usable()).collect();
    if bad.is_empty() {
        return format!("{total} runs, every one finished with a verified answer (or is the UTS count itself).");
    }
    let mut s = format!(
        "{total} runs; **{} did not finish with a verified answer** (they stay in every table, marked):\n\n",
        bad.len()
    );
    for r in bad {
        let _ = writeln!(
            s,
            "- run {} — {} {} `{}`, {}, empty check {}, {}: **{}** (exit {}){}",
            r.id,
            r.experiment,
            r.bench,
            r.args,
            r.mode,
            r.empty_check,
            r.shape(),
            r.status.name(),
            r.exit,
            if r.stderr_tail.is_empty() {
                String::new()
            } else {
                format!(": `{}`", r.stderr_tail.replace('`', "'"))
            }
        );
    }
    s
}

fn verification(res: &Results) -> String {
    let mut s = String::from(
        "Every run checks its own answer: BTC against 2^(depth+1) − 1 tasks, NQueens against the \
         known solution counts (OEIS A000170), and the micro-benchmarks their counters. ",
    );
    let uts = res.meta_str("uts_args");
    match res.of("verify").next() {
        Some(r) if r.status.usable() => {
            let _ = write!(
                s,
                "UTS trees of the paper's family (`{uts}`) have no published node counts: this run counted \
                 the tree once with `--seq` (run {}: {} nodes), cached it in `results/cache/`, and checked \
                 every parallel and serial UTS run against it (`--expect-nodes`).",
                r.id,
                r.num(&["result"]).map(|x| x as u64).unwrap_or(0)
            );
        }
        Some(r) => {
            let _ = write!(
                s,
                "UTS trees of the paper's family (`{uts}`) have no published node counts, and counting this one \
                 with `--seq` failed (run {}), so the UTS runs are **unverified**.",
                r.id
            );
        }
        None => {
            let _ = write!(
                s,
                "UTS trees of the paper's family (`{uts}`) have no published node counts: the count came from \
                 an earlier `--seq` run of the same tree, cached in `results/cache/`, and every UTS run here \
                 was checked against it (`--expect-nodes`)."
            );
        }
    }
    s
}

/// The findings paragraph: is the paper's finding (AM-based
/// degrades, RDMA-emulated holds) reproduced at this scale, and why.
pub fn findings(res: &Results, s: &Scaling<'_>) -> String {
    if s.configs.is_empty() {
        return "No scaling runs in this result (`--experiments` without `scaling`): nothing to compare \
                with the paper's Fig. 14."
            .into();
    }
    let cores = res.meta_u64("cores").unwrap_or(0);
    let max_ranks = *s.ranks.last().unwrap_or(&1);
    let benches: Vec<&str> = BENCHES
        .iter()
        .copied()
        .filter(|b| s.configs.iter().any(|c| s.max_ranks(b, c).is_some()))
        .collect();
    // (rank count, efficiency) at the largest non-oversubscribed multi-rank run.
    let eff_at = |b: &str, c: &str| -> Option<(u32, f64)> {
        let n = s
            .ranks
            .iter()
            .rev()
            .copied()
            .find(|&n| n > 1 && s.median(b, c, n).is_some_and(|r| !r.oversubscribed))?;
        Some((n, s.speedup(b, c, n)?.1))
    };
    let mut per_bench = Vec::new();
    let mut gaps = Vec::new();
    let mut am_share = Vec::new();
    let mut ratios = Vec::new();
    for b in &benches {
        let mut parts = Vec::new();
        for c in ["am, EC off", "am, EC on", "rdma-emulated, EC on", "native"] {
            if let Some((n, e)) = eff_at(b, c) {
                parts.push(format!("{c} {:.0}% at {n} ranks", e * 100.0));
            }
        }
        // The efficiency gap at the largest rank count both modes ran.
        let am = if s.configs.iter().any(|c| c == "am, EC off") {
            "am, EC off"
        } else {
            "am, EC on"
        };
        let common = s.ranks.iter().rev().copied().find(|&n| {
            n > 1
                && [am, "rdma-emulated, EC on"]
                    .iter()
                    .all(|c| s.median(b, c, n).is_some_and(|r| !r.oversubscribed))
        });
        if let Some(n) = common {
            if let (Some(a), Some(r)) = (s.speedup(b, am, n), s.speedup(b, "rdma-emulated, EC on", n)) {
                gaps.push((bench_title(b), r.1 - a.1, n));
            }
        }
        // Absolute: am's time over rdma-emulated's, where both ran.
        let both = s.ranks.iter().rev().copied().find(|&n| {
            ["am, EC on", "rdma-emulated, EC on"]
                .iter()
                .all(|c| s.median(b, c, n).is_some_and(|r| !r.oversubscribed))
        });
        if let Some(n) = both {
            if let (Some(ta), Some(tr)) = (s.time(b, "am, EC on", n), s.time(b, "rdma-emulated, EC on", n)) {
                let paper = crate::paper::table4(b).and_then(|(_, _, t)| Some(t[2]? / t[0]?));
                ratios.push(format!(
                    "{} {:.2}× at {n} rank{}{}",
                    bench_title(b),
                    ta / tr,
                    if n == 1 { "" } else { "s" },
                    paper.map(|x| format!(" (paper {x:.2}×)")).unwrap_or_default()
                ));
            }
        }
        if let Some(n) = s.max_ranks(b, "am, EC on") {
            if let Some(x) = s.median(b, "am, EC on", n).and_then(Scaling::msg_share) {
                am_share.push(format!("{} {x:.1}%", bench_title(b)));
            }
        }
        if !parts.is_empty() {
            per_bench.push(format!("{}: {}", bench_title(b), parts.join(", ")));
        }
    }
    let mut p = String::from(
        "The paper's finding: with the AM-based fetch-and-add a victim answers a thief's lock request \
         only when it next polls (at a spawn), so as thieves multiply, steals wait and victims spend a \
         large share of their time in handlers (25–63% at 1,800 cores, Fig. 16); efficiency from 225 to \
         1,800 cores falls to 47% (BTC) and 77% (UTS), while the RDMA-emulated fetch-and-add, answered \
         by a polling thread, holds 98–99%. ",
    );
    let _ = write!(
        p,
        "Here, on {cores} cores with up to {max_ranks} ranks, parallel efficiency (vs one rank) was: "
    );
    p.push_str(&if per_bench.is_empty() {
        "not measurable (no multi-rank run succeeded)".into()
    } else {
        per_bench.join("; ")
    });
    p.push_str(". ");
    if let Some(noise) = s.noise().filter(|&n| n > 0.05) {
        let _ = write!(
            p,
            "(Repetitions of one cell differed by up to {:.0}% of their median here, so differences \
             smaller than that — efficiencies above 100% among them — are noise.) ",
            noise * 100.0
        );
    }
    if !am_share.is_empty() {
        let _ = write!(
            p,
            "In `am` mode the polls at spawn (handlers included) took {} of the rank-time at the largest run, \
             most of it the poll's own cost, paid at one rank as well. ",
            am_share.join(", ")
        );
    }
    if !ratios.is_empty() {
        let _ = write!(
            p,
            "In absolute terms `am` (empty check on) took {} the `rdma-emulated` time at the largest rank count \
             both ran — the paper's Table 4 ratios at 1,800 cores in parentheses; at small scale this is the cost \
             of polling at every spawn (Table 2), not of stealing. ",
            ratios.join(", ")
        );
    }
    // The mechanism: the victim's slowdown at the largest rank count run.
    let fad: Vec<_> = res.of("fad").filter(|r| r.status.usable()).collect();
    if let Some(n) = fad.iter().map(|r| r.ranks).max() {
        let parts: Vec<String> = fad
            .iter()
            .filter(|r| r.ranks == n)
            .filter_map(|r| {
                let x = r.num(&["victim_busy_s", "slowdown"])?;
                Some(format!(
                    "{x:.2}× in `{}`{}",
                    r.mode,
                    if r.oversubscribed { " (oversubscribed)" } else { "" }
                ))
            })
            .collect();
        if !parts.is_empty() {
            let _ = write!(
                p,
                "The mechanism itself (`micro fad`): a victim computing while {} other rank{} fetch-and-added on \
                 it slowed {}. ",
                n - 1,
                if n == 2 { "" } else { "s" },
                parts.join(", ")
            );
        }
    }
    // Fig. 11's effect, where a run had a network path.
    let net = res.of("latency").find(|r| {
        r.status.usable()
            && r.output
                .as_ref()
                .and_then(|o| o.get("fad_path"))
                .and_then(|v| v.as_str())
                == Some("active-messages")
            && r.num(&["latency_us", "get"]).is_some_and(|g| g > 1.0)
    });
    if let Some(r) = net {
        let up = |k: &str| {
            Some(100.0 * (r.num(&["latency_us", &format!("{k}_with_poller")])? / r.num(&["latency_us", k])? - 1.0))
        };
        if let (Some(g), Some(pu)) = (up("get"), up("put")) {
            let _ = write!(
                p,
                "Over a network path ({}) polling threads raised get/put latency by {g:+.0}% / {pu:+.0}% \
                 (paper: {:+.0}% / {:+.0}% over InfiniBand){}. ",
                r.conduit.as_deref().unwrap_or("?").replace(" --real-udp", ", real UDP"),
                100.0 * (crate::paper::LATENCY_CYCLES[2] / crate::paper::LATENCY_CYCLES[0] - 1.0),
                100.0 * (crate::paper::LATENCY_CYCLES[3] / crate::paper::LATENCY_CYCLES[1] - 1.0),
                if r.oversubscribed {
                    "; the pollers shared cores with the ranks here"
                } else {
                    ""
                }
            );
        }
    }
    let rdma_ranks = BENCHES
        .iter()
        .filter_map(|b| eff_at(b, "rdma-emulated, EC on").map(|x| x.0))
        .max()
        .unwrap_or(1);
    let small = max_ranks < 16 || rdma_ranks < 4;
    let clear_gap = gaps.iter().any(|g| g.1 > 0.10);
    if small && !clear_gap {
        let _ = write!(
            p,
            "**The finding is not reproduced at this scale, and is not expected to be.** With {max_ranks} \
             ranks a victim has at most {} thie{}, and a lock request crosses shared memory in about half \
             a microsecond instead of an InfiniBand round trip of several microseconds, so even a victim \
             that answers only at its next spawn delays thieves by little and spends little time in \
             handlers. ",
            max_ranks.saturating_sub(1),
            if max_ranks == 2 { "f" } else { "ves" }
        );
        if rdma_ranks < 2 {
            let _ = write!(
                p,
                "Nor can the two modes be compared like for like: an `rdma-emulated` rank needs a second core \
                 for its polling thread, so on {cores} cores it ran on one rank only (`--oversubscribe` runs it \
                 further, labelled, but then the poller and the worker share a core and the comparison \
                 measures the OS scheduler). "
            );
        }
        p.push_str(
            "What would be needed: many ranks contending for few victims over a network — the paper's gap \
             opens between 225 and 1,800 cores on InfiniBand (`scripts/reproduce.sh --conduit ibv \
             --launcher gasnetrun_ibv` on a cluster). On one 16-core node the mechanism already shows in \
             the fetch-and-add micro-benchmark: a victim computing under 15 hammering ranks slowed 1.76× \
             in `am` mode and not at all in `rdma-emulated` mode \
             (`docs/results/2026-11-22-xeon16-scaling/`).",
        );
    } else if clear_gap {
        let g: Vec<String> = gaps
            .iter()
            .map(|(b, d, n)| format!("{b} {:+.0} points at {n} ranks", d * 100.0))
            .collect();
        let _ = write!(
            p,
            "**The direction of the finding is reproduced**: RDMA-emulated keeps more efficiency than AM \
             without the empty check ({}). At this scale the gap is smaller than the paper's because \
             requests cross shared memory, not a network.",
            g.join(", ")
        );
    } else {
        let _ = write!(
            p,
            "**The finding is not reproduced here**: both modes hold their efficiency (`am` to {max_ranks} \
             ranks, `rdma-emulated` to {rdma_ranks}; differences under 10 points where both ran). Requests crossing shared memory cost too little for the \
             victim's late answers to matter; the paper's effect needs more thieves per victim and a \
             network (225–1,800 cores over InfiniBand)."
        );
    }
    p
}

/// Exit status of the tool: 0 unless the report itself is incomplete.
pub fn complete(ctx: &Ctx) -> bool {
    ctx.warnings.is_empty()
}
