//! Link settings of the root package's executables.
//!
//! Uni-address threads move stack frames between processes: a return address
//! copied from one process must name the same code in another, so code and
//! statics must sit at the same address in every process. We link every
//! executable (binaries, tests, benches, examples) as non-PIE, which fixes
//! them; start-up checks verify it across ranks. (Heap, native stack, TLS
//! and shared libraries still move: see the task model in src/lib.rs.)

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // Applies to every executable target of this package.
    println!("cargo:rustc-link-arg=-no-pie");
    // Linker arguments gasnet-sys found in GASNet's link line (e.g. MPI
    // rpaths) that only a final executable can apply.
    println!("cargo:rerun-if-env-changed=DEP_GASNET_LINK_ARGS");
    if let Ok(args) = std::env::var("DEP_GASNET_LINK_ARGS") {
        for arg in args.split_whitespace() {
            println!("cargo:rustc-link-arg={arg}");
        }
    }
}
