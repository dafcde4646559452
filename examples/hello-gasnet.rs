//! The smallest program on the GASNet-EX layer (docs/building.md: "GASNet-EX
//! directly"). Every rank adds its rank to a counter on rank 0 with a
//! remote atomic; rank 0 checks the total.
//!
//!     cargo uat run --release -n 4 --example hello-gasnet

use clap::Parser;
use uat::gasnet::atomic::{Ops, Order};

/// Every rank adds its rank (times --scale) to a counter on rank 0.
#[derive(Parser)]
#[command(name = "hello-gasnet")]
struct Options {
    #[arg(long, default_value_t = 1)]
    scale: u64,
}

fn main() {
    let (gasnet, opt) = uat::cli::start::<Options>("hello-gasnet");
    gasnet.attach_segment(1 << 20).unwrap_or_else(|e| gasnet.fail(e));
    let counter = gasnet.segment(0).base; // first word of rank 0's segment
    let atomics = gasnet.atomic_domain(Ops::ALL);
    atomics.fetch_add(0, counter, gasnet.rank() as u64 * opt.scale, Order::Relaxed);
    gasnet.barrier();
    let n = gasnet.size() as u64;
    let ok = atomics.get(0, counter, Order::Relaxed) == opt.scale * n * (n - 1) / 2;
    if gasnet.rank() == 0 {
        println!("{{\"ok\": {ok}, \"ranks\": {n}}}");
    }
    gasnet.barrier();
    gasnet.exit(if ok { 0 } else { 1 });
}
