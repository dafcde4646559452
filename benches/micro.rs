//! Micro-benchmarks of the runtime's mechanisms.
//!
//! `micro spawn`: the cost of a spawn + join that is not stolen, next to a
//! plain function call and `rayon::join`, measured in one run of one binary
//! (ratios are what to compare on a shared, noisy machine).

use std::hint::black_box;
use std::time::Instant;

use clap::{Parser, Subcommand};
use serde_json::{json, Value};

/// Micro-benchmarks; each prints one JSON line on rank 0 (and a table with
/// --table).
#[derive(Parser, Debug)]
#[command(name = "micro", version)]
struct Options {
    #[command(subcommand)]
    what: What,
    /// Also print a human-readable table (stderr).
    #[arg(long, global = true)]
    table: bool,
}

#[derive(Subcommand, Debug)]
enum What {
    /// spawn+join (not stolen) vs a plain call vs rayon::join, in ns and cycles.
    Spawn {
        /// Iterations of each measured loop.
        #[arg(long, default_value_t = 5_000_000)]
        iters: u64,
        /// Repetitions of the whole comparison (the best of each is kept).
        #[arg(long, default_value_t = 5)]
        reps: u32,
    },
}

#[inline(never)]
fn leaf(x: u64) -> u64 {
    black_box(x).wrapping_mul(3) + 1
}

/// Times `body` over `iters` iterations: (ns per iteration, checksum).
fn time_loop(iters: u64, mut body: impl FnMut(u64) -> u64) -> (f64, u64) {
    let mut sum = 0u64;
    for i in 0..iters / 20 {
        sum = sum.wrapping_add(body(i));
    }
    let t = Instant::now();
    for i in 0..iters {
        sum = sum.wrapping_add(body(i));
    }
    (t.elapsed().as_nanos() as f64 / iters as f64, sum)
}

/// Expected checksum of `iters` + warm-up iterations of `n` leaves each.
fn checksum(iters: u64, n: u64) -> u64 {
    let one = |i: u64| i.wrapping_mul(3) + 1;
    let warm: u64 = (0..iters / 20).fold(0u64, |s, i| s.wrapping_add(one(i).wrapping_mul(n)));
    (0..iters).fold(warm, |s, i| s.wrapping_add(one(i).wrapping_mul(n)))
}

/// Nanoseconds per operation (the best over repetitions).
#[derive(Clone, Copy)]
struct Best {
    plain: f64,
    spawn_join: f64,
    uat_join: f64,
    verified: bool,
}

fn spawn_bench(iters: u64) -> Best {
    let (plain, s1) = time_loop(iters, leaf);
    let (spawn_join, s2) = time_loop(iters, |i| uat::spawn(move || leaf(i)).join());
    let (uat_join, s3) = time_loop(iters, |i| {
        let (a, b) = uat::join(move || leaf(i), move || leaf(i));
        a.wrapping_add(b)
    });
    let verified = s1 == checksum(iters, 1) && s2 == checksum(iters, 1) && s3 == checksum(iters, 2);
    Best {
        plain,
        spawn_join,
        uat_join,
        verified,
    }
}

fn main() {
    let (gasnet, o) = uat::cli::start::<Options>("micro");
    let What::Spawn { iters, reps } = o.what;
    let config = uat::Config::from_env().unwrap_or_else(|e| gasnet.fail(e));
    let rt = uat::Runtime::start(gasnet, config).unwrap_or_else(|e| gasnet.fail(e));

    // rayon::join in a one-thread pool: nothing is stolen there either.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread rayon pool");
    let mut rayon_best = f64::MAX;
    let mut best = Best {
        plain: f64::MAX,
        spawn_join: f64::MAX,
        uat_join: f64::MAX,
        verified: true,
    };
    for _ in 0..reps {
        let (rn, rs) = pool.install(|| {
            time_loop(iters, |i| {
                let (a, b) = rayon::join(|| leaf(i), || leaf(i));
                a.wrapping_add(b)
            })
        });
        rayon_best = rayon_best.min(rn);
        best.verified &= rs == checksum(iters, 2);
        if let Some(b) = rt.run(move || spawn_bench(iters)) {
            best.plain = best.plain.min(b.plain);
            best.spawn_join = best.spawn_join.min(b.spawn_join);
            best.uat_join = best.uat_join.min(b.uat_join);
            best.verified &= b.verified;
        }
    }
    let stats = rt.stats();
    if gasnet.rank() == 0 {
        let r = |x: f64| (x * 100.0).round() / 100.0;
        let ghz = uat::tsc_hz() / 1e9;
        let pair = |ns: f64| json!({"ns": r(ns), "cycles": r(ns * ghz)});
        let line: Value = json!({
            "bench": "micro spawn",
            "conduit": uat::CONDUIT.name(),
            "fad": uat::MODE.name(),
            "ranks": gasnet.size(),
            "params": {"iters": iters, "reps": reps, "poll_interval": rt.config().poll_interval},
            "plain_call": pair(best.plain),
            "spawn_join": pair(best.spawn_join),
            "uat_join": pair(best.uat_join),
            "rayon_join": pair(rayon_best),
            "tsc_ghz": r(ghz),
            "uat_join_vs_rayon_join": r(best.uat_join / rayon_best),
            "spawn_join_vs_plain_call": r(best.spawn_join / best.plain),
            "verified": best.verified,
            "stats": uat::bench::stats_json(&stats),
        });
        if o.table {
            eprintln!("{:<34} {:>10} {:>10}", "operation (best of reps)", "ns", "cycles");
            for (name, ns) in [
                ("plain call", best.plain),
                ("spawn(f).join()", best.spawn_join),
                ("uat::join(a, b)", best.uat_join),
                ("rayon::join(a, b), 1 thread", rayon_best),
            ] {
                eprintln!("{name:<34} {ns:>10.2} {:>10.1}", ns * ghz);
            }
        }
        println!("{line}");
    }
    gasnet.barrier();
    gasnet.exit(if best.verified { 0 } else { 1 });
}
