//! `gasnet-check`: does GASNet-EX work on this machine or cluster?
//!
//! On N ranks it checks, with exact expected values:
//! - Active Messages: every rank pings every rank (itself included) and checks
//!   the replies; every rank checks it served exactly N requests;
//! - RMA: every rank puts a tag into every rank's segment and gets one back
//!   from every rank, plus a 4 KiB block to its neighbour and back;
//! - remote fetch-and-add (u64, GASNet-EX atomic domain): every rank adds 1
//!   K times to one counter on rank 0; the final value is N·K and the fetched
//!   values are exactly 0..N·K (their sum is checked);
//! - barriers: a per-round arrival counter must read N·round after each.
//!
//! Then rank 0 measures 8-byte latencies to rank 1 (or itself on one rank)
//! and prints one JSON line. Any failed check on any rank makes every rank
//! exit 1 and `"ok": false`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use clap::Parser;
use uat::gasnet::am::ids::{GASNET_CHECK_PING as PING, GASNET_CHECK_PONG as PONG};
use uat::gasnet::am::{Arg, Handler, Token};
use uat::gasnet::atomic::{AtomicDomain, Ops, Order};
use uat::gasnet::Gasnet;

/// Checks GASNet-EX on N ranks (AMs, RMA, remote atomics, barriers), measures
/// latencies, and prints one JSON line: {"ok", "conduit", "ranks", "pshm",
/// "segment_bytes", "latency_us": {"get", "put", "am_roundtrip", "fadd"}}.
///
/// Launch with `cargo uat run` (or scripts/run.sh), e.g. `scripts/run.sh --conduit udp -n 4 --
/// gasnet-check`. Exit code 0 when every check on every rank passed.
#[derive(Parser, Debug)]
#[command(name = "gasnet-check", version)]
struct Options {
    /// Segment size per rank, in MiB.
    #[arg(long, default_value_t = 16)]
    segment_mb: usize,
    /// Fetch-and-adds per rank in the atomics check.
    #[arg(long, default_value_t = 1000)]
    fadds: u64,
    /// Iterations of each latency measurement.
    #[arg(long, default_value_t = 2000)]
    iters: u32,
    /// Make this rank report a failed check (tests the failure path).
    #[arg(long, value_name = "RANK")]
    fail_rank: Option<u32>,
}

// Segment layout (byte offsets). Words touched by the atomic domain are never
// accessed any other way.
const FADD_COUNTER: usize = 0;
const FADD_FETCHED_SUM: usize = 8;
const FAILURES: usize = 16;
const BARRIER_ARRIVALS: usize = 24;
const LATENCY_WORD: usize = 32;
const GET_SLOT: usize = 64;
const BLOCK: usize = 4096;
const BLOCK_SLOT: usize = 8192;
const PUT_SLOTS: usize = BLOCK_SLOT + BLOCK;

static PINGS_SERVED: AtomicU64 = AtomicU64::new(0);
static PONGS: AtomicU64 = AtomicU64::new(0);
static PONG_ERRORS: AtomicU64 = AtomicU64::new(0);

fn tag(from: u32, to: u32, salt: u64) -> u64 {
    (salt << 48) ^ ((from as u64) << 24) ^ (to as u64) ^ 0x5a5a_0000_0000
}

/// Request: (sender, intended target, nonce). Replies with nonce + target + 1.
extern "C" fn ping(token: Token, sender: Arg, target: Arg, nonce: Arg) {
    let me = Gasnet::current_rank().expect("GASNet is up while handlers run");
    let ok = token.source() == sender && target == me;
    PINGS_SERVED.fetch_add(1, Ordering::Relaxed);
    let answer = if ok {
        nonce.wrapping_add(target).wrapping_add(1)
    } else {
        0
    };
    token.reply(PONG, &[nonce, answer]);
}

extern "C" fn pong(_: Token, nonce: Arg, answer: Arg) {
    // The replying rank's identity is folded into the nonce by the sender.
    let expected_target = nonce >> 16;
    if answer != nonce.wrapping_add(expected_target).wrapping_add(1) {
        PONG_ERRORS.fetch_add(1, Ordering::Relaxed);
    }
    PONGS.fetch_add(1, Ordering::Release);
}

struct Checker {
    g: Gasnet,
    failures: u64,
}

impl Checker {
    fn expect(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.failures += 1;
            eprintln!("[rank {}] check failed: {}", self.g.rank(), what());
        }
    }
}

fn main() {
    let (g, opt) = uat::cli::start::<Options>("gasnet-check");
    let (me, n) = (g.rank(), g.size());
    let ping_h: for<'a> extern "C" fn(Token<'a>, Arg, Arg, Arg) = ping;
    let pong_h: for<'a> extern "C" fn(Token<'a>, Arg, Arg) = pong;
    if let Err(e) = g.register_handlers(&[Handler::new(PING, ping_h), Handler::new(PONG, pong_h)]) {
        g.fail(e);
    }
    let segment_bytes = opt.segment_mb << 20;
    if segment_bytes < PUT_SLOTS + 8 * n as usize {
        g.fail(format!("--segment-mb {} is too small for {n} ranks", opt.segment_mb));
    }
    let seg = g.attach_segment(segment_bytes).unwrap_or_else(|e| g.fail(e));
    let local = seg.local.unwrap_or(seg.base);
    let ad = g.atomic_domain(Ops::ALL);
    let mut c = Checker { g, failures: 0 };
    g.barrier();

    // Active Messages: N pings out, N pongs back, N pings served.
    for p in 0..n {
        let nonce = (p << 16) | (me & 0xffff);
        g.request(p, PING, &[me, p, nonce]);
    }
    let deadline = Instant::now() + std::time::Duration::from_secs(30);
    while PONGS.load(Ordering::Acquire) < n as u64 {
        g.poll();
        if Instant::now() > deadline {
            g.fail(format!(
                "only {} of {n} AM replies arrived in 30 s",
                PONGS.load(Ordering::Relaxed)
            ));
        }
    }
    c.expect(PONG_ERRORS.load(Ordering::Relaxed) == 0, || {
        format!(
            "{} AM replies carried a wrong answer",
            PONG_ERRORS.load(Ordering::Relaxed)
        )
    });
    g.barrier();
    let served = PINGS_SERVED.load(Ordering::Relaxed);
    c.expect(served == n as u64, || {
        format!("served {served} AM requests, expected {n}")
    });

    // RMA: puts into every rank, gets from every rank, a block round trip.
    // SAFETY: GET_SLOT is in our segment (size checked above); only remote
    // gets read it, after the barrier below.
    unsafe { std::ptr::write_volatile((local + GET_SLOT) as *mut u64, tag(me, me, 2)) };
    for p in 0..n {
        g.put_u64(p, g.segment(p).base + PUT_SLOTS + 8 * me as usize, tag(me, p, 1));
    }
    let block: Vec<u8> = (0..BLOCK).map(|i| (i as u32 * 7 + me) as u8).collect();
    let next = (me + 1) % n;
    g.put(next, g.segment(next).base + BLOCK_SLOT, &block);
    g.barrier();
    for r in 0..n {
        // SAFETY: inside our segment; every put to it completed before the
        // barrier (blocking puts).
        let got = unsafe { std::ptr::read_volatile((local + PUT_SLOTS + 8 * r as usize) as *const u64) };
        c.expect(got == tag(r, me, 1), || {
            format!("put from rank {r}: read {got:#x}, expected {:#x}", tag(r, me, 1))
        });
    }
    for p in 0..n {
        let got = g.get_u64(p, g.segment(p).base + GET_SLOT);
        c.expect(got == tag(p, p, 2), || {
            format!("get from rank {p}: read {got:#x}, expected {:#x}", tag(p, p, 2))
        });
    }
    let prev = (me + n - 1) % n;
    let mut back = vec![0u8; BLOCK];
    g.get(&mut back, me, g.segment(me).base + BLOCK_SLOT);
    let expected: Vec<u8> = (0..BLOCK).map(|i| (i as u32 * 7 + prev) as u8).collect();
    c.expect(back == expected, || {
        format!("the {BLOCK}-byte block put by rank {prev} came back different")
    });

    // Remote fetch-and-add: N·K increments of one counter on rank 0.
    let base0 = g.segment(0).base;
    if me == 0 {
        for word in [FADD_COUNTER, FADD_FETCHED_SUM, FAILURES, BARRIER_ARRIVALS] {
            ad.set(0, base0 + word, 0, Order::Relaxed);
        }
    }
    g.barrier();
    let mut fetched_sum = 0u64;
    for _ in 0..opt.fadds {
        fetched_sum += ad.fetch_add(0, base0 + FADD_COUNTER, 1, Order::Relaxed);
    }
    ad.fetch_add(0, base0 + FADD_FETCHED_SUM, fetched_sum, Order::Relaxed);
    g.barrier();
    let total = opt.fadds * n as u64;
    let count = ad.get(0, base0 + FADD_COUNTER, Order::Relaxed);
    c.expect(count == total, || {
        format!("fetch-and-add counter is {count}, expected {total}")
    });
    let sum = ad.get(0, base0 + FADD_FETCHED_SUM, Order::Relaxed);
    let want = total * total.saturating_sub(1) / 2;
    c.expect(sum == want, || {
        format!("fetched values sum to {sum}, expected {want} (each of 0..{total} exactly once)")
    });

    // Barriers: nobody leaves round k before everyone has arrived in it.
    for round in 1..=3u64 {
        ad.fetch_add(0, base0 + BARRIER_ARRIVALS, 1, Order::Relaxed);
        g.barrier();
        let arrived = ad.get(0, base0 + BARRIER_ARRIVALS, Order::Relaxed);
        c.expect(arrived == round * n as u64, || {
            format!(
                "after barrier {round}: {arrived} arrivals, expected {}",
                round * n as u64
            )
        });
        g.barrier();
    }

    if opt.fail_rank == Some(me) {
        c.expect(false, || "deliberate failure (--fail-rank)".into());
    }
    ad.fetch_add(0, base0 + FAILURES, c.failures, Order::Relaxed);
    g.barrier();
    let failures = ad.get(0, base0 + FAILURES, Order::Relaxed);

    if me == 0 {
        let latency = measure_latency(g, &ad, opt.iters);
        let json = serde_json::json!({
            "ok": failures == 0,
            "conduit": uat::runtime::CONDUIT.name(),
            "ranks": n,
            "pshm": g.pshm(),
            "nbrhd_size": g.neighbourhood().len(),
            "segment_bytes": seg.size,
            "failed_checks": failures,
            "latency_us": latency,
        });
        println!("{json}");
    }
    g.barrier();
    g.exit(if failures == 0 { 0 } else { 1 });
}

/// 8-byte latencies from rank 0 to rank 1 (itself on one rank), in µs.
fn measure_latency(g: Gasnet, ad: &AtomicDomain, iters: u32) -> serde_json::Value {
    let peer = if g.size() > 1 { 1 } else { 0 };
    let word = g.segment(peer).base + LATENCY_WORD;
    let time = |f: &mut dyn FnMut()| uat_bench::mean_us(iters, f);
    let get = time(&mut || {
        std::hint::black_box(g.get_u64(peer, word + 8));
    });
    let put = time(&mut || g.put_u64(peer, word + 8, 1));
    let am = time(&mut || {
        let before = PONGS.load(Ordering::Acquire);
        g.request(peer, PING, &[0, peer, peer << 16]);
        while PONGS.load(Ordering::Acquire) == before {
            g.poll();
        }
    });
    let fadd = time(&mut || {
        ad.fetch_add(peer, word, 1, Order::Relaxed);
    });
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    serde_json::json!({ "get": round(get), "put": round(put), "am_roundtrip": round(am), "fadd": round(fadd) })
}
