//! `uat-trace merge DIR`: the outputs of a traced job from its ranks' files.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Makes the outputs of a traced uat job from the files its ranks wrote.
///
/// A job run with `cargo uat run --trace DIR` (or `UAT_TRACE=DIR`) leaves
/// one file per rank, DIR/rank-<R>.uatrace. `uat-trace merge DIR` reads
/// them and writes, in DIR:
///
///   trace.json   Chrome Trace Event JSON: open it in https://ui.perfetto.dev
///                or chrome://tracing (a track per rank, steals and joins as
///                arrows)
///
///   stats.txt    per kind of event, per rank and in total: count, total
///                time, mean, max; steal outcomes; flows
///
///   stats.json   the same as JSON
///
///   trace.otf2   an OTF2 archive for Vampir, Score-P's tools and TAU (with
///                trace.def and the folder trace/ next to it), when uat-trace
///                was built with the `otf2` feature
///
/// A job that failed leaves a partial set: the ranks without a file, the
/// partial traces and any records dropped from full buffers are printed as
/// notes and kept in the outputs' metadata.
#[derive(Parser)]
#[command(name = "uat-trace", version, verbatim_doc_comment)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Reads DIR/rank-*.uatrace and writes DIR/trace.json, DIR/stats.txt,
    /// DIR/stats.json and (feature `otf2`) DIR/trace.otf2.
    Merge {
        /// The trace directory of a job.
        dir: PathBuf,
    },
}

fn main() -> ExitCode {
    let Command::Merge { dir } = Cli::parse().command;
    match uat_trace::write_outputs(&dir) {
        Ok(written) => {
            for p in written.paths() {
                println!("{}", p.display());
            }
            for n in &written.notes {
                println!("note: {n}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("uat-trace: cannot merge {}: {e}", dir.display());
            ExitCode::from(1)
        }
    }
}
