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
    pub fn costs(&self) -> Vec<(String, &Cost)> {
        let mut out: Vec<(String, &Cost)> = vec![
            ("layout.ranks_per_host".into(), &self.layout.ranks_per_host),
            ("layout.ghz".into(), &self.layout.ghz),
            ("local.spawn_ns".into(), &self.local.spawn_ns),
            ("local.suspend_ns".into(), &self.local.suspend_ns),
            ("local.resume_ns".into(), &self.local.resume_ns),
            ("local.frame_bytes".into(), &self.local.frame_bytes),
            ("work.btc_ns".into(), &self.work.btc_ns),
            ("work.uts_ns".into(), &self.work.uts_ns),
            ("work.nqueens_ns".into(), &self.work.nqueens_ns),
        ];
        for (name, c) in &self.conduit {
            let p = |f: &str| format!("conduit.{name}.{f}");
            out.extend([
                (p("net_latency_ns"), &c.net_latency_ns),
                (p("net_latency_poller_ns"), &c.net_latency_poller_ns),
                (p("net_bytes_per_ns"), &c.net_bytes_per_ns),
                (p("nic_gap_ns"), &c.nic_gap_ns),
                (p("shm_op_ns"), &c.shm_op_ns),
                (p("shm_bytes_per_ns"), &c.shm_bytes_per_ns),
                (p("poll_empty_ns"), &c.poll_empty_ns),
                (p("poll_per_peer_ns"), &c.poll_per_peer_ns),
                (p("handler_ns"), &c.handler_ns),
                (p("shm_handler_ns"), &c.shm_handler_ns),
                (p("own_atomic_ns"), &c.own_atomic_ns),
                (p("sleep_poll_ns"), &c.sleep_poll_ns),
                (p("timer_ns"), &c.timer_ns),
            ]);
        }
        out
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

/// Scales the cost named `name` (as [`Machine::costs`] names it) by
/// `factor`: the sensitivity analysis's one knob. Returns false when no
/// cost has that name.
pub fn scale(m: &mut Machine, name: &str, factor: f64) -> bool {
    let mut hit = false;
    let mut apply = |full: String, c: &mut Cost| {
        if full == name {
            c.value *= factor;
            hit = true;
        }
    };
    apply("local.spawn_ns".into(), &mut m.local.spawn_ns);
    apply("local.suspend_ns".into(), &mut m.local.suspend_ns);
    apply("local.resume_ns".into(), &mut m.local.resume_ns);
    apply("local.frame_bytes".into(), &mut m.local.frame_bytes);
    apply("work.btc_ns".into(), &mut m.work.btc_ns);
    apply("work.uts_ns".into(), &mut m.work.uts_ns);
    apply("work.nqueens_ns".into(), &mut m.work.nqueens_ns);
    for (cn, c) in m.conduit.iter_mut() {
        let p = |f: &str| format!("conduit.{cn}.{f}");
        apply(p("net_latency_ns"), &mut c.net_latency_ns);
        apply(p("net_latency_poller_ns"), &mut c.net_latency_poller_ns);
        apply(p("net_bytes_per_ns"), &mut c.net_bytes_per_ns);
        apply(p("nic_gap_ns"), &mut c.nic_gap_ns);
        apply(p("shm_op_ns"), &mut c.shm_op_ns);
        apply(p("shm_bytes_per_ns"), &mut c.shm_bytes_per_ns);
        apply(p("poll_empty_ns"), &mut c.poll_empty_ns);
        apply(p("poll_per_peer_ns"), &mut c.poll_per_peer_ns);
        apply(p("handler_ns"), &mut c.handler_ns);
        apply(p("shm_handler_ns"), &mut c.shm_handler_ns);
        apply(p("own_atomic_ns"), &mut c.own_atomic_ns);
        apply(p("sleep_poll_ns"), &mut c.sleep_poll_ns);
        apply(p("timer_ns"), &mut c.timer_ns);
    }
    hit
}
