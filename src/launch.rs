//! One call that runs a whole program: [`launch`].
//!
//! It does, on every rank: answer `--help`/`--version` (before any launcher
//! is involved), make code and statics sit at the same addresses in every
//! process ([`crate::addresses`]), start GASNet-EX, parse the program's
//! arguments ([`Args`]), read the [`Config`](crate::Config) from the `UAT_*`
//! environment, start the runtime, run the root task (rank 0 runs it, the
//! others steal), hand its result to every rank, and end the job with the
//! right exit code, the polling thread stopped. With `UAT_VERBOSE=1` it
//! prints the configuration at start and the run's counters at the end
//! (`[rank 0] uat: run stats {...}` on stderr). Errors at any step end the
//! job with a message: exit code 2 for bad arguments, 1 otherwise.
//!
//! For programs that need several runs or their own set-up, the lower-level
//! [`Runtime`](crate::Runtime) stays available.

use std::any::Any;
use std::fmt::Debug;
use std::marker::PhantomData;
use std::sync::OnceLock;

use crate::gasnet::Gasnet;
use crate::{Config, Runtime};

/// What the root task takes from the command line, parsed on every rank
/// (every rank gets the same arguments).
///
/// - `()`: no arguments;
/// - a number (`u64`, `u32`, `usize`, `i64`, `f64`): one positional argument;
/// - [`Cli<P>`]: the program's own clap options (`#[derive(clap::Parser)]`,
///   with `use uat::clap;` so that the derive finds clap).
pub trait Args: Sized + Copy + Send + 'static {
    /// The command line this program takes.
    fn command(name: &'static str) -> clap::Command;
    /// The value from parsed arguments.
    fn from_matches(matches: &mut clap::ArgMatches) -> Result<Self, clap::Error>;
}

impl Args for () {
    fn command(name: &'static str) -> clap::Command {
        clap::Command::new(name)
    }
    fn from_matches(_: &mut clap::ArgMatches) -> Result<(), clap::Error> {
        Ok(())
    }
}

macro_rules! number_args {
    ($($t:ty),*) => {$(
        impl Args for $t {
            fn command(name: &'static str) -> clap::Command {
                clap::Command::new(name).arg(
                    clap::Arg::new("N")
                        .required(true)
                        // `-- -21` is the number -21, not an option.
                        .allow_negative_numbers(true)
                        .value_parser(clap::value_parser!($t))
                        .help(concat!("The root task's argument (", stringify!($t), ")")),
                )
            }
            fn from_matches(matches: &mut clap::ArgMatches) -> Result<$t, clap::Error> {
                matches
                    .remove_one::<$t>("N")
                    .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::MissingRequiredArgument))
            }
        }
    )*};
}
number_args!(u64, u32, usize, i64, f64);

/// A program's own clap options, `P`, as root-task arguments.
///
/// A zero-sized handle: it is `Copy`, goes into any task and dereferences
/// to the options parsed on the rank the task is running on *now* (every
/// rank parses the same arguments). So options that are not `Copy` — a
/// `PathBuf`, a `String` — reach every task; like any reference into
/// process-local memory, a `&P` from it must not be kept across `spawn`,
/// `join` or `poll_point` (dereference the handle again after them).
pub struct Cli<P>(PhantomData<fn() -> P>);

impl<P> Clone for Cli<P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P> Copy for Cli<P> {}

/// This process's parsed options (one set per process).
static OPTIONS: OnceLock<Box<dyn Any + Send + Sync>> = OnceLock::new();

impl<P: Send + Sync + 'static> std::ops::Deref for Cli<P> {
    type Target = P;
    fn deref(&self) -> &P {
        OPTIONS
            .get()
            .and_then(|o| o.downcast_ref::<P>())
            .expect("a Cli<P> exists only after launch parsed P on this rank")
    }
}

impl<P: clap::Parser + Send + Sync + 'static> Args for Cli<P> {
    fn command(_: &'static str) -> clap::Command {
        P::command()
    }
    fn from_matches(matches: &mut clap::ArgMatches) -> Result<Cli<P>, clap::Error> {
        let options = P::from_arg_matches_mut(matches)?;
        // One launch per process, so one set of options.
        let _ = OPTIONS.set(Box::new(options));
        Ok(Cli(PhantomData))
    }
}

/// Runs `root` as a uni-address threads program on every rank and prints
/// its result on rank 0 (one line on stdout, `{:?}`: a number as it is, a
/// tuple or a `#[derive(Debug)]` struct as Rust shows it), then ends the job
/// with exit code 0. See the module docs for everything it sets up.
///
/// ```no_run
/// fn fib(n: u64) -> u64 {
///     if n < 2 {
///         return n;
///     }
///     let (a, b) = uat::join(move || fib(n - 1), move || fib(n - 2));
///     a + b
/// }
///
/// fn main() {
///     // SAFETY: fib keeps only numbers across spawn and join, and uses no
///     // global memory.
///     unsafe { uat::launch(|n: u64| fib(n)) }
/// }
/// ```
///
/// # Safety
///
/// The contract of [`Runtime::start`] (the same list, from one file):
///
#[doc = include_str!("contract.md")]
pub unsafe fn launch<A, F, T>(root: F) -> !
where
    A: Args,
    F: FnOnce(A) -> T + Send + Copy + 'static,
    T: Debug + Send + Copy + 'static,
{
    // SAFETY: the caller's contract, passed on.
    unsafe {
        launch_then(root, |result: T| {
            if crate::gasnet::Gasnet::current_rank() == Some(0) {
                println!("{result:?}");
            }
            0
        })
    }
}

/// Like [`launch`], but instead of printing the result, calls `then` with
/// it on every rank (the root's result is broadcast), outside tasks; the
/// job ends with the code `then` returns on rank 0 (a non-zero code on any
/// rank also ends the job non-zero).
///
/// # Safety
///
/// As for [`launch`].
pub unsafe fn launch_then<A, F, T, G>(root: F, then: G) -> !
where
    A: Args,
    F: FnOnce(A) -> T + Send + Copy + 'static,
    T: Send + Copy + 'static,
    G: FnOnce(T) -> i32,
{
    let name = program_name();
    let mut command = A::command(name);
    let args: Vec<String> = std::env::args().collect();
    crate::cli::answer_help_early(&mut command, &args);
    crate::addresses::fix();
    let (gasnet, rest) = crate::cli::init(args, name);
    let mut matches = match command.try_get_matches_from_mut(&rest) {
        Ok(m) => m,
        Err(e) => bad_arguments(gasnet, e),
    };
    let args = A::from_matches(&mut matches).unwrap_or_else(|e| bad_arguments(gasnet, e.with_cmd(&command)));
    let config = Config::from_env().unwrap_or_else(|e| gasnet.fail(e));
    // SAFETY: the caller's contract (launch's # Safety) is Runtime::start's.
    let runtime = unsafe { Runtime::start(gasnet, config) }.unwrap_or_else(|e| gasnet.fail(e));
    let result = runtime.run(move || root(args));
    let result = runtime.broadcast_value(result);
    let stats = runtime.stats();
    if runtime.config().get_verbose() && gasnet.rank() == 0 {
        let fields: Vec<String> = crate::runtime::Stats::FIELDS
            .iter()
            .zip(stats.values())
            .filter(|(f, _)| f.unit != crate::runtime::Unit::Cycles)
            .map(|(f, v)| format!("\"{}\":{v}", f.name))
            .collect();
        crate::gasnet::report(format_args!("uat: run stats {{{}}}", fields.join(",")));
    }
    if let (Some(ws), 0) = (stats.workspan(), gasnet.rank()) {
        crate::gasnet::report(format_args!(
            "uat: work {:.6} s ({} strands), span {:.6} s ({} strands), parallelism {:.2} ({:.2} in strands){}",
            ws.work_s,
            ws.work_strands,
            ws.span_s,
            ws.span_strands,
            ws.parallelism,
            ws.work_strands as f64 / ws.span_strands as f64,
            ws.burdened_parallelism
                .map_or(String::new(), |b| format!(", burdened parallelism {b:.2}"))
        ));
    }
    let code = then(result);
    gasnet.barrier();
    runtime.exit(code)
}

fn bad_arguments(gasnet: Gasnet, e: clap::Error) -> ! {
    if gasnet.rank() == 0 {
        let _ = e.print();
    }
    gasnet.exit(2)
}

/// The executable's file name (the program's name in `--help`; made once
/// per process, so leaking it is fine).
fn program_name() -> &'static str {
    let name = std::env::args()
        .next()
        .and_then(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "program".into());
    Box::leak(name.into_boxed_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse<T: Args>(args: &[&str]) -> Result<T, clap::Error> {
        let mut m = T::command("prog").try_get_matches_from(std::iter::once("prog").chain(args.iter().copied()))?;
        T::from_matches(&mut m)
    }

    #[test]
    fn negative_and_fractional_root_arguments_are_numbers() {
        assert_eq!(parse::<i64>(&["-21"]).unwrap(), -21);
        assert_eq!(parse::<f64>(&["-0.5"]).unwrap(), -0.5);
        assert_eq!(parse::<f64>(&["2.25"]).unwrap(), 2.25);
        assert_eq!(parse::<u64>(&["21"]).unwrap(), 21);
        // An unsigned argument refuses a negative one as a value, clearly.
        let e = parse::<u64>(&["-21"]).unwrap_err().to_string();
        assert!(e.contains("-21"), "{e}");
    }
}
