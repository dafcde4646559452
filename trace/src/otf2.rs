//! OTF2, the format of Score-P, Vampir and TAU: [`write_otf2`] writes the
//! archive `DIR/trace.otf2` (anchor file; `DIR/trace.def` and `DIR/trace/`
//! next to it) through the OTF2 library.
//!
//! The system tree: the job's node (domain machine) and under it one node
//! per host (a GASNet neighbourhood: the ranks that share memory; domain
//! shared memory). One location (a CPU thread) per rank of the job, each
//! in its own location group (a process) under its host's node — under
//! the job's for a rank without a file, whose host is unknown. Timestamps
//! are ns on the job's clock. The interval kinds are regions, entered and
//! left, nested per location (an interval that would end after the one
//! around it is cut at that one's end, and counted); the instants are
//! regions entered and left at once; threads suspended in joins are left
//! out (they overlap the tasks: see the Chrome JSON's joins tracks). A
//! steal flow is a message on the communicator `steals`, sent on the
//! victim's location at the claim and received on the thief's at the
//! resumption; a paired join flow likewise on `joins`. Each message's tag
//! is its flow's number.

mod archive;
mod sys;

use std::path::{Path, PathBuf};

use crate::load::{FlowKind, Timeline, Trace};
use crate::record::{Kind, Shape};
use archive::{Archive, Domain};

/// The archive's name: `DIR/trace.otf2`, `DIR/trace.def`, `DIR/trace/`.
pub const ARCHIVE: &str = "trace";

/// The kinds written as regions, in region id order.
pub const REGIONS: [Kind; 8] = [
    Kind::Task,
    Kind::Steal,
    Kind::Quiescent,
    Kind::Poll,
    Kind::Fetch,
    Kind::WriteBack,
    Kind::Wakeup,
    Kind::Failure,
];

/// The communicators, in id order: steals, joins.
pub const COMMS: [FlowKind; 2] = [FlowKind::Steal, FlowKind::Join];

/// The system tree node of the job, the root.
pub const JOB_NODE: u32 = 0;

/// The system tree node of `host`: the job's node's children, in host
/// order.
pub fn host_node(host: u32) -> u32 {
    JOB_NODE + 1 + host
}

/// Per rank of the job, the system tree node its location group lies
/// under: its host's, or the job's when the rank left no file (a rank's
/// file is the only one that names its host).
pub fn group_parents(trace: &Trace) -> Vec<u32> {
    (0..trace.job_ranks())
        .map(|rank| trace.host_of(rank).map_or(JOB_NODE, host_node))
        .collect()
}

/// What [`write_otf2`] wrote.
#[derive(Clone, Debug)]
pub struct Otf2Written {
    /// `DIR/trace.otf2`.
    pub anchor: PathBuf,
    /// Locations: one per rank of the job.
    pub locations: u32,
    /// Host nodes of the system tree (under the job's): one per host.
    pub hosts: u32,
    /// Enter events per region, in [`REGIONS`]' order.
    pub enters: Vec<(Kind, u64)>,
    /// Messages (each one send and one receive) per communicator, in
    /// [`COMMS`]' order.
    pub messages: Vec<(FlowKind, u64)>,
    /// Intervals cut short to nest inside the interval around them.
    pub clipped: u64,
    /// What a reader must know.
    pub notes: Vec<String>,
}

/// One event of a location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    Enter(u32),
    Leave(u32),
    Send { to: u32, comm: u32, tag: u32 },
    Recv { from: u32, comm: u32, tag: u32 },
}

/// A location's events in time order, the Enters per region and the
/// intervals clipped.
#[derive(Debug, Default)]
struct Location {
    events: Vec<(u64, Ev)>,
    enters: [u64; REGIONS.len()],
    clipped: u64,
}

/// Nests `intervals` (start, end, region) on one location: sorted by start,
/// the longer first, then by region; each inside the innermost still open
/// around it, its end cut to that one's if later.
fn nest(mut intervals: Vec<(u64, u64, u32)>, loc: &mut Location) {
    intervals.sort_by_key(|&(start, end, region)| (start, std::cmp::Reverse(end), region));
    let mut open: Vec<(u64, u32)> = Vec::new();
    for (start, end, region) in intervals {
        while let Some(&(top_end, top_region)) = open.last() {
            if top_end > start {
                break;
            }
            loc.events.push((top_end, Ev::Leave(top_region)));
            open.pop();
        }
        let mut end = end;
        if let Some(&(top_end, _)) = open.last() {
            if end > top_end {
                end = top_end;
                loc.clipped += 1;
            }
        }
        loc.events.push((start, Ev::Enter(region)));
        loc.enters[region as usize] += 1;
        open.push((end, region));
    }
    while let Some((end, region)) = open.pop() {
        loc.events.push((end, Ev::Leave(region)));
    }
}

/// Every location's events.
fn plan(trace: &Trace, timeline: &Timeline) -> Vec<Location> {
    let ts = |ns: f64| timeline.zero_ns + ns.max(0.0).round() as u64;
    let mut locations: Vec<Location> = (0..trace.job_ranks()).map(|_| Location::default()).collect();
    for r in &timeline.ranks {
        let intervals = r
            .events
            .iter()
            .filter_map(|e| {
                let region = REGIONS.iter().position(|&k| k == e.kind)? as u32;
                Some((ts(e.start_ns), ts(e.end_ns), region))
            })
            .collect();
        nest(intervals, &mut locations[r.rank as usize]);
    }
    let mut messages: Vec<Vec<(u64, Ev)>> = (0..trace.job_ranks()).map(|_| Vec::new()).collect();
    for (n, f) in timeline.flows.iter().enumerate() {
        let comm = COMMS
            .iter()
            .position(|&c| c == f.kind)
            .expect("every flow kind has a communicator") as u32;
        let tag = n as u32;
        messages[f.from_rank as usize].push((
            ts(f.from_ns),
            Ev::Send {
                to: f.to_rank,
                comm,
                tag,
            },
        ));
        messages[f.to_rank as usize].push((
            ts(f.to_ns),
            Ev::Recv {
                from: f.from_rank,
                comm,
                tag,
            },
        ));
    }
    for (loc, mut msgs) in locations.iter_mut().zip(messages) {
        msgs.sort_by_key(|&(t, _)| t);
        // A message goes after the regions' events at its time: a steal's
        // receive inside the task that starts with it.
        let regions = std::mem::take(&mut loc.events);
        let mut msgs = msgs.into_iter().peekable();
        for (t, ev) in regions {
            while let Some(&(mt, m)) = msgs.peek() {
                if mt >= t {
                    break;
                }
                loc.events.push((mt, m));
                msgs.next();
            }
            loc.events.push((t, ev));
        }
        loc.events.extend(msgs);
    }
    locations
}

/// A kind's doc comment as one line of plain text.
fn plain(doc: &str) -> String {
    doc.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("[`", "`")
        .replace("`]", "`")
}

/// Removes the archive `ARCHIVE` that an earlier merge left in `dir`:
/// OTF2 refuses to write over one. A `trace/` folder holding anything but
/// OTF2's `.evt` and `.def` files is left alone, and is an error.
fn remove_old(dir: &Path) -> Result<(), String> {
    let folder = dir.join(ARCHIVE);
    if folder.exists() {
        let entries = std::fs::read_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| format!("{}: {e}", folder.display()))?.path();
            let ours = path.is_file() && matches!(path.extension().and_then(|e| e.to_str()), Some("evt" | "def"));
            if !ours {
                return Err(format!(
                    "{}: in the way of the OTF2 archive, and not an earlier archive's (it holds {})",
                    folder.display(),
                    path.display()
                ));
            }
        }
        std::fs::remove_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    }
    for ext in ["otf2", "def"] {
        let file = dir.join(format!("{ARCHIVE}.{ext}"));
        if file.exists() {
            std::fs::remove_file(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        }
    }
    Ok(())
}

/// Writes the OTF2 archive of `trace` in `dir` (replacing an earlier one).
pub fn write_otf2(trace: &Trace, timeline: &Timeline, dir: &Path) -> Result<Otf2Written, String> {
    let locations = plan(trace, timeline);
    remove_old(dir)?;
    let description = format!(
        "uat trace of {}, {} ranks on {} hosts; clocks aligned within {} ns",
        trace.program(),
        trace.job_ranks(),
        trace.job_hosts(),
        trace.clock_error_ns()
    );
    let mut archive = Archive::create(dir, ARCHIVE, "uat-trace", &description)?;
    archive.open_events()?;
    for (rank, loc) in locations.iter().enumerate() {
        let mut w = archive.events(rank as u64)?;
        for &(t, ev) in &loc.events {
            match ev {
                Ev::Enter(region) => w.enter(t, region)?,
                Ev::Leave(region) => w.leave(t, region)?,
                Ev::Send { to, comm, tag } => w.send(t, to, comm, tag, 0)?,
                Ev::Recv { from, comm, tag } => w.recv(t, from, comm, tag, 0)?,
            }
        }
        w.close()?;
    }
    archive.close_events()?;
    archive.local_defs(0..u64::from(trace.job_ranks()))?;

    let mut strings: Vec<String> = Vec::new();
    let mut s = |text: &str| {
        strings.push(text.to_string());
        (strings.len() - 1) as u32
    };
    let job = s(&format!("uat job: {}", trace.program()));
    let job_class = s("job");
    let host_class = s("host");
    let host_names: Vec<u32> = (0..trace.job_hosts()).map(|h| s(&format!("host {h}"))).collect();
    let rank_names: Vec<u32> = (0..trace.job_ranks())
        .map(|r| {
            s(&if trace.rank(r).is_some() {
                format!("rank {r}")
            } else {
                format!("rank {r} (no file)")
            })
        })
        .collect();
    let region_names: Vec<(u32, u32)> = REGIONS
        .iter()
        .map(|k| (s(k.info().name), s(&plain(k.info().doc))))
        .collect();
    let locations_group = s("ranks");
    let comm_group = s("all ranks");
    let comm_names: Vec<u32> = COMMS.iter().map(|c| s(&format!("{}s", c.name()))).collect();

    let mut defs = archive.global_defs()?;
    let length = timeline.length_ns.max(0.0).ceil() as u64 + 1;
    defs.clock(1_000_000_000, timeline.zero_ns, length)?;
    for (id, text) in strings.iter().enumerate() {
        defs.string(id as u32, text)?;
    }
    defs.system_tree_node(JOB_NODE, job, job_class, sys::UNDEFINED_REF)?;
    defs.system_tree_node_domain(JOB_NODE, Domain::Machine)?;
    for (host, &name) in (0..).zip(&host_names) {
        defs.system_tree_node(host_node(host), name, host_class, JOB_NODE)?;
        defs.system_tree_node_domain(host_node(host), Domain::SharedMemory)?;
    }
    let parents = group_parents(trace);
    for (rank, loc) in locations.iter().enumerate() {
        defs.process(rank as u32, rank_names[rank], parents[rank])?;
        defs.cpu_thread(rank as u64, rank_names[rank], loc.events.len() as u64, rank as u32)?;
    }
    for (id, (&kind, &(name, doc))) in REGIONS.iter().zip(&region_names).enumerate() {
        defs.region(id as u32, name, doc, kind.info().shape == Shape::Instant)?;
    }
    let members: Vec<u64> = (0..u64::from(trace.job_ranks())).collect();
    defs.group(0, locations_group, true, &members)?;
    defs.group(1, comm_group, false, &members)?;
    for (id, &name) in comm_names.iter().enumerate() {
        defs.comm(id as u32, name, 1)?;
    }
    archive.close()?;

    let mut enters = [0u64; REGIONS.len()];
    let mut clipped = 0;
    for loc in &locations {
        for (all, n) in enters.iter_mut().zip(loc.enters) {
            *all += n;
        }
        clipped += loc.clipped;
    }
    let mut notes = Vec::new();
    if clipped > 0 {
        notes.push(format!(
            "OTF2: {clipped} intervals cut short to end with the interval around them (regions must nest)"
        ));
    }
    Ok(Otf2Written {
        anchor: dir.join(format!("{ARCHIVE}.otf2")),
        locations: trace.job_ranks(),
        hosts: trace.job_hosts(),
        enters: REGIONS.iter().copied().zip(enters).collect(),
        messages: COMMS.iter().map(|&c| (c, timeline.flow_count(c) as u64)).collect(),
        clipped,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(intervals: &[(u64, u64, u32)]) -> Location {
        let mut loc = Location::default();
        nest(intervals.to_vec(), &mut loc);
        loc
    }

    #[test]
    fn location_groups_lie_under_their_hosts_node() {
        use crate::file::RankHeader;
        use crate::load::RankTrace;
        // Ranks 0 and 3 on host 1, rank 1 on host 0, rank 2 without a file.
        let ranks = [(0, 1), (1, 0), (3, 1)]
            .into_iter()
            .map(|(rank, host)| RankTrace {
                path: format!("rank-{rank}.uatrace").into(),
                header: RankHeader {
                    rank,
                    ranks: 4,
                    host,
                    hosts: 2,
                    ..RankHeader::default()
                },
                records: Vec::new(),
            })
            .collect();
        let trace = Trace {
            ranks,
            missing: vec![2],
        };
        assert_eq!((host_node(0), host_node(1)), (1, 2));
        assert_eq!(group_parents(&trace), vec![2, 1, JOB_NODE, 2]);
    }

    #[test]
    fn regions_nest_and_crossings_are_cut() {
        // A task 10..50 holding a poll 20..30 and a fetch 40..60 that
        // outlives it; a steal 50..55 after it; an instant at 55.
        let loc = nested(&[(40, 60, 4), (50, 55, 1), (10, 50, 0), (20, 30, 3), (55, 55, 6)]);
        use Ev::*;
        assert_eq!(
            loc.events,
            vec![
                (10, Enter(0)),
                (20, Enter(3)),
                (30, Leave(3)),
                (40, Enter(4)),
                (50, Leave(4)),
                (50, Leave(0)),
                (50, Enter(1)),
                (55, Leave(1)),
                (55, Enter(6)),
                (55, Leave(6)),
            ]
        );
        assert_eq!(loc.clipped, 1);
        assert_eq!(loc.enters[..], [1, 1, 0, 1, 1, 0, 1, 0]);
    }
}
