//! Raw bindings: bindgen's output for `shim/uat_shim.h` (the shim's plain-C
//! functions, the GASNet-EX types they use and a few real GASNet functions).
//! Private to this crate: the safe layer is the only caller.

#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code)]
// bindgen's output: undocumented, and public only inside this crate.
#![allow(missing_docs, unreachable_pub, clippy::undocumented_unsafe_blocks)]

include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
