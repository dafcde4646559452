//! A machine file: the costs the simulator charges, declared up front, each
//! with its source (TOML, `sim/machines/*.toml`).
//!
//! One file describes one machine: its hosts (ranks per host), the work of
//! each benchmark's node on one of its cores, and one or more *conduit
//! profiles* (`[conduit.NAME]`: `smp`, `udp`, `mpi`, `ibv`), each the costs
//! of operations between ranks as that conduit serves them. Every number is
//! a table `{ value = …, source = "…" }`; a number without a source is
//! refused, so that no cost enters the model unexplained. No cost is fitted
//! to a result the model is compared with.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// One declared number and where it comes from.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cost {
    /// The value, in the unit the field's name says (`_ns`: nanoseconds).
    pub value: f64,
    /// Where the value comes from: a paper's table or figure, a file of a
    /// public artifact, or a measurement here (with its command).
    pub source: String,
}

/// How a conduit serves a get, a put or a `native` atomic on another
/// host's rank.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Rma {
    /// The NIC serves it (InfiniBand RDMA, hardware atomics): the target's
    /// CPU does nothing.
    Nic,
    /// An Active Message served at the target's next poll (udp, mpi:
    /// GASNet emulates RMA and atomics with AMs).
    TargetPoll,
}

/// The costs of one conduit on this machine. Times in ns.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conduit {
    /// How RMA and `native` atomics between hosts are served.
    pub rma: Rma,
    /// One-way latency of an 8-byte message between hosts (half a get's
    /// round trip where the NIC serves it; where the target's poll serves
    /// it, `rma = "target-poll"`, half of what is left of the round trip
    /// after the target's `handler_ns + timer_ns`), with no polling thread
    /// present.
    pub net_latency_ns: Cost,
    /// The same with a polling thread running beside each rank (the
    /// `rdma-emulated` mode; IPSJ 2016 Fig. 11: mutual exclusion between
    /// the poll and RMA makes it slower).
    pub net_latency_poller_ns: Cost,
    /// Bytes per ns of a large transfer between hosts (frames of a steal).
    pub net_bytes_per_ns: Cost,
    /// Time a host's NIC is busy per message it sends (the ranks of a host
    /// share it: messages queue there).
    pub nic_gap_ns: Cost,
    /// A get, put or atomic on a rank of the same host (shared memory).
    pub shm_op_ns: Cost,
    /// Bytes per ns of a copy within a host.
    pub shm_bytes_per_ns: Cost,
    /// An Active Message poll that finds nothing, with one peer.
    pub poll_empty_ns: Cost,
    /// The work of a poll at a spawn beyond what the runtime's timer around
    /// the network's poll counts (charged to time, not to
    /// `msg_handling_s`).
    pub poll_point_ns: Cost,
    /// What the empty poll grows by per further peer.
    pub poll_per_peer_ns: Cost,
    /// The CPU time of one request's handler at its target on another
    /// host, reply included.
    pub handler_ns: Cost,
    /// The same at a target on the same host (an Active Message through
    /// shared memory: `am`'s fetch-and-add is a message even there).
    pub shm_handler_ns: Cost,
    /// The owner's own atomic on its deque word where the mode goes through
    /// the network's atomic domain (`native`).
    pub own_atomic_ns: Cost,
    /// A sleeping rank's time between polls.
    pub sleep_poll_ns: Cost,
    /// Reading the clock around a handler (charged per timed handler).
    pub timer_ns: Cost,
}

/// The costs of a rank's own work (per event), in ns.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Local {
    /// A spawn that is not stolen: context save, push, pop, return, without
    /// any poll.
    pub spawn_ns: Cost,
    /// Suspending a thread (a join that waits, a steal's victim side is not
    /// charged).
    pub suspend_ns: Cost,
    /// Resuming a stolen or suspended thread.
    pub resume_ns: Cost,
    /// Bytes of a stolen continuation's frames.
    pub frame_bytes: Cost,
    /// How much one rank's speed on its own work differs from another's:
    /// each rank's nodes and spawns take `1 ± speed_spread` times the
    /// declared cost (a seeded uniform draw per rank). 0: identical ranks.
    pub speed_spread: Cost,
}

/// The work of one node of each benchmark on one core, in ns (the task
/// body, without the runtime's spawn).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Work {
    /// One BTC task (it does nothing but spawn: usually 0).
    pub btc_ns: Cost,
    /// One UTS node (its SHA-1 and child count).
    pub uts_ns: Cost,
    /// One NQueens node (its placement and free columns).
    pub nqueens_ns: Cost,
}

/// The hosts of the machine.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layout {
    /// Compute ranks per host (node).
    pub ranks_per_host: Cost,
    /// Clock rate, for costs a source gives in cycles (GHz).
    pub ghz: Cost,
}

/// A machine file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Machine {
    /// Its short name (`here`, `tsubame25`, `wisteria-o`).
    pub name: String,
    /// What the machine is, in one sentence.
    pub description: String,
    /// Hosts and clock.
    pub layout: Layout,
    /// A rank's own costs.
    pub local: Local,
    /// The work per node of each benchmark.
    pub work: Work,
    /// Costs per conduit, by name (`smp`, `udp`, `mpi`, `ibv`).
    pub conduit: BTreeMap<String, Conduit>,
}

/// Why a machine file was refused.
#[derive(Debug)]
pub struct MachineError(pub String);

impl std::fmt::Display for MachineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MachineError {}

impl Machine {
    /// Reads and checks the machine file at `path`.
    pub fn load(path: &Path) -> Result<Machine, MachineError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| MachineError(format!("cannot read machine file {}: {e}", path.display())))?;
        Machine::parse(&text).map_err(|e| MachineError(format!("machine file {}: {}", path.display(), e.0)))
    }

    /// Parses and checks a machine file's text.
    pub fn parse(text: &str) -> Result<Machine, MachineError> {
        let m: Machine = toml::from_str(text).map_err(|e| MachineError(e.to_string()))?;
        m.check()?;
        Ok(m)
    }

    /// The profile of `conduit`, or an error listing those the file has.
    pub fn conduit(&self, conduit: &str) -> Result<&Conduit, MachineError> {
        self.conduit.get(conduit).ok_or_else(|| {
            MachineError(format!(
                "machine {} has no conduit {conduit:?}; it has: {}",
                self.name,
                self.conduit.keys().cloned().collect::<Vec<_>>().join(", ")
            ))
        })
    }

    /// Every cost of the file with its dotted name (`conduit.udp.handler_ns`).
    pub fn costs(&self) -> Vec<(String, Cost)> {
        let mut out = Vec::new();
        self.clone().for_each_cost_mut(|name, c| out.push((name, c.clone())));
        out
    }

    /// Calls `f` with every cost and its dotted name: the one list of the
    /// fields, which the checks, the listing and the sensitivity knobs use.
    pub fn for_each_cost_mut(&mut self, mut f: impl FnMut(String, &mut Cost)) {
        f("layout.ranks_per_host".into(), &mut self.layout.ranks_per_host);
        f("layout.ghz".into(), &mut self.layout.ghz);
        f("local.spawn_ns".into(), &mut self.local.spawn_ns);
        f("local.suspend_ns".into(), &mut self.local.suspend_ns);
        f("local.resume_ns".into(), &mut self.local.resume_ns);
        f("local.frame_bytes".into(), &mut self.local.frame_bytes);
        f("local.speed_spread".into(), &mut self.local.speed_spread);
        f("work.btc_ns".into(), &mut self.work.btc_ns);
        f("work.uts_ns".into(), &mut self.work.uts_ns);
        f("work.nqueens_ns".into(), &mut self.work.nqueens_ns);
        for (name, c) in self.conduit.iter_mut() {
            let p = |field: &str| format!("conduit.{name}.{field}");
            f(p("net_latency_ns"), &mut c.net_latency_ns);
            f(p("net_latency_poller_ns"), &mut c.net_latency_poller_ns);
            f(p("net_bytes_per_ns"), &mut c.net_bytes_per_ns);
            f(p("nic_gap_ns"), &mut c.nic_gap_ns);
            f(p("shm_op_ns"), &mut c.shm_op_ns);
            f(p("shm_bytes_per_ns"), &mut c.shm_bytes_per_ns);
            f(p("poll_empty_ns"), &mut c.poll_empty_ns);
            f(p("poll_point_ns"), &mut c.poll_point_ns);
            f(p("poll_per_peer_ns"), &mut c.poll_per_peer_ns);
            f(p("handler_ns"), &mut c.handler_ns);
            f(p("shm_handler_ns"), &mut c.shm_handler_ns);
            f(p("own_atomic_ns"), &mut c.own_atomic_ns);
            f(p("sleep_poll_ns"), &mut c.sleep_poll_ns);
            f(p("timer_ns"), &mut c.timer_ns);
        }
    }

    /// Changes the cost `name` (as [`Machine::costs`] names it): `edit`
    /// gets its value and returns the new one. The sensitivity analysis's
    /// knob (`uat-sim predict --scale NAME=F`, `--set NAME=V`).
    pub fn edit(&mut self, name: &str, edit: impl Fn(f64) -> f64, why: &str) -> Result<(), MachineError> {
        let mut hit = false;
        self.for_each_cost_mut(|n, c| {
            if n == name {
                c.value = edit(c.value);
                c.source = format!("{why}; declared: {}", c.source);
                hit = true;
            }
        });
        if !hit {
            let names: Vec<String> = self.costs().into_iter().map(|(n, _)| n).collect();
            return Err(MachineError(format!(
                "no cost named {name:?}; the costs: {}",
                names.join(", ")
            )));
        }
        self.check()
    }

    fn check(&self) -> Result<(), MachineError> {
        if self.conduit.is_empty() {
            return Err(MachineError("no [conduit.NAME] profile".into()));
        }
        for name in self.conduit.keys() {
            if !["smp", "udp", "mpi", "ibv"].contains(&name.as_str()) {
                return Err(MachineError(format!("unknown conduit {name:?} (smp, udp, mpi, ibv)")));
            }
        }
        for (name, c) in self.costs() {
            if c.source.trim().is_empty() {
                return Err(MachineError(format!("{name} has no source")));
            }
            if !c.value.is_finite() || c.value < 0.0 {
                return Err(MachineError(format!(
                    "{name} = {} is not a finite non-negative number",
                    c.value
                )));
            }
        }
        for (name, c) in [
            ("layout.ranks_per_host", &self.layout.ranks_per_host),
            ("layout.ghz", &self.layout.ghz),
        ] {
            if c.value < 1e-9 {
                return Err(MachineError(format!("{name} must be positive")));
            }
        }
        for (name, c) in &self.conduit {
            if c.net_bytes_per_ns.value <= 0.0 || c.shm_bytes_per_ns.value <= 0.0 {
                return Err(MachineError(format!("conduit.{name}: bandwidths must be positive")));
            }
        }
        Ok(())
    }
}
