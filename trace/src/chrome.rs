//! Chrome Trace Event JSON: what Perfetto UI (ui.perfetto.dev) and
//! `chrome://tracing` open. One process (pid 0), one track per rank
//! (tid = rank, named `rank R (host H)` after the rank's host), a second
//! track per rank for its threads suspended in joins (tid = [`joins_tid`],
//! named `rank R joins`: they overlap the tasks), intervals as complete
//! events (`X`), instants as `i`, steals and joins as flow arrows (`s` on
//! the source's track, `f` with `"bp":"e"` on the destination's). Times in
//! µs (floats) after the earliest event, on the job's clock.

use std::io::Write;

use serde_json::{json, Map, Value};

use crate::load::{Event, FlowKind, Timeline, Trace};
use crate::record::{Kind, Outcome, Shape};

/// The process id of every event.
pub const PID: u32 = 0;

/// The track of `rank`'s suspended threads: 1000 + rank, or the next power
/// of ten above the job's ranks + rank when there are more than 1000.
pub fn joins_tid(ranks: u32, rank: u32) -> u64 {
    let mut base = 1000u64;
    while base < u64::from(ranks) {
        base *= 10;
    }
    base + u64::from(rank)
}

fn us(ns: f64) -> f64 {
    ns / 1000.0
}

/// The arguments shown with an event: `peer`, `outcome`, `bytes` as its
/// kind defines them.
fn args(e: &Event) -> Value {
    let mut a = Map::new();
    match e.kind {
        Kind::Steal => {
            a.insert("peer".into(), json!(e.peer));
            let outcome =
                Outcome::from_code(e.value).map_or_else(|| format!("unknown ({})", e.value), |o| o.name().into());
            a.insert("outcome".into(), json!(outcome));
        }
        Kind::Fetch | Kind::WriteBack => {
            a.insert("peer".into(), json!(e.peer));
            a.insert("bytes".into(), json!(e.value));
        }
        Kind::Suspended => {
            a.insert("bytes".into(), json!(e.value));
        }
        Kind::Wakeup => {
            a.insert("peer".into(), json!(e.peer));
        }
        _ => {}
    }
    Value::Object(a)
}

/// The name of `rank`'s track: `rank R (host H)`, or `rank R (no file)`
/// (its host is named by its file only).
pub fn track_name(trace: &Trace, rank: u32) -> String {
    match trace.host_of(rank) {
        Some(host) => format!("rank {rank} (host {host})"),
        None => format!("rank {rank} (no file)"),
    }
}

/// The `otherData` object: what the trace is and how far to trust it.
pub fn other_data(trace: &Trace, timeline: &Timeline) -> Value {
    let host_of_rank: Vec<Option<u32>> = (0..trace.job_ranks()).map(|r| trace.host_of(r)).collect();
    let dropped: Map<String, Value> = trace
        .ranks
        .iter()
        .map(|r| (r.header.rank.to_string(), json!(r.header.dropped)))
        .collect();
    json!({
        "program": trace.program(),
        "ranks": trace.job_ranks(),
        "hosts": trace.job_hosts(),
        "host_of_rank": host_of_rank,
        "clock_error_ns": trace.clock_error_ns(),
        "zero_ns": timeline.zero_ns,
        "dropped": trace.dropped(),
        "dropped_per_rank": dropped,
        "complete": trace.complete(),
        "incomplete_ranks": trace.incomplete_ranks(),
        "missing_ranks": trace.missing,
        "steal_flows": timeline.flow_count(FlowKind::Steal),
        "join_flows": timeline.flow_count(FlowKind::Join),
        "unplaced_join_flows": timeline.unplaced_join_flows,
    })
}

/// Writes the trace as Chrome Trace Event JSON, one event a line.
pub fn write_chrome(trace: &Trace, timeline: &Timeline, out: &mut dyn Write) -> std::io::Result<()> {
    let ranks = trace.job_ranks();
    let mut first = true;
    let mut event = |out: &mut dyn Write, v: Value| -> std::io::Result<()> {
        out.write_all(if first { b"\n" } else { b",\n" })?;
        first = false;
        serde_json::to_writer(&mut *out, &v)?;
        Ok(())
    };
    out.write_all(b"{\"traceEvents\":[")?;
    let name = format!("uat {}", trace.program());
    event(
        out,
        json!({"ph": "M", "name": "process_name", "pid": PID, "args": {"name": name}}),
    )?;
    for rank in 0..ranks {
        let name = track_name(trace, rank);
        event(
            out,
            json!({"ph": "M", "name": "thread_name", "pid": PID, "tid": rank, "args": {"name": name}}),
        )?;
        let sort = 2 * u64::from(rank);
        event(
            out,
            json!({"ph": "M", "name": "thread_sort_index", "pid": PID, "tid": rank, "args": {"sort_index": sort}}),
        )?;
    }
    for r in &timeline.ranks {
        let mut events: Vec<&Event> = r
            .events
            .iter()
            .filter(|e| matches!(e.kind.info().shape, Shape::Interval | Shape::Instant))
            .collect();
        // Outer intervals before the inner ones that start with them.
        events.sort_by(|a, b| a.start_ns.total_cmp(&b.start_ns).then(b.end_ns.total_cmp(&a.end_ns)));
        let joins = joins_tid(ranks, r.rank);
        if events.iter().any(|e| e.kind == Kind::Suspended) {
            let name = format!("rank {} joins", r.rank);
            event(
                out,
                json!({"ph": "M", "name": "thread_name", "pid": PID, "tid": joins, "args": {"name": name}}),
            )?;
            let sort = 2 * u64::from(r.rank) + 1;
            event(
                out,
                json!({"ph": "M", "name": "thread_sort_index", "pid": PID, "tid": joins, "args": {"sort_index": sort}}),
            )?;
        }
        for e in events {
            let name = e.kind.info().name;
            let tid = if e.kind == Kind::Suspended {
                joins
            } else {
                u64::from(r.rank)
            };
            let v = match e.kind.info().shape {
                Shape::Interval => json!({
                    "ph": "X", "name": name, "cat": "uat", "pid": PID, "tid": tid,
                    "ts": us(e.start_ns), "dur": us(e.end_ns - e.start_ns), "args": args(e),
                }),
                _ => json!({
                    "ph": "i", "s": "t", "name": name, "cat": "uat", "pid": PID, "tid": tid,
                    "ts": us(e.start_ns), "args": args(e),
                }),
            };
            event(out, v)?;
        }
    }
    for (id, f) in timeline.flows.iter().enumerate() {
        let name = f.kind.name();
        let a = match f.kind {
            FlowKind::Steal => json!({"victim": f.from_rank, "thief": f.to_rank}),
            FlowKind::Join => json!({"from": f.from_rank, "to": f.to_rank, "cell": format!("{:#x}", f.value)}),
        };
        event(
            out,
            json!({
                "ph": "s", "id": id, "name": name, "cat": name, "pid": PID, "tid": f.from_rank,
                "ts": us(f.from_ns), "args": a,
            }),
        )?;
        event(
            out,
            json!({
                "ph": "f", "bp": "e", "id": id, "name": name, "cat": name, "pid": PID, "tid": f.to_rank,
                "ts": us(f.to_ns),
            }),
        )?;
    }
    out.write_all(b"\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":")?;
    serde_json::to_writer(&mut *out, &other_data(trace, timeline))?;
    out.write_all(b"}\n")?;
    Ok(())
}

/// The trace as Chrome Trace Event JSON in memory (for small traces and
/// tests; [`write_chrome`] streams).
pub fn chrome_json(trace: &Trace, timeline: &Timeline) -> Value {
    let mut bytes = Vec::new();
    write_chrome(trace, timeline, &mut bytes).expect("writing to memory");
    serde_json::from_slice(&bytes).expect("write_chrome writes JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_tracks_stay_clear_of_ranks() {
        assert_eq!(joins_tid(4, 3), 1003);
        assert_eq!(joins_tid(1000, 999), 1999);
        assert_eq!(joins_tid(1001, 5), 10005);
    }
}
