//! Misuses of the API that compile, each of which must end the whole job with
//! a message naming the mistake and the rule (used by tests/misuse.rs), and
//! two correct programs the checks must leave alone.
//!
//!     scripts/run.sh -n 2 -- target/smp-native/release/examples/misuse forget

use std::cell::RefCell;

use clap::{Parser, ValueEnum};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Case {
    /// A task keeps a heap `Vec` across spawn/join (a recursion of depth
    /// `--depth`) and reads it after the continuation was stolen
    /// (`--force-steal` makes the first steal certain). Verifies the sum: a
    /// wrong one exits 1. With UAT_CHECK_MIGRATION=1 the checker names the
    /// origin instead.
    VecAcrossSpawn,
    /// `uat::spawn` on an OS thread made inside a task.
    SpawnOnThread,
    /// `uat::spawn` on the main thread, outside `Runtime::run`.
    SpawnOutsideRun,
    /// A join handle forgotten with `std::mem::forget`.
    Forget,
    /// A join handle kept in a thread-local past the task that spawned it.
    HandleInThreadLocal,
    /// `Runtime::stats` called from inside a task (the runtime reached
    /// through a thread-local).
    StatsInTask,
    /// `Runtime::run` called from inside a task.
    RunInTask,
    /// Sends malformed Active Messages to rank 1 (and itself), then computes
    /// with steals: the handlers refuse them and the answer stays exact.
    Malformed,
    /// Two runs: the first with a certain steal, the second spawning
    /// nothing; prints each run's stats (one JSON line per run).
    RunTwice,
    /// Every rank sends every other rank's Active Message handlers a few
    /// thousand random payloads (`uat::testing::fuzz_handlers`) inside a run, then
    /// computes with steals: each message is refused or harmless and the
    /// answer stays exact.
    Fuzz,
    /// Rank 1 starts the runtime with another lifeline graph
    /// (`UAT_LIFELINE_Z=3` in its environment) than rank 0: the start is
    /// refused.
    SettingsDisagree,
    /// Rank 1 starts global memory with another cache block
    /// (`UAT_CACHE_BLOCK=64K`, a setting of the layer's own table) than
    /// rank 0: the start is refused too.
    MemorySettingsDisagree,
}

/// Runs one deliberate misuse inside the runtime.
#[derive(Parser)]
#[command(name = "misuse")]
struct Options {
    case: Case,
    /// Depth of the vec-across-spawn recursion.
    #[arg(long, default_value_t = 20)]
    depth: u32,
    /// Make the first steal certain: the first child waits until its parent
    /// has been stolen (on 2 or more ranks).
    #[arg(long)]
    force_steal: bool,
    /// fuzz: messages per handler and target.
    #[arg(long, default_value_t = 2000)]
    count: u32,
    /// fuzz: the seed of the random payloads.
    #[arg(long, default_value_t = 32)]
    seed: u64,
}

thread_local! {
    static RUNTIME: RefCell<Option<uat::Runtime>> = const { RefCell::new(None) };
    static HANDLE: RefCell<Option<uat::JoinHandle<u64>>> = const { RefCell::new(None) };
}

/// The depth-`d` tree of the issue: every level keeps a heap Vec across its
/// spawn and join and reads it afterwards.
fn vec_tree(depth: u32, top: u32, force: bool) -> u64 {
    if depth == 0 {
        return 1;
    }
    let v: Vec<u64> = (0..depth as u64).collect();
    let h = uat::spawn(move || {
        if force && depth == top {
            uat::testing::wait_until_parent_stolen();
        }
        vec_tree(depth - 1, top, force)
    });
    let b = vec_tree(depth - 1, top, force);
    let a = h.join();
    a + b + v.iter().sum::<u64>()
}

/// What vec_tree(depth) must return.
fn vec_tree_expected(depth: u32) -> u64 {
    (1..=depth as u64).fold(1, |s, d| 2 * s + d * (d - 1) / 2)
}

/// A binary tree of tasks with some work at the leaves; the first child
/// waits for its parent to be stolen when `force`.
fn tree(depth: u32, force: bool) -> u64 {
    if depth == 0 {
        return (0..200u64).fold(1, |a, i| a ^ std::hint::black_box(i)) & 1;
    }
    let (a, b) = uat::join(
        move || {
            if force {
                uat::testing::wait_until_parent_stolen();
            }
            tree(depth - 1, false)
        },
        move || tree(depth - 1, false),
    );
    a + b
}

fn main() {
    let (gasnet, opt) = uat::cli::start::<Options>("misuse");
    if opt.case == Case::SettingsDisagree && gasnet.rank() == 1 {
        // Rank 1's environment differs from rank 0's (set before any other
        // thread of ours exists).
        std::env::set_var("UAT_LIFELINE_Z", "3");
    }
    if opt.case == Case::MemorySettingsDisagree && gasnet.rank() == 1 {
        // As above.
        std::env::set_var("UAT_CACHE_BLOCK", "64K");
    }
    let config = uat::Config::from_env().unwrap_or_else(|e| gasnet.fail(e));
    // SAFETY: every case but vec-across-spawn keeps only numbers across
    // spawn and join; vec-across-spawn breaks the contract on purpose, to
    // show what happens (a wrong answer or a crash) and what the migration
    // checker reports instead.
    let rt = unsafe { uat::Runtime::start(gasnet, config) }.unwrap_or_else(|e| gasnet.fail(e));
    let (depth, force) = (opt.depth, opt.force_steal);
    let ranks = gasnet.size();
    match opt.case {
        Case::VecAcrossSpawn => {
            let got = rt.run(move || vec_tree(depth, depth, force));
            if let Some(got) = got {
                let want = vec_tree_expected(depth);
                println!("{{\"case\":\"vec-across-spawn\",\"result\":{got},\"expected\":{want}}}");
                if got != want {
                    gasnet.fail(format_args!(
                        "vec-across-spawn computed {got}, expected {want}: WRONG ANSWER"
                    ));
                }
            }
        }
        Case::SpawnOnThread => {
            let _ = rt.run(|| {
                let t = std::thread::spawn(|| uat::spawn(|| 1u64).join());
                t.join().unwrap_or(0)
            });
        }
        Case::SpawnOutsideRun => {
            let _ = uat::spawn(|| 1u64).join();
        }
        Case::Forget => {
            let _ = rt.run(|| {
                std::mem::forget(uat::spawn(|| 1u64));
                2u64
            });
        }
        Case::HandleInThreadLocal => {
            let _ = rt.run(|| {
                let h = uat::spawn(|| 1u64);
                HANDLE.with(|slot| *slot.borrow_mut() = Some(h));
                2u64
            });
            // Only reached if the run above did not end the job.
            if let Some(h) = HANDLE.with(|slot| slot.borrow_mut().take()) {
                let _ = h.join();
            }
        }
        Case::StatsInTask | Case::RunInTask => {
            let case = opt.case;
            RUNTIME.with(|slot| *slot.borrow_mut() = Some(rt));
            RUNTIME.with(|slot| {
                let rt = slot.borrow();
                let _ = rt.as_ref().expect("runtime").run(move || {
                    RUNTIME.with(|slot| {
                        let rt = slot.borrow();
                        let rt = rt.as_ref().expect("runtime");
                        if case == Case::StatsInTask {
                            rt.stats().spawns
                        } else {
                            rt.run(|| 1u64).unwrap_or(0)
                        }
                    })
                });
            });
            gasnet.fail("the misuse was not detected");
        }
        Case::Malformed => {
            let sent = rt.run(move || uat::testing::send_malformed_messages(1 % ranks));
            let got = rt.run(move || tree(14, true));
            let stats = rt.stats();
            if let (Some(sent), Some(got)) = (sent, got) {
                println!(
                    "{{\"case\":\"malformed\",\"sent\":{sent},\"result\":{got},\"expected\":{},\"steals_succeeded\":{}}}",
                    1u64 << 14,
                    stats.steals_succeeded
                );
                if got != 1 << 14 {
                    gasnet.fail("malformed: WRONG ANSWER");
                }
            }
        }
        Case::SettingsDisagree | Case::MemorySettingsDisagree => {}
        Case::Fuzz => {
            let (count, seed) = (opt.count, opt.seed);
            // Rank 0 (the root) fuzzes every other rank, then the root's
            // continuation is stolen (certainly: the child waits for it) and
            // fuzzes every other rank from the thief's rank. Returns the
            // messages sent and a bit per sending rank.
            let fuzz_from_here = move || {
                let here = uat::current_rank();
                let sent: u64 = (0..ranks)
                    .filter(|&t| t != here)
                    .map(|t| uat::testing::fuzz_handlers(t, count, seed))
                    .sum();
                (sent, 1u64 << here.min(63))
            };
            let fuzzed = rt.run(move || {
                let (a, from_a) = fuzz_from_here();
                let child = uat::spawn(|| {
                    uat::testing::wait_until_parent_stolen();
                    0u64
                });
                let (b, from_b) = fuzz_from_here();
                let _ = child.join();
                [a + b, from_a | from_b]
            });
            let got = rt.run(move || tree(14, true));
            let stats = rt.stats();
            if let (Some([sent, senders]), Some(got)) = (fuzzed, got) {
                println!(
                    "{{\"case\":\"fuzz\",\"sent\":{sent},\"senders\":{senders},\"result\":{got},\"expected\":{},\"steals_succeeded\":{}}}",
                    1u64 << 14,
                    stats.steals_succeeded
                );
                if got != 1 << 14 {
                    gasnet.fail("fuzz: WRONG ANSWER");
                }
            }
        }
        Case::RunTwice => {
            for (run, spawn) in [(1, true), (2, false)] {
                let got = rt.run(move || if spawn { tree(10, true) } else { 1 << 10 });
                let s = rt.stats();
                if let Some(got) = got {
                    println!(
                        "{{\"run\":{run},\"result\":{got},\"spawns\":{},\"steals_succeeded\":{},\"frame_bytes_stolen\":{}}}",
                        s.spawns, s.steals_succeeded, s.frame_bytes_stolen
                    );
                }
            }
        }
    }
    gasnet.barrier();
    if !matches!(
        opt.case,
        Case::VecAcrossSpawn | Case::Malformed | Case::RunTwice | Case::Fuzz
    ) {
        gasnet.fail("the misuse was not detected");
    }
    rt.exit(0);
}
