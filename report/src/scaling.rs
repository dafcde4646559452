//! The benchmark sections: Fig. 12 (overhead against the serial elision),
//! Table 4 and Fig. 14 (strong scaling), Fig. 15 (steals), Fig. 16 (time
//! handling messages at spawn) and Table 4's stack column.

use std::collections::BTreeMap;

use crate::data::{config_name, median_run, shape, Results, Run};
use crate::paper;
use crate::plot::{self, BarPanel, Line, LinePanel, PALETTE};
use crate::section::{Ctx, Section};
use crate::table::{fmt, raw, secs, si, thousands, Table};

pub const BENCHES: [&str; 3] = ["btc", "uts", "nqueens"];
const CONFIG_ORDER: [&str; 5] = [
    "native",
    "am, EC on",
    "am, EC off",
    "rdma-emulated, EC on",
    "rdma-emulated, EC off",
];

pub fn bench_title(b: &str) -> &'static str {
    match b {
        "btc" => "BTC",
        "uts" => "UTS",
        "nqueens" => "NQueens",
        _ => "?",
    }
}

fn unit(b: &str) -> &'static str {
    match b {
        "btc" => "tasks/s",
        "uts" => "nodes/s",
        _ => "solutions/s",
    }
}

/// The scaling runs, by (benchmark, configuration, ranks).
pub struct Scaling<'a> {
    pub configs: Vec<String>,
    pub ranks: Vec<u32>,
    cells: BTreeMap<(String, String, u32), Vec<&'a Run>>,
    seq: BTreeMap<(String, String), Vec<&'a Run>>,
    /// rayon's and the child models' `--vs-seq` runs, by (bench, peer).
    seq_peers: BTreeMap<(String, String), Vec<&'a Run>>,
}

impl<'a> Scaling<'a> {
    pub fn new(res: &'a Results) -> Scaling<'a> {
        let mut cells: BTreeMap<(String, String, u32), Vec<&Run>> = BTreeMap::new();
        let mut configs = Vec::new();
        let mut ranks = Vec::new();
        for r in res.of("scaling") {
            let c = r.config();
            if !configs.contains(&c) {
                configs.push(c.clone());
            }
            if !ranks.contains(&r.ranks) {
                ranks.push(r.ranks);
            }
            cells.entry((r.bench.clone(), c, r.ranks)).or_default().push(r);
        }
        configs.sort_by_key(|c| CONFIG_ORDER.iter().position(|o| o == c).unwrap_or(99));
        ranks.sort_unstable();
        let (mut seq, mut seq_peers): (BTreeMap<_, Vec<&Run>>, BTreeMap<_, Vec<&Run>>) = Default::default();
        for r in res.of("seq") {
            match r.peer() {
                Some(p) => seq_peers.entry((r.bench.clone(), p)).or_default().push(r),
                None => seq.entry((r.bench.clone(), r.mode.clone())).or_default().push(r),
            }
        }
        Scaling {
            configs,
            ranks,
            cells,
            seq,
            seq_peers,
        }
    }

    pub fn runs(&self, b: &str, c: &str, n: u32) -> &[&'a Run] {
        self.cells
            .get(&(b.to_string(), c.to_string(), n))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The largest spread of repeated runs of one cell, (max − min) /
    /// median: this machine's run-to-run noise, to read differences by.
    pub fn noise(&self) -> Option<f64> {
        self.cells
            .values()
            .filter_map(|runs| {
                let t: Vec<f64> = runs
                    .iter()
                    .filter(|r| r.status.usable())
                    .filter_map(|r| r.time_s())
                    .collect();
                if t.len() < 2 {
                    return None;
                }
                let (lo, hi) = t.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
                Some((hi - lo) / median_run(runs)?.time_s()?)
            })
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
    }

    /// The median run of a cell (None: not run, or no usable run).
    pub fn median(&self, b: &str, c: &str, n: u32) -> Option<&'a Run> {
        median_run(self.runs(b, c, n))
    }

    pub fn time(&self, b: &str, c: &str, n: u32) -> Option<f64> {
        self.median(b, c, n)?.time_s()
    }

    /// Speed-up over the same configuration's smallest rank count, and
    /// parallel efficiency (speed-up per rank, relative to that count).
    pub fn speedup(&self, b: &str, c: &str, n: u32) -> Option<(f64, f64)> {
        let base = *self.ranks.iter().find(|&&m| self.time(b, c, m).is_some())?;
        let t0 = self.time(b, c, base)?;
        let t = self.time(b, c, n)?;
        let s = t0 / t;
        Some((s, s * base as f64 / n as f64))
    }

    /// The largest rank count with a usable run of this configuration.
    pub fn max_ranks(&self, b: &str, c: &str) -> Option<u32> {
        self.ranks
            .iter()
            .rev()
            .copied()
            .find(|&n| self.median(b, c, n).is_some())
    }

    /// The host counts the runs on `n` ranks had, ascending: one, unless
    /// a results directory mixes shapes (a cell is keyed by its rank count,
    /// so its median is then over all of them). Runs that printed no line
    /// do not say how many hosts they had, so they are not counted.
    fn hosts_at(&self, n: u32) -> Vec<u32> {
        let mut hosts: Vec<u32> = self
            .cells
            .iter()
            .filter(|(k, _)| k.2 == n)
            .flat_map(|(_, runs)| runs.iter().filter(|r| r.output.is_some()).map(|r| r.hosts()))
            .collect();
        hosts.sort_unstable();
        hosts.dedup();
        hosts
    }

    /// A rank count's column name: "4 ranks", "4 ranks on 2 hosts", or
    /// "4 ranks on 1 or 2 hosts" where its runs differ.
    pub fn shape_at(&self, n: u32) -> String {
        match self.hosts_at(n).as_slice() {
            [] => shape(n, 1),
            [h] => shape(n, *h),
            [first @ .., last] => {
                let first: Vec<String> = first.iter().map(u32::to_string).collect();
                format!("{} on {} or {last} hosts", shape(n, 1), first.join(", "))
            }
        }
    }

    /// Whether some rank count's runs ran on different numbers of hosts.
    fn mixed_hosts(&self) -> bool {
        self.ranks.iter().any(|&n| self.hosts_at(n).len() > 1)
    }

    /// The serial elision's run of a benchmark in a mode (the median).
    pub fn seq_run(&self, b: &str, mode: &str) -> Option<&'a Run> {
        median_run(self.seq.get(&(b.to_string(), mode.to_string()))?)
    }

    /// Fig. 12 for one benchmark and mode: (serial time, one-rank time,
    /// their ratio, the median of the rounds' ratios). From one `--vs-seq`
    /// run where there is one (both times paired in one process), else
    /// from the `--seq` run and the one-rank scaling runs (medians).
    pub fn one_rank_vs_seq(&self, b: &str, mode: &str, par_config: &str) -> [Option<f64>; 4] {
        let run = self.seq_run(b, mode);
        if let Some(paired) = run.and_then(paired_vs_seq) {
            return paired;
        }
        let seq = run.and_then(Run::time_s);
        let par = self.time(b, par_config, 1);
        [seq, par, seq.zip(par).map(|(a, p)| p / a), None]
    }

    /// Fig. 12 for rayon or a child model, by its label
    /// ([`Run::peer`]): the same four numbers from its `--vs-seq` run.
    pub fn peer_vs_seq(&self, b: &str, peer: &str) -> Option<[Option<f64>; 4]> {
        paired_vs_seq(median_run(self.seq_peers.get(&(b.to_string(), peer.to_string()))?)?)
    }

    /// The peers measured against the serial elision, in the report's
    /// order (rayon first, then the floor: the frame model, the call).
    pub fn seq_peers(&self) -> Vec<String> {
        let mut p: Vec<String> = self.seq_peers.keys().map(|k| k.1.clone()).collect();
        p.sort_by_key(|x| (!x.starts_with("rayon"), !x.starts_with("frame"), x.clone()));
        p.dedup();
        p
    }

    /// Share of the run's processor time spent in fetch-and-add handlers
    /// (AM mode: handled at spawn), percent.
    pub fn msg_share(r: &Run) -> Option<f64> {
        let h = r.num(&["stats", "msg_handling_s"])?;
        let t = r.time_s()?;
        Some(100.0 * h / (t * r.ranks as f64).max(1e-12))
    }

    /// A cell as Table 4 shows it: time, efficiency, and what went wrong.
    fn cell_text(&self, b: &str, c: &str, n: u32) -> String {
        let runs = self.runs(b, c, n);
        if runs.is_empty() {
            return "–".into();
        }
        let bad = runs.iter().filter(|r| !r.status.usable()).count();
        let mut s = match (self.time(b, c, n), self.speedup(b, c, n)) {
            (Some(t), Some((_, e))) if n > 1 => format!("{} ({:.0}%)", secs(Some(t)), e * 100.0),
            (Some(t), _) => secs(Some(t)),
            _ => String::new(),
        };
        if runs.iter().any(|r| r.oversubscribed) {
            s.push_str(" †");
        }
        if bad > 0 {
            let what = runs.iter().find(|r| !r.status.usable()).unwrap().status.name();
            s = format!("{s} {what} ×{bad}").trim().to_string();
        }
        s
    }
}

/// Where a time was measured, after it: `@4`, or `@4 on 2 hosts` when the
/// run (the cell's median) had several.
fn at(n: u32, run: Option<&Run>) -> String {
    match run.map(Run::hosts) {
        Some(h) if h > 1 => format!("@{n} on {h} hosts"),
        _ => format!("@{n}"),
    }
}

/// (serial time, the run's time, their ratio, the median of the rounds'
/// ratios) of a `--vs-seq` run: both times paired in one process.
fn paired_vs_seq(r: &Run) -> Option<[Option<f64>; 4]> {
    r.num(&["vs_seq", "ratio"])?;
    Some([
        r.num(&["vs_seq", "seq_time_s"]),
        r.time_s(),
        r.num(&["vs_seq", "ratio"]),
        r.num(&["vs_seq", "ratio_median"]),
    ])
}

/// Every benchmark run, one CSV row each (repetitions, failures, serial
/// elisions and the UTS count included).
pub fn csv(res: &Results, ctx: &mut Ctx) {
    let mut t = Table::new(&[
        "id",
        "experiment",
        "bench",
        "args",
        "mode",
        "empty_check",
        "ranks",
        "hosts",
        "rank_hosts",
        "oversubscribed",
        "status",
        "exit",
        "result",
        "expected",
        "time_s",
        "throughput",
        "spawns",
        "steals_attempted",
        "steals_succeeded",
        "steals_within_host",
        "steals_across_hosts",
        "empty_check_aborts",
        "claim_failures",
        "frame_bytes_stolen",
        "max_stack_bytes",
        "msg_handling_s",
        "msg_share_pct",
        "wall_s",
    ]);
    for r in res
        .runs
        .iter()
        .filter(|r| matches!(r.experiment.as_str(), "scaling" | "seq" | "verify"))
    {
        let st = |k: &str| raw(r.num(&["stats", k]));
        t.push(vec![
            r.id.clone(),
            r.experiment.clone(),
            r.bench.clone(),
            r.args.clone(),
            r.mode.clone(),
            r.empty_check.clone(),
            r.ranks.to_string(),
            r.hosts().to_string(),
            r.rank_hosts(),
            r.oversubscribed.to_string(),
            r.status.name().into(),
            r.exit.to_string(),
            raw(r.num(&["result"])),
            raw(r.num(&["expected"])),
            raw(r.time_s()),
            raw(r.num(&["throughput"])),
            st("spawns"),
            st("steals_attempted"),
            st("steals_succeeded"),
            st("steals_within_host"),
            st("steals_across_hosts"),
            st("empty_check_aborts"),
            st("claim_failures"),
            st("frame_bytes_stolen"),
            st("max_stack_bytes"),
            st("msg_handling_s"),
            raw(Scaling::msg_share(r)),
            format!("{:.3}", r.wall_s),
        ]);
    }
    ctx.csv("scaling", &t);
}

/// The benchmarks with scaling or serial runs, in the report's order.
fn present_benches(res: &Results) -> Vec<&'static str> {
    BENCHES
        .iter()
        .copied()
        .filter(|b| {
            res.runs
                .iter()
                .any(|r| r.bench == *b && (r.experiment == "scaling" || r.experiment == "seq"))
        })
        .collect()
}

pub fn size_of(res: &Results, b: &str) -> String {
    // The runs' own parameters first (imported results have no sizes in
    // meta.json), the driver's options otherwise.
    let params = res
        .runs
        .iter()
        .filter(|r| r.bench == b && (r.experiment == "scaling" || r.experiment == "seq"))
        .find_map(|r| r.output.as_ref()?.get("params").cloned());
    let p = |k: &str| params.as_ref().and_then(|v| v.get(k)).and_then(|v| v.as_f64());
    match b {
        "btc" => format!(
            "depth {}",
            p("depth").map(|d| d.to_string()).unwrap_or(res.meta_str("btc_depth"))
        ),
        "uts" => match (p("t"), p("b"), p("r"), p("a"), p("d")) {
            (Some(t), Some(br), Some(r), Some(a), Some(d)) => format!("-t {t} -b {br} -r {r} -a {a} -d {d}"),
            _ => res.meta_str("uts_args"),
        },
        _ => format!(
            "N = {}",
            p("n").map(|n| n.to_string()).unwrap_or(res.meta_str("nqueens"))
        ),
    }
}

/// Fig. 12: each mode's one-rank run against the serial elision.
pub fn overhead(res: &Results, s: &Scaling<'_>, ctx: &mut Ctx) -> Option<Section> {
    if s.seq.is_empty() {
        return None;
    }
    let benches = present_benches(res);
    let modes: Vec<String> = ["native", "am", "rdma-emulated"]
        .iter()
        .filter(|m| s.seq.keys().any(|k| k.1 == **m))
        .map(|m| m.to_string())
        .collect();
    let par_config = |m: &str| config_name(m, if m == "native" { "na" } else { "on" });
    let mut md = Table::new(&[
        "benchmark",
        "size",
        "mode",
        "serial",
        "1 rank",
        "relative time",
        "median of rounds",
    ]);
    let mut rel: Vec<(String, plotters::style::RGBColor, Vec<Option<f64>>)> = Vec::new();
    let times = |r: Option<f64>| fmt(r, 2) + if r.is_some() { "×" } else { "" };
    for m in &modes {
        let mut v = Vec::new();
        for b in &benches {
            let [seq, par, r, median] = s.one_rank_vs_seq(b, m, &par_config(m));
            md.push(vec![
                bench_title(b).into(),
                size_of(res, b),
                m.clone(),
                secs(seq),
                secs(par),
                times(r),
                times(median),
            ]);
            v.push(r);
        }
        rel.push((m.clone(), plot::config_color(m), v));
    }
    // Beside ours: rayon on one thread, and the floor of a
    // child-first spawn (a child with no runtime).
    for p in s.seq_peers() {
        let mut v = Vec::new();
        for b in &benches {
            let [seq, par, r, median] = s.peer_vs_seq(b, &p).unwrap_or_default();
            md.push(vec![
                bench_title(b).into(),
                size_of(res, b),
                if p.starts_with("rayon") {
                    p.clone()
                } else {
                    format!("floor: {p} (no runtime)")
                },
                secs(seq),
                secs(par),
                times(r),
                times(median),
            ]);
            v.push(r);
        }
        rel.push((p.clone(), plot::config_color(&p), v));
    }
    let groups: Vec<String> = benches.iter().map(|b| bench_title(b).to_string()).collect();
    // rayon's BTC (two scope spawns per task) can be tens of times the
    // serial time: on a linear axis every other bar would be flat.
    let log_y = rel.iter().flat_map(|s| s.2.iter().flatten()).any(|&r| r > 10.0);
    let img = ctx.plot("overhead", "relative time to the serial elision", |path| {
        let areas = plot::figure(path, "Fig. 12: one rank, relative to the serial elision (--seq)", 1, 1)?;
        plot::bar_panel(
            &areas[0],
            &BarPanel {
                title: "time / serial time (lower is better)",
                y_desc: "relative time",
                groups,
                series: rel,
                stacked: false,
                log_y,
                reference: Some((1.0, "serial elision".into())),
                value_labels: true,
                y_percent: false,
            },
        )?;
        plot::finish(areas)
    });
    let paired = benches.iter().any(|b| {
        modes
            .iter()
            .any(|m| s.one_rank_vs_seq(b, m, &par_config(m))[3].is_some())
    });
    let how = if paired {
        " — measured in one process (`--vs-seq R`: R rounds of a parallel run then a serial one, \
         every answer checked; the fastest of each, and the median of the rounds' ratios), so that \
         a noisy host slows both alike"
    } else {
        " (separate runs: the median `--seq` run against the median one-rank run)"
    };
    let peers = if s.seq_peers().is_empty() {
        " rayon and the floor were not measured in this run (no `--rayon 1` or `--model-child` rows)."
    } else {
        " Beside ours, paired the same way: rayon with one thread (`--rayon 1`, the same kernel under \
         `rayon::join`/`scope`), and the floor under any child-first runtime, the serial elision with each \
         child through a model with no runtime (`--model-child`: `frame`, the child in a frame of its own \
         with a copy of its closure, in a panic guard; `call`, the closure passed by value to an \
         out-of-line function)."
    };
    let text = format!(
        "Each benchmark on one rank (empty check on) against its serial elision — the same code \
         with `spawn`/`join` replaced by calls, in the same binary{how}. The paper (Fig. 12, {}) found \
         RDMA-emulated within 1.16× of MassiveThreads; the difference between modes here is the \
         spawn path (Table 2). BTC does no work besides creating tasks, so its ratio is the cost of \
         a spawn+join over a function call that the compiler can flatten; UTS (SHA-1 per node) and \
         NQueens show what real work leaves of it.{peers}\n\n{}\n{}",
        paper::FIG12_SIZES,
        md.markdown(),
        img
    );
    Some(Section {
        title: "Fig. 12 — overhead against the serial program".into(),
        text,
    })
}

/// Table 4 and Fig. 14: strong scaling.
pub fn scaling(res: &Results, s: &Scaling<'_>, ctx: &mut Ctx) -> Option<Section> {
    if s.configs.is_empty() {
        return None;
    }
    let benches = present_benches(res);
    let mut text = String::from(
        "Strong scaling: the same input on every rank count; time is the median of the \
         repetitions, efficiency is the speed-up per rank relative to the configuration's \
         smallest rank count (in parentheses). † = oversubscribed (more spinning threads than \
         cores). A cell that failed or computed a wrong answer says so; `–` = not run (an \
         `rdma-emulated` run needs a core for its polling thread).\n\n",
    );
    if s.mixed_hosts() {
        text.push_str(
            "A rank count whose runs ran on different numbers of hosts (`cargo uat run --hosts`) is one \
             column: its time is the median over all of them.\n\n",
        );
    }
    for b in &benches {
        let mut headers = vec!["configuration".to_string()];
        headers.extend(s.ranks.iter().map(|&n| s.shape_at(n)));
        let mut t = Table::new(&headers);
        for c in &s.configs {
            let mut row = vec![c.clone()];
            row.extend(s.ranks.iter().map(|&n| s.cell_text(b, c, n)));
            t.push(row);
        }
        text.push_str(&format!(
            "**{}** ({}):\n\n{}\n",
            bench_title(b),
            size_of(res, b),
            t.markdown()
        ));
    }
    // Table 4 side by side with the paper.
    let mut t4 = Table::new(&[
        "benchmark",
        "size",
        "max stack (B)",
        "RDMA-emu EC on",
        "EC off",
        "AM EC on",
        "EC off",
        "native",
    ]);
    let at_max = |b: &str, c: &str| -> String {
        match s.max_ranks(b, c) {
            Some(n) => format!("{} {}", secs(s.time(b, c, n)), at(n, s.median(b, c, n))),
            None => "–".into(),
        }
    };
    for b in &benches {
        let stack = res
            .runs
            .iter()
            .filter(|r| r.bench == *b && r.status.usable())
            .filter_map(|r| r.num(&["stats", "max_stack_bytes"]))
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
        t4.push(vec![
            bench_title(b).into(),
            size_of(res, b),
            stack.map(|x| thousands(x as u64)).unwrap_or("–".into()),
            at_max(b, "rdma-emulated, EC on"),
            at_max(b, "rdma-emulated, EC off"),
            at_max(b, "am, EC on"),
            at_max(b, "am, EC off"),
            at_max(b, "native"),
        ]);
        if let Some((size, stack, times)) = paper::table4(b) {
            let mut row = vec![format!("paper, {}", bench_title(b)), size.into(), thousands(stack)];
            row.extend(
                times
                    .iter()
                    .map(|t| t.map(|x| format!("{x:.1} s @1800")).unwrap_or("–".into())),
            );
            row.push("–".into());
            t4.push(row);
        }
    }
    text.push_str(&format!(
        "**Table 4 at this scale** (our times at each configuration's largest rank count, `@n`; \
         the paper's at 1,800 cores; max stack = the deepest uni-address stack any rank used):\n\n{}\n",
        t4.markdown()
    ));
    let ticks: Vec<f64> = s.ranks.iter().map(|&n| n as f64).collect();
    let lines = |b: &str, f: &dyn Fn(&str, u32) -> Option<f64>| -> Vec<Line> {
        s.configs
            .iter()
            .map(|c| Line {
                name: c.clone(),
                color: plot::config_color(c),
                points: s
                    .ranks
                    .iter()
                    .filter_map(|&n| {
                        let over = s.runs(b, c, n).iter().any(|r| r.oversubscribed);
                        f(c, n).map(|y| (n as f64, y, over))
                    })
                    .collect(),
            })
            .filter(|l| !l.points.is_empty())
            .collect()
    };
    let img = ctx.plot("scaling", "strong scaling", |path| {
        let areas = plot::figure(
            path,
            "Fig. 14: strong scaling (hollow points: oversubscribed)",
            2,
            benches.len(),
        )?;
        for (i, b) in benches.iter().enumerate() {
            let tput = |c: &str, n: u32| s.median(b, c, n).and_then(|r| r.num(&["throughput"]));
            plot::line_panel(
                &areas[i],
                &LinePanel {
                    title: &format!("{} ({})", bench_title(b), size_of(res, b)),
                    x_desc: "ranks",
                    y_desc: unit(b),
                    x_ticks: ticks.clone(),
                    y_range: None,
                    y_percent: false,
                    legend: i == 0,
                    lines: lines(b, &tput),
                },
            )?;
            let eff = |c: &str, n: u32| s.speedup(b, c, n).map(|x| x.1);
            let top = s
                .configs
                .iter()
                .flat_map(|c| s.ranks.iter().filter_map(move |&n| eff(c, n)))
                .fold(1.0f64, f64::max);
            plot::line_panel(
                &areas[benches.len() + i],
                &LinePanel {
                    title: &format!("{}: parallel efficiency", bench_title(b)),
                    x_desc: "ranks",
                    y_desc: "efficiency",
                    x_ticks: ticks.clone(),
                    y_range: Some((0.0, top * 1.1)),
                    y_percent: true,
                    legend: false,
                    lines: lines(b, &eff),
                },
            )?;
        }
        plot::finish(areas)
    });
    text.push_str(&img);
    text.push_str(
        "\nThe paper (Fig. 14): from 225 to 1,800 cores RDMA-emulated kept 99% / 98% / 99% \
         efficiency (BTC, UTS, NQueens) while AM-based without the empty check fell to 47% (BTC) \
         and 77% (UTS).\n",
    );
    Some(Section {
        title: "Table 4 and Fig. 14 — strong scaling".into(),
        text,
    })
}

/// Fig. 15: successful steals.
pub fn steals(res: &Results, s: &Scaling<'_>, ctx: &mut Ctx) -> Option<Section> {
    if s.configs.is_empty() || s.ranks.iter().all(|&n| n < 2) {
        return None;
    }
    let benches = present_benches(res);
    let mut headers = vec!["benchmark".to_string(), "configuration".into()];
    headers.extend(
        s.ranks
            .iter()
            .filter(|&&n| n > 1)
            .map(|&n| format!("{}: stolen / tried", s.shape_at(n))),
    );
    let mut t = Table::new(&headers);
    for b in &benches {
        for c in &s.configs {
            let mut row = vec![bench_title(b).to_string(), c.clone()];
            row.extend(s.ranks.iter().filter(|&&n| n > 1).map(|&n| match s.median(b, c, n) {
                Some(r) => {
                    let mut cell = format!(
                        "{} / {}",
                        thousands(r.num(&["stats", "steals_succeeded"]).unwrap_or(0.0) as u64),
                        thousands(r.num(&["stats", "steals_attempted"]).unwrap_or(0.0) as u64)
                    );
                    if let Some((_, across)) = r.steals_by_host() {
                        cell.push_str(&format!(" ({} across hosts)", thousands(across as u64)));
                    }
                    cell
                }
                None => "–".into(),
            }));
            t.push(row);
        }
    }
    let ticks: Vec<f64> = s.ranks.iter().filter(|&&n| n > 1).map(|&n| n as f64).collect();
    let img = ctx.plot("steals", "successful steals", |path| {
        let areas = plot::figure(path, "Fig. 15: successful steals per run", 1, benches.len())?;
        for (i, b) in benches.iter().enumerate() {
            let lines: Vec<Line> = s
                .configs
                .iter()
                .map(|c| Line {
                    name: c.clone(),
                    color: plot::config_color(c),
                    points: ticks
                        .iter()
                        .filter_map(|&x| {
                            let r = s.median(b, c, x as u32)?;
                            Some((x, r.num(&["stats", "steals_succeeded"])?, r.oversubscribed))
                        })
                        .collect(),
                })
                .filter(|l| !l.points.is_empty())
                .collect();
            plot::line_panel(
                &areas[i],
                &LinePanel {
                    title: bench_title(b),
                    x_desc: "ranks",
                    y_desc: "steals",
                    x_ticks: ticks.clone(),
                    y_range: None,
                    y_percent: false,
                    legend: i == 0,
                    lines,
                },
            )?;
        }
        plot::finish(areas)
    });
    Some(Section {
        title: "Fig. 15 — successful steals".into(),
        text: format!(
            "Steals that moved a thread, and steal attempts (empty-check aborts and lock failures \
             included), summed over ranks, for the median run of each cell; on several hosts, how \
             many of the steals took a thread from another host.\n\n{}\n{}",
            t.markdown(),
            img
        ),
    })
}

/// Fig. 16: time handling fetch-and-add messages at spawn (AM mode).
pub fn messages(res: &Results, s: &Scaling<'_>, ctx: &mut Ctx) -> Option<Section> {
    let am: Vec<&String> = s.configs.iter().filter(|c| c.starts_with("am")).collect();
    if am.is_empty() {
        return None;
    }
    let benches = present_benches(res);
    let mut headers = vec!["configuration".to_string()];
    headers.extend(
        benches
            .iter()
            .flat_map(|b| s.ranks.iter().map(move |n| format!("{} @{n}", bench_title(b)))),
    );
    let mut t = Table::new(&headers);
    let mut series = Vec::new();
    for c in &am {
        let mut row = vec![(*c).clone()];
        for b in &benches {
            for &n in &s.ranks {
                row.push(fmt(s.median(b, c, n).and_then(Scaling::msg_share), 2) + "%");
            }
        }
        t.push(row);
    }
    let mut paper_row = vec!["paper, am EC on @1800 cores".to_string()];
    for b in &benches {
        for (i, _) in s.ranks.iter().enumerate() {
            paper_row.push(if i + 1 == s.ranks.len() {
                fmt(paper::msg_share(b), 1) + "%"
            } else {
                "".into()
            });
        }
    }
    t.push(paper_row);
    for (i, &n) in s.ranks.iter().enumerate().filter(|(_, &n)| n > 1) {
        let v = benches
            .iter()
            .map(|b| s.median(b, "am, EC on", n).and_then(Scaling::msg_share))
            .collect();
        series.push((format!("am, EC on, {n} ranks"), PALETTE[i % PALETTE.len()], v));
    }
    series.push((
        "paper, 1,800 cores".into(),
        plot::config_color("paper"),
        benches.iter().map(|b| paper::msg_share(b)).collect(),
    ));
    let groups: Vec<String> = benches.iter().map(|b| bench_title(b).to_string()).collect();
    let img = ctx.plot("msg-handling", "time handling messages at spawn", |path| {
        let areas = plot::figure(
            path,
            "Fig. 16: share of time in the AM poll at spawn (handling fetch-and-add requests)",
            1,
            1,
        )?;
        plot::bar_panel(
            &areas[0],
            &BarPanel {
                title: "poll time at spawn / (run time × ranks)",
                y_desc: "% of time",
                groups,
                series,
                stacked: false,
                log_y: false,
                reference: None,
                value_labels: true,
                y_percent: true,
            },
        )?;
        plot::finish(areas)
    });
    Some(Section {
        title: "Fig. 16 — time handling messages at spawn (AM mode)".into(),
        text: format!(
            "In `am` mode a thief's request is an Active Message that the victim answers when it next \
             polls. With the paper's mechanisms (rows \"paper\": `UAT_POLL_INTERVAL=1`) it polls at \
             every spawn; by default it polls only at a spawn that finds its attention word raised by \
             a request. This is the time spent in those polls — the handlers included, empty polls too, \
             timed with the TSC around each poll — as a share of the run's total rank-time, the \
             paper's Fig. 16 quantity. Its floor is the poll's own cost times the spawn rate (it is \
             there at one rank too); the handlers add to it as thieves multiply. The paper: BTC 63.3%, \
             UTS 25.7%, NQueens 41.4% with the empty check at 1,800 cores (70% and 29.8% for BTC and \
             UTS without).\n\n{}\n{}",
            t.markdown(),
            img
        ),
    })
}

/// The summary table (stdout and the top of the report).
pub fn summary(res: &Results, s: &Scaling<'_>) -> Table {
    let mut t = Table::new(&[
        "benchmark",
        "configuration",
        "1 rank",
        "largest run",
        "throughput",
        "speed-up",
        "efficiency",
        "steals",
        "msg share",
        "runs ok",
    ]);
    for b in present_benches(res) {
        for c in &s.configs {
            let all: Vec<&Run> = s.ranks.iter().flat_map(|&n| s.runs(b, c, n).iter().copied()).collect();
            if all.is_empty() {
                continue;
            }
            let ok = all.iter().filter(|r| r.status.usable()).count();
            let n = s.max_ranks(b, c);
            let r = n.and_then(|n| s.median(b, c, n));
            let over = n.is_some_and(|n| s.runs(b, c, n).iter().any(|r| r.oversubscribed));
            t.push(vec![
                bench_title(b).into(),
                c.clone(),
                secs(s.time(b, c, 1)),
                match (n, r.and_then(Run::time_s)) {
                    (Some(n), Some(tm)) => format!("{} {}{}", secs(Some(tm)), at(n, r), if over { " †" } else { "" }),
                    _ => "–".into(),
                },
                si(r.and_then(|r| r.num(&["throughput"]))) + " " + unit(b),
                fmt(n.filter(|&n| n > 1).and_then(|n| s.speedup(b, c, n)).map(|x| x.0), 2) + "×",
                fmt(
                    n.filter(|&n| n > 1)
                        .and_then(|n| s.speedup(b, c, n))
                        .map(|x| 100.0 * x.1),
                    0,
                ) + "%",
                r.and_then(|r| r.num(&["stats", "steals_succeeded"]))
                    .map(|x| thousands(x as u64))
                    .unwrap_or("–".into()),
                if c.starts_with("am") {
                    fmt(r.and_then(Scaling::msg_share), 1) + "%"
                } else {
                    "–".into()
                },
                format!("{ok}/{}", all.len()),
            ]);
        }
    }
    t
}
