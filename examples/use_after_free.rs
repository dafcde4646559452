//! Global memory used after its free, from safe code: a `GlobalSlice` is
//! `Copy`, so a copy outlives `free`. The probe keeps one, checks it out
//! (`read`), reads an element (7), makes an allocation inside the checkout
//! that reuses the freed block, and reads the same element through the same
//! unmodified `&[u64]` again. Allowed outcomes: `(7, 7)` (printed as one
//! JSON line, exit 0), or the job ends non-zero with a message naming the
//! rule (it must: a `(7, 0)` would be bytes changed under a live shared
//! reference, and exits 1).
//!
//! `--shape` picks where the memory and its header live, and so which check
//! refuses:
//!
//! - `local`: `alloc` on the probing rank (the header is mapped here: the
//!   checkout itself finds the block freed);
//! - `on`: `alloc_on(last rank)` (the header is rank 0's: over the network
//!   from the last rank, so the allocation inside the checkout is refused);
//! - `distributed`: `alloc_distributed`, the part on rank 0 checked out (from
//!   the last rank over the network: through the cache's mirror);
//! - `atomic`: the allocation inside the checkout is a `GlobalAtomicU64::new`;
//! - `stale-atomic`: a `GlobalAtomicU64` kept after its free, its memory
//!   handed to a slice that is checked out, then `fetch_add` on the stale
//!   atomic inside the checkout.
//!
//! `--rank R` runs the probe on rank R: inside the root task for rank 0,
//! between runs on the runtime's thread for the others.
//!
//! `--checkout-cost N` instead times N small `read` checkouts of one
//! 8-element slice on rank 0 (ns per checkout, one JSON line).
//!
//!     scripts/run.sh -n 1 -- target/smp-native/release/examples/use_after_free --shape local

use std::sync::atomic::Ordering::Relaxed;

use uat::global::{GlobalAtomicU64, GlobalSlice};

/// Where the probe's memory lives (see the program's docs).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Local,
    On,
    Distributed,
    Atomic,
    StaleAtomic,
}

#[derive(clap::Parser, Debug)]
#[command(name = "use_after_free")]
struct Options {
    /// Where the memory lives (see the program's docs).
    #[arg(long, value_enum, default_value = "local")]
    shape: Shape,
    /// The rank that runs the probe.
    #[arg(long, default_value_t = 0)]
    rank: u32,
    /// Time this many small read checkouts instead of probing.
    #[arg(long)]
    checkout_cost: Option<u64>,
}

/// A new allocation like the one `shape` frees (the same size and zone, so
/// that it reuses the freed block).
fn allocate(shape: Shape) -> GlobalSlice<u64> {
    let ranks = uat::ranks();
    match shape {
        Shape::On => GlobalSlice::alloc_on(ranks - 1, 8),
        Shape::Distributed => GlobalSlice::alloc_distributed(8 * ranks as usize),
        _ => GlobalSlice::alloc(8),
    }
}

/// The probe: what the checkout read before and after the allocation made
/// inside it.
fn probe(shape: Shape) -> (u64, u64) {
    if shape == Shape::StaleAtomic {
        let a = GlobalAtomicU64::new(7);
        a.free();
        // The word's block, handed out again.
        let s = GlobalSlice::<u64>::alloc(1);
        s.write(|x| x[0] = 7);
        return s.read(|x| {
            let first = x[0];
            a.fetch_add(1, Relaxed);
            (first, x[0])
        });
    }
    let whole = allocate(shape);
    // The part checked out: the first 8 elements (rank 0's, distributed).
    let kept = whole.slice(..8);
    kept.write(|x| x.fill(7));
    whole.free();
    kept.read(|x| {
        let first = x[0];
        if shape == Shape::Atomic {
            GlobalAtomicU64::new(0);
        } else {
            allocate(shape);
        }
        (first, x[0])
    })
}

/// Times `n` read checkouts of one 8-element slice; ns per checkout.
fn checkout_cost(n: u64) -> f64 {
    let s = GlobalSlice::<u64>::alloc(8);
    s.write(|x| x.fill(1));
    let start = std::time::Instant::now();
    let mut sum = 0u64;
    for _ in 0..n {
        sum = sum.wrapping_add(s.read(|x| std::hint::black_box(x)[0]));
    }
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    assert_eq!(sum, n);
    s.free();
    ns
}

fn main() {
    let (gasnet, opt) = uat::cli::start::<Options>("use_after_free");
    let config = uat::Config::from_env().unwrap_or_else(|e| gasnet.fail(e));
    // SAFETY: the tasks keep only global slices and numbers across spawn and
    // join (the probe breaks global memory's rule on purpose: the runtime
    // must refuse it, or give the allowed answer).
    let rt = unsafe { uat::Runtime::start(gasnet, config) }.unwrap_or_else(|e| gasnet.fail(e));
    if let Some(n) = opt.checkout_cost {
        let ns = rt.run(move || checkout_cost(n));
        if gasnet.rank() == 0 {
            println!(
                "{{\"checkouts\":{n},\"ns_per_checkout\":{:.3}}}",
                ns.unwrap_or(f64::NAN)
            );
        }
        rt.exit(0);
    }
    if opt.rank >= gasnet.size() {
        gasnet.fail(format_args!("--rank {}: the job has {} ranks", opt.rank, gasnet.size()));
    }
    let shape = opt.shape;
    let seen = if opt.rank == 0 {
        rt.run(move || probe(shape))
    } else if gasnet.rank() == opt.rank {
        Some(probe(shape))
    } else {
        None
    };
    let ok = match seen {
        Some((first, second)) => {
            println!(
                "{{\"shape\":\"{shape:?}\",\"rank\":{},\"first\":{first},\"second\":{second}}}",
                opt.rank
            );
            (first, second) == (7, 7)
        }
        None => true,
    };
    let ok = rt.sum_over_ranks(u64::from(!ok)) == 0;
    rt.exit(i32::from(!ok))
}
