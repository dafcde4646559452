//! Deliberate failures, to check that each ends the whole job quickly with a
//! message naming the cause (used by tests/runtime.rs).
//!
//!     scripts/run.sh -n 1 -- target/smp-native/release/examples/fault stack-overflow

use clap::{Parser, ValueEnum};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Fault {
    /// A task recurses without bound (plain calls): the stack guard trips.
    StackOverflow,
    /// A task spawns without bound: a runtime limit trips.
    SpawnForever,
    /// A spawned task panics.
    Panic,
}

/// Runs one deliberate failure inside the runtime.
#[derive(Parser)]
#[command(name = "fault")]
struct Options {
    fault: Fault,
    /// The rank whose task fails (the root task runs on rank 0).
    #[arg(long, default_value_t = 0)]
    rank: u32,
}

#[inline(never)]
fn recurse(depth: u64) -> u64 {
    let pad = std::hint::black_box([depth; 64]);
    if pad[7] == u64::MAX {
        return 0;
    }
    recurse(depth + 1) + pad[3]
}

fn spawn_forever(depth: u64) -> u64 {
    uat::spawn(move || spawn_forever(depth + 1)).join() + 1
}

fn main() {
    let (gasnet, opt) = uat::cli::start::<Options>("fault");
    let config = uat::Config::from_env().unwrap_or_else(|e| gasnet.fail(e));
    let rt = uat::Runtime::start(gasnet, config).unwrap_or_else(|e| gasnet.fail(e));
    let fault = opt.fault;
    let _ = rt.run(move || match fault {
        Fault::StackOverflow => recurse(0),
        Fault::SpawnForever => spawn_forever(0),
        Fault::Panic => uat::spawn(|| -> u64 { panic!("deliberate panic in a task") }).join(),
    });
    eprintln!("error: the fault did not stop the job");
    gasnet.exit(3);
}
