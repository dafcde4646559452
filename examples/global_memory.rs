//! Global memory end to end (also the tests' program): a block-distributed
//! array filled and summed by parallel tasks through checkouts, a task that
//! returns a 1 MiB result through a global slice, and global atomics
//! updated by every leaf. Prints one JSON line; exit 1 if anything is
//! wrong. `misuse spawn-in-checkout` / `misuse double-free` /
//! `double-free-stolen` / `stale-free` must end the job with a message.
//!
//!     scripts/run.sh -n 4 -- target/smp-native/release/examples/global_memory
//!     scripts/run.sh --real-udp -n 2 -- target/udp-native/release/examples/global_memory

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use uat::global::{GlobalAtomicU64, GlobalSlice};

const LEAF: usize = 2048;

fn value(i: usize) -> u64 {
    (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20
}

/// Writes `value(i)` into every element of `s` (whose first element is
/// element `first` of the whole array), in parallel.
fn fill(s: GlobalSlice<u64>, first: usize) {
    if s.len() <= LEAF {
        s.write(|x| {
            for (k, e) in x.iter_mut().enumerate() {
                *e = value(first + k);
            }
        });
        return;
    }
    let mid = s.len() / 2;
    let (a, b) = s.split_at(mid);
    uat::join(move || fill(a, first), move || fill(b, first + mid));
}

/// Sums `s` in parallel; leaves also record their largest element and
/// count themselves in the global atomics.
fn sum(s: GlobalSlice<u64>, max: GlobalAtomicU64, leaves: GlobalAtomicU64) -> u64 {
    if s.len() <= LEAF {
        let (total, big) = s.read(|x| (x.iter().fold(0u64, |a, &v| a.wrapping_add(v)), x.iter().copied().max()));
        max.fetch_max(big.unwrap_or(0), Relaxed);
        leaves.fetch_add(1, Relaxed);
        return total;
    }
    let (a, b) = s.split_at(s.len() / 2);
    let (x, y) = uat::join(move || sum(a, max, leaves), move || sum(b, max, leaves));
    x.wrapping_add(y)
}

/// A task's result of any size: 1 MiB built on whatever rank runs it.
fn big_result(seed: u8) -> GlobalSlice<u8> {
    let r = GlobalSlice::<u8>::alloc(1 << 20);
    r.write(|x| {
        for (i, e) in x.iter_mut().enumerate() {
            *e = (i as u8).wrapping_mul(31).wrapping_add(seed);
        }
    });
    r
}

#[derive(Clone, Copy, Default)]
struct Report {
    coherent_looks: u32,
    ranks: [u32; 3],
    sum_ok: bool,
    max_ok: bool,
    leaves_ok: bool,
    big_ok: bool,
    big_rank: u32,
}

fn check(n: usize) -> Report {
    let a = GlobalSlice::<u64>::alloc_distributed(n);
    fill(a, 0);
    let max = GlobalAtomicU64::new(0);
    let leaves = GlobalAtomicU64::new(0);
    let total = sum(a, max, leaves);
    let want_total = (0..n).fold(0u64, |s, i| s.wrapping_add(value(i)));
    let want_max = (0..n).map(value).max().unwrap_or(0);
    let expected_leaves = count_leaves(n);
    let sum_ok = total == want_total && a.get(n / 2) == value(n / 2);
    let max_ok = max.load(Relaxed) == want_max;
    let leaves_ok = leaves.load(Relaxed) == expected_leaves;
    max.free();
    leaves.free();
    a.free();
    let h = uat::spawn(|| (big_result(7), uat::current_rank()));
    let (big, big_rank) = h.join();
    let bytes = big.into_vec();
    let big_ok = bytes.len() == 1 << 20
        && bytes
            .iter()
            .enumerate()
            .all(|(i, &b)| b == (i as u8).wrapping_mul(31).wrapping_add(7));
    Report {
        sum_ok,
        max_ok,
        leaves_ok,
        big_ok,
        big_rank,
        ..Report::default()
    }
}

fn count_leaves(n: usize) -> u64 {
    if n <= LEAF {
        1
    } else {
        count_leaves(n / 2) + count_leaves(n - n / 2)
    }
}

/// Moves the calling task's continuation to another rank: a child waits
/// until it is stolen (2 ranks: by the other one). Returns the rank the
/// caller continues on.
fn migrate() -> u32 {
    let h = uat::spawn(|| {
        uat::testing::wait_until_parent_stolen();
        0u8
    });
    let here = uat::current_rank();
    h.join();
    here
}

/// Fork-join coherence across processes, deterministic on 2 ranks (over
/// real UDP the other rank's memory is cached): a rank caches the array
/// and writes it; after a migration the other rank must see the writes
/// (write-back at release points); it writes again, and after migrating
/// back the first rank must not see its stale cached copy (invalidation at
/// acquire points). Returns how many of the three looks saw what they must.
fn coherence(n: usize) -> (u32, [u32; 3]) {
    let a = GlobalSlice::<u64>::alloc_on(0, n);
    a.write(|x| x.fill(1));
    let mut ok = 0;
    let mut ranks = [0u32; 3];
    ranks[0] = migrate();
    // Here on rank 1 (2 ranks): cache the array, then overwrite it.
    ok += u32::from(a.read(|x| x.iter().all(|&v| v == 1)));
    a.update(|x| x.iter_mut().for_each(|v| *v = 2));
    ranks[1] = migrate();
    // Back on rank 0: rank 1's writes must have been written back.
    ok += u32::from(a.read(|x| x.iter().all(|&v| v == 2)));
    a.write(|x| x.fill(3));
    ranks[2] = migrate();
    // On rank 1 again: its cached copy (all 2) must have been forgotten.
    ok += u32::from(a.read(|x| x.iter().all(|&v| v == 3)));
    a.free();
    (ok, ranks)
}

#[derive(clap::Parser, Debug)]
#[command(name = "global_memory")]
struct Options {
    /// Elements of the distributed array.
    #[arg(short, default_value_t = 1 << 20)]
    n: usize,
    /// Run the coherence check instead (2 ranks).
    #[arg(long)]
    coherence: bool,
    /// Misuse to commit (the job must end with a message).
    #[arg(long, value_parser = ["spawn-in-checkout", "double-free", "double-free-stolen", "stale-free"])]
    misuse: Option<String>,
}

fn root(o: uat::Cli<Options>) -> Report {
    match o.misuse.as_deref() {
        Some("spawn-in-checkout") => {
            let s = GlobalSlice::<u64>::alloc(16);
            s.read(|x| uat::spawn(|| 1u64).join() + x[0]);
            unreachable!("the spawn inside the checkout was refused");
        }
        Some("double-free") => {
            let s = GlobalSlice::<u64>::alloc_distributed(16);
            s.free();
            s.free();
            unreachable!("the second free was refused");
        }
        Some("double-free-stolen") => {
            // A block of rank 0's local zone freed twice on another rank:
            // the child spawns (up to 10 s) until the continuation, which
            // an idle rank steals, has started; the continuation frees the
            // block (one compare-and-swap each, the first followed by
            // GLOBAL_FREE). Where nobody steals it, the frees are local and
            // refused the same way.
            let s = GlobalSlice::<u64>::alloc(16);
            let started = GlobalAtomicU64::new(0);
            let child = uat::spawn(move || {
                let t = std::time::Instant::now();
                // Spawns poll: the thief's requests are served.
                while started.load(Acquire) == 0 && t.elapsed().as_secs() < 10 {
                    uat::spawn(|| 0u8).join();
                }
            });
            started.swap(1, Release);
            eprintln!(
                "global_memory: freeing rank {}'s block on rank {}",
                s.home(0),
                uat::current_rank()
            );
            s.free();
            s.free();
            child.join();
            unreachable!("the second free was refused");
        }
        Some("stale-free") => {
            // A handle of an earlier generation of an address that was
            // handed out again: its free must not free the new block.
            let old = GlobalSlice::<u64>::alloc(16);
            old.free();
            let new = GlobalSlice::<u64>::alloc(16);
            // The same address (the raw handle's first word), another
            // generation.
            assert_eq!(new.to_raw()[0], old.to_raw()[0], "the address was handed out again");
            assert_ne!(new.to_raw(), old.to_raw());
            old.free();
            unreachable!("the stale handle's free was refused");
        }
        _ if o.coherence => {
            let (coherent_looks, ranks) = coherence(o.n);
            Report {
                coherent_looks,
                ranks,
                sum_ok: coherent_looks == 3,
                max_ok: true,
                leaves_ok: true,
                big_ok: true,
                big_rank: 0,
            }
        }
        _ => check(o.n),
    }
}

fn main() {
    // SAFETY: the tasks keep only global slices, atomics and numbers across
    // spawn and join; checkouts end before them.
    unsafe {
        uat::launch_then(root, |r: Report| {
            println!(
                "{{\"sum_ok\":{},\"max_ok\":{},\"leaves_ok\":{},\"big_ok\":{},\"big_rank\":{},\
                 \"coherent_looks\":{},\"coherence_ranks\":{:?}}}",
                r.sum_ok, r.max_ok, r.leaves_ok, r.big_ok, r.big_rank, r.coherent_looks, r.ranks
            );
            i32::from(!(r.sum_ok && r.max_ok && r.leaves_ok && r.big_ok))
        })
    }
}
