//! Raw bindings: bindgen's output for the part of OTF2's writing API that
//! the writer uses (see build.rs's allowlist), and the `OTF2_UNDEFINED_*`
//! references, which are casts in C that bindgen does not translate.
//! Private to `otf2`: [`super::archive`] is the only caller.

#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code)]
// bindgen's output: undocumented, and public only inside this module's parent.
#![allow(missing_docs, unreachable_pub, clippy::undocumented_unsafe_blocks)]

include!(concat!(env!("OUT_DIR"), "/otf2.rs"));

/// `OTF2_UNDEFINED_UINT32`: no string, system tree node, location group,
/// region, group or communicator.
pub const UNDEFINED_REF: u32 = u32::MAX;
/// `OTF2_UNDEFINED_TIMESTAMP`.
pub const UNDEFINED_TIMESTAMP: u64 = u64::MAX;
