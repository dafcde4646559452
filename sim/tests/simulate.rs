//! The simulator on whole jobs: every node runs exactly once whatever the
//! ranks, modes, protocols and lifelines; one rank costs exactly what the
//! machine file declares; the same inputs give the same result; the costs
//! each mode charges land where the mode charges them.

use uat_protocol::deque::Protocol;
use uat_sim::machine::Machine;
use uat_sim::run::{simulate, Outcome};
use uat_sim::workload::Bench;
use uat_sim::world::{Fad, Setup};

/// A machine with round numbers, each cost declared by this test.
fn machine(rma: &str) -> Machine {
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
        c(1.0),
        c(1000.0),
        c(300.0),
        c(2000.0),
        c(100_000.0),
        c(20.0),
    );
    Machine::parse(&text).expect("the test machine loads")
}

fn bench(args: &str) -> Bench {
    Bench::parse(&args.split_whitespace().map(String::from).collect::<Vec<_>>()).expect("a benchmark")
}

fn setup(ranks: u32, fad: Fad, protocol: Protocol, empty_check: bool, lifeline_w: Option<u32>, b: Bench) -> Setup {
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

fn run(m: &Machine, s: Setup) -> Outcome {
    simulate(m, s).expect("a simulation")
}

#[test]
fn one_rank_costs_exactly_its_nodes_and_spawns() {
    let m = machine("nic");
    for (args, node_ns) in [
        ("btc --depth 12", 10.0),
        ("nqueens 8", 100.0),
        ("uts -t 1 -b 4 -r 19 -a 3 -d 5", 200.0),
    ] {
        let b = bench(args);
        let (nodes, spawns) = b.count();
        let o = run(&m, setup(1, Fad::Native, Protocol::Split, true, None, b));
        let want = nodes as f64 * node_ns + spawns as f64 * 50.0;
        assert!(
            (o.time_s * 1e9 - want).abs() < 1e-3,
            "{args}: {} ns, want {want}",
            o.time_s * 1e9
        );
        assert_eq!((o.nodes, o.spawns, o.steals_attempted), (nodes, spawns, 0), "{args}");
    }
}

#[test]
fn every_node_runs_once_in_every_configuration() {
    for rma in ["nic", "target-poll"] {
        let m = machine(rma);
        for args in [
            "btc --depth 11",
            "btc --depth 11 --join",
            "uts -t 1 -b 4 -r 19 -a 3 -d 6",
            "nqueens 8",
        ] {
            let b = bench(args);
            let (nodes, spawns) = b.count();
            for ranks in [2, 3, 8, 13] {
                for fad in [Fad::Native, Fad::Am, Fad::RdmaEmulated] {
                    for protocol in [Protocol::Split, Protocol::Paper] {
                        for (ec, lifeline_w) in [(true, None), (false, Some(2))] {
                            let what = format!("{rma} {args} P={ranks} {fad:?} {protocol:?} ec={ec} w={lifeline_w:?}");
                            let o = simulate(&m, setup(ranks, fad, protocol, ec, lifeline_w, b))
                                .unwrap_or_else(|e| panic!("{what}: {e}"));
                            assert_eq!((o.nodes, o.spawns), (nodes, spawns), "{what}");
                            assert!(o.steals_succeeded > 0, "{what}: no steal");
                            assert!(o.time_s > 0.0, "{what}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn the_same_inputs_give_the_same_result() {
    let m = machine("target-poll");
    let s = || {
        setup(
            8,
            Fad::Am,
            Protocol::Split,
            true,
            Some(3),
            bench("uts -t 1 -b 4 -r 19 -a 3 -d 7"),
        )
    };
    let (a, b) = (run(&m, s()), run(&m, s()));
    assert_eq!(a.json(), b.json());
}

#[test]
fn parallel_time_falls_with_ranks_on_a_big_enough_tree() {
    let m = machine("nic");
    let b = bench("btc --depth 16");
    let t1 = run(&m, setup(1, Fad::Native, Protocol::Split, true, None, b)).time_s;
    let t8 = run(&m, setup(8, Fad::Native, Protocol::Split, true, None, b)).time_s;
    assert!(t8 < t1 / 4.0, "8 ranks {t8} s against 1 rank {t1} s");
}

#[test]
fn am_mode_pays_its_polls_and_handlers_where_native_does_not() {
    let m = machine("nic");
    let b = bench("btc --depth 14");
    let native = run(&m, setup(8, Fad::Native, Protocol::Split, true, None, b));
    let am = run(&m, setup(8, Fad::Am, Protocol::Split, true, None, b));
    // Across hosts (8 ranks on hosts of 4) `am` polls at every spawn:
    // spawns × 60 ns at least, where `native` on a NIC polls never.
    assert!(am.msg_handling_s >= am.spawns as f64 * 60e-9 * 0.99, "{am:?}");
    assert!(native.msg_handling_s < am.msg_handling_s / 10.0, "{native:?} vs {am:?}");
    assert!(am.time_s > native.time_s, "{am:?} vs {native:?}");
}

#[test]
fn machine_files_refuse_a_cost_without_a_source_and_unknown_fields() {
    let good = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/machines/tsubame25.toml")).unwrap();
    assert!(Machine::parse(&good).is_ok());
    let no_source = good.replacen("source = \"P Table 1", "source = \"  \" , x = \"", 1);
    let e = Machine::parse(&no_source).unwrap_err().0;
    assert!(e.contains("x") || e.contains("source"), "{e}");
    let unknown = good.replacen("[local]", "[local]\nfoo_ns = { value = 1.0, source = \"x\" }", 1);
    assert!(Machine::parse(&unknown).unwrap_err().0.contains("foo_ns"));
    let empty = good.replacen("source = \"P Table 1", "source = \"", 1);
    let empty = empty.replacen(
        "(L483): Intel Xeon X5670 2.93 GHz, 6 cores x 2 sockets (Turbo Boost not mentioned in P)\"",
        "\"",
        1,
    );
    assert!(Machine::parse(&empty).unwrap_err().0.contains("no source"));
}

#[test]
fn every_machine_file_of_the_repository_loads() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/machines");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            Machine::load(&p).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(n >= 2, "{n} machine files");
}
