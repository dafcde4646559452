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
    /// A spawned task panics (on the rank given by --rank: a leaf of a
    /// parallel tree panics when it runs there).
    Panic,
    /// Keeps every rank busy for a minute (for killing a rank from outside).
    Spin,
    /// A frame without stack probes (as C code or `alloca` makes), 16 MiB
    /// large, below a task's stack: larger than the stack region, so it
    /// lands below it.
    BigFrame,
    /// A task overflows its stack inside `println!` formatting (holding
    /// stdout's lock): the report must not need that lock.
    OverflowInPrint,
}

/// Runs one deliberate failure inside the runtime.
#[derive(Parser)]
#[command(name = "fault")]
struct Options {
    fault: Fault,
    /// The rank whose task fails (the root task runs on rank 0).
    #[arg(long, default_value_t = 0)]
    rank: u32,
    /// Write this rank's process id to DIR/rank-R.pid at start.
    #[arg(long, value_name = "DIR")]
    pid_dir: Option<std::path::PathBuf>,
}

#[inline(never)]
fn recurse(depth: u64) -> u64 {
    let pad = std::hint::black_box([depth; 64]);
    if pad[7] == u64::MAX {
        return 0;
    }
    recurse(depth + 1) + pad[3]
}

/// A tree of tasks whose leaves panic when they run on `rank`.
fn panic_tree(depth: u32, rank: u32) -> u64 {
    if depth == 0 {
        if uat::current_rank() == rank {
            panic!("deliberate panic in a task on rank {rank}");
        }
        // Some work, so that other ranks have time to steal.
        return (0..2000u64).fold(0, |a, i| a ^ std::hint::black_box(i));
    }
    let (a, b) = uat::join(move || panic_tree(depth - 1, rank), move || panic_tree(depth - 1, rank));
    a + b
}

/// Busy work that lasts `until` (seconds since the epoch).
fn spin_tree(depth: u32, until: u64) -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    if depth == 0 || now >= until {
        return (0..20_000u64).fold(0, |a, i| a ^ std::hint::black_box(i));
    }
    let (a, b) = uat::join(move || spin_tree(depth - 1, until), move || spin_tree(depth - 1, until));
    a + b + spin_tree(depth - 1, until)
}

/// A frame of `bytes` without stack probes: move the stack pointer down and
/// store at the bottom, as a C function with a large local array compiled
/// without -fstack-clash-protection does.
#[inline(never)]
fn big_frame(bytes: usize) -> u64 {
    // SAFETY: deliberately unsafe: writes one word `bytes` below the stack
    // pointer (the fault under test); restores rsp before returning.
    unsafe {
        std::arch::asm!(
            "sub rsp, {n}",
            "mov qword ptr [rsp], 0",
            "add rsp, {n}",
            n = in(reg) bytes,
        );
    }
    bytes as u64
}

/// Formats itself by recursing without bound.
struct Bottomless(u64);

impl std::fmt::Display for Bottomless {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pad = std::hint::black_box([self.0; 32]);
        write!(f, "{}", Bottomless(pad[3] + 1))
    }
}

fn spawn_forever() -> u64 {
    uat::spawn(spawn_forever).join() + 1
}

fn main() {
    let (gasnet, opt) = uat::cli::start::<Options>("fault");
    let config = uat::Config::from_env().unwrap_or_else(|e| gasnet.fail(e));
    // SAFETY: the faults here are of other kinds: the tasks hold only
    // numbers across spawn and join.
    let rt = unsafe { uat::Runtime::start(gasnet, config) }.unwrap_or_else(|e| gasnet.fail(e));
    if let Some(dir) = &opt.pid_dir {
        std::fs::write(
            dir.join(format!("rank-{}.pid", gasnet.rank())),
            std::process::id().to_string(),
        )
        .expect("pid file");
    }
    let (fault, rank) = (opt.fault, opt.rank);
    let until = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 60;
    let _ = rt.run(move || match fault {
        Fault::StackOverflow => recurse(0),
        Fault::SpawnForever => spawn_forever(),
        Fault::Panic if rank == 0 => uat::spawn(|| -> u64 { panic!("deliberate panic in a task") }).join(),
        Fault::Panic => panic_tree(30, rank),
        Fault::Spin => spin_tree(40, until),
        Fault::BigFrame => big_frame(16 << 20),
        Fault::OverflowInPrint => {
            println!("{}", Bottomless(0));
            0
        }
    });
    eprintln!("error: the fault did not stop the job");
    gasnet.exit(3);
}
