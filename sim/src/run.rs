//! Runs one simulated job and reports what the runtime's JSON would.

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult};
use serde_json::json;

use crate::machine::{Machine, MachineError};
use crate::workload::Bench;
use crate::world::{Costs, Event, Ps, Setup, State, World};

/// What a simulated job did.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Simulated time from the run's start to the root's finish (s).
    pub time_s: f64,
    /// Nodes of the benchmark's tree (checked against a serial walk).
    pub nodes: u64,
    /// Spawns, over all ranks.
    pub spawns: u64,
    /// Steal attempts (each a victim chosen), over all ranks.
    pub steals_attempted: u64,
    /// Successful steals.
    pub steals_succeeded: u64,
    /// CPU time in message handlers and polls at spawns, over all ranks (s).
    pub msg_handling_s: f64,
    /// `msg_handling_s` over the ranks' total time.
    pub handler_share: f64,
    /// Idle time (stealing), over all ranks (s).
    pub idle_s: f64,
    /// Time asleep on the lifelines, over all ranks (s; the runtime's
    /// `quiescent_s`).
    pub quiescent_s: f64,
    /// Times a rank went to sleep on its lifelines.
    pub sleeps: u64,
    /// Threads suspended in a join (the runtime's `suspensions`).
    pub suspensions: u64,
    /// Messages sent between ranks (requests, replies not counted).
    pub messages: u64,
    /// Events processed.
    pub events: u64,
}

impl Outcome {
    /// The JSON fields (the runtime's names where it has them).
    pub fn json(&self) -> serde_json::Value {
        json!({
            "time_s": self.time_s,
            "nodes": self.nodes,
            "spawns": self.spawns,
            "steals_attempted": self.steals_attempted,
            "steals_succeeded": self.steals_succeeded,
            "msg_handling_s": self.msg_handling_s,
            "handler_share": self.handler_share,
            "idle_s": self.idle_s,
            "quiescent_s": self.quiescent_s,
            "sleeps": self.sleeps,
            "suspensions": self.suspensions,
            "messages": self.messages,
            "events": self.events,
        })
    }
}

/// Simulates `setup` on `machine`.
pub fn simulate(machine: &Machine, setup: Setup) -> Result<Outcome, MachineError> {
    if setup.ranks == 0 {
        return Err(MachineError("--ranks must be at least 1".into()));
    }
    if setup.ranks > MAX_RANKS {
        return Err(MachineError(format!(
            "--ranks {} is above the {MAX_RANKS} ranks the simulator can hold (a coroutine stack of two memory mappings each, against Linux's default vm.max_map_count of 65,530)",
            setup.ranks
        )));
    }
    let conduit = machine.conduit(&setup.conduit)?;
    let costs = Costs::new(machine, conduit, &setup);
    if let Bench::Btc { depth, .. } = setup.bench {
        // The whole tree on one rank, at the slowest speed a rank can draw:
        // its picoseconds must fit 64 bits with room to spare.
        let per_task = (costs.node + costs.spawn + costs.poll_empty + costs.poll_point) as f64
            + (costs.poll_per_peer as f64) * setup.ranks as f64;
        let serial = crate::workload::btc_nodes(depth) as f64 * per_task * 2.0 * (1.0 + costs.speed_spread);
        if serial > u64::MAX as f64 / 4.0 {
            return Err(MachineError(format!(
                "btc --depth {depth} on {}: its time in picoseconds ({serial:.2e}) would not fit the simulator's 64-bit clock; use a smaller depth",
                machine.name
            )));
        }
    }
    let world: &'static World = Box::leak(Box::new(World::new(setup, costs)));
    let outcome = drive(world);
    let outcome = outcome.map_err(MachineError);
    // SAFETY: every coroutine borrowing `world` has returned or been
    // dropped inside `drive`; nothing else holds the reference.
    drop(unsafe { Box::from_raw(world as *const World as *mut World) });
    outcome
}

/// The most simulated ranks.
pub const MAX_RANKS: u32 = 30_000;

/// Simulated time without a node run, after which a job that has not
/// finished is reported as stuck (1 s).
const STALL_PS: Ps = 1_000_000_000_000;

fn drive(w: &'static World) -> Result<Outcome, String> {
    let n = w.setup.ranks;
    let mut coroutines: Vec<Option<Coroutine<(), (), (), DefaultStack>>> = (0..n)
        .map(|me| {
            let stack = DefaultStack::new(256 * 1024).expect("a coroutine stack");
            Some(Coroutine::with_stack(stack, move |y, ()| crate::rank::run(w, me, y)))
        })
        .collect();
    for r in 0..n {
        w.wake_at(r, 0);
    }
    let mut events = 0u64;
    while let Some((t, e)) = w.pop() {
        events += 1;
        if w.finish.get().is_none() && w.stalled(t, STALL_PS) {
            // Nothing ran a node for a whole simulated second while the root
            // had not finished: a lost message, wake-up or child's
            // completion (thieves would otherwise steal forever).
            let waiting: Vec<String> = w
                .ranks
                .iter()
                .enumerate()
                .filter(|(_, r)| r.state.get() != State::Running || !r.resumable.borrow().is_empty())
                .take(8)
                .map(|(i, r)| format!("rank {i} {:?}", r.state.get()))
                .collect();
            return Err(format!(
                "no task ran for {} s of simulated time before the root finished (a lost message, wake-up or child's completion); ranks not running: {}",
                STALL_PS / 1_000_000_000_000,
                if waiting.is_empty() { "none".into() } else { waiting.join(", ") }
            ));
        }
        if let Some(error) = w.error.borrow().as_ref() {
            return Err(error.clone());
        }
        match e {
            Event::Arrive(i) => crate::serve::arrive(w, i, t),
            Event::Resume { rank, generation } => {
                let r = &w.ranks[rank as usize];
                if r.generation.get() != generation || r.state.get() == State::Done {
                    continue;
                }
                if r.busy_until.get() > t && r.state.get() == State::Blocked {
                    w.wake_at(rank, r.busy_until.get());
                    continue;
                }
                r.now.set(r.now.get().max(t));
                let co = coroutines[rank as usize].as_mut().expect("a live coroutine");
                if let CoroutineResult::Return(()) = co.resume(()) {
                    r.state.set(State::Done);
                    coroutines[rank as usize] = None;
                }
            }
        }
    }
    if let Some(error) = w.error.borrow().as_ref() {
        return Err(error.clone());
    }
    let stuck: Vec<String> = w
        .ranks
        .iter()
        .enumerate()
        .filter(|(i, _)| coroutines[*i].is_some())
        .map(|(i, r)| format!("rank {i} {:?} at {} ps", r.state.get(), r.now.get()))
        .collect();
    if !stuck.is_empty() {
        return Err(format!(
            "the simulation ran out of events with ranks not finished (a lost message or wake-up): {}",
            stuck.join(", ")
        ));
    }
    let finish: Ps = w
        .finish
        .get()
        .ok_or("the simulation ended without the root finishing")?;
    let mut o = Outcome {
        time_s: finish as f64 * 1e-12,
        nodes: 0,
        spawns: 0,
        steals_attempted: 0,
        steals_succeeded: 0,
        msg_handling_s: 0.0,
        handler_share: 0.0,
        idle_s: 0.0,
        quiescent_s: 0.0,
        sleeps: 0,
        suspensions: 0,
        messages: 0,
        events,
    };
    for r in &w.ranks {
        let c = r.counters.borrow();
        o.nodes += c.nodes;
        o.spawns += c.spawns;
        o.steals_attempted += c.steals_attempted;
        o.steals_succeeded += c.steals_succeeded;
        o.msg_handling_s += (c.handler_ps + c.poll_ps) as f64 * 1e-12;
        o.idle_s += c.idle_ps as f64 * 1e-12;
        o.quiescent_s += c.asleep_ps as f64 * 1e-12;
        o.sleeps += c.sleeps;
        o.suspensions += c.suspensions;
        o.messages += c.messages;
    }
    o.handler_share = o.msg_handling_s / (o.time_s * n as f64).max(1e-30);
    Ok(o)
}
