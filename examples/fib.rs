//! Naive parallel Fibonacci: the smallest uni-address threads program.
//!
//!     scripts/run.sh -n 2 -- target/smp-native/release/examples/fib 30

use clap::Parser;

/// Computes fib(N) with a spawn per call.
#[derive(Parser)]
#[command(name = "fib")]
struct Options {
    #[arg(default_value_t = 30)]
    n: u64,
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = uat::join(move || fib(n - 1), move || fib(n - 2));
    a + b
}

fn main() {
    let (gasnet, opt) = uat::cli::start::<Options>("fib");
    let config = uat::Config::from_env().unwrap_or_else(|e| gasnet.fail(e));
    // SAFETY: fib's tasks hold only numbers across spawn and join.
    let rt = unsafe { uat::Runtime::start(gasnet, config) }.unwrap_or_else(|e| gasnet.fail(e));
    let n = opt.n;
    let t = std::time::Instant::now();
    let result = rt.run(move || fib(n));
    let stats = rt.stats();
    if let Some(r) = result {
        println!(
            "{{\"fib\": {n}, \"result\": {r}, \"time_s\": {:.3}, \"spawns\": {}, \"max_stack_bytes\": {}}}",
            t.elapsed().as_secs_f64(),
            stats.spawns,
            stats.max_stack_bytes
        );
    }
    gasnet.barrier();
    rt.exit(0);
}
