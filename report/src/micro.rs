//! The micro-benchmark sections: Table 2 (spawn cost), Fig. 11 (get/put
//! latency with and without polling threads), Fig. 13 (one steal, phase by
//! phase).

use crate::data::{Results, Run};
use crate::paper;
use crate::plot::{self, BarPanel, PALETTE};
use crate::section::{Ctx, Section};
use crate::table::{fmt, raw, Table};

fn status_note(r: &Run) -> String {
    let mut s = r.status.name().to_string();
    if r.oversubscribed {
        s.push_str(", oversubscribed");
    }
    s
}

fn failures(runs: &[&Run]) -> String {
    let mut s = String::new();
    for r in runs.iter().filter(|r| !r.status.usable()) {
        s.push_str(&format!(
            "- run {} ({}, {}): **{}**, exit {}: {}\n",
            r.id,
            r.mode,
            r.shape(),
            r.status.name(),
            r.exit,
            r.stderr_tail
        ));
    }
    s
}

/// Table 2: thread creation overhead.
pub fn spawn(res: &Results, ctx: &mut Ctx) -> Option<Section> {
    let runs: Vec<&Run> = res.of("spawn").collect();
    if runs.is_empty() {
        return None;
    }
    let mut md = Table::new(&[
        "mode",
        "spawn+join (ns)",
        "cycles",
        "plain call (cycles)",
        "uat::join (ns)",
        "rayon::join (ns)",
        "uat::join / rayon::join",
        "paper (cycles)",
        "status",
    ]);
    let mut csv = Table::new(&[
        "mode",
        "status",
        "oversubscribed",
        "tsc_ghz",
        "plain_call_ns",
        "spawn_join_ns",
        "spawn_join_cycles",
        "uat_join_ns",
        "rayon_join_ns",
        "paper_cycles",
    ]);
    for r in &runs {
        let n = |k: &str, u: &str| r.num(&[k, u]);
        md.push(vec![
            r.label(),
            fmt(n("spawn_join", "ns"), 1),
            fmt(n("spawn_join", "cycles"), 0),
            fmt(n("plain_call", "cycles"), 1),
            fmt(n("uat_join", "ns"), 1),
            fmt(n("rayon_join", "ns"), 1),
            fmt(r.num(&["uat_join_vs_rayon_join"]), 2) + "×",
            fmt(paper::spawn_cycles(&r.mode), 0),
            status_note(r),
        ]);
        csv.push(vec![
            r.label(),
            r.status.name().into(),
            r.oversubscribed.to_string(),
            raw(r.num(&["tsc_ghz"])),
            raw(n("plain_call", "ns")),
            raw(n("spawn_join", "ns")),
            raw(n("spawn_join", "cycles")),
            raw(n("uat_join", "ns")),
            raw(n("rayon_join", "ns")),
            raw(paper::spawn_cycles(&r.mode)),
        ]);
    }
    ctx.csv("spawn", &csv);
    let modes: Vec<String> = runs.iter().map(|r| r.label()).collect();
    let col = |k: &str| runs.iter().map(|r| r.num(&[k, "cycles"])).collect::<Vec<_>>();
    let img = ctx.plot("spawn", "spawn+join cost per mode", |path| {
        let bars = 5 * modes.len() as u32;
        let areas = plot::figure_sized(
            path,
            "Table 2: cost of creating and joining a task (not stolen)",
            1,
            1,
            300 + 45 * bars,
        )?;
        plot::bar_panel(
            &areas[0],
            &BarPanel {
                title: "cycles per task (lower is better)",
                y_desc: "cycles",
                groups: modes.clone(),
                series: vec![
                    ("plain call".into(), PALETTE[7], col("plain_call")),
                    ("spawn+join".into(), PALETTE[0], col("spawn_join")),
                    ("uat::join".into(), PALETTE[4], col("uat_join")),
                    ("rayon::join".into(), PALETTE[5], col("rayon_join")),
                    (
                        "paper spawn (X5670)".into(),
                        plot::config_color("paper"),
                        modes.iter().map(|m| paper::spawn_cycles(m)).collect(),
                    ),
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
    let text = format!(
        "A task that is spawned and joined without being stolen, against a plain function call and \
         `rayon::join` in the same binary (`micro spawn`, one rank). A spawn reads its rank's \
         attention word (one load) and polls GASNet only when a request raised it; rows marked \
         \"paper\" run the paper's mechanisms instead: its THE deque (a fence at every pop) and, in \
         `am` mode, a poll at every spawn (the paper's AM-based design). The paper measured {} cycles (RDMA-emulated) and {} cycles \
         (AM-based) on a {} GHz X5670, and {} cycles for MassiveThreads.\n\n{}\n{}{}",
        fmt(paper::spawn_cycles("rdma-emulated"), 0),
        fmt(paper::spawn_cycles("am"), 0),
        paper::GHZ,
        paper::MASSIVETHREADS_SPAWN_CYCLES,
        md.markdown(),
        img,
        failures(&runs)
    );
    Some(Section {
        title: "Table 2 — thread creation overhead".into(),
        text,
    })
}

/// "native" on the report's conduit; "native, udp (real UDP)" elsewhere.
fn where_ran(r: &Run, conduit: &str) -> String {
    match r.conduit.as_deref() {
        Some(c) if c != conduit => {
            let c = c.replace(" --real-udp", " (real UDP)");
            format!("{}, {c}", r.mode)
        }
        _ => r.mode.clone(),
    }
}

/// Fig. 11: latency with and without polling threads.
pub fn latency(res: &Results, ctx: &mut Ctx) -> Option<Section> {
    let runs: Vec<&Run> = res.of("latency").collect();
    if runs.is_empty() {
        return None;
    }
    let keys = ["get", "put", "get_with_poller", "put_with_poller", "fadd"];
    let names = ["get", "put", "get (pollers)", "put (pollers)", "fetch-and-add"];
    let mut md = Table::new(&[
        "mode",
        "get (µs)",
        "put (µs)",
        "get, pollers running (µs)",
        "put, pollers running (µs)",
        "fetch-and-add (µs)",
        "status",
    ]);
    let conduit = res.meta_str("conduit");
    let mut csv = Table::new(&[
        "mode",
        "conduit",
        "status",
        "oversubscribed",
        "get_us",
        "put_us",
        "get_with_poller_us",
        "put_with_poller_us",
        "fadd_us",
        "hosts",
        "get_within_host_us",
        "get_across_hosts_us",
        "get_across_hosts_no_delay_us",
        "delay_added_us",
        "net_delay_us",
    ]);
    for r in &runs {
        let v: Vec<Option<f64>> = keys.iter().map(|k| r.num(&["latency_us", k])).collect();
        let mut row = vec![where_ran(r, &conduit)];
        row.extend(v.iter().map(|x| fmt(*x, 3)));
        row.push(status_note(r));
        md.push(row);
        let mut row = vec![
            r.mode.clone(),
            r.conduit.clone().unwrap_or(conduit.clone()),
            r.status.name().into(),
            r.oversubscribed.to_string(),
        ];
        row.extend(v.iter().map(|x| raw(*x)));
        row.push(r.hosts().to_string());
        row.extend(BY_HOST.iter().map(|k| raw(r.num(&["latency_by_host_us", k]))));
        row.push(raw(r.num(&["net_delay_us"])));
        csv.push(row);
    }
    let p = paper::LATENCY_CYCLES.map(|c| c / paper::GHZ / 1000.0);
    md.push(vec![
        "paper (IB QDR, X5670)".into(),
        fmt(Some(p[0]), 2),
        fmt(Some(p[1]), 2),
        fmt(Some(p[2]), 2),
        fmt(Some(p[3]), 2),
        "–".into(),
        "–".into(),
    ]);
    ctx.csv("latency", &csv);
    let mut series: Vec<(String, plotters::style::RGBColor, Vec<Option<f64>>)> = runs
        .iter()
        .map(|r| {
            (
                if r.oversubscribed {
                    format!("{} (oversubscribed)", where_ran(r, &conduit))
                } else {
                    where_ran(r, &conduit)
                },
                if where_ran(r, &conduit) == r.mode {
                    plot::config_color(&r.mode)
                } else {
                    PALETTE[4]
                },
                keys.iter().map(|k| r.num(&["latency_us", k])).collect(),
            )
        })
        .collect();
    series.push((
        "paper (IB QDR)".into(),
        plot::config_color("paper"),
        vec![Some(p[0]), Some(p[1]), Some(p[2]), Some(p[3]), None],
    ));
    let img = ctx.plot("latency", "8-byte latencies", |path| {
        let bars = 5 * series.len() as u32;
        let areas = plot::figure_sized(path, "Fig. 11: 8-byte latency, rank 0 → rank 1", 1, 1, 300 + 45 * bars)?;
        plot::bar_panel(
            &areas[0],
            &BarPanel {
                title: "one operation, µs (log scale)",
                y_desc: "µs",
                groups: names.iter().map(|s| s.to_string()).collect(),
                series,
                stacked: false,
                log_y: true,
                reference: None,
                value_labels: true,
                y_percent: false,
            },
        )?;
        plot::finish(areas)
    });
    let note = if conduit == "smp" {
        "On the smp conduit a get or put is a load or store in shared memory: a polling thread \
         cannot delay it, so the with/without columns agree. The paper's effect (a polling thread \
         competing for the network's progress engine) needs a network: the `udp (real UDP)` row runs \
         the same measurement with shared memory off, every operation a UDP round trip on loopback \
         (polling threads there wait by yielding when ranks and pollers outnumber the cores, and the \
         row is then labelled oversubscribed); `--conduit ibv` on a cluster measures the paper's case."
    } else {
        "Over a network a polling thread in every process competes for the progress engine; the \
         paper saw +40% on get and put."
    };
    let text = format!(
        "`micro latency`, two ranks: blocking 8-byte get and put without and with the polling \
         threads running, and the remote fetch-and-add of the built mode. {note}\n\n{}\n{}{}{}",
        md.markdown(),
        img,
        by_host(&runs, &conduit),
        failures(&runs)
    );
    Some(Section {
        title: "Fig. 11 — get/put latency with and without a polling thread".into(),
        text,
    })
}

/// `latency_by_host_us`'s gets, in latency.csv's order.
const BY_HOST: [&str; 4] = [
    "get_within_host",
    "get_across_hosts",
    "get_across_hosts_no_delay",
    "delay_added",
];

/// The runs on several hosts (`cargo uat run --hosts`; their line names a
/// `far` rank): rank 0's get within its host and across hosts, and what
/// the emulated delay (`UAT_NET_DELAY`) added. Empty when no run had one.
fn by_host(runs: &[&Run], conduit: &str) -> String {
    let mut t = Table::new(&[
        "mode",
        "job",
        "get within host (µs)",
        "get across hosts (µs)",
        "across, without the delay (µs)",
        "delay added (µs)",
        "delay set (µs)",
    ]);
    for r in runs.iter().filter(|r| r.num(&["latency_by_host_us", "far"]).is_some()) {
        let mut row = vec![where_ran(r, conduit), r.shape()];
        row.extend(BY_HOST.iter().map(|k| fmt(r.num(&["latency_by_host_us", k]), 3)));
        row.push(fmt(r.num(&["net_delay_us"]), 3));
        t.push(row);
    }
    if t.is_empty() {
        return String::new();
    }
    format!(
        "\nOn several hosts: rank 0's 8-byte get to the first other rank of its host (`–`: none) and to \
         the first rank of another host; the emulated network delay (`UAT_NET_DELAY`) holds every \
         operation that crosses hosts, so the cross-host get is measured in alternating blocks with \
         and without it, and the difference of the blocks' medians is the delay added.\n\n{}",
        t.markdown()
    )
}

const PHASES: [(&str, &str); 5] = [
    ("empty_check", "empty check (1 read)"),
    (
        "claim",
        "claim (split: 1 fetch-and-add; paper: lock, head/tail, advance)",
    ),
    ("entry", "read the entry (GET)"),
    ("transfer", "copy frames (GET)"),
    ("release", "release (split: non-blocking put; paper: unlock)"),
];

/// Fig. 13: one steal, phase by phase.
pub fn steal(res: &Results, ctx: &mut Ctx) -> Option<Section> {
    let runs: Vec<&Run> = res.of("steal").collect();
    if runs.is_empty() {
        return None;
    }
    let mut headers = vec![
        "mode".to_string(),
        "steals".into(),
        "round trips".into(),
        "frame bytes".into(),
    ];
    headers.extend(PHASES.iter().map(|p| format!("{} ns", p.0.replace('_', " "))));
    headers.extend(
        [
            "steal (ns)",
            "suspend (ns)",
            "resume (ns)",
            "paper steal (ns)",
            "status",
        ]
        .map(String::from),
    );
    let mut md = Table::new(&headers);
    let mut csv_headers = vec![
        "mode",
        "status",
        "oversubscribed",
        "steals",
        "attempts",
        "round_trips_per_steal",
        "frame_bytes_avg",
    ];
    let phase_cols: Vec<String> = PHASES.iter().map(|p| format!("{}_ns", p.0)).collect();
    csv_headers.extend(phase_cols.iter().map(String::as_str));
    csv_headers.extend(["steal_ns", "suspend_ns", "resume_ns", "paper_steal_ns"]);
    let mut csv = Table::new(&csv_headers);
    let paper_ns = |m: &str| paper::steal_cycles(m).map(|c| c / paper::GHZ);
    for r in &runs {
        let phases: Vec<Option<f64>> = PHASES.iter().map(|p| r.num(&["phase_ns", p.0])).collect();
        let mut row = vec![
            r.label(),
            fmt(r.num(&["steals"]), 0),
            fmt(r.num(&["round_trips_per_steal"]), 1),
            fmt(r.num(&["frame_bytes_avg"]), 0),
        ];
        row.extend(phases.iter().map(|x| fmt(*x, 0)));
        row.extend([
            fmt(r.num(&["steal_ns"]), 0),
            fmt(r.num(&["suspend_ns"]), 0),
            fmt(r.num(&["resume_ns"]), 0),
            fmt(paper_ns(&r.mode), 0),
            status_note(r),
        ]);
        md.push(row);
        let mut row = vec![
            r.label(),
            r.status.name().into(),
            r.oversubscribed.to_string(),
            raw(r.num(&["steals"])),
            raw(r.num(&["attempts"])),
            raw(r.num(&["round_trips_per_steal"])),
            raw(r.num(&["frame_bytes_avg"])),
        ];
        row.extend(phases.iter().map(|x| raw(*x)));
        row.extend([
            raw(r.num(&["steal_ns"])),
            raw(r.num(&["suspend_ns"])),
            raw(r.num(&["resume_ns"])),
            raw(paper_ns(&r.mode)),
        ]);
        csv.push(row);
    }
    ctx.csv("steal", &csv);
    let modes: Vec<String> = runs
        .iter()
        .map(|r| {
            if r.oversubscribed {
                format!("{} *", r.label())
            } else {
                r.label()
            }
        })
        .collect();
    let totals: Vec<Option<f64>> = runs.iter().map(|r| r.num(&["steal_ns"]).map(|x| x / 1000.0)).collect();
    let shares: Vec<(String, plotters::style::RGBColor, Vec<Option<f64>>)> = PHASES
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let v = runs
                .iter()
                .map(|r| {
                    let total = r.num(&["steal_ns"])?;
                    Some(100.0 * r.num(&["phase_ns", p.0])? / total.max(1e-9))
                })
                .collect();
            (p.1.to_string(), PALETTE[i], v)
        })
        .collect();
    let img = ctx.plot("steal-breakdown", "steal time breakdown", |path| {
        let areas = plot::figure(
            path,
            "Fig. 13: one steal (* = oversubscribed: pollers share cores)",
            1,
            2,
        )?;
        plot::bar_panel(
            &areas[0],
            &BarPanel {
                title: "time per steal, µs (log scale)",
                y_desc: "µs",
                groups: modes.clone(),
                series: vec![
                    ("this run".into(), PALETTE[0], totals),
                    (
                        "paper (664 B, IB QDR)".into(),
                        plot::config_color("paper"),
                        runs.iter().map(|r| paper_ns(&r.mode).map(|x| x / 1000.0)).collect(),
                    ),
                ],
                stacked: false,
                log_y: true,
                reference: None,
                value_labels: true,
                y_percent: false,
            },
        )?;
        plot::bar_panel(
            &areas[1],
            &BarPanel {
                title: "share of each phase",
                y_desc: "% of the steal",
                groups: modes.clone(),
                series: shares,
                stacked: true,
                log_y: false,
                reference: None,
                value_labels: false,
                y_percent: true,
            },
        )?;
        plot::finish(areas)
    });
    let text = format!(
        "`micro steal`, two ranks: phase times averaged over the successful steals of repeated BTC \
         runs (timed with the TSC inside the thief). The paper: {} cycles ({:.0} µs) per steal \
         RDMA-emulated, {} cycles ({:.0} µs) AM-based, with {}-byte frames over InfiniBand; suspend \
         and resume were {:.2} µs and {:.2} µs of that. Rows marked \"paper\" run the paper's \
         protocol (lock, read head and tail, advance head, re-read tail, entry, frames, unlock: 7 \
         round trips after the empty check); the others the split protocol (empty check, one \
         fetch-and-add that claims the entry, entry, frames: 4 round trips, the release not waited \
         for). Round trips are counted by the gasnet-sys wrappers. The claim is where the modes \
         differ: one CPU atomic on shared memory (`native`), an Active Message answered at the \
         victim's next spawn (`am`: the request raises its attention word), or one answered by the \
         victim's polling thread (`rdma-emulated`; when the poller shares a core the request waits \
         for the scheduler to run it, which the * rows show).\n\n{}\n{}{}",
        paper::kilo(paper::steal_cycles("rdma-emulated").unwrap_or(f64::NAN)),
        paper::steal_cycles("rdma-emulated").unwrap_or(f64::NAN) / paper::GHZ / 1000.0,
        paper::kilo(paper::steal_cycles("am").unwrap_or(f64::NAN)),
        paper::steal_cycles("am").unwrap_or(f64::NAN) / paper::GHZ / 1000.0,
        paper::STEAL_FRAME_BYTES,
        paper::SUSPEND_CYCLES / paper::GHZ / 1000.0,
        paper::RESUME_CYCLES / paper::GHZ / 1000.0,
        md.markdown(),
        img,
        failures(&runs)
    );
    Some(Section {
        title: "Fig. 13 — steal time breakdown".into(),
        text,
    })
}

/// The mechanism behind Figs. 14–16: how much a victim's own work slows
/// while the other ranks fetch-and-add on its lock word.
pub fn fad(res: &Results, ctx: &mut Ctx) -> Option<Section> {
    let runs: Vec<&Run> = res.of("fad").collect();
    if runs.is_empty() {
        return None;
    }
    let mut md = Table::new(&[
        "mode",
        "ranks",
        "hammering ranks",
        "victim alone (s)",
        "victim hammered (s)",
        "slowdown",
        "fetch-and-add (µs)",
        "status",
    ]);
    let mut csv = Table::new(&[
        "mode",
        "ranks",
        "status",
        "oversubscribed",
        "hammering_ranks",
        "alone_s",
        "hammered_s",
        "slowdown",
        "fadd_latency_us",
    ]);
    for r in &runs {
        let v = |k: &str| r.num(&["victim_busy_s", k]);
        md.push(vec![
            r.mode.clone(),
            match r.hosts() {
                1 => r.ranks.to_string(),
                h => format!("{} on {h} hosts", r.ranks),
            },
            r.ranks.saturating_sub(1).to_string(),
            fmt(v("alone"), 3),
            fmt(v("hammered"), 3),
            fmt(v("slowdown"), 2) + "×",
            fmt(r.num(&["fadd_latency_us"]), 3),
            status_note(r),
        ]);
        csv.push(vec![
            r.mode.clone(),
            r.ranks.to_string(),
            r.status.name().into(),
            r.oversubscribed.to_string(),
            r.ranks.saturating_sub(1).to_string(),
            raw(v("alone")),
            raw(v("hammered")),
            raw(v("slowdown")),
            raw(r.num(&["fadd_latency_us"])),
        ]);
    }
    ctx.csv("fad", &csv);
    let mut modes: Vec<String> = Vec::new();
    for r in &runs {
        if !modes.contains(&r.mode) {
            modes.push(r.mode.clone());
        }
    }
    let mut ticks: Vec<f64> = runs.iter().map(|r| r.ranks as f64).collect();
    ticks.sort_by(|a, b| a.partial_cmp(b).unwrap());
    ticks.dedup();
    let lines: Vec<plot::Line> = modes
        .iter()
        .map(|m| plot::Line {
            name: m.clone(),
            color: plot::config_color(m),
            points: runs
                .iter()
                .filter(|r| &r.mode == m && r.status.usable())
                .filter_map(|r| Some((r.ranks as f64, r.num(&["victim_busy_s", "slowdown"])?, r.oversubscribed)))
                .collect(),
        })
        .collect();
    let img = ctx.plot("fad", "victim slowdown under fetch-and-add requests", |path| {
        let areas = plot::figure(
            path,
            "Victim slowdown under fetch-and-add requests (hollow: oversubscribed)",
            1,
            1,
        )?;
        plot::line_panel(
            &areas[0],
            &plot::LinePanel {
                title: "victim's time hammered / alone",
                x_desc: "ranks (all but the victim hammering)",
                y_desc: "slowdown",
                x_ticks: ticks,
                y_range: None,
                y_percent: false,
                legend: true,
                lines,
            },
        )?;
        plot::finish(areas)
    });
    Some(Section {
        title: "The mechanism — a victim under fetch-and-add requests".into(),
        text: format!(
            "`micro fad`: rank 0 runs a fixed computation alone, then again while every other rank \
             fetch-and-adds on its lock word; the slowdown is the ratio (the counter is checked \
             exactly). This is what Figs. 14 and 16 aggregate: with `am` the victim itself answers \
             each request in its poll at spawn, so thieves cost it time; with `rdma-emulated` its \
             polling thread answers (free when it has its own core); `native` uses the network's or \
             the CPU's atomics.\n\n{}\n{}{}",
            md.markdown(),
            img,
            failures(&runs)
        ),
    })
}
