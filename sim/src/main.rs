//! `uat-sim`: predicts what a job of uni-address threads does on a machine
//! described by a machine file (`sim/machines/*.toml`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use uat_protocol::deque::Protocol;
use uat_sim::machine::Machine;
use uat_sim::run::simulate;
use uat_sim::workload::Bench;
use uat_sim::world::{Fad, Setup};

/// A discrete-event simulator of uni-address threads' scheduler: simulated
/// ranks run the runtime's own protocol steps; costs come from a machine
/// file, each with its source.
#[derive(Parser, Debug)]
#[command(name = "uat-sim", version)]
struct Options {
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand, Debug)]
enum What {
    /// Simulates one job and prints one JSON line (time_s, steals_succeeded,
    /// handler_share, ...).
    Predict {
        /// The machine file.
        #[arg(long)]
        machine: PathBuf,
        /// The machine's conduit profile (default: its only one, or ibv).
        #[arg(long, value_parser = ["smp", "udp", "mpi", "ibv"])]
        conduit: Option<String>,
        /// Ranks of the job.
        #[arg(long)]
        ranks: u32,
        /// Ranks per host (default: the machine's layout.ranks_per_host; a
        /// job over real UDP or mpi without shared memory has 1).
        #[arg(long)]
        ranks_per_host: Option<u32>,
        /// The fetch-and-add mode.
        #[arg(long, value_parser = ["native", "am", "rdma-emulated"])]
        fad: String,
        /// The thief's empty check.
        #[arg(long, default_value = "on", value_parser = ["on", "off"])]
        empty_check: String,
        /// The deque's protocol.
        #[arg(long, default_value = "split", value_parser = ["split", "paper"])]
        steal_protocol: String,
        /// Spawns between polls (default: the runtime's for the conduit and
        /// mode: 1 for `am` across hosts, 64 for other modes across hosts,
        /// 0 within one host and for `rdma-emulated`).
        #[arg(long)]
        poll_interval: Option<u32>,
        /// Failed steals before a thief sleeps on its lifelines (0: off;
        /// the runtime's default is 8).
        #[arg(long, default_value_t = 8)]
        lifeline_w: u32,
        /// The victim choice's seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The emulated network delay between hosts, in µs (the runtime's
        /// `UAT_NET_DELAY`): added once to each request between hosts that
        /// is waited for and to each Active Message request.
        #[arg(long, default_value_t = 0.0)]
        net_delay_us: f64,
        /// Multiplies a declared cost: NAME=FACTOR, NAME as `check-machine`
        /// lists it (`conduit.ibv.poll_empty_ns=1.5`); repeatable.
        #[arg(long, value_name = "NAME=FACTOR")]
        scale: Vec<String>,
        /// Replaces a declared cost: NAME=VALUE; repeatable.
        #[arg(long, value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// Simulate every node as its own step, even where a subtree has a
        /// closed form (BTC) and could be charged as one event (slower;
        /// the same result).
        #[arg(long)]
        node_by_node: bool,
        /// The benchmark and its own arguments (btc --depth D [--join];
        /// uts -t T -b B -r R -a A -d D; nqueens N).
        #[arg(last = true, required = true)]
        bench: Vec<String>,
    },
    /// Measures this machine's costs with real jobs (micro-benchmarks and
    /// one-rank benchmark runs, from the repository root) and writes a
    /// machine file named "here" with a profile per conduit.
    Calibrate {
        /// The machine file to write.
        #[arg(long)]
        out: PathBuf,
        /// Conduits to measure and write a profile for.
        #[arg(long, value_delimiter = ',', default_value = "smp,udp,mpi", value_parser = ["smp", "udp", "mpi"])]
        conduits: Vec<String>,
        /// Where each variant's binaries are ({conduit} and {fad} are
        /// replaced).
        #[arg(long, default_value = "target/{conduit}-{fad}/release")]
        bin_dir: String,
        /// Repetitions of every job (the file gives their median).
        #[arg(long, default_value_t = 3)]
        reps: u32,
    },
    /// Reads a machine file and lists its costs with their sources.
    CheckMachine {
        /// The machine file.
        file: PathBuf,
    },
}

fn main() -> ExitCode {
    match run(Options::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("uat-sim: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(o: Options) -> Result<(), String> {
    match o.what {
        What::Calibrate {
            out,
            conduits,
            bin_dir,
            reps,
        } => uat_sim::calibrate::calibrate(&uat_sim::calibrate::Options {
            out,
            conduits,
            bin_dir,
            reps,
            invocation: std::env::args().collect::<Vec<_>>().join(" "),
        })
        .map_err(|e| e.to_string()),
        What::CheckMachine { file } => {
            let m = Machine::load(&file).map_err(|e| e.to_string())?;
            for (name, c) in m.costs() {
                println!("{name} = {} ({})", c.value, c.source);
            }
            Ok(())
        }
        What::Predict {
            machine,
            conduit,
            ranks,
            ranks_per_host,
            fad,
            empty_check,
            steal_protocol,
            poll_interval,
            lifeline_w,
            seed,
            net_delay_us,
            node_by_node,
            scale,
            set,
            bench,
        } => {
            let mut m = Machine::load(&machine).map_err(|e| e.to_string())?;
            let mut changed = serde_json::Map::new();
            for (list, is_scale) in [(&scale, true), (&set, false)] {
                for item in list {
                    let (name, v) = item.split_once('=').ok_or_else(|| {
                        format!("{item:?}: expected NAME={}", if is_scale { "FACTOR" } else { "VALUE" })
                    })?;
                    let v: f64 = v.parse().map_err(|_| format!("{item:?}: {v:?} is not a number"))?;
                    if is_scale {
                        m.edit(name, |x| x * v, &format!("scaled by {v} (--scale)"))
                    } else {
                        m.edit(name, |_| v, "set by --set")
                    }
                    .map_err(|e| e.to_string())?;
                    changed.insert(
                        name.to_string(),
                        format!("{}{v}", if is_scale { "x" } else { "=" }).into(),
                    );
                }
            }
            let conduit = match conduit {
                Some(c) => c,
                None if m.conduit.len() == 1 => m.conduit.keys().next().cloned().unwrap_or_default(),
                None => "ibv".into(),
            };
            let bench = Bench::parse(&bench)?;
            let fad = Fad::parse(&fad).ok_or("unknown --fad")?;
            let rph = ranks_per_host.unwrap_or(m.layout.ranks_per_host.value as u32).max(1);
            let poll_interval = poll_interval.unwrap_or(fad.default_poll_interval(&conduit, ranks.div_ceil(rph)));
            let setup = Setup {
                ranks,
                ranks_per_host: rph,
                conduit: conduit.clone(),
                fad,
                protocol: Protocol::parse(&steal_protocol).ok_or("unknown --steal-protocol")?,
                empty_check: empty_check == "on",
                poll_interval,
                lifeline_w: (lifeline_w > 0).then_some(lifeline_w),
                seed,
                net_delay: (net_delay_us * 1e6).round() as u64,
                blocks: !node_by_node,
                bench,
            };
            let started = std::time::Instant::now();
            let out = simulate(&m, setup).map_err(|e| e.to_string())?;
            let mut j = out.json();
            let obj = j.as_object_mut().expect("an object");
            obj.insert("machine".into(), m.name.clone().into());
            obj.insert("conduit".into(), conduit.into());
            obj.insert("fad".into(), fad.name().into());
            obj.insert("ranks".into(), ranks.into());
            obj.insert("ranks_per_host".into(), rph.into());
            obj.insert("empty_check".into(), (empty_check == "on").into());
            obj.insert("steal_protocol".into(), steal_protocol.into());
            obj.insert("poll_interval".into(), poll_interval.into());
            obj.insert("lifeline_w".into(), lifeline_w.into());
            obj.insert("net_delay_us".into(), net_delay_us.into());
            obj.insert("bench".into(), bench.name().into());
            obj.insert("params".into(), bench.params());
            obj.insert("changed_costs".into(), changed.into());
            obj.insert("wall_s".into(), started.elapsed().as_secs_f64().into());
            println!("{j}");
            Ok(())
        }
    }
}
