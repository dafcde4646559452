//! Raw bindings: bindgen's output for `shim/uat_shim.h` (the shim's plain-C
//! functions, the GASNet-EX types they use and a few real GASNet functions).
//! Private to this crate: the safe layer is the only caller.

#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code)]

include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
