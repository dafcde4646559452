//! The global-memory experiment (Itoyori's model): cilksort at
//! one rank against `slice::sort_unstable` of the same keys, cilksort and
//! knapsack at each rank count, and cilksort over the network with the
//! software cache on and off. `scripts/reproduce.sh` alternates every
//! configuration within a round, so a ratio here is the median over rounds
//! of the two runs of one round (pairs measured side by side), with the
//! pairs' spread beside it.

use std::collections::BTreeMap;

use crate::data::{Results, Run};
use crate::plot::{self, BarPanel, PALETTE};
use crate::section::{Ctx, Section};
use crate::table::{fmt, median, raw, si, spread, Table};

/// What ran: `cilksort`, `sort_unstable`, or `knapsack <class>`.
fn label(r: &Run) -> String {
    let out = r.output.as_ref();
    let get = |k: &str| out.and_then(|o| o.get(k)).and_then(|v| v.as_str());
    match (r.bench.as_str(), get("solver")) {
        ("cilksort", Some("sort_unstable")) => "sort_unstable".into(),
        ("knapsack", _) => {
            let class = out.and_then(|o| o.pointer("/params/class")).and_then(|v| v.as_str());
            format!("knapsack {}", class.unwrap_or("?"))
        }
        (b, _) => b.into(),
    }
}

/// A run over the network (the driver added settings): its path and cache.
fn network(r: &Run) -> Option<(String, &'static str)> {
    if r.env.is_empty() {
        return None;
    }
    let mut path = r.conduit.clone().unwrap_or_default();
    if r.env.contains("GASNET_SUPERNODE_MAXSIZE=1") {
        path.push_str(" (no shared memory)");
    }
    let cache = if r.env.contains("UAT_CACHE=off") { "off" } else { "on" };
    Some((path, cache))
}

/// `f(a_i, b_i)` for the i-th runs of two configurations (one round each).
fn paired(a: &[&Run], b: &[&Run], f: impl Fn(&Run, &Run) -> Option<f64>) -> Vec<f64> {
    a.iter().zip(b).filter_map(|(x, y)| f(x, y)).collect()
}

fn time_ratio(x: &Run, y: &Run) -> Option<f64> {
    Some(x.time_s()? / y.time_s()?)
}

fn median_of(runs: &[&Run], f: impl Fn(&Run) -> Option<f64>) -> Option<f64> {
    median(runs.iter().filter_map(|r| f(r)).collect())
}

pub fn section(res: &Results, ctx: &mut Ctx) -> Option<Section> {
    let runs: Vec<&Run> = res.of("global").filter(|r| r.status.usable()).collect();
    if runs.is_empty() {
        return None;
    }
    // (label, ranks) -> runs, and (path, cache) -> runs, in round order.
    let mut local: BTreeMap<(String, u32), Vec<&Run>> = BTreeMap::new();
    let mut net: BTreeMap<String, BTreeMap<&str, Vec<&Run>>> = BTreeMap::new();
    for r in &runs {
        match network(r) {
            Some((path, cache)) => net.entry(path).or_default().entry(cache).or_default().push(r),
            None => local.entry((label(r), r.ranks)).or_default().push(r),
        }
    }
    let none: Vec<&Run> = Vec::new();
    let at = |l: &str, n: u32| local.get(&(l.to_string(), n)).unwrap_or(&none);
    let mut text = String::from(
        "Global memory (`uat::global`, not in the paper): data of any size in the GASNet-EX segments, \
         reached by checkouts, with a software cache of other ranks' blocks where they are not mapped. \
         Every answer is verified: cilksort's output sorted with the input's count and checksum, \
         knapsack's optimum against a dynamic program. Ratios are medians of pairs run side by side \
         (spread of the pairs in brackets).\n\n",
    );

    // 1. cilksort at one rank against sort_unstable.
    let (ck, su) = (at("cilksort", 1), at("sort_unstable", 1));
    let base = paired(ck, su, time_ratio);
    let mut t = Table::new(&[
        "keys",
        "cilksort 1 rank (s)",
        "sort_unstable (s)",
        "cilksort / sort_unstable",
        "pairs",
    ]);
    if !base.is_empty() {
        let keys = ck.first().and_then(|r| r.num(&["params", "n"]));
        t.push(vec![
            si(keys),
            fmt(median_of(ck, Run::time_s), 4),
            fmt(median_of(su, Run::time_s), 4),
            format!("{} ({})", fmt(median(base.clone()), 2), spread(&base)),
            base.len().to_string(),
        ]);
        text.push_str(
            "**cilksort at one rank against `slice::sort_unstable`** of the same keys (both generate, sort and \
             check, timed from memory already allocated and touched — `alloc_s` in the JSON; cilksort in global \
             memory with Cilk's 4-way split and parallel merges, sort_unstable in a `Vec`):\n\n",
        );
        text.push_str(&t.markdown());
        text.push('\n');
    }

    // 2. Speed-up over one rank, per benchmark.
    let labels: Vec<String> = {
        let mut l: Vec<String> = local
            .keys()
            .map(|k| k.0.clone())
            .filter(|l| l != "sort_unstable")
            .collect();
        l.dedup();
        l
    };
    let ranks: Vec<u32> = {
        let mut r: Vec<u32> = local.keys().map(|k| k.1).collect();
        r.sort_unstable();
        r.dedup();
        r
    };
    let mut scale = Table::new(&[
        "benchmark",
        "ranks",
        "time (s)",
        "speed-up over 1 rank",
        "nodes/s (knapsack)",
        "steals",
        "oversubscribed",
    ]);
    let mut speedups: BTreeMap<u32, Vec<Option<f64>>> = BTreeMap::new();
    for l in &labels {
        for &n in &ranks {
            let rs = at(l, n);
            if rs.is_empty() {
                speedups.entry(n).or_default().push(None);
                continue;
            }
            let sp = paired(at(l, 1), rs, time_ratio);
            speedups.entry(n).or_default().push(median(sp.clone()));
            scale.push(vec![
                l.clone(),
                n.to_string(),
                fmt(median_of(rs, Run::time_s), 4),
                format!("{} ({})", fmt(median(sp.clone()), 2), spread(&sp)),
                if l.starts_with("knapsack") {
                    si(median_of(rs, |r| r.num(&["throughput"])))
                } else {
                    "–".into()
                },
                fmt(median_of(rs, |r| r.num(&["stats", "steals_succeeded"])), 0),
                rs.iter().any(|r| r.oversubscribed).to_string(),
            ]);
        }
    }
    if !scale.is_empty() {
        text.push_str(
            "\n**Strong scaling** (knapsack: branch-and-bound with the best value in one `GlobalAtomicU64` \
             raised by remote `fetch_max`; its time varies with the order in which bounds are found):\n\n",
        );
        text.push_str(&scale.markdown());
        text.push('\n');
    }

    // 3. Over the network, cache on against off.
    let mut cache = Table::new(&[
        "path (2 ranks)",
        "cache on (s)",
        "cache off (s)",
        "off / on",
        "fetched on / off (bytes)",
        "block hits / misses (on)",
    ]);
    let mut net_bars: (Vec<String>, Vec<Option<f64>>, Vec<Option<f64>>) = Default::default();
    for (path, by) in &net {
        let (on, off) = (by.get("on").unwrap_or(&none), by.get("off").unwrap_or(&none));
        let ratio = paired(off, on, time_ratio);
        let stat = |rs: &[&Run], k: &str| median_of(rs, |r| r.num(&["stats", k]));
        cache.push(vec![
            path.clone(),
            fmt(median_of(on, Run::time_s), 3),
            fmt(median_of(off, Run::time_s), 3),
            format!("{} ({})", fmt(median(ratio.clone()), 2), spread(&ratio)),
            format!(
                "{} / {}",
                si(stat(on, "global_fetched_bytes")),
                si(stat(off, "global_fetched_bytes"))
            ),
            format!("{} / {}", si(stat(on, "cache_hits")), si(stat(on, "cache_misses"))),
        ]);
        net_bars.0.push(path.clone());
        net_bars.1.push(median_of(on, Run::time_s));
        net_bars.2.push(median_of(off, Run::time_s));
    }
    if !cache.is_empty() {
        text.push_str(
            "\n**Over the network** (other ranks' memory not mapped: cilksort's merges read and write it \
             through the cache, write-back of dirty bytes at release points, invalidation at acquire \
             points; `UAT_CACHE=off` is one get per checkout and one put per write):\n\n",
        );
        text.push_str(&cache.markdown());
        text.push('\n');
    }

    let mut csv = Table::new(&[
        "id",
        "benchmark",
        "ranks",
        "hosts",
        "path",
        "cache",
        "status",
        "time_s",
        "throughput",
        "nodes",
        "spawns",
        "steals_succeeded",
        "steals_within_host",
        "steals_across_hosts",
        "cache_hits",
        "cache_misses",
        "global_fetched_bytes",
        "global_written_bytes",
    ]);
    for r in res.of("global") {
        let (path, cache) = network(r).unwrap_or_else(|| (r.conduit.clone().unwrap_or_default(), "–"));
        let st = |k: &str| raw(r.num(&["stats", k]));
        csv.push(vec![
            r.id.clone(),
            label(r),
            r.ranks.to_string(),
            r.hosts().to_string(),
            path,
            cache.into(),
            r.status.name().into(),
            raw(r.time_s()),
            raw(r.num(&["throughput"])),
            raw(r.num(&["nodes"])),
            st("spawns"),
            st("steals_succeeded"),
            st("steals_within_host"),
            st("steals_across_hosts"),
            st("cache_hits"),
            st("cache_misses"),
            st("global_fetched_bytes"),
            st("global_written_bytes"),
        ]);
    }
    ctx.csv("global", &csv);

    let img = ctx.plot("global", "global memory: speed-up and the cache", |path| {
        let areas = plot::figure_sized(path, "Global memory: cilksort and knapsack", 1, 2, 1300)?;
        plot::bar_panel(
            &areas[0],
            &BarPanel {
                title: "speed-up over 1 rank (median of pairs)",
                y_desc: "× 1 rank",
                groups: labels.clone(),
                series: speedups
                    .iter()
                    .enumerate()
                    .map(|(i, (n, v))| (format!("{n} ranks"), PALETTE[i % PALETTE.len()], v.clone()))
                    .collect(),
                stacked: false,
                log_y: false,
                reference: Some((1.0, "1 rank".into())),
                value_labels: true,
                y_percent: false,
            },
        )?;
        plot::bar_panel(
            &areas[1],
            &BarPanel {
                title: "cilksort at 2 ranks over the network (lower is better)",
                y_desc: "time (s)",
                groups: net_bars.0.clone(),
                series: vec![
                    ("cache on".into(), PALETTE[0], net_bars.1.clone()),
                    ("cache off".into(), PALETTE[1], net_bars.2.clone()),
                ],
                stacked: false,
                log_y: false,
                reference: None,
                value_labels: true,
                y_percent: false,
            },
        )?;
        plot::finish(areas)
    });
    text.push('\n');
    text.push_str(&img);
    text.push('\n');
    Some(Section {
        title: "Global memory: cilksort and knapsack".into(),
        text,
    })
}
