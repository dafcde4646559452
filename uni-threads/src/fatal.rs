//! Ending the whole job when a limit is exceeded, with the setting to raise.

use crate::worker::worker;

/// Prints `[rank R] error: ...` and ends every rank of the job (exit 1).
#[cold]
#[inline(never)]
pub fn fatal(msg: std::fmt::Arguments) -> ! {
    let g = worker().gasnet;
    g.fail(msg)
}

#[cold]
#[inline(never)]
pub fn deque_overflow(capacity: u64) -> ! {
    fatal(format_args!(
        "work-stealing deque overflow: more than {capacity} continuations are pending (spawn nested that deep); \
         raise UAT_DEQUE_CAPACITY (e.g. UAT_DEQUE_CAPACITY={}) or Config::deque_capacity",
        capacity * 4
    ))
}

#[cold]
#[inline(never)]
pub fn cells_exhausted(count: usize) -> ! {
    fatal(format_args!(
        "out of future cells: {count} spawned tasks are not yet joined; \
         raise UAT_FUTURE_CELLS (e.g. UAT_FUTURE_CELLS={}) or Config::future_cells",
        count * 4
    ))
}

#[cold]
#[inline(never)]
pub fn rdma_region_full(bytes: usize, need: usize) -> ! {
    fatal(format_args!(
        "the RDMA region ({} MiB) has no room for {need} bytes of suspended frames; \
         raise UAT_RDMA_REGION (e.g. UAT_RDMA_REGION={}M) or Config::rdma_region",
        bytes >> 20,
        (bytes >> 20).max(1) * 4
    ))
}
