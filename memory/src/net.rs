//! The GASNet-EX handle this crate uses for its RMA and Active Messages.

use gasnet_sys::Gasnet;
use uni_threads::layer::Here;

/// The GASNet-EX handle, for this crate's RMA and Active Messages.
pub(crate) fn net(w: Here) -> Gasnet {
    // SAFETY: this crate reaches only the layer's zone of any segment (the
    // global heap: every address it puts, gets or frees is one of its
    // allocations, checked against the zone) and ends the job only through
    // `fatal`.
    unsafe { w.gasnet() }
}
