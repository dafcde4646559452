//! The OTF2 archive of a synthetic job (tests/common), read back with the
//! reference reader `otf2-print` (Debian's otf2-tools): the job's node with
//! a node per host under it, each rank's process under its host's node,
//! one location per rank, a message per flow on its communicator, an Enter
//! per interval.

#![cfg(feature = "otf2")]

mod common;

use std::collections::HashMap;
use std::process::Command;

use common::{temp_dir, Job, HOSTS, HOST_OF, JOIN_FLOWS, MISSING, RANKS, STEAL_FLOWS};
use uat_trace::otf2::REGIONS;
use uat_trace::{write_outputs, Kind};

/// `otf2-print ARGS`'s output; fails clearly when the tool is absent or the
/// archive does not validate.
fn otf2_print(args: &[&str]) -> String {
    let out = Command::new("otf2-print").args(args).output().unwrap_or_else(|e| {
        panic!(
            "cannot run otf2-print ({e}): the OTF2 test reads the archive back with it; \
             install OTF2's tools (Debian/Ubuntu: `apt-get install otf2-tools`; `cargo uat setup` installs them)"
        )
    });
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "otf2-print {args:?} failed:\n{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The `<N>` reference after `field: ` on a line of `otf2-print -G`
/// (`Parent: "host::host 0" <1>, ...`); None for `UNDEFINED`.
fn reference(line: &str, field: &str) -> Option<u32> {
    let after = line.split(&format!("{field}: ")).nth(1)?;
    let end = after.find(',').unwrap_or(after.len());
    let value = &after[..end];
    let open = value.rfind('<')?;
    value[open + 1..].strip_suffix('>')?.parse().ok()
}

/// A SYSTEM_TREE_NODE of `otf2-print -G`'s output.
#[derive(Debug)]
struct Node {
    id: u32,
    name: String,
    class: String,
    parent: Option<u32>,
}

/// The system tree of `otf2-print -G`'s output: its SYSTEM_TREE_NODEs, and
/// per LOCATION_GROUP its id and parent node.
fn system_tree(defs: &str) -> (Vec<Node>, Vec<(u32, Option<u32>)>) {
    let id = |l: &str| l.split_whitespace().nth(1).and_then(|w| w.parse::<u32>().ok()).unwrap();
    let quoted = |l: &str, n: usize| l.split('"').nth(n).unwrap_or_default().to_string();
    let nodes = defs
        .lines()
        .filter(|l| l.starts_with("SYSTEM_TREE_NODE "))
        .map(|l| Node {
            id: id(l),
            name: quoted(l, 1),
            class: quoted(l, 3),
            parent: reference(l, "Parent"),
        })
        .collect();
    let groups = defs
        .lines()
        .filter(|l| l.starts_with("LOCATION_GROUP "))
        .map(|l| (id(l), reference(l, "Parent")))
        .collect();
    (nodes, groups)
}

#[test]
fn otf2_print_reads_one_location_per_rank_and_every_flow() {
    let dir = temp_dir("otf2");
    let job = Job::new(&dir);
    job.write();
    let written = write_outputs(&dir).unwrap();
    let anchor = written.otf2.clone().expect("the otf2 feature writes an archive");
    assert_eq!(anchor, dir.join("trace.otf2"));
    let anchor = anchor.to_str().unwrap();

    // Definitions: one location per rank, the regions, the communicators.
    let defs = otf2_print(&["-G", "-Werror", anchor]);
    let locations: Vec<&str> = defs.lines().filter(|l| l.starts_with("LOCATION ")).collect();
    assert_eq!(locations.len(), RANKS as usize, "{defs}");
    for rank in 0..RANKS {
        assert!(
            locations
                .iter()
                .any(|l| l.contains(&format!("\"rank {rank}")) && l.contains("CPU_THREAD")),
            "no location for rank {rank}:\n{defs}"
        );
    }
    assert_eq!(
        defs.lines().filter(|l| l.starts_with("LOCATION_GROUP ")).count(),
        RANKS as usize,
        "{defs}"
    );
    // The system tree: the job at the root, a node per host under it, each
    // rank's process under its host's node (the missing rank's, whose host
    // no file names, under the job's).
    let (nodes, groups) = system_tree(&defs);
    assert_eq!(nodes.len(), 1 + HOSTS as usize, "{defs}");
    let root = nodes.iter().find(|n| n.parent.is_none()).expect("a root");
    assert_eq!(root.class, "job", "{defs}");
    let host_node = |host: u32| {
        let name = format!("host {host}");
        let node = nodes
            .iter()
            .find(|n| n.name == name)
            .unwrap_or_else(|| panic!("no {name}:\n{defs}"));
        assert_eq!((node.class.as_str(), node.parent), ("host", Some(root.id)), "{defs}");
        node.id
    };
    for (rank, parent) in &groups {
        let expected = if *rank == MISSING {
            root.id
        } else {
            host_node(HOST_OF[*rank as usize])
        };
        assert_eq!(*parent, Some(expected), "rank {rank}'s process:\n{defs}");
    }
    assert_eq!(
        defs.lines()
            .filter(|l| l.starts_with("SYSTEM_TREE_NODE_DOMAIN ") && l.contains("SHARED_MEMORY"))
            .count(),
        HOSTS as usize,
        "{defs}"
    );
    for comm in ["\"steals\"", "\"joins\""] {
        assert!(
            defs.lines().any(|l| l.starts_with("COMM ") && l.contains(comm)),
            "{comm}:\n{defs}"
        );
    }
    assert!(
        defs.lines()
            .any(|l| l.starts_with("CLOCK_PROPERTIES") && l.contains("1000000000")),
        "{defs}"
    );

    // Events: every line is `KIND  LOCATION  TIME  ...`.
    let events = otf2_print(&["-Werror", anchor]);
    let mut sends: HashMap<&str, usize> = HashMap::new();
    let mut recvs: HashMap<&str, usize> = HashMap::new();
    let mut enters: HashMap<String, u64> = HashMap::new();
    let mut leaves = 0;
    let mut per_location = vec![0u64; RANKS as usize];
    for line in events.lines() {
        let mut words = line.split_whitespace();
        let (Some(kind), Some(location)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(location) = location.parse::<usize>() else {
            continue;
        };
        per_location[location] += 1;
        let comm = if line.contains("\"steals\"") {
            "steals"
        } else if line.contains("\"joins\"") {
            "joins"
        } else {
            "?"
        };
        match kind {
            "MPI_SEND" => *sends.entry(comm).or_default() += 1,
            "MPI_RECV" => *recvs.entry(comm).or_default() += 1,
            "ENTER" => {
                let region = line.split('"').nth(1).unwrap_or("?").to_string();
                *enters.entry(region).or_default() += 1;
            }
            "LEAVE" => leaves += 1,
            _ => {}
        }
    }
    let count = |m: &HashMap<&str, usize>, c: &str| m.get(c).copied().unwrap_or(0);
    assert_eq!(count(&sends, "steals"), STEAL_FLOWS, "{events}");
    assert_eq!(count(&recvs, "steals"), STEAL_FLOWS, "{events}");
    assert_eq!(count(&sends, "joins"), JOIN_FLOWS, "{events}");
    assert_eq!(count(&recvs, "joins"), JOIN_FLOWS, "{events}");
    assert_eq!(
        sends.values().sum::<usize>() + recvs.values().sum::<usize>(),
        2 * (STEAL_FLOWS + JOIN_FLOWS)
    );
    for kind in REGIONS {
        let name = kind.info().name;
        assert_eq!(
            enters.get(name).copied().unwrap_or(0),
            job.of(kind).count() as u64,
            "Enters of {name}:\n{events}"
        );
    }
    assert!(!enters.contains_key("suspended"));
    assert_eq!(leaves, enters.values().sum::<u64>());
    // The missing rank's location holds the send of the steal from it.
    assert_eq!(per_location[common::MISSING as usize], 1, "{events}");

    // Written again over the first: what it counted.
    let trace = uat_trace::load(&dir).unwrap();
    let w = uat_trace::write_otf2(&trace, &trace.timeline(), &dir).unwrap();
    assert_eq!(w.locations, RANKS);
    assert_eq!(w.hosts, HOSTS);
    assert_eq!(w.clipped, 0);
    assert_eq!(
        w.enters.iter().find(|(k, _)| *k == Kind::Task).map(|e| e.1),
        Some(job.of(Kind::Task).count() as u64)
    );
    common::done(&dir);
}
