//! `cargo uat`: set up a machine, and build and launch uni-address threads
//! programs on N ranks. Install once with `cargo install --path cargo-uat`
//! (from a checkout of uat); then, in a crate that depends on uat:
//!
//! ```text
//! cargo uat setup
//! cargo uat run -n 4 [--conduit smp] [--fad native] [-- ARGS]
//! ```

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use uat_launch::build::{Crate, Program};
use uat_launch::job::{self, JobSpec};
use uat_launch::variant::{Conduit, Fad, Variant};
use uat_launch::{rules, setup};

/// Builds and launches uni-address threads programs.
#[derive(Parser)]
#[command(name = "cargo uat", bin_name = "cargo uat", version)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Installs what programs need to build: the Debian packages (as root;
    /// otherwise prints the apt-get line) and the GASNet-EX source (into
    /// cargo's registry cache). GASNet-EX itself is built on first use, once
    /// per conduit per machine, under GASNET_CACHE_DIR or <cargo home>/uat.
    Setup,
    /// Builds the crate in this directory for a variant (into
    /// <target>/<conduit>-<mode>/) and starts it on N ranks. The exit code is
    /// the job's; how a job ended (a signal, the timeout, the launcher
    /// failing) is said on stderr.
    Run(RunArgs),
    /// Builds the crate in this directory for a variant (what `run` does
    /// first) and prints the executable's path; in uat's own workspace,
    /// builds every binary and example.
    Build {
        #[command(flatten)]
        variant: VariantArgs,
        /// Build with the release profile.
        #[arg(long)]
        release: bool,
        /// The binary to print (default: the crate's only binary).
        #[arg(long, value_name = "B", conflicts_with = "example")]
        bin: Option<String>,
        /// The example to print.
        #[arg(long, value_name = "E")]
        example: Option<String>,
    },
    /// Prints the cargo features that select a variant, as the crate here
    /// names them (what `run` builds with; for `cargo test` in scripts).
    Features(VariantArgs),
    /// Prints whether RANKS ranks of mode FAD on one host have more spinning
    /// threads than cores (workers, plus pollers in rdma-emulated mode):
    /// such timings are labelled, not compared.
    Oversubscribed {
        #[arg(long)]
        ranks: usize,
        #[arg(long, value_parser = parse_fad, default_value = "native")]
        fad: Fad,
        /// Cores of the host (default: this machine's).
        #[arg(long)]
        cores: Option<usize>,
    },
}

#[derive(Args, Clone)]
struct VariantArgs {
    /// smp (one host, shared memory; GASNet forks the ranks), udp (ranks
    /// spawned on this host), mpi (mpirun), ibv (gasnetrun_ibv, clusters).
    #[arg(long, value_parser = parse_conduit, default_value = "smp")]
    conduit: Conduit,
    /// Remote fetch-and-add mode: native (GASNet-EX atomics), am (Active
    /// Messages served by the worker), rdma-emulated (served by a polling
    /// thread).
    #[arg(long, value_parser = parse_fad, default_value = "native")]
    fad: Fad,
}

#[derive(Args)]
struct RunArgs {
    /// Number of ranks.
    #[arg(short = 'n', value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    ranks: u32,
    #[command(flatten)]
    variant: VariantArgs,
    /// udp: no shared memory between ranks, real UDP over loopback
    /// (GASNET_SUPERNODE_MAXSIZE=1).
    #[arg(long)]
    real_udp: bool,
    /// mpi, ibv: start the job with CMD instead of mpirun or gasnetrun_ibv
    /// (same arguments), e.g. a site's wrapper.
    #[arg(long, value_name = "CMD")]
    launcher: Option<String>,
    /// Kill the whole job after S seconds (exit code 124).
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u64).range(1..))]
    timeout: Option<u64>,
    /// Build with the release profile.
    #[arg(long)]
    release: bool,
    /// Do not build: run what the variant's target directory has.
    #[arg(long)]
    no_build: bool,
    /// Run this binary of the crate.
    #[arg(long, value_name = "B", conflicts_with_all = ["example", "program"])]
    bin: Option<String>,
    /// Run this example of the crate.
    #[arg(long, value_name = "E", conflicts_with = "program")]
    example: Option<String>,
    /// A binary's name, or a path to an executable (run as it is, not
    /// built; default: the crate's only binary).
    program: Option<String>,
    /// Arguments for the program (after `--`).
    #[arg(last = true)]
    args: Vec<OsString>,
}

fn parse_conduit(s: &str) -> Result<Conduit, String> {
    s.parse()
}

fn parse_fad(s: &str) -> Result<Fad, String> {
    s.parse()
}

fn main() -> ExitCode {
    // `cargo uat ...` runs us as `cargo-uat uat ...`.
    let mut argv: Vec<OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == "uat") {
        argv.remove(1);
    }
    let cli = Cli::parse_from(argv);
    let result = match cli.command {
        Cmd::Setup => setup::setup().map(|()| 0),
        Cmd::Run(args) => run(args),
        Cmd::Build {
            variant: v,
            release,
            bin,
            example,
        } => {
            let program = match (bin, example) {
                (Some(b), _) => Program::Bin(b),
                (_, Some(e)) => Program::Example(e),
                _ => Program::Default,
            };
            build(variant(&v), release, &program).map(|exe| {
                if let Some(exe) = exe {
                    println!("{}", exe.display());
                }
                0
            })
        }
        Cmd::Features(v) => Crate::here().map(|c| {
            println!("{}", variant(&v).features(&c.feature_prefix));
            0
        }),
        Cmd::Oversubscribed { ranks, fad, cores } => {
            println!(
                "{}",
                rules::oversubscribed(ranks, fad, cores.unwrap_or_else(rules::cores))
            );
            Ok(0)
        }
    };
    match result {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) => {
            eprintln!("cargo-uat: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn variant(v: &VariantArgs) -> Variant {
    Variant {
        conduit: v.conduit,
        fad: v.fad,
    }
}

/// Builds the variant; returns the program's executable where the crate
/// has one to name (`None`: uat's workspace built whole and nothing named).
fn build(v: Variant, release: bool, program: &Program) -> Result<Option<PathBuf>, String> {
    if setup::gasnet_source().is_none() && std::env::var_os("GASNET_PREFIX").is_none() {
        return Err("the GASNet-EX source is not on this machine: run `cargo uat setup` first".into());
    }
    let krate = Crate::here()?;
    if krate.is_uat_workspace && *program == Program::Default {
        krate.build(v, release, &Program::Path(PathBuf::new()))?;
        return Ok(None);
    }
    krate.build(v, release, program).map(Some)
}

fn run(a: RunArgs) -> Result<i32, String> {
    if a.real_udp && a.variant.conduit != Conduit::Udp {
        return Err("--real-udp applies to the udp conduit only".into());
    }
    if a.launcher.is_some() && !matches!(a.variant.conduit, Conduit::Mpi | Conduit::Ibv) {
        return Err("--launcher applies to the mpi and ibv conduits only".into());
    }
    let program = match (&a.bin, &a.example, &a.program) {
        (Some(b), _, _) => Program::Bin(b.clone()),
        (_, Some(e), _) => Program::Example(e.clone()),
        (_, _, Some(p)) if p.contains('/') => Program::Path(PathBuf::from(p)),
        (_, _, Some(name)) => Program::Bin(name.clone()),
        _ => Program::Default,
    };
    let v = variant(&a.variant);
    let exe = match (&program, a.no_build) {
        // A path is run as it is: nothing to build.
        (Program::Path(p), _) => p.clone(),
        (_, true) => Crate::here()?.built(v, a.release, &program)?,
        (_, false) => {
            build(v, a.release, &program)?;
            Crate::here()?.built(v, a.release, &program)?
        }
    };
    let spec = JobSpec {
        conduit: v.conduit,
        ranks: a.ranks,
        real_udp: a.real_udp,
        launcher: a.launcher,
        timeout: a.timeout.map(Duration::from_secs),
        program: exe,
        args: a.args,
    };
    let ending = job::run(&spec)?;
    if let Some(msg) = ending.describe(v.conduit, spec.timeout) {
        eprintln!("cargo-uat: error: {msg}");
    }
    Ok(ending.code())
}
