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
use uat_rules::gasnet::Source;

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
    /// per conduit per machine, under GASNET_CACHE_DIR or <cargo home>/uat;
    /// or an installed one is used (GASNET_PREFIX, or pkg-config's
    /// gasnet-CONDUIT-par; UAT_GASNET=bundled: never).
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
    /// (GASNET_SUPERNODE_MAXSIZE=1: --hosts N). With --hosts H, real UDP
    /// between the H hosts.
    #[arg(long)]
    real_udp: bool,
    /// udp, mpi: run the N ranks as H emulated hosts, a cluster's shape on
    /// one machine: shared memory inside a host, the network (real UDP, or
    /// MPI) between hosts. Hosts hold ceil(N/H) consecutive ranks, the last
    /// one the rest (GASNET_SUPERNODE_MAXSIZE); UAT_NET_DELAY adds a
    /// network's delay between them. On a cluster the hosts are its nodes.
    #[arg(long, value_name = "H", value_parser = clap::value_parser!(u32).range(1..))]
    hosts: Option<u32>,
    /// mpi, ibv: start the job with CMD instead of mpirun or gasnetrun_ibv
    /// (same arguments), e.g. a site's wrapper.
    #[arg(long, value_name = "CMD")]
    launcher: Option<String>,
    /// Write a trace of the scheduler into DIR (sets UAT_TRACE for every
    /// rank): trace.json (Chrome Trace Event JSON: Perfetto UI,
    /// chrome://tracing), stats.txt and stats.json (per event kind: count,
    /// total, mean, max), trace.otf2 (OTF2, for Vampir; where this launcher
    /// was built with the OTF2 library), and each rank's rank-R.uatrace.
    /// UAT_TRACE_MODE=stats keeps the statistics only.
    #[arg(long, value_name = "DIR")]
    trace: Option<PathBuf>,
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
    // The build script's own rule (uat_rules::gasnet): only the bundled
    // build needs the source; cargo inherits our environment, so
    // GASNET_PREFIX, UAT_GASNET and PKG_CONFIG_PATH reach it unchanged.
    let choice = uat_rules::gasnet::choose_from_env(v.conduit)?;
    if choice.source == Source::Bundled && setup::gasnet_source().is_none() {
        return Err("the GASNet-EX source is not on this machine: run `cargo uat setup` first (or build against an installed GASNet-EX: GASNET_PREFIX, or its lib/pkgconfig on PKG_CONFIG_PATH)".into());
    }
    let krate = Crate::here()?;
    if krate.is_uat_workspace && *program == Program::Default {
        krate.build(v, release, &Program::Path(PathBuf::new()))?;
        return Ok(None);
    }
    krate.build(v, release, program).map(Some)
}

/// Refuses `run`'s flags that clap accepts but that make no sense together
/// (each refusal names its flag).
fn check_run(a: &RunArgs) -> Result<(), String> {
    if a.real_udp && a.variant.conduit != Conduit::Udp {
        return Err("--real-udp applies to the udp conduit only".into());
    }
    if a.real_udp && a.hosts == Some(1) && a.ranks > 1 {
        return Err(
            "--real-udp --hosts 1: one host shares memory between all its ranks, so no UDP would carry \
                    anything; give --hosts 2 or more"
                .into(),
        );
    }
    if let Some(h) = a.hosts {
        match a.variant.conduit {
            Conduit::Udp | Conduit::Mpi => {
                uat_rules::hosts::ranks_per_host(a.ranks, h)?;
            }
            Conduit::Smp if h == 1 => {}
            Conduit::Smp => {
                return Err(format!(
                    "--hosts {h}: the smp conduit is one host (every rank shares memory); emulate hosts on udp or mpi"
                ))
            }
            Conduit::Ibv => {
                return Err(format!(
                    "--hosts {h}: on ibv the hosts are the cluster's nodes (ranks per node come from the allocation: docs/cluster.md)"
                ))
            }
        }
    }
    if a.launcher.is_some() && !matches!(a.variant.conduit, Conduit::Mpi | Conduit::Ibv) {
        return Err("--launcher applies to the mpi and ibv conduits only".into());
    }
    Ok(())
}

fn run(a: RunArgs) -> Result<i32, String> {
    check_run(&a)?;
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
        hosts: a.hosts.or(a.real_udp.then_some(a.ranks)),
        launcher: a.launcher,
        timeout: a.timeout.map(Duration::from_secs),
        program: exe,
        args: a.args,
        // --trace, or UAT_TRACE set for the job: the launcher writes OTF2
        // (and a failed job's outputs) either way.
        trace: a
            .trace
            .clone()
            .or_else(|| {
                std::env::var_os("UAT_TRACE")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            })
            .as_deref()
            .map(absolute)
            .transpose()?,
    };
    if let Some(dir) = &spec.trace {
        clear_trace(dir)?;
    }
    let ending = job::run(&spec)?;
    if let Some(msg) = ending.describe(v.conduit, spec.timeout) {
        eprintln!("cargo-uat: error: {msg}");
    }
    if let Some(dir) = &spec.trace {
        write_trace(dir, ending.code() == 0);
    }
    Ok(ending.code())
}

/// `dir` from the working directory (every rank writes there, whatever its
/// own working directory).
fn absolute(dir: &std::path::Path) -> Result<PathBuf, String> {
    std::path::absolute(dir).map_err(|e| format!("--trace {}: {e}", dir.display()))
}

/// Removes an earlier job's rank files and outputs from `dir`, so that the
/// merge never mixes two jobs.
fn clear_trace(dir: &std::path::Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("--trace {}: {e}", dir.display()))?;
    for entry in std::fs::read_dir(dir).map_err(|e| format!("--trace {}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.ends_with(".uatrace") || ["trace.json", "stats.txt", "stats.json"].contains(&name.as_str()) {
            std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// After the job: rank 0 wrote the outputs of a job that ended well, and
/// the launcher adds OTF2 where it has the library; after a failure it
/// makes them from whatever the ranks left, and says what is missing.
fn write_trace(dir: &std::path::Path, ok: bool) {
    if ok && dir.join("trace.json").exists() {
        #[cfg(feature = "otf2")]
        match uat_trace::load(dir).and_then(|t| uat_trace::write_otf2(&t, &t.timeline(), dir)) {
            Ok(w) => eprintln!("cargo-uat: trace: {}", w.anchor.display()),
            Err(e) => eprintln!("cargo-uat: error: no OTF2 trace in {}: {e}", dir.display()),
        }
        #[cfg(not(feature = "otf2"))]
        eprintln!(
            "cargo-uat: trace: no OTF2 archive: this launcher was built without the OTF2 library \
             (cargo uat setup installs libopen-trace-format2-dev; scripts/launcher.sh then rebuilds it with OTF2)"
        );
        return;
    }
    match uat_trace::write_outputs(dir) {
        Ok(w) => {
            let paths: Vec<String> = w.paths().iter().map(|p| p.display().to_string()).collect();
            eprintln!("cargo-uat: trace: {}", paths.join(", "));
            for note in &w.notes {
                eprintln!("cargo-uat: trace: {note}");
            }
        }
        Err(e) => eprintln!("cargo-uat: error: no trace in {}: {e}", dir.display()),
    }
}

#[cfg(test)]
mod tests {
    //! A property test of the command line:
    //! random argument vectors never panic the parser, and every refusal
    //! names the flag or value involved.

    use super::*;
    use clap::error::{ContextKind, ErrorKind};
    use clap::CommandFactory;

    /// `rand`'s small seeded generator (reproducible cases).
    struct Rng(rand::rngs::SmallRng);

    impl Rng {
        fn new(seed: u64) -> Rng {
            Rng(rand::SeedableRng::seed_from_u64(seed))
        }

        fn below(&mut self, n: usize) -> usize {
            rand::RngExt::random_range(&mut self.0, 0..n)
        }
    }

    /// Subcommands, flags and values the launcher knows, and values at
    /// their edges.
    const KNOWN: &[&str] = &[
        "run",
        "build",
        "features",
        "setup",
        "oversubscribed",
        "help",
        "-n",
        "-n4",
        "-n=2",
        "--conduit",
        "--conduit=udp",
        "--fad",
        "--fad=am",
        "--real-udp",
        "--launcher",
        "--timeout",
        "--release",
        "--no-build",
        "--bin",
        "--example",
        "--ranks",
        "--cores",
        "--",
        "smp",
        "udp",
        "mpi",
        "ibv",
        "native",
        "am",
        "rdma-emulated",
        "rdma_emulated",
        "RDMA-EMULATED",
        "Smp",
        "0",
        "1",
        "4",
        "1000000",
        "1000001",
        "-1",
        "4294967296",
        "18446744073709551616",
        "2.5",
        "0x10",
        "./a.out",
        "/bin/true",
        "prog",
    ];

    /// A random argument: a known word, a known word mangled, or junk.
    fn arg(rng: &mut Rng) -> String {
        let known = KNOWN[rng.below(KNOWN.len())];
        match rng.below(10) {
            0..=5 => known.to_string(),
            6 => format!("{known}{}", KNOWN[rng.below(KNOWN.len())]),
            7 => format!("--{}", known.trim_start_matches('-')).to_uppercase(),
            8 => known.chars().take(rng.below(known.len() + 1)).collect(),
            _ => {
                const JUNK: &[char] = &['-', '=', ' ', 'x', '9', 'é', '\u{7f}', '\t', '/', '\u{1F980}', '"'];
                (0..rng.below(8)).map(|_| JUNK[rng.below(JUNK.len())]).collect()
            }
        }
    }

    /// `s` without control characters (clap's rendering drops some, e.g.
    /// DEL, from what it quotes).
    fn printable(s: &str) -> String {
        s.chars().filter(|c| !c.is_control()).collect()
    }

    /// Checks that `err`, clap's refusal of `args`, names what it refuses.
    fn assert_names_what_it_refuses(args: &[String], err: &clap::Error) {
        let text = printable(&err.to_string());
        let mut named = false;
        for kind in [
            ContextKind::InvalidArg,
            ContextKind::InvalidSubcommand,
            ContextKind::PriorArg,
        ] {
            if let Some(what) = err.get(kind) {
                // A list (the required arguments not given) or one name.
                let names: Vec<String> = match what {
                    clap::error::ContextValue::Strings(v) => v.clone(),
                    other => vec![other.to_string()],
                };
                for name in names.iter().map(|n| printable(n)) {
                    assert!(
                        text.contains(&name),
                        "{args:?}: the message does not name {name:?}: {text}"
                    );
                    named = true;
                }
            }
        }
        // (An empty one: a flag given no value; the flag is named above.)
        if let Some(value) = err.get(ContextKind::InvalidValue).filter(|v| !v.to_string().is_empty()) {
            let value = printable(&value.to_string());
            assert!(
                text.contains(&value),
                "{args:?}: the message does not quote {value:?}: {text}"
            );
            assert!(
                args.iter().any(|a| printable(a).contains(&value)),
                "{args:?}: the message quotes {value:?}, which is in no argument (`-n4`, `--fad=am`: part of one): {text}"
            );
            named = true;
        }
        if matches!(
            err.kind(),
            ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        ) {
            // The help: it names the subcommands.
            assert!(text.contains("run") && text.contains("build"), "{args:?}: {text}");
            named = true;
        }
        assert!(
            named,
            "{args:?}: a refusal ({:?}) that names nothing: {text}",
            err.kind()
        );
    }

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn random_arguments_never_panic_and_every_refusal_names_its_flag_or_value() {
        let mut rng = Rng::new(32);
        let (mut accepted, mut refused) = (0, 0);
        for _ in 0..20_000 {
            // Mostly a subcommand first (and `run`'s required -n), so that
            // the flags behind it are parsed too.
            let mut args: Vec<String> = Vec::new();
            if rng.below(5) != 0 {
                let sub = ["run", "build", "features", "oversubscribed", "run"][rng.below(5)];
                args.push(sub.to_string());
                if sub == "run" && rng.below(2) == 0 {
                    args.extend(["-n".to_string(), (1 + rng.below(8)).to_string()]);
                }
                if sub == "oversubscribed" && rng.below(2) == 0 {
                    args.extend(["--ranks".to_string(), rng.below(8).to_string()]);
                }
            }
            let more = 1 + rng.below(8);
            args.extend((0..more.saturating_sub(args.len()).max(usize::from(args.is_empty()))).map(|_| arg(&mut rng)));
            let argv = std::iter::once("cargo-uat".to_string()).chain(args.iter().cloned());
            match std::panic::catch_unwind(|| Cli::try_parse_from(argv)) {
                Err(_) => panic!("the parser panicked on {args:?}"),
                Ok(Ok(cli)) => {
                    accepted += 1;
                    if let Cmd::Run(a) = &cli.command {
                        if let Err(why) = check_run(a) {
                            assert!(
                                why.contains("--real-udp") || why.contains("--launcher"),
                                "{args:?}: {why}"
                            );
                        }
                    }
                }
                Ok(Err(e)) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {}
                Ok(Err(e)) => {
                    refused += 1;
                    assert_names_what_it_refuses(&args, &e);
                }
            }
        }
        // Both sides of the parser were exercised.
        assert!(
            accepted > 2_000 && refused > 5_000,
            "{accepted} accepted, {refused} refused"
        );
    }

    #[test]
    fn bad_values_are_refused_naming_flag_and_value() {
        for (args, words) in [
            (&["run", "-n", "0"][..], &["-n", "0"][..]),
            (&["run", "-n", "4", "--conduit", "tcp"], &["--conduit", "tcp"]),
            (&["run", "-n", "4", "--fad", "rdma"], &["--fad", "rdma"]),
            (&["run", "-n", "4", "--timeout", "0"], &["--timeout", "0"]),
            (&["run", "--conduit", "smp"], &["-n"]),
            (&["run", "-n", "2", "--bogus"], &["--bogus"]),
            (&["build", "--bin", "a", "--example", "b"], &["--bin", "--example"]),
            (&["launch"], &["launch"]),
        ] {
            let argv = std::iter::once("cargo-uat").chain(args.iter().copied());
            let err = Cli::try_parse_from(argv)
                .err()
                .unwrap_or_else(|| panic!("{args:?} accepted"));
            let text = err.to_string();
            for w in words {
                assert!(text.contains(w), "{args:?}: no {w:?} in: {text}");
            }
        }
        let cli = Cli::try_parse_from(["cargo-uat", "run", "-n", "2", "--real-udp"]).unwrap();
        let Cmd::Run(a) = cli.command else { unreachable!() };
        assert!(check_run(&a).unwrap_err().contains("--real-udp"));
    }
}
