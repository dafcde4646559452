//! Starting a program: `--help`/`--version` before GASNet starts, then
//! GASNet, then the program's options parsed from what GASNet left.
//!
//! GASNet consumes launcher arguments (udp's rank count, for one), so options
//! are parsed from the arguments [`Gasnet::init`](crate::gasnet::Gasnet::init)
//! returns, never from `std::env::args()` directly. `--help` must work without
//! a launcher, so it is answered before GASNet is touched. [`crate::launch`]
//! does all of this; [`start`] is the same for programs that drive the
//! [`Runtime`](crate::Runtime) themselves.

use clap::Parser;

use crate::gasnet::Gasnet;

/// Answers `--help`/`--version`, fixes the processes' addresses
/// ([`crate::addresses`]), starts GASNet-EX, makes a panic on any rank end
/// the whole job, and parses the options (`C`). Bad options: rank 0 prints
/// clap's message and the job exits with code 2. A launch or start-up error:
/// printed, exit code 2.
pub fn start<C: Parser>(client_name: &str) -> (Gasnet, C) {
    let args: Vec<String> = std::env::args().collect();
    answer_help_early(&mut C::command(), &args);
    crate::addresses::fix();
    let (gasnet, rest) = init(args, client_name);
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

/// Starts GASNet-EX with the whole argument list and makes a panic on any
/// rank end the job; returns the arguments GASNet left. A launch or start-up
/// error is printed and the process exits with code 2.
pub(crate) fn init(args: Vec<String>, client_name: &str) -> (Gasnet, Vec<String>) {
    match Gasnet::init(args, client_name) {
        Ok((gasnet, rest)) => {
            gasnet.exit_job_on_panic();
            crate::addresses::forget_reexec_marker();
            (gasnet, rest)
        }
        Err(e) => {
            crate::gasnet::report(format_args!("error: {e}"));
            std::process::exit(2);
        }
    }
}

/// Prints help or version and exits 0 when asked, before any launcher logic.
pub(crate) fn answer_help_early(cmd: &mut clap::Command, args: &[String]) {
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
