//! The timeline: a traced job (the rank files of `cargo uat run
//! --trace DIR`, read through `uat-trace`) drawn as a PNG — one lane per
//! rank, time across, each rank's states coloured by kind, its threads
//! suspended in joins as a strip under the lane, steals (and remote joins)
//! as lines between lanes.
//!
//! Every lane is drawn at the plot's resolution, not record by record: the
//! time of each kind is summed per pixel column, a column shows the state
//! that took most of its recorded time, and runs of equal columns become
//! one rectangle. Flows that fall on the same pixels are drawn once. What
//! is drawn is bounded by the pixels, whatever the records; reading and
//! summing them is linear.

use std::collections::HashSet;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use uat_trace::{FlowKind, Kind, Stats, Timeline, Trace};

use crate::plot::{self, PlotResult};
use crate::section::{Ctx, Section};

const FONT: &str = "sans-serif";

/// The PNG's width in pixels.
pub const WIDTH: u32 = 1400;
/// The title lines above the lanes.
const HEADER_PX: u32 = 64;
/// The x axis, its labels and the margins around the lanes.
const AXIS_PX: u32 = 72;
/// The legend under the plot (two rows).
const LEGEND_PX: u32 = 64;

/// The PNG's size for a job of `ranks` ranks: [`WIDTH`] wide; lanes of 56
/// pixels, or thinner beyond 20 ranks (at least 2 pixels each), within
/// 160 to 1200 pixels together.
pub fn size(ranks: u32) -> (u32, u32) {
    let lanes = (ranks.max(1) * 56).clamp(160, 1200).max(ranks * 2);
    (WIDTH, HEADER_PX + lanes + AXIS_PX + LEGEND_PX)
}

/// How a kind of interval is drawn in its lane.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layer {
    /// The rank's state: one of them per column.
    State,
    /// Nested in a task (polls, global memory): a narrower band over it.
    Nested,
    /// A thread suspended in a join: the strip under the lane.
    Suspended,
}

/// The intervals drawn, in drawing order: kind, layer, colour, legend.
const KINDS: [(Kind, Layer, RGBColor, &str); 7] = [
    (Kind::Task, Layer::State, RGBColor(116, 196, 118), "task"),
    (Kind::Steal, Layer::State, RGBColor(255, 127, 14), "steal attempt"),
    (
        Kind::Quiescent,
        Layer::State,
        RGBColor(189, 189, 189),
        "quiescent (asleep on lifelines)",
    ),
    (
        Kind::Poll,
        Layer::Nested,
        RGBColor(214, 39, 40),
        "poll (serving messages)",
    ),
    (
        Kind::Fetch,
        Layer::Nested,
        RGBColor(31, 119, 180),
        "fetch (global memory)",
    ),
    (Kind::WriteBack, Layer::Nested, RGBColor(23, 190, 207), "write-back"),
    (
        Kind::Suspended,
        Layer::Suspended,
        RGBColor(148, 103, 189),
        "suspended in a join (strip)",
    ),
];

const STEAL_FLOW: RGBColor = RGBColor(20, 20, 20);
const JOIN_FLOW: RGBColor = RGBColor(31, 119, 180);
const WAKEUP: RGBColor = RGBColor(0, 109, 44);
const FAILURE: RGBColor = RGBColor(255, 0, 0);

/// Where a layer lies in a lane of height 1 (bottom, top).
fn band(layer: Layer) -> (f64, f64) {
    match layer {
        Layer::State => (0.30, 0.92),
        Layer::Nested => (0.48, 0.74),
        Layer::Suspended => (0.08, 0.24),
    }
}

/// The y of a flow's end in a lane: the middle of the state band.
const FLOW_Y: f64 = 0.61;

/// What was drawn: what a caption or a report says of it.
#[derive(Clone, Debug)]
pub struct Drawn {
    /// The program traced.
    pub program: String,
    /// The job's ranks.
    pub ranks: u32,
    /// The job's hosts (`cargo uat run --hosts`).
    pub hosts: u32,
    /// Ranks of the job that left no file.
    pub missing: Vec<u32>,
    /// From the first event to the last, in ms.
    pub length_ms: f64,
    /// Records kept in the rank files.
    pub records: u64,
    /// Records lost to full buffers.
    pub dropped: u64,
    /// The bound on the clocks' alignment error, in ns.
    pub clock_error_ns: u64,
    /// Steal flows in the trace.
    pub steal_flows: usize,
    /// Join flows in the trace.
    pub join_flows: usize,
    /// Per drawn kind (legend name): its time over ranks × length, 0 to 1
    /// (the statistics' totals, which count dropped records too).
    pub shares: Vec<(&'static str, f64)>,
    /// Whether every rank ended normally and left a file.
    pub complete: bool,
}

/// Reads the trace in `dir` and draws it into `out` ([`draw_trace`]).
pub fn draw(dir: &Path, out: &Path) -> Result<Drawn, String> {
    let trace = uat_trace::load(dir)?;
    let timeline = trace.timeline();
    if trace.ranks.iter().all(|r| r.records.is_empty()) {
        return Err(format!(
            "{}: the rank files hold no records to draw (traced with UAT_TRACE_MODE=stats? \
             its statistics are in stats.txt)",
            dir.display()
        ));
    }
    draw_trace(&trace, &timeline, out).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(drawn(&trace, &timeline))
}

fn drawn(trace: &Trace, timeline: &Timeline) -> Drawn {
    let stats = Stats::new(trace, timeline);
    let lanes_ns = timeline.length_ns * f64::from(trace.job_ranks());
    let shares = KINDS
        .iter()
        .map(|&(kind, _, _, name)| {
            let total = stats.kind(kind).total_ns;
            (name, if lanes_ns > 0.0 { total / lanes_ns } else { 0.0 })
        })
        .collect();
    Drawn {
        program: trace.program().to_string(),
        ranks: trace.job_ranks(),
        hosts: trace.job_hosts(),
        missing: trace.missing.clone(),
        length_ms: timeline.length_ns / 1e6,
        records: trace.ranks.iter().map(|r| r.records.len() as u64).sum(),
        dropped: trace.dropped(),
        clock_error_ns: trace.clock_error_ns(),
        steal_flows: timeline.flow_count(FlowKind::Steal),
        join_flows: timeline.flow_count(FlowKind::Join),
        shares,
        complete: trace.complete(),
    }
}

/// Time of one kind per pixel column of a lane: each interval adds its
/// part to its first and last column and, through a difference array, a
/// whole column to every column between (one step per interval).
struct Columns {
    ns: f64,
    partial: Vec<f64>,
    whole: Vec<i64>,
}

impl Columns {
    fn new(columns: usize, ns: f64) -> Columns {
        Columns {
            ns,
            partial: vec![0.0; columns],
            whole: vec![0; columns + 1],
        }
    }

    fn column(&self, t: f64) -> usize {
        ((t / self.ns).floor().max(0.0) as usize).min(self.partial.len() - 1)
    }

    fn add(&mut self, start: f64, end: f64) {
        // An empty interval still happened: a trace of it stays visible.
        let end = end.max(start + self.ns * 1e-6);
        let (a, b) = (self.column(start), self.column(end));
        if a == b {
            self.partial[a] += end - start;
        } else {
            self.partial[a] += (a + 1) as f64 * self.ns - start;
            self.partial[b] += end - b as f64 * self.ns;
            self.whole[a + 1] += 1;
            self.whole[b] -= 1;
        }
    }

    /// The time in each column.
    fn finish(self) -> Vec<f64> {
        let mut open = 0i64;
        self.partial
            .iter()
            .zip(&self.whole)
            .map(|(p, w)| {
                open += w;
                p + open as f64 * self.ns
            })
            .collect()
    }
}

/// One rectangle: columns `from..to` of a lane, in a kind's colour.
#[derive(Debug, PartialEq)]
struct Run {
    from: usize,
    to: usize,
    kind: usize,
}

/// Per column the kind (index in [`KINDS`]) of `layer` that took most of
/// its time, merged into runs.
fn runs(time: &[Vec<f64>], layer: Layer) -> Vec<Run> {
    let columns = time.first().map_or(0, Vec::len);
    let top = |c: usize| {
        KINDS
            .iter()
            .enumerate()
            .filter(|(_, k)| k.1 == layer)
            .map(|(i, _)| (i, time[i][c]))
            .filter(|&(_, t)| t > 0.0)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    };
    let mut out: Vec<Run> = Vec::new();
    for c in 0..columns {
        let Some(kind) = top(c) else { continue };
        match out.last_mut() {
            Some(r) if r.kind == kind && r.to == c => r.to = c + 1,
            _ => out.push(Run {
                from: c,
                to: c + 1,
                kind,
            }),
        }
    }
    out
}

/// One lane's time per kind of [`KINDS`] and column.
fn lane_columns(events: &[uat_trace::Event], columns: usize, column_ns: f64) -> Vec<Vec<f64>> {
    KINDS
        .iter()
        .map(|&(kind, ..)| {
            let mut c = Columns::new(columns, column_ns);
            for e in events.iter().filter(|e| e.kind == kind) {
                c.add(e.start_ns, e.end_ns);
            }
            c.finish()
        })
        .collect()
}

/// A lane's name: `rank R`, or `rank R (host H)` when the job had several
/// hosts (the name of its track in trace.json too); `(no file)` for a rank
/// that left none, whose host is unknown.
fn lane_name(trace: &Trace, rank: u32) -> String {
    if trace.job_hosts() > 1 {
        return uat_trace::chrome::track_name(trace, rank);
    }
    match trace.rank(rank) {
        Some(_) => format!("rank {rank}"),
        None => format!("rank {rank} (no file)"),
    }
}

/// The title's second line: records, flows and what is missing.
fn details(trace: &Trace, timeline: &Timeline) -> String {
    let records: usize = trace.ranks.iter().map(|r| r.records.len()).sum();
    let mut s = format!(
        "{records} records; {} steals, {} remote joins; clocks aligned within {}",
        timeline.flow_count(FlowKind::Steal),
        timeline.flow_count(FlowKind::Join),
        uat_trace::stats::human_ns(trace.clock_error_ns() as f64)
    );
    if trace.dropped() > 0 {
        s += &format!(
            "; {} records dropped (full buffers): their time is missing",
            trace.dropped()
        );
    }
    if !trace.missing.is_empty() {
        s += &format!("; no file from rank(s) {:?}", trace.missing);
    }
    let partial = trace.incomplete_ranks();
    if !partial.is_empty() {
        s += &format!("; partial (failed) rank(s) {partial:?}");
    }
    s
}

/// Draws the timeline of a loaded trace into `out` (a PNG of [`size`]).
pub fn draw_trace(trace: &Trace, timeline: &Timeline, out: &Path) -> PlotResult {
    let ranks = trace.job_ranks();
    let (w, h) = size(ranks);
    let root = BitMapBackend::new(out, (w, h)).into_drawing_area();
    root.fill(&WHITE)?;
    let (header, rest) = root.split_vertically(HEADER_PX);
    let (body, legend_area) = rest.split_vertically(h - HEADER_PX - LEGEND_PX);
    let length_ms = timeline.length_ns / 1e6;
    header.draw(&Text::new(
        format!(
            "Timeline: {} on {}, {} ms",
            trace.program(),
            crate::data::shape(ranks, trace.job_hosts()),
            plot::short(length_ms)
        ),
        (16, 8),
        (FONT, 22).into_font(),
    ))?;
    header.draw(&Text::new(details(trace, timeline), (16, 38), (FONT, 14).into_font()))?;

    let n = f64::from(ranks);
    // Rank 0's lane on top: rank r spans y = n-1-r .. n-r.
    let base = |rank: u32| n - 1.0 - f64::from(rank);
    let x_max = if length_ms > 0.0 { length_ms } else { 1e-3 };
    let mut chart = ChartBuilder::on(&body)
        .margin_left(12)
        .margin_right(24)
        .margin_top(4)
        .x_label_area_size(44)
        // Room for the lanes' names: "rank 15 (host 3)" is longer.
        .y_label_area_size(if trace.job_hosts() > 1 { 150 } else { 110 })
        .build_cartesian_2d(0.0..x_max, 0.0..n)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc("time (ms from the first event)")
        .x_label_formatter(&|x| plot::short(*x))
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
        .draw()?;
    // The lanes' names, on at most 32 of them.
    let every = ranks.div_ceil(32).max(1);
    let name_style = TextStyle::from((FONT, 13).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
    for rank in (0..ranks).step_by(every as usize) {
        let (x, y) = chart.backend_coord(&(0.0, base(rank) + 0.5));
        root.draw(&Text::new(lane_name(trace, rank), (x - 8, y), name_style.clone()))?;
    }
    // Lane separators.
    chart.draw_series((1..ranks).map(|r| {
        let y = f64::from(r);
        PathElement::new(vec![(0.0, y), (x_max, y)], BLACK.mix(0.15))
    }))?;

    let columns = chart.plotting_area().get_pixel_range().0.len().max(1);
    let column_ns = x_max * 1e6 / columns as f64;
    let column_ms = column_ns / 1e6;
    for lane in &timeline.ranks {
        let time = lane_columns(&lane.events, columns, column_ns);
        let y0 = base(lane.rank);
        for layer in [Layer::State, Layer::Nested, Layer::Suspended] {
            let (lo, hi) = band(layer);
            chart.draw_series(runs(&time, layer).into_iter().map(|r| {
                Rectangle::new(
                    [(r.from as f64 * column_ms, y0 + lo), (r.to as f64 * column_ms, y0 + hi)],
                    KINDS[r.kind].2.filled(),
                )
            }))?;
        }
    }

    // Flows, once per pixel pair: joins under steals, thinner.
    for (kind, color, width) in [
        (FlowKind::Join, JOIN_FLOW.mix(0.55), 1),
        (FlowKind::Steal, STEAL_FLOW.mix(0.9), 2),
    ] {
        let mut seen = HashSet::new();
        let lines = timeline
            .flows
            .iter()
            .filter(|f| f.kind == kind && f.from_ns.is_finite())
            .filter(|f| {
                let px = |ns: f64| (ns / column_ns).floor() as i64;
                seen.insert((f.from_rank, f.to_rank, px(f.from_ns), px(f.to_ns)))
            })
            .map(|f| {
                PathElement::new(
                    vec![
                        (f.from_ns / 1e6, base(f.from_rank) + FLOW_Y),
                        (f.to_ns / 1e6, base(f.to_rank) + FLOW_Y),
                    ],
                    color.stroke_width(width),
                )
            })
            .collect::<Vec<_>>();
        chart.draw_series(lines)?;
    }

    // Instants: wake-ups as ticks above the lane, failures as crosses.
    let mut instants = Vec::new();
    for lane in &timeline.ranks {
        let y0 = base(lane.rank);
        for e in &lane.events {
            let x = e.start_ns / 1e6;
            match e.kind {
                Kind::Wakeup => instants.push(PathElement::new(
                    vec![(x, y0 + 0.92), (x, y0 + 1.0)],
                    WAKEUP.stroke_width(2),
                )),
                Kind::Failure => {
                    for (dy0, dy1) in [(0.15, 0.95), (0.95, 0.15)] {
                        instants.push(PathElement::new(
                            vec![(x - column_ms * 4.0, y0 + dy0), (x + column_ms * 4.0, y0 + dy1)],
                            FAILURE.stroke_width(3),
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    chart.draw_series(instants)?;
    legend(&legend_area, trace, timeline)?;
    root.present()?;
    Ok(())
}

/// One legend entry: a box of the kind's colour, or a line for flows and
/// instants.
enum Swatch {
    Fill(RGBColor),
    Line(RGBColor, u32),
}

/// The legend: the kinds and flows present in the trace (task, steal
/// attempts, quiescence, polls and suspended threads always), in rows.
fn legend(area: &DrawingArea<BitMapBackend<'_>, Shift>, trace: &Trace, timeline: &Timeline) -> PlotResult {
    let present = |kind: Kind| timeline.ranks.iter().any(|r| r.events.iter().any(|e| e.kind == kind));
    let mut entries: Vec<(Swatch, String)> = KINDS
        .iter()
        .filter(|k| !matches!(k.0, Kind::Fetch | Kind::WriteBack) || present(k.0))
        .map(|&(_, _, color, name)| (Swatch::Fill(color), name.to_string()))
        .collect();
    entries.push((
        Swatch::Line(STEAL_FLOW, 2),
        "steal: victim's claim → thief's resumption".into(),
    ));
    if timeline.flow_count(FlowKind::Join) > 0 {
        entries.push((Swatch::Line(JOIN_FLOW, 1), "remote join: child's end → the join".into()));
    }
    if present(Kind::Wakeup) {
        entries.push((Swatch::Line(WAKEUP, 2), "woken on lifelines".into()));
    }
    if present(Kind::Failure) || !trace.incomplete_ranks().is_empty() {
        entries.push((Swatch::Line(FAILURE, 3), "failure".into()));
    }
    let font = TextStyle::from((FONT, 13).into_font());
    let (width, _) = area.dim_in_pixel();
    let (mut x, mut y) = (130i32, 8i32);
    for (swatch, text) in entries {
        let (tw, _) = area.estimate_text_size(&text, &font)?;
        let need = 26 + tw as i32 + 22;
        if x + need > width as i32 - 12 && x > 130 {
            x = 130;
            y += 26;
        }
        match swatch {
            Swatch::Fill(c) => area.draw(&Rectangle::new([(x, y + 2), (x + 18, y + 14)], c.filled()))?,
            Swatch::Line(c, w) => area.draw(&PathElement::new(vec![(x, y + 8), (x + 18, y + 8)], c.stroke_width(w)))?,
        }
        area.draw(&Text::new(text, (x + 24, y + 1), font.clone()))?;
        x += need;
    }
    Ok(())
}

/// The report's section for `DIR/trace-uts/` (the traced UTS run of
/// `scripts/reproduce.sh`): `plots/timeline-uts.png` and what it shows;
/// None when the results hold no trace and no traced run.
pub fn section(res: &crate::data::Results, ctx: &mut Ctx) -> Option<Section> {
    let dir = ctx.dir.join("trace-uts");
    let run = res.of("trace").last();
    if !dir.is_dir() && run.is_none() {
        return None;
    }
    let title = "Timeline — one traced UTS run (beside Figs. 13 and 16)".to_string();
    let what = match run {
        Some(r) => format!(
            "Run {} (`uts {}`, {} mode, {}, `--trace`): **{}**. ",
            r.id,
            r.args,
            r.mode,
            r.shape(),
            r.status.name()
        ),
        None => String::new(),
    };
    let mut drawn = None;
    let img = ctx.plot("timeline-uts", "timeline of a traced UTS run", |path| {
        drawn = Some(draw(&dir, path)?);
        Ok(())
    });
    let Some(d) = drawn else {
        return Some(Section {
            title,
            text: format!("{what}No timeline: {}\n", img.trim()),
        });
    };
    let share = |name: &str| {
        d.shares
            .iter()
            .find(|s| s.0.starts_with(name))
            .map_or(0.0, |s| s.1 * 100.0)
    };
    let text = format!(
        "{what}What each rank did, on one clock (aligned within {} ns): one lane per rank{}, time across \
         ({} ms from the first event to the last). The wide band is the rank's state — running a task \
         (green, {:.1}% of ranks × time), trying to steal (orange, {:.2}%; Fig. 13's phases are inside each \
         attempt), asleep on lifelines (grey, {:.1}%); the narrow band over it is time serving other ranks \
         at a spawn or poll point (red, {:.2}%: Fig. 16's quantity, here per moment), and global memory's \
         fetches and write-backs when the program uses it; the strip under a lane holds its threads \
         suspended in a join. A black line is a steal ({} in all), from the victim's lane at the claim to \
         the thief's where the continuation resumes; blue lines are remote joins ({}). A pixel column \
         shows the state with the most time in it: a steal attempt shorter than a pixel shows where no \
         task ran beside it. \
         {} records{}{}.\n\n{img}\n\
         The trace files are in `trace-uts/`: `trace.json` (Chrome Trace Event JSON, for ui.perfetto.dev), \
         `trace.otf2` (OTF2, for Vampir, where the launcher was built with the OTF2 library), `stats.txt` \
         and `stats.json` (per kind and rank: count, total, mean, max), and each rank's `rank-R.uatrace`; \
         `uat-report timeline trace-uts OUT.png` redraws the plot.\n",
        d.clock_error_ns,
        if d.hosts > 1 {
            format!(" (named with its host; {} hosts in all)", d.hosts)
        } else {
            String::new()
        },
        plot::short(d.length_ms),
        share("task"),
        share("steal"),
        share("quiescent"),
        share("poll"),
        d.steal_flows,
        d.join_flows,
        d.records,
        if d.dropped > 0 {
            format!(", {} dropped (full buffers)", d.dropped)
        } else {
            String::new()
        },
        if d.complete {
            String::new()
        } else {
            format!("; **partial trace** (ranks without a file: {:?})", d.missing)
        },
    );
    Some(Section { title, text })
}

/// `uat-report timeline TRACE_DIR OUT.png`: draws, prints what it drew.
pub fn command(args: &[String]) -> Result<String, String> {
    let [dir, out] = args else {
        return Err("timeline wants a trace directory and the PNG to write (see --help)".into());
    };
    plot::register_fonts()?;
    let d = draw(Path::new(dir), Path::new(out))?;
    let (w, h) = size(d.ranks);
    Ok(format!(
        "uat-report: wrote {out} ({w}×{h}): {} on {}, {} ms, {} records, {} steals, {} remote joins, \
         clocks within {} ns{}",
        d.program,
        crate::data::shape(d.ranks, d.hosts),
        plot::short(d.length_ms),
        d.records,
        d.steal_flows,
        d.join_flows,
        d.clock_error_ns,
        if d.complete { "" } else { "; partial trace" }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use uat_trace::{write_rank_file, Outcome, RankHeader, Record};

    fn rec(kind: Kind, peer: u32, start: u64, end: u64, value: u64) -> Record {
        Record {
            kind: kind as u32,
            peer,
            start,
            end,
            value,
        }
    }

    /// A 4-rank job of `tasks` tasks per rank on `hosts` hosts (1, 2 or
    /// 4; ranks in blocks; ticks = ns, rank 3's clock 500 ns behind): tasks
    /// with polls inside, failed and successful steals with their flows, a
    /// lifeline sleep, a suspended thread, a remote join.
    fn synthetic(dir: &Path, tasks: u64, hosts: u32) {
        for rank in 0..4u32 {
            let mut r = Vec::new();
            let mut t = 1_000 * u64::from(rank);
            for i in 0..tasks {
                r.push(rec(Kind::Task, rank, t, t + 700, 0));
                if i % 3 == 0 {
                    r.push(rec(Kind::Poll, rank, t + 100, t + 150, 0));
                }
                let victim = (rank + 1) % 4;
                r.push(rec(Kind::Steal, victim, t + 700, t + 900, Outcome::Empty as u64));
                if i % 10 == 0 {
                    r.push(rec(Kind::StealFlow, victim, t + 850, t + 1_000, 0));
                }
                t += 1_000;
            }
            r.push(rec(Kind::Quiescent, rank, t, t + 50_000, 0));
            r.push(rec(Kind::Wakeup, (rank + 1) % 4, t + 50_000, t + 50_000, 0));
            r.push(rec(Kind::Suspended, rank, 2_000, t / 2, 4096));
            if rank == 0 {
                r.push(rec(Kind::JoinFlow, 1, 5_000, 6_000, 0xc0));
            }
            let header = RankHeader {
                rank,
                ranks: 4,
                program: "uts".into(),
                ticks_per_s: 1e9,
                origin_ticks: 0,
                origin_ns: if rank == 3 { 500 } else { 0 },
                clock_error_ns: if rank == 0 { 0 } else { 40 },
                recorded: r.len() as u64,
                complete: true,
                host: rank * hosts / 4,
                hosts,
                ..RankHeader::default()
            };
            write_rank_file(dir, &header, &r).unwrap();
        }
    }

    fn temp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("uat-report-timeline-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_synthetic_trace_draws_a_timeline() {
        if plot::register_fonts().is_err() {
            eprintln!("no font: the timeline is not drawn (install fonts-dejavu-core)");
            return;
        }
        let dir = temp("small");
        synthetic(&dir, 200, 1);
        let png = dir.join("timeline.png");
        let d = draw(&dir, &png).unwrap();
        assert_eq!((d.program.as_str(), d.ranks, d.clock_error_ns), ("uts", 4, 40));
        assert_eq!((d.steal_flows, d.join_flows), (80, 1));
        assert!(d.complete && d.missing.is_empty());
        let img = image::open(&png).unwrap().to_rgb8();
        assert_eq!(img.dimensions(), size(4));
        // Not blank: every colour of the main kinds is somewhere on it.
        let has = |c: RGBColor| img.pixels().any(|p| p.0 == [c.0, c.1, c.2]);
        for kind in [Kind::Task, Kind::Steal, Kind::Quiescent, Kind::Poll, Kind::Suspended] {
            let k = KINDS.iter().find(|k| k.0 == kind).unwrap();
            assert!(has(k.2), "no {} on the plot", k.3);
        }
        let white = img.pixels().filter(|p| p.0 == [255, 255, 255]).count();
        assert!(
            white < img.pixels().len() * 9 / 10,
            "{white} white pixels of {}",
            img.pixels().len()
        );
        // The command says what it drew; a directory without a trace is named.
        let msg = command(&[dir.display().to_string(), png.display().to_string()]).unwrap();
        assert!(msg.contains("4 ranks") && msg.contains("80 steals"), "{msg}");
        let e = command(&["/nonexistent/trace".into(), png.display().to_string()]).unwrap_err();
        assert!(e.contains("/nonexistent/trace"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_large_trace_draws_at_the_plots_resolution() {
        if plot::register_fonts().is_err() {
            return;
        }
        let dir = temp("large");
        // About 100k records per rank (tasks, steals, polls, flows).
        synthetic(&dir, 40_000, 1);
        let png = dir.join("timeline.png");
        let t = std::time::Instant::now();
        let d = draw(&dir, &png).unwrap();
        assert!(d.records > 350_000, "{}", d.records);
        assert!(t.elapsed().as_secs() < 30, "{:?}", t.elapsed());
        assert_eq!(image::open(&png).unwrap().to_rgb8().dimensions(), size(4));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn lanes_are_named_with_their_hosts_on_several() {
        let dir = temp("hosts");
        synthetic(&dir, 20, 2);
        // Rank 2 (host 1) left no file: its host is unknown.
        std::fs::remove_file(uat_trace::rank_file(&dir, 2)).unwrap();
        let trace = uat_trace::load(&dir).unwrap();
        let names: Vec<String> = (0..4).map(|r| lane_name(&trace, r)).collect();
        assert_eq!(
            names,
            [
                "rank 0 (host 0)",
                "rank 1 (host 0)",
                "rank 2 (no file)",
                "rank 3 (host 1)"
            ]
        );
        if plot::register_fonts().is_ok() {
            let png = dir.join("timeline.png");
            let msg = command(&[dir.display().to_string(), png.display().to_string()]).unwrap();
            assert!(msg.contains("on 4 ranks on 2 hosts"), "{msg}");
        }
        // One host: the lanes keep their plain names.
        let one = temp("one-host");
        synthetic(&one, 20, 1);
        let trace = uat_trace::load(&one).unwrap();
        assert_eq!(lane_name(&trace, 3), "rank 3");
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&one).unwrap();
    }

    #[test]
    fn columns_sum_time_and_runs_merge_them() {
        let r = |from, to, kind| Run { from, to, kind };
        let mut c = Columns::new(4, 10.0);
        c.add(5.0, 32.0); // 5 + 10 + 10 + 2
        c.add(33.0, 34.0);
        assert_eq!(c.finish(), vec![5.0, 10.0, 10.0, 3.0]);
        let mut time = vec![vec![0.0; 5]; KINDS.len()];
        time[0] = vec![1.0, 1.0, 0.0, 5.0, 1.0]; // task
        time[1] = vec![0.5, 0.0, 0.0, 6.0, 0.0]; // steal
        time[3] = vec![0.0, 0.0, 1.0, 0.0, 0.0]; // poll: another layer
        assert_eq!(runs(&time, Layer::State), vec![r(0, 2, 0), r(3, 4, 1), r(4, 5, 0)]);
        assert_eq!(runs(&time, Layer::Nested), vec![r(2, 3, 3)]);
        assert!(runs(&time, Layer::Suspended).is_empty());
    }

    #[test]
    fn the_size_grows_with_the_ranks_within_bounds() {
        assert_eq!(size(4), (WIDTH, HEADER_PX + 224 + AXIS_PX + LEGEND_PX));
        assert_eq!(size(1).1, size(2).1);
        assert_eq!(size(64).1, HEADER_PX + 1200 + AXIS_PX + LEGEND_PX);
        assert_eq!(size(1024).1, HEADER_PX + 2048 + AXIS_PX + LEGEND_PX);
    }
}
