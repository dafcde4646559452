//! The lifelines experiment (Saraswat et al., PPoPP'11): the idle
//! ranks' worker CPU with lifelines on and off (`micro idle`), and each
//! benchmark's time, steal attempts per steal and message-handling share,
//! on against off in alternating runs.

use std::collections::BTreeMap;

use crate::data::{Results, Run};
use crate::section::{Ctx, Section};
use crate::table::{fmt, median, spread, Table};

/// `on` or `off`, from the benchmark's `lifelines` field (`on w=8 z=2`).
fn setting(r: &Run) -> Option<&'static str> {
    let v = r.output.as_ref()?.get("lifelines")?.as_str()?;
    Some(if v.starts_with("on") { "on" } else { "off" })
}

/// The benchmark, with the UTS tree when it is T3 (`-t 0`, binomial).
fn label(r: &Run) -> String {
    if r.bench == "uts" && r.args.contains("-t 0 ") {
        "uts T3".into()
    } else {
        r.bench.clone()
    }
}

pub fn section(res: &Results, ctx: &mut Ctx) -> Option<Section> {
    let runs: Vec<&Run> = res.of("lifelines").filter(|r| r.status.usable()).collect();
    if runs.is_empty() {
        return None;
    }
    // (bench, mode, ranks, conduit) -> setting -> runs
    type Key = (String, String, u32, String);
    let mut groups: BTreeMap<Key, BTreeMap<&str, Vec<&Run>>> = BTreeMap::new();
    for r in &runs {
        if let Some(s) = setting(r) {
            let mut conduit = r.conduit.clone().unwrap_or_else(|| res.meta_str("conduit"));
            if r.env.contains("GASNET_SUPERNODE_MAXSIZE=1") {
                conduit.push_str(" (no shared memory)");
            }
            groups
                .entry((label(r), r.mode.clone(), r.ranks, conduit))
                .or_default()
                .entry(s)
                .or_default()
                .push(r);
        }
    }
    let mut idle = Table::new(&[
        "conduit",
        "mode",
        "ranks",
        "idle CPU s/s, on",
        "idle CPU s/s, off",
        "on / off",
        "asleep share, on",
        "quiescences / wake-ups per idle rank (min), on",
        "with the tree: time on / off",
    ]);
    let mut thr = Table::new(&[
        "bench",
        "mode",
        "ranks",
        "time on (s)",
        "time off (s)",
        "on / off",
        "spread on",
        "spread off",
        "attempts per steal on",
        "attempts per steal off",
        "msg share on",
        "msg share off",
    ]);
    for ((bench, mode, ranks, conduit), by) in &groups {
        let on = by.get("on").cloned().unwrap_or_default();
        let off = by.get("off").cloned().unwrap_or_default();
        if bench == "micro-idle" {
            let cpu = |rs: &[&Run]| median(rs.iter().filter_map(|r| r.num(&["idle_ranks_cpu_per_wall"])).collect());
            let (c_on, c_off) = (cpu(&on), cpu(&off));
            let asleep = median(on.iter().filter_map(|r| r.num(&["idle_ranks_asleep_share"])).collect());
            let wall = |rs: &[&Run]| median(rs.iter().filter_map(|r| r.time_s()).collect());
            let qw = on
                .iter()
                .filter_map(|r| r.output.as_ref()?.get("per_rank")?.as_array().cloned())
                .map(|ranks| {
                    let min = |k: &str| ranks[1..].iter().filter_map(|x| x.get(k)?.as_u64()).min().unwrap_or(0);
                    format!("{} / {}", min("quiescences"), min("wakeups"))
                })
                .collect::<Vec<_>>()
                .join(", ");
            idle.push(vec![
                conduit.clone(),
                mode.clone(),
                ranks.to_string(),
                fmt(c_on, 3),
                fmt(c_off, 3),
                fmt(c_on.zip(c_off).map(|(a, b)| a / b), 3),
                fmt(asleep, 3),
                qw,
                fmt(wall(&on).zip(wall(&off)).map(|(a, b)| a / b), 3),
            ]);
            continue;
        }
        let times = |rs: &[&Run]| rs.iter().filter_map(|r| r.time_s()).collect::<Vec<_>>();
        let (t_on, t_off) = (times(&on), times(&off));
        let (m_on, m_off) = (median(t_on.clone()), median(t_off.clone()));
        let per_steal = |rs: &[&Run]| {
            median(
                rs.iter()
                    .filter_map(|r| {
                        Some(r.num(&["stats", "steals_attempted"])? / r.num(&["stats", "steals_succeeded"])?)
                    })
                    .collect(),
            )
        };
        let msg = |rs: &[&Run]| {
            median(
                rs.iter()
                    .filter_map(|r| Some(r.num(&["stats", "msg_handling_s"])? / (r.time_s()? * r.ranks as f64)))
                    .collect(),
            )
        };
        thr.push(vec![
            bench.clone(),
            mode.clone(),
            ranks.to_string(),
            fmt(m_on, 3),
            fmt(m_off, 3),
            fmt(m_on.zip(m_off).map(|(a, b)| a / b), 3),
            spread(&t_on),
            spread(&t_off),
            fmt(per_steal(&on), 1),
            fmt(per_steal(&off), 1),
            fmt(msg(&on), 4),
            fmt(msg(&off), 4),
        ]);
    }
    ctx.csv("lifelines-idle", &idle);
    ctx.csv("lifelines", &thr);
    let mut text = String::from(
        "Idle ranks with lifelines (`UAT_LIFELINES=on`: after `w` failed steals a rank registers on its \
         lifeline buddies and sleeps until one of them has work) against random stealing until the run \
         ends (`off`). `micro idle`: the root computes without spawning; the other ranks' worker-thread \
         CPU seconds per wall second (the `rdma-emulated` poller thread, which spins by design, is not \
         counted), the share of the serial time they spent asleep (quiescent on lifelines, or, across \
         the network, waiting for the computing root's answer between back-off polls), and in a second \
         run with a parallel phase after it, each idle rank's quiescences and wake-ups and the run's time \
         on against off. On smp, `micro idle` also runs over real UDP (`udp --real-udp`) and over mpi \
         without shared memory (`GASNET_SUPERNODE_MAXSIZE=1`), where a thief's operations wait for the \
         victim to poll. The benchmarks ran alternately on and off; medians, with the spread of the runs.\n\n",
    );
    if !idle.is_empty() {
        text.push_str(&idle.markdown());
        text.push('\n');
    }
    if !thr.is_empty() {
        text.push_str(&thr.markdown());
    }
    Some(Section {
        title: "Lifelines: idle ranks sleep (PPoPP'11)".into(),
        text,
    })
}
