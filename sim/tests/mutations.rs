//! The protocol's mutations (`uat_protocol::mutation`) caught by the
//! simulator's checks: each turns one step of the runtime's protocol (or,
//! for termination, the simulator's own count of a child's completion)
//! wrong, and the simulation of a small job must end with an error —
//! never a hang, never a panic — while the same job without the mutation
//! passes (so each check can fail and can pass). The checks are
//! `docs/design/simulator.md`'s "Mutations".

#![cfg(feature = "mutations")]

use uat_protocol::deque::Protocol;
use uat_protocol::mutation::{self, Mutation};
use uat_sim::run::{simulate, Outcome};
use uat_sim::world::{Fad, Setup};

mod common;

use common::{bench, machine, setup};

/// The job with `m` on (this test's thread runs the simulation).
fn simulate_with(m: Mutation, s: Setup) -> Result<Outcome, String> {
    mutation::set(m);
    let r = simulate(&machine("nic"), s).map_err(|e| e.to_string());
    mutation::set(Mutation::None);
    r
}

/// `m` on every job is caught by an error containing `what`; each job
/// passes, exactly, without it.
fn caught(m: Mutation, jobs: &[Setup], what: &str) {
    for s in jobs {
        let (nodes, spawns) = s.bench.count();
        let job = format!("{:?} {:?} P={} w={:?}", s.protocol, s.fad, s.ranks, s.lifeline_w);
        let o = simulate_with(Mutation::None, s.clone()).unwrap_or_else(|e| panic!("{job} without a mutation: {e}"));
        assert_eq!((o.nodes, o.spawns), (nodes, spawns), "{job} without a mutation");
        match simulate_with(m, s.clone()) {
            Ok(o) => panic!(
                "{m:?} not caught: {job} ran {} of {nodes} nodes without an error",
                o.nodes
            ),
            Err(e) => {
                eprintln!("{m:?} {job}: {e}");
                assert!(e.contains(what), "{m:?} {job}: {e}");
            }
        }
    }
}

/// 8 ranks on hosts of 4 (the test machine), BTC and UTS.
fn jobs(protocol: Protocol, empty_check: bool, lifeline_w: Option<u32>) -> Vec<Setup> {
    ["btc --depth 12", "uts -t 1 -b 4 -r 19 -a 3 -d 6"]
        .into_iter()
        .flat_map(|args| {
            [Fad::Native, Fad::Am].map(|fad| setup(8, fad, protocol, empty_check, lifeline_w, bench(args)))
        })
        .collect()
}

#[test]
fn a_claim_without_its_fetch_and_add_is_an_entry_taken_twice() {
    caught(
        Mutation::ClaimSkipsFetchAdd,
        &jobs(Protocol::Split, true, None),
        "handed out twice",
    );
}

#[test]
fn a_claim_without_the_lock_is_an_entry_taken_twice() {
    caught(
        Mutation::ClaimSkipsFetchAdd,
        &jobs(Protocol::Paper, false, None),
        "handed out twice",
    );
}

#[test]
fn a_skipped_release_is_an_owner_waiting_without_end() {
    caught(
        Mutation::ReleaseSkipped,
        &jobs(Protocol::Split, true, None),
        "a release or unlock was lost",
    );
}

#[test]
fn a_skipped_unlock_is_an_owner_waiting_without_end() {
    caught(
        Mutation::UnlockSkipped,
        &jobs(Protocol::Paper, true, None),
        "a release or unlock was lost",
    );
}

#[test]
fn an_inverted_empty_check_is_a_victim_found_empty_with_work() {
    for protocol in [Protocol::Split, Protocol::Paper] {
        caught(
            Mutation::EmptyCheckInverted,
            &jobs(protocol, true, None),
            "held an entry",
        );
    }
}

#[test]
fn a_dropped_wake_up_is_a_sleeper_its_buddy_served() {
    caught(
        Mutation::WakeDropped,
        &jobs(Protocol::Split, true, Some(2)),
        "a lost wake-up",
    );
}

#[test]
fn a_completion_counted_twice_is_a_join_told_too_much() {
    caught(
        Mutation::TerminationCountedTwice,
        &jobs(Protocol::Split, true, None),
        "a completion counted twice",
    );
}

#[test]
fn a_lost_completion_is_a_run_that_stops_making_progress() {
    caught(
        Mutation::CompletionLost,
        &jobs(Protocol::Split, true, Some(2)),
        "no task ran for 1 s of simulated time",
    );
}
