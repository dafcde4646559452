//! What the simulator's integration tests share: a test machine with round
//! numbers, a benchmark from its arguments, a setup on hosts of 4.

#![allow(dead_code)]

use uat_protocol::deque::Protocol;
use uat_sim::machine::Machine;
use uat_sim::workload::Bench;
use uat_sim::world::{Fad, Setup};

/// A machine with round numbers, each cost declared by this test.
pub(crate) fn machine(rma: &str) -> Machine {
    let c = |v: f64| format!("{{ value = {v}, source = \"test\" }}");
    let text = format!(
        r#"
name = "test"
description = "round numbers"
[layout]
ranks_per_host = {}
ghz = {}
[local]
spawn_ns = {}
suspend_ns = {}
resume_ns = {}
frame_bytes = {}
speed_spread = {}
[work]
btc_ns = {}
uts_ns = {}
nqueens_ns = {}
[conduit.ibv]
rma = "{rma}"
net_latency_ns = {}
net_latency_poller_ns = {}
net_bytes_per_ns = {}
nic_gap_ns = {}
shm_op_ns = {}
shm_bytes_per_ns = {}
poll_empty_ns = {}
poll_point_ns = {}
poll_per_peer_ns = {}
handler_ns = {}
shm_handler_ns = {}
own_atomic_ns = {}
sleep_poll_ns = {}
timer_ns = {}
"#,
        c(4.0),
        c(2.0),
        c(50.0),
        c(300.0),
        c(300.0),
        c(600.0),
        c(0.0),
        c(10.0),
        c(200.0),
        c(100.0),
        c(1500.0),
        c(2000.0),
        c(3.0),
        c(100.0),
        c(100.0),
        c(5.0),
        c(60.0),
        c(0.0),
        c(1.0),
        c(1000.0),
        c(300.0),
        c(2000.0),
        c(100_000.0),
        c(20.0),
    );
    Machine::parse(&text).expect("the test machine loads")
}

pub(crate) fn bench(args: &str) -> Bench {
    Bench::parse(&args.split_whitespace().map(String::from).collect::<Vec<_>>()).expect("a benchmark")
}

pub(crate) fn setup(
    ranks: u32,
    fad: Fad,
    protocol: Protocol,
    empty_check: bool,
    lifeline_w: Option<u32>,
    b: Bench,
) -> Setup {
    Setup {
        ranks,
        ranks_per_host: 4,
        conduit: "ibv".into(),
        fad,
        protocol,
        empty_check,
        poll_interval: fad.default_poll_interval("ibv", ranks.div_ceil(4)),
        lifeline_w,
        seed: 7,
        net_delay: 0,
        blocks: true,
        bench: b,
    }
}
