//! Starting a program: `--help`/`--version` before GASNet starts, then
//! GASNet, then the program's options parsed from what GASNet left.
//!
//! GASNet consumes launcher arguments (udp's rank count, for one), so options
//! are parsed from the arguments [`Gasnet::init`](crate::gasnet::Gasnet::init)
//! returns, never from `std::env::args()` directly. `--help` must work without
//! a launcher, so it is answered before GASNet is touched.

use clap::{CommandFactory, Parser};

use crate::gasnet::Gasnet;

/// Answers `--help`/`--version`, starts GASNet-EX, makes a panic on any rank
/// end the whole job, and parses the options (`C`). Bad options: rank 0 prints
/// clap's message and the job exits with code 2. A launch or start-up error:
/// printed, exit code 2.
pub fn start<C: Parser>(client_name: &str) -> (Gasnet, C) {
    let args: Vec<String> = std::env::args().collect();
    answer_help_early::<C>(&args);
    let (gasnet, rest) = match Gasnet::init(args, client_name) {
        Ok(started) => started,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    gasnet.exit_job_on_panic();
    match C::try_parse_from(&rest) {
        Ok(options) => (gasnet, options),
        Err(e) => {
            if gasnet.rank() == 0 {
                let _ = e.print();
            }
            gasnet.exit(2)
        }
    }
}

/// Prints help or version and exits 0 when asked, before any launcher logic.
fn answer_help_early<C: CommandFactory>(args: &[String]) {
    let mut cmd = C::command();
    for arg in args.iter().skip(1) {
        match arg.as_str() {
            "--" => return,
            "-h" | "--help" => {
                let _ = cmd.print_long_help();
                std::process::exit(0);
            }
            "-V" | "--version" => {
                print!("{}", cmd.render_version());
                std::process::exit(0);
            }
            _ => {}
        }
    }
}
