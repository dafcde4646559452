//! Micro-benchmarks of the runtime's mechanisms.
//!
//! - `micro spawn`: the cost of a spawn + join that is not stolen, next to a
//!   plain function call and `rayon::join`, measured in one run of one binary
//!   (ratios are what to compare on a shared, noisy machine);
//! - `micro latency`: 8-byte get/put between two ranks with and without a
//!   polling thread present (IPSJ 2016 Fig. 11), and the fetch-and-add
//!   latency of the built mode; with hosts (`--hosts`), a get within rank
//!   0's host and one across hosts, the latter with and without the
//!   emulated delay (`UAT_NET_DELAY`) in alternating blocks, so that the
//!   delay a job adds is measured in the job;
//! - `micro fad`: ranks 1..N-1 hammer a counter on rank 0 while rank 0
//!   computes: who pays in each mode (latency for the hammerers, slowdown of
//!   the victim); the final count is checked exactly;
//! - `micro steal`: the time of each steal phase (Fig. 13), averaged over the
//!   steals of a BTC run on two or more ranks, and the remote round trips of
//!   each (counted by the gasnet-sys wrappers);
//! - `micro attention`: rank 0 only spawns (no poll points) while another
//!   rank fetch-and-adds on it: every request must be answered, and in `am`
//!   mode a spawn polls only when a request raised its attention word.

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
    /// 8-byte get/put latency rank 0 -> rank 1, without and with polling
    /// threads; fetch-and-add latency in the built mode; gets within rank
    /// 0's host and across hosts, with and without UAT_NET_DELAY.
    Latency {
        #[arg(long, default_value_t = 20_000)]
        iters: u32,
    },
    /// Ranks 1..N-1 fetch-and-add on rank 0 while rank 0 computes.
    Fad {
        /// Fetch-and-adds per hammering rank.
        #[arg(long, default_value_t = 20_000)]
        per_rank: u64,
        /// Work units of the victim (each ~100 ns, with a poll point).
        #[arg(long, default_value_t = 2_000_000)]
        work: u64,
    },
    /// Steal phase times, averaged over the steals of `btc --depth D` runs,
    /// repeated until at least --min-steals steals (or --max-reps runs).
    Steal {
        #[arg(long, default_value_t = 16)]
        depth: u32,
        #[arg(long, default_value_t = 200)]
        min_steals: u64,
        #[arg(long, default_value_t = 1000)]
        max_reps: u32,
    },
    /// Rank 0 spawns empty tasks (no poll points) while the rank that stole
    /// the root's continuation fetch-and-adds on it --fads times (2 or more
    /// ranks).
    Attention {
        #[arg(long, default_value_t = 2000)]
        fads: u64,
    },
    /// Idle ranks: a run whose root computes --serial-ms without spawning
    /// (the other ranks' worker threads' CPU time per wall second), then a
    /// run that does the same and then runs `btc --depth D` (per rank:
    /// quiescences, wake-ups, steals; with lifelines on, the idle ranks
    /// sleep, then are woken).
    Idle {
        #[arg(long, default_value_t = 300)]
        serial_ms: u64,
        #[arg(long, default_value_t = 22)]
        depth: u32,
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
    let config = uat::Config::from_env().unwrap_or_else(|e| gasnet.fail(e));
    // SAFETY: the micro-benchmarks' tasks hold only plain values across
    // spawn and join.
    let rt = unsafe { uat::Runtime::start(gasnet, config) }.unwrap_or_else(|e| gasnet.fail(e));
    let ok = match o.what {
        What::Spawn { iters, reps } => spawn_main(&rt, iters, reps, o.table),
        What::Latency { iters } => latency_main(&rt, iters, o.table),
        What::Fad { per_rank, work } => fad_main(&rt, per_rank, work, o.table),
        What::Steal {
            depth,
            min_steals,
            max_reps,
        } => steal_main(&rt, depth, min_steals, max_reps, o.table),
        What::Attention { fads } => attention_main(&rt, fads, o.table),
        What::Idle { serial_ms, depth } => idle_main(&rt, serial_ms, depth, o.table),
    };
    gasnet.barrier();
    rt.exit(if ok { 0 } else { 1 });
}

fn header(rt: &uat::Runtime, bench: &str) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("bench".into(), json!(bench));
    m.insert("conduit".into(), json!(uat::runtime::CONDUIT.name()));
    m.insert("fad".into(), json!(uat::runtime::MODE.name()));
    m.insert("ranks".into(), json!(rt.ranks()));
    m.insert("hosts".into(), json!(rt.hosts().count()));
    m.insert("rank_hosts".into(), json!(rt.hosts().table()));
    m.insert(
        "net_delay_us".into(),
        json!(r3(rt.config().get_net_delay().as_secs_f64() * 1e6)),
    );
    m.insert("fad_path".into(), json!(rt.fad_path()));
    m.insert("oversubscribed".into(), json!(rt.oversubscribed()));
    m.insert("steal_protocol".into(), json!(rt.steal_protocol().name()));
    m.insert("lifelines".into(), json!(rt.lifelines()));
    m.insert("poll_interval".into(), json!(rt.poll_interval()));
    m
}

fn r3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn latency_main(rt: &uat::Runtime, iters: u32, table: bool) -> bool {
    // SAFETY: the only segment operations are on one word of the peer's
    // deque entries, outside any run (nobody pushes or steals meanwhile).
    let g = unsafe { rt.gasnet() };
    let peer = if g.size() > 1 { 1 } else { 0 };
    let word = g.segment(peer).base + 4096 * 3; // inside the peer's deque entries: idle now
    let measure = |g: uat::gasnet::Gasnet| {
        let get = uat_bench::mean_us(iters, || {
            black_box(g.get_u64(peer, word));
        });
        let put = uat_bench::mean_us(iters, || g.put_u64(peer, word, 7));
        (get, put)
    };
    g.barrier();
    let plain = if g.rank() == 0 { Some(measure(g)) } else { None };
    let by_host = if g.rank() == 0 {
        Some(gets_by_host(g, iters))
    } else {
        None
    };
    // Ranks rank 0 does not measure against wait asleep, so that on a
    // machine with fewer cores than ranks they leave the cores to the two
    // that take part (the targets poll: over the network they serve).
    let far = (1..g.size()).find(|&r| !g.hosts().is_local_to(0, r));
    if g.rank() != 0 && g.rank() != peer && Some(g.rank()) != far {
        barrier_asleep(g);
    } else {
        g.barrier();
    }
    // Now with a communication-assisting thread polling on every rank.
    let mode = rt.poller_mode();
    let poller = uat::runtime::fad_poller::Poller::start(g, mode, None).expect("a polling thread");
    g.barrier();
    let polled = if g.rank() == 0 { Some(measure(g)) } else { None };
    g.barrier();
    poller.stop();
    g.barrier();
    // Everyone else waits in a barrier, which polls: in `am` mode that is
    // where rank 1 serves the requests.
    let fadd = if g.rank() == 0 {
        let ok = uat::testing::bench_fetch_add(peer, 1).is_some();
        let us = uat_bench::mean_us(iters, || {
            black_box(uat::testing::bench_fetch_add(peer, 1));
        });
        ok.then_some(us)
    } else {
        None
    };
    g.barrier();
    // A request outside the registered words must be refused (AM modes).
    let refused = if g.rank() == 0 && uat::runtime::MODE != uat::runtime::Mode::Native {
        Some(uat::testing::bench_fetch_add_unregistered(peer).is_none())
    } else {
        None
    };
    if g.rank() != 0 {
        return true;
    }
    let ((get, put), (pget, pput)) = (plain.unwrap(), polled.unwrap());
    let mut m = header(rt, "micro latency");
    // The second half ran a polling thread beside every rank.
    let per_rank = uat::runtime::rules::spinning_threads_per_rank(true);
    let over = uat::runtime::rules::oversubscribed(g.host_ranks().len(), per_rank, uat::runtime::rules::cores());
    m.insert("oversubscribed".into(), json!(over));
    m.insert(
        "params".into(),
        json!({"iters": iters, "peer": peer, "poller": mode.name()}),
    );
    m.insert("latency_us".into(), json!({"get": r3(get), "put": r3(put), "get_with_poller": r3(pget), "put_with_poller": r3(pput), "fadd": fadd.map(r3)}));
    let h = by_host.unwrap();
    m.insert(
        "latency_by_host_us".into(),
        json!({
            "near": h.near, "far": h.far,
            "get_within_host": h.within.map(r3),
            "get_across_hosts": h.across.map(r3),
            "get_across_hosts_no_delay": h.across_no_delay.map(r3),
            "delay_added": h.across.zip(h.across_no_delay).map(|(a, b)| r3(a - b)),
            "delayed_ops": h.delayed,
            "delayed_ops_expected": h.delayed.and(h.delayed_expected),
        }),
    );
    m.insert("unregistered_address_refused".into(), json!(refused));
    let verified = fadd.is_some() && refused != Some(false);
    m.insert("verified".into(), json!(verified));
    if table {
        eprintln!("8-byte latency rank 0 -> rank {peer} (µs): get {get:.3}, put {put:.3}; with pollers ({}): get {pget:.3}, put {pput:.3}; fetch-and-add ({}): {:.3}", mode.name(), uat::runtime::MODE.name(), fadd.unwrap_or(f64::NAN));
    }
    println!("{}", Value::Object(m));
    verified
}

/// Rank 0's gets to the first other rank of its host (`near`) and the
/// first rank of another host (`far`), where there are such ranks.
struct GetsByHost {
    near: Option<u32>,
    far: Option<u32>,
    within: Option<f64>,
    across: Option<f64>,
    across_no_delay: Option<f64>,
    /// Operations the process delayed during the cross-host blocks, and
    /// how many gets should have been.
    delayed: Option<u64>,
    delayed_expected: Option<u64>,
}

/// Blocks of each kind of cross-host get, alternating (their medians are
/// compared, so that a slow moment of the machine hits both alike).
const DELAY_BLOCKS: usize = 11;

/// Measured on rank 0 while every other rank polls in a barrier. The
/// cross-host gets alternate blocks with the job's delay and without it:
/// rank 0 alone issues, so switching its own delay changes nothing else.
fn gets_by_host(g: uat::gasnet::Gasnet, iters: u32) -> GetsByHost {
    let hosts = g.hosts();
    let near = (1..g.size()).find(|&r| hosts.is_local(r));
    let far = (1..g.size()).find(|&r| !hosts.is_local(r));
    // Inside the peer's deque entries: idle outside runs.
    let word = |r: u32| g.segment(r).base + 4096 * 3;
    let get = |r: u32, n: u32| {
        uat_bench::mean_us(n, || {
            black_box(g.get_u64(r, word(r)));
        })
    };
    let within = near.map(|r| get(r, iters));
    let (mut delayed, mut delayed_expected) = (None, Some(0));
    let (across, across_no_delay) = match far {
        None => (None, None),
        Some(r) => {
            let delay = g.cross_host_delay();
            let block = (iters / DELAY_BLOCKS as u32).max(10);
            let (mut on, mut off) = (Vec::new(), Vec::new());
            let before = g.delayed_ops();
            for _ in 0..DELAY_BLOCKS {
                on.push(get(r, block));
                g.set_cross_host_delay(std::time::Duration::ZERO);
                off.push(get(r, block));
                g.set_cross_host_delay(delay);
            }
            // Each timed get and its warm-up (a tenth as many) once.
            delayed = Some(g.delayed_ops() - before);
            if !delay.is_zero() {
                delayed_expected = Some(DELAY_BLOCKS as u64 * (block + block / 10) as u64);
            }
            (Some(median(on)), Some(median(off)))
        }
    };
    GetsByHost {
        near,
        far,
        within,
        across,
        across_no_delay,
        delayed,
        delayed_expected,
    }
}

/// A barrier that sleeps between polls (after a short spin).
fn barrier_asleep(g: uat::gasnet::Gasnet) {
    use uat::gasnet::wait::{patiently, until, Patience};
    let patience = Patience {
        spin: std::time::Duration::from_micros(50),
        first_sleep: std::time::Duration::from_micros(100),
        max_sleep: std::time::Duration::from_millis(1),
    };
    let mut barrier = g.barrier_nb();
    patiently(patience, || until(g, || barrier.test()));
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// ~100 ns of arithmetic.
#[inline(never)]
fn work_unit(x: u64) -> u64 {
    (0..40u64).fold(x, |a, i| black_box(a.wrapping_mul(6364136223846793005).wrapping_add(i)))
}

fn fad_main(rt: &uat::Runtime, per_rank: u64, work: u64, table: bool) -> bool {
    // SAFETY: used for rank, size, barriers and failing only.
    let g = unsafe { rt.gasnet() };
    let n = g.size();
    if n < 2 {
        if g.rank() == 0 {
            eprintln!("error: micro fad needs at least 2 ranks (1 victim, N-1 hammering)");
        }
        return false;
    }
    // The victim computes alone first, then while being hammered. Everything
    // runs inside Runtime::run so that the victim's poll points are the
    // runtime's; the hammering ranks stay out of the scheduler (their root
    // closures run on rank 0 only, and nobody spawns).
    let victim_work = move || {
        let t = Instant::now();
        let mut x = 0u64;
        for i in 0..work {
            x = x.wrapping_add(work_unit(i));
            uat::runtime::poll_point();
        }
        black_box(x);
        t.elapsed().as_secs_f64()
    };
    g.barrier();
    let alone = if g.rank() == 0 { Some(victim_work()) } else { None };
    g.barrier();
    // Hammer: every rank > 0 issues per_rank fetch-and-adds; rank 0 computes.
    let mut lat = 0.0;
    let mut busy = 0.0;
    let mut refused = false;
    g.barrier();
    if g.rank() == 0 {
        busy = victim_work();
    } else {
        let t = Instant::now();
        for _ in 0..per_rank {
            refused |= uat::testing::bench_fetch_add(0, 1).is_none();
        }
        lat = t.elapsed().as_secs_f64() * 1e6 / per_rank as f64;
    }
    g.barrier();
    let total = uat::testing::bench_fetch_add(0, 0);
    let lat_sum = rt.sum_over_ranks((lat * 1000.0) as u64);
    let refused_any = rt.sum_over_ranks(refused as u64) > 0;
    if g.rank() != 0 {
        return true;
    }
    let want = per_rank * (n as u64 - 1);
    let verified = total == Some(want) && !refused_any;
    let alone = alone.unwrap();
    let mut m = header(rt, "micro fad");
    m.insert(
        "params".into(),
        json!({"per_rank": per_rank, "work": work, "hammering_ranks": n - 1}),
    );
    m.insert("counter".into(), json!(total));
    m.insert("expected".into(), json!(want));
    m.insert("verified".into(), json!(verified));
    let mean_lat = lat_sum as f64 / 1000.0 / (n - 1) as f64;
    m.insert("fadd_latency_us".into(), json!(r3(mean_lat)));
    m.insert(
        "fadd_per_s".into(),
        json!((want as f64 / (mean_lat * 1e-6 * per_rank as f64)).round()),
    );
    m.insert(
        "victim_busy_s".into(),
        json!({"alone": r3(alone), "hammered": r3(busy), "slowdown": r3(busy / alone)}),
    );
    if table {
        eprintln!("{} hammering ranks x {per_rank} fetch-and-adds on rank 0 ({}): {mean_lat:.3} µs each; victim {alone:.3} s alone, {busy:.3} s hammered ({:.2}x); counter {total:?} (expected {want})", n - 1, uat::runtime::MODE.name(), busy / alone);
    }
    println!("{}", Value::Object(m));
    verified
}

fn btc(depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let a = uat::spawn(move || btc(depth - 1));
    let b = uat::spawn(move || btc(depth - 1));
    1 + a.join() + b.join()
}

fn steal_main(rt: &uat::Runtime, depth: u32, min_steals: u64, max_reps: u32, table: bool) -> bool {
    // SAFETY: used for rank, size, barriers and failing only.
    let g = unsafe { rt.gasnet() };
    let mut total = uat::runtime::Stats::default();
    let mut verified = true;
    let mut reps = 0;
    // Short runs may see no steal at all when ranks share cores: repeat
    // until rank 0 has counted enough (every rank runs as often).
    while reps < max_reps {
        // The last repetition, if no steal happened yet, makes one certain
        // (its first child waits until the root's continuation is stolen),
        // so that the phases are never averaged over nothing.
        let force = reps + 1 == max_reps && total.steals_succeeded == 0 && g.size() > 1;
        let force = rt.broadcast(force as u64) == 1;
        if let Some(tasks) = rt.run(move || {
            if force {
                let waiter = uat::spawn(|| {
                    uat::testing::wait_until_parent_stolen();
                    0u64
                });
                btc(depth) + waiter.join()
            } else {
                btc(depth)
            }
        }) {
            verified &= tasks == (1u64 << (depth + 1)) - 1;
        }
        total.accumulate(&rt.stats());
        reps += 1;
        if rt.broadcast(total.steals_succeeded) >= min_steals {
            break;
        }
    }
    if g.rank() != 0 {
        return true;
    }
    let steals = total.steals_succeeded.max(1) as f64;
    let ns = |c: u64| r3(c as f64 / uat::runtime::tsc_hz() * 1e9 / steals);
    let phases = [
        ("empty_check", total.steal_empty_check_cycles),
        ("claim", total.steal_claim_cycles),
        ("entry", total.steal_entry_cycles),
        ("transfer", total.steal_transfer_cycles),
        ("release", total.steal_release_cycles),
    ];
    let per_steal: serde_json::Map<String, Value> =
        phases.iter().map(|(k, c)| (k.to_string(), json!(ns(*c)))).collect();
    let sum: f64 = phases.iter().map(|(_, c)| ns(*c)).sum();
    let per = |c: u64, n: u64| r3(c as f64 / uat::runtime::tsc_hz() * 1e9 / n.max(1) as f64);
    let mut m = header(rt, "micro steal");
    m.insert(
        "params".into(),
        json!({"depth": depth, "reps": reps, "min_steals": min_steals, "empty_check": rt.config().get_empty_check()}),
    );
    m.insert("steals".into(), json!(total.steals_succeeded));
    m.insert("attempts".into(), json!(total.steals_attempted));
    m.insert(
        "frame_bytes_avg".into(),
        json!((total.frame_bytes_stolen as f64 / steals).round()),
    );
    m.insert("phase_ns".into(), Value::Object(per_steal));
    // Counted by the gasnet-sys wrappers during each successful steal.
    let round_trips = total.steal_round_trips as f64 / steals;
    m.insert("round_trips_per_steal".into(), json!(r3(round_trips)));
    m.insert("steal_ns".into(), json!(r3(sum)));
    m.insert("suspend_ns".into(), json!(per(total.suspend_cycles, total.suspensions)));
    m.insert("resume_ns".into(), json!(per(total.resume_cycles, total.resumes)));
    let verified = verified && total.steals_succeeded > 0;
    m.insert("verified".into(), json!(verified));
    if table {
        eprintln!("{} steals ({} protocol), {round_trips:.2} remote round trips and {:.0} B of frames each; per steal (ns): {}; total {sum:.0} ns; suspend {:.0} ns, resume {:.0} ns", total.steals_succeeded, rt.steal_protocol().name(), total.frame_bytes_stolen as f64 / steals, phases.iter().map(|(k, c)| format!("{k} {:.0}", ns(*c))).collect::<Vec<_>>().join(", "), per(total.suspend_cycles, total.suspensions), per(total.resume_cycles, total.resumes));
    }
    println!("{}", Value::Object(m));
    verified
}

/// What rank 0 saw while it spawned and another rank fetch-and-added on it.
#[derive(Clone, Copy, Default)]
struct Spinner {
    spawns: u64,
    /// Spawns that began with the attention word raised (they polled).
    polling: u64,
    /// Of those, spawns during which a fetch-and-add was served.
    serving: u64,
    /// Rank 0's counter when it stopped.
    counter: u64,
}

/// Spawns empty tasks, with no poll point, until `fads` fetch-and-adds
/// have reached this rank's counter.
fn spin_spawning(fads: u64) -> Spinner {
    // Certain: another rank runs the root's continuation, which hammers.
    uat::testing::wait_until_parent_stolen();
    let mut s = Spinner::default();
    loop {
        let counter = uat::testing::bench_word();
        if counter >= fads {
            s.counter = counter;
            return s;
        }
        let raised = uat::testing::attention_raised();
        let served = uat::testing::fetch_adds_served();
        let _ = uat::spawn(move || leaf(counter)).join();
        s.spawns += 1;
        if raised {
            s.polling += 1;
            s.serving += (uat::testing::fetch_adds_served() > served) as u64;
        }
    }
}

fn attention_main(rt: &uat::Runtime, fads: u64, table: bool) -> bool {
    // SAFETY: used for rank, size, barriers and failing only.
    let g = unsafe { rt.gasnet() };
    if g.size() < 2 {
        g.fail("micro attention needs 2 or more ranks (one spawns, another fetch-and-adds on it)");
    }
    let out = rt.run(move || {
        let spinner = uat::spawn(move || spin_spawning(fads));
        // The root's continuation: on the rank that stole it.
        let hammer = uat::current_rank();
        let start = Instant::now();
        let mut answered = 0u64;
        for _ in 0..fads {
            answered += uat::testing::bench_fetch_add(0, 1).is_some() as u64;
        }
        let ns = start.elapsed().as_nanos() as u64;
        (spinner.join(), ns, hammer, answered as u32)
    });
    let Some((s, ns, hammer, answered)) = out else {
        return true;
    };
    let answered = answered as u64;
    // Two ranks, no periodic polling: nobody but the hammering rank raises
    // rank 0's word, and each request raises it once. The steal may leave it
    // raised twice more: by the raises of its failed attempts (all landed
    // before its claim was served, one observation) and of its claim (which
    // may land after rank 0 served the claim by polling in its wait).
    let polls_bounded = uat::runtime::MODE != uat::runtime::Mode::Am
        || g.size() > 2
        || rt.poll_interval() != 0
        || s.polling <= fads + 2;
    let verified = answered == fads && s.counter == fads && hammer != 0 && polls_bounded;
    let mut m = header(rt, "micro attention");
    m.insert("params".into(), json!({"fads": fads}));
    m.insert("answered".into(), json!(answered));
    m.insert("counter".into(), json!(s.counter));
    m.insert("hammer_rank".into(), json!(hammer));
    m.insert("victim_spawns".into(), json!(s.spawns));
    m.insert("polling_spawns".into(), json!(s.polling));
    m.insert("serving_spawns".into(), json!(s.serving));
    m.insert("fad_latency_us".into(), json!(r3(ns as f64 / 1e3 / fads as f64)));
    m.insert("victim_spawns_per_fad".into(), json!(r3(s.spawns as f64 / fads as f64)));
    m.insert("verified".into(), json!(verified));
    if table {
        eprintln!("{answered}/{fads} fetch-and-adds answered by a rank that only spawns ({}): {:.3} µs each; the victim spawned {} times, {} of them polled, {} served a request", uat::runtime::MODE.name(), ns as f64 / 1e3 / fads as f64, s.spawns, s.polling, s.serving);
    }
    println!("{}", Value::Object(m));
    verified
}

fn spawn_main(rt: &uat::Runtime, iters: u64, reps: u32, table: bool) -> bool {
    // SAFETY: used for rank, size, barriers and failing only.
    let gasnet = unsafe { rt.gasnet() };

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
    let o_table = table;
    if gasnet.rank() == 0 {
        let r = |x: f64| (x * 100.0).round() / 100.0;
        let ghz = uat::runtime::tsc_hz() / 1e9;
        let pair = |ns: f64| json!({"ns": r(ns), "cycles": r(ns * ghz)});
        let line: Value = json!({
            "bench": "micro spawn",
            "conduit": uat::runtime::CONDUIT.name(),
            "fad": uat::runtime::MODE.name(),
            "ranks": gasnet.size(),
            "fad_path": rt.fad_path(),
            "oversubscribed": rt.oversubscribed(),
            "params": {"iters": iters, "reps": reps},
            "poll_interval": rt.poll_interval(),
            "steal_protocol": rt.steal_protocol().name(),
            "plain_call": pair(best.plain),
            "spawn_join": pair(best.spawn_join),
            "uat_join": pair(best.uat_join),
            "rayon_join": pair(rayon_best),
            "tsc_ghz": r(ghz),
            "uat_join_vs_rayon_join": r(best.uat_join / rayon_best),
            "spawn_join_vs_plain_call": r(best.spawn_join / best.plain),
            "verified": best.verified,
            "stats": uat_bench::stats_json(&stats),
        });
        if o_table {
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
    best.verified
}

/// Computes for `ms` milliseconds without spawning; returns the work done.
fn serial_section(ms: u64) -> u64 {
    let end = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    let mut x = 0u64;
    while std::time::Instant::now() < end {
        for _ in 0..1000 {
            x = work_unit(x);
        }
    }
    x
}

/// When this process ran its first task of `micro idle`'s parallel phase
/// (ns of the host's clock; 0: none yet).
static FIRST_TASK_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The host's clock in ns: the ranks of one host read the same clock.
fn host_clock_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// [`btc`], noting when this process first ran one of its tasks.
fn btc_noting_first_task(depth: u32) -> u64 {
    use std::sync::atomic::Ordering::Relaxed;
    if FIRST_TASK_NS.load(Relaxed) == 0 {
        let _ = FIRST_TASK_NS.compare_exchange(0, host_clock_ns(), Relaxed, Relaxed);
    }
    if depth == 0 {
        return 1;
    }
    let a = uat::spawn(move || btc_noting_first_task(depth - 1));
    let b = uat::spawn(move || btc_noting_first_task(depth - 1));
    1 + a.join() + b.join()
}

fn idle_main(rt: &uat::Runtime, serial_ms: u64, depth: u32, table: bool) -> bool {
    // Run 1: nothing but the serial section.
    let start = std::time::Instant::now();
    rt.run(move || std::hint::black_box(serial_section(serial_ms)));
    let serial_wall = start.elapsed().as_secs_f64();
    let serial_only = rt.stats_per_rank();
    // Run 2: the serial section, then a parallel phase.
    let start = std::time::Instant::now();
    let run = rt.run(move || {
        std::hint::black_box(serial_section(serial_ms));
        let serial_end = host_clock_ns();
        (btc_noting_first_task(depth), serial_end)
    });
    let wall = start.elapsed().as_secs_f64();
    let per_rank = rt.stats_per_rank();
    // How soon after the root's serial section each rank ran a task of the
    // tree: its wake-up, whether it slept on lifelines or waited for the
    // root's answer (the ranks must read one clock: one host).
    let serial_end = rt.broadcast(run.map_or(0, |(_, end)| end));
    let first = FIRST_TASK_NS.load(std::sync::atomic::Ordering::Relaxed);
    let mine = if first == 0 {
        0
    } else {
        first.saturating_sub(serial_end).max(1)
    };
    let me = rt.rank();
    let to_first_task: Vec<u64> = (0..rt.ranks())
        .map(|r| rt.sum_over_ranks(if r == me { mine } else { 0 }))
        .collect();
    let one_clock = rt.host_ranks().len() == rt.ranks() as usize;
    let tasks = run.map(|(tasks, _)| tasks);
    if me != 0 {
        return true;
    }
    let us = |ns: u64| (one_clock && ns > 0).then(|| r3(ns as f64 * 1e-3));
    let idle: Vec<f64> = serial_only[1..]
        .iter()
        .map(|s| s.worker_cpu_ns as f64 * 1e-9 / serial_wall)
        .collect();
    let idle_cpu = idle.iter().sum::<f64>() / idle.len().max(1) as f64;
    let verified = tasks == Some((1u64 << (depth + 1)) - 1);
    let secs = |c: u64| c as f64 / uat::runtime::tsc_hz();
    let ranks: Vec<Value> = per_rank
        .iter()
        .enumerate()
        .map(|(r, s)| {
            json!({
                "rank": r,
                "first_task_after_serial_us": us(to_first_task[r]),
                "quiescences": s.quiescences,
                "wakeups": s.wakeups,
                "lifeline_wakes": s.lifeline_wakes,
                "steals": s.steals_succeeded,
                "steal_attempts": s.steals_attempted,
                "quiescent_s": r3(secs(s.quiescent_cycles) * 1e3) / 1e3,
                "wake_latency_max_us": r3(secs(s.wake_latency_max_cycles) * 1e6),
                "unanswered_steal_waits": s.unanswered_steal_waits,
                "unanswered_steal_wait_s": r3(s.unanswered_steal_wait_ns as f64 * 1e-6) / 1e3,
                "worker_cpu_s": r3(s.worker_cpu_ns as f64 * 1e-6) / 1e3,
                "process_cpu_s": r3(s.process_cpu_ns as f64 * 1e-6) / 1e3,
                "cpu_per_wall": r3(s.worker_cpu_ns as f64 * 1e-9 / wall),
            })
        })
        .collect();
    let mut m = header(rt, "micro idle");
    m.insert("params".into(), json!({"serial_ms": serial_ms, "depth": depth}));
    m.insert("time_s".into(), json!(r3(wall * 1e3) / 1e3));
    m.insert("serial_time_s".into(), json!(r3(serial_wall * 1e3) / 1e3));
    m.insert("idle_ranks_cpu_per_wall".into(), json!(r3(idle_cpu)));
    // The same for the whole processes (the rdma-emulated poller and
    // GASNet's threads too), and the job's CPU per wall second over the
    // serial run (every rank's process).
    let process = |s: &uat::runtime::Stats| s.process_cpu_ns as f64 * 1e-9 / serial_wall;
    m.insert(
        "idle_ranks_process_cpu_per_wall".into(),
        json!(r3(
            serial_only[1..].iter().map(process).sum::<f64>() / idle.len().max(1) as f64
        )),
    );
    m.insert(
        "job_cpu_per_wall".into(),
        json!(r3(serial_only.iter().map(process).sum::<f64>())),
    );
    m.insert(
        "idle_ranks_quiescent_share".into(),
        json!(r3(serial_only[1..]
            .iter()
            .map(|s| secs(s.quiescent_cycles))
            .sum::<f64>()
            / (serial_wall * idle.len().max(1) as f64))),
    );
    // Asleep: quiescent on lifelines, or waiting for a victim's answer
    // between back-off polls (across the network).
    m.insert(
        "idle_ranks_asleep_share".into(),
        json!(r3(serial_only[1..]
            .iter()
            .map(|s| secs(s.quiescent_cycles) + s.unanswered_steal_wait_ns as f64 * 1e-9)
            .sum::<f64>()
            / (serial_wall * idle.len().max(1) as f64))),
    );
    m.insert(
        "idle_ranks_first_task_max_us".into(),
        json!(to_first_task[1..].iter().max().and_then(|&ns| us(ns))),
    );
    m.insert("per_rank".into(), Value::Array(ranks));
    m.insert("verified".into(), json!(verified));
    if table {
        eprintln!(
            "lifelines {}: {:.0} ms serial: ranks 1.. used {idle_cpu:.3} CPU s per wall s; then with btc {depth}: {wall:.3} s, per rank (quiescences/wake-ups): {}",
            rt.lifelines(),
            serial_ms,
            per_rank[1..]
                .iter()
                .map(|s| format!("{}/{}", s.quiescences, s.wakeups))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    println!("{}", Value::Object(m));
    verified
}
