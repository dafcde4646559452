//! Global memory's coherence at its edges (also the tests' program), on 2
//! ranks where rank 1's memory is across the network (udp `--real-udp`, mpi
//! without shared memory) and on smp, where every answer must hold
//! trivially. Prints one JSON line; exit 1 if a look saw the wrong value.
//!
//! - `fresh_zeroed`: a new allocation reads 0 even where a checkout of its
//!   neighbour pins the cache block that held a freed allocation's bytes;
//! - `flag_data`: `data.set(0, 42); flag.swap(1, Release)` on one rank,
//!   `while flag.load(Acquire) == 0 {}; data.get(0)` on the other (which
//!   had cached `data`) reads 42; `flag_data_home_reader`: the same with
//!   `data` homed on the reader, so that the writer's Release must write
//!   its cached write back; `flag_data_checkout_held`: the same (data on
//!   rank 0, then on the last rank; the writer, the reader, then both
//!   holding a read checkout of other elements of the data's cache block
//!   around their part), each reader's value after the flag;
//! - `between_runs`: a write on the runtime's thread between runs reaches
//!   its home by the next collective, and a rank that cached the old bytes
//!   sees the new ones after it.
//!
//! `--misuse free-in-checkout` frees a slice inside a checkout of it: the
//! job must end with a message.
//!
//!     scripts/run.sh --real-udp -n 2 -- target/udp-native/release/examples/global_coherence

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use uat::global::{GlobalAtomicU64, GlobalSlice};

#[derive(clap::Parser, Debug)]
#[command(name = "global_coherence")]
struct Options {
    /// Misuse to commit (the job must end with a message).
    #[arg(long, value_parser = ["free-in-checkout"])]
    misuse: Option<String>,
    /// The flag/data check with Relaxed orderings (the stale read it then
    /// may show is reported, not failed).
    #[arg(long)]
    relaxed: bool,
}

/// A freed allocation's bytes (7) stay at its home; a new neighbour `a` is
/// checked out (its cache block, holding those bytes, pinned) while `b` is
/// allocated where the freed one was: `b` must read 0.
fn fresh_zeroed(home: u32) -> u64 {
    let f = GlobalSlice::<u64>::alloc_on(home, 64);
    f.write(|x| x.fill(7));
    f.free();
    let a = GlobalSlice::<u64>::alloc_on(home, 1);
    let (b, seen) = a.read(|_| {
        let b = GlobalSlice::<u64>::alloc_on(home, 1);
        (b, b.get(0))
    });
    b.free();
    a.free();
    seen
}

/// The flag/data pattern between two tasks on two ranks, `data` homed on
/// `home`: on the writer's rank (0), the reader holds a cached copy that
/// its Acquire must forget; on the reader's, the writer's write is cached
/// dirty and its Release must write it back. `hold`: which sides hold a
/// read checkout of *other* elements of `data` (its cache block pinned)
/// around their part (bit 0 the writer, bit 1 the reader). Returns what
/// the reader saw before and after the flag, and the rank it ran on.
fn flag_data(relaxed: bool, home: u32, hold: u8) -> (u64, u64, u32) {
    let (release, acquire) = if relaxed {
        (Relaxed, Relaxed)
    } else {
        (Release, Acquire)
    };
    // Element 100 is the data; elements 0..50, in the same cache block,
    // are what a side holds checked out.
    let data = GlobalSlice::<u64>::alloc_on(home, 128);
    let flag = GlobalAtomicU64::new(0);
    let ready = GlobalAtomicU64::new(0);
    let held = data.slice(0..50);
    let holding = move |side: u8, f: &mut dyn FnMut()| {
        if hold & side != 0 {
            held.read(|_| f());
        } else {
            f();
        }
    };
    let writer = uat::spawn(move || {
        // Runs here while the continuation (the reader) moves to another
        // rank; writes once the reader has cached `data`.
        uat::testing::wait_until_parent_stolen();
        holding(1, &mut || {
            // A get first: the block is cached here too.
            let _ = data.get(100);
            while ready.load(Acquire) == 0 {
                uat::runtime::poll_point();
            }
            data.set(100, 42);
            flag.swap(1, release);
        });
        0u8
    });
    let reader_rank = uat::current_rank();
    let (mut before, mut after) = (0, 0);
    holding(2, &mut || {
        before = data.get(100);
        ready.swap(1, Release);
        while flag.load(acquire) == 0 {
            uat::runtime::poll_point();
        }
        after = data.get(100);
    });
    writer.join();
    flag.free();
    ready.free();
    data.free();
    (before, after, reader_rank)
}

fn main() {
    let (gasnet, opt) = uat::cli::start::<Options>("global_coherence");
    let config = uat::Config::from_env().unwrap_or_else(|e| gasnet.fail(e));
    // SAFETY: the tasks keep only global slices, atomics and numbers across
    // spawn and join; checkouts end before them.
    let rt = unsafe { uat::Runtime::start(gasnet, config) }.unwrap_or_else(|e| gasnet.fail(e));
    let (me, last) = (gasnet.rank(), gasnet.size() - 1);
    if opt.misuse.is_some() {
        rt.run(|| {
            let s = GlobalSlice::<u64>::alloc(8);
            s.write(|x| x.fill(3));
            s.read(|x| {
                s.free();
                x[0]
            })
        });
        gasnet.fail("free inside a checkout was not refused");
    }
    let zeroed = rt.run(move || fresh_zeroed(last));
    let relaxed = opt.relaxed;
    let (before, after, reader_rank) = rt.broadcast_value(rt.run(move || flag_data(relaxed, 0, 0)));
    let (before_r, after_r, reader_rank_r) = rt.broadcast_value(rt.run(move || flag_data(relaxed, last, 0)));
    // The same with read checkouts of other elements of the data's cache
    // block held: by the writer, the reader, both; data on either rank.
    let mut held = Vec::new();
    for home in [0, last] {
        for hold in 1..=3u8 {
            let (_, after, _) = rt.broadcast_value(rt.run(move || flag_data(relaxed, home, hold)));
            held.push(after);
        }
    }
    let held_ok = held.iter().all(|&v| v == 42);
    let held: Vec<String> = held.iter().map(u64::to_string).collect();
    // Between runs, on the runtime's thread: rank 0 writes the last rank's
    // memory (cached across the network); the home then reads it after a
    // collective, writes it again, and rank 0 must see that after another.
    let s = rt.broadcast_value(rt.run(move || GlobalSlice::<u64>::alloc_on(last, 512)));
    if me == 0 {
        s.write(|x| x.fill(5));
    }
    rt.barrier();
    let mut looks = 0;
    if me == last {
        looks += u64::from(s.read(|x| x.iter().all(|&v| v == 5)));
        s.write(|x| x.fill(6));
    }
    rt.barrier();
    if me == 0 {
        looks += u64::from(s.read(|x| x.iter().all(|&v| v == 6)));
    }
    let between = rt.sum_over_ranks(looks);
    rt.run(move || s.free());
    let mut ok = true;
    if me == 0 {
        let zeroed = zeroed.unwrap_or(u64::MAX);
        println!(
            "{{\"ranks\":{},\"fresh_zeroed\":{zeroed},\"flag_data\":{{\"before\":{before},\"after\":{after},\
             \"reader_rank\":{reader_rank},\"relaxed\":{relaxed}}},\"flag_data_home_reader\":{{\"before\":{before_r},\"after\":{after_r},\"reader_rank\":{reader_rank_r}}},\"flag_data_checkout_held\":[{}],\"between_runs_looks\":{between}}}",
            gasnet.size(),
            held.join(",")
        );
        ok = zeroed == 0 && (relaxed || (after == 42 && after_r == 42 && held_ok)) && between == 2;
    }
    let ok = rt.broadcast(u64::from(ok)) == 1;
    rt.exit(i32::from(!ok))
}
