//! Ending the whole job: when a limit is exceeded (naming the setting to
//! raise), and when the API is misused (naming the mistake and the rule).
//!
//! Every message is one line, written with one `write(2)` and prefixed with
//! the rank ([`gasnet_sys::report`]), then GASNet ends every rank (exit 1).
//! Sizes print as the settings take them ([`fmt_size`]).

use gasnet_sys::Gasnet;

/// A size as a person wrote it: "256K", "64M", "1G", or bytes — the form
/// the `UAT_*` settings accept, so a suggestion can be pasted back.
pub fn fmt_size(bytes: usize) -> String {
    for (shift, suffix) in [(30, "G"), (20, "M"), (10, "K")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// Prints `[rank R] error: ...` and ends every rank of the job (exit 1).
/// Usable before the runtime (or even GASNet) has started.
#[cold]
#[inline(never)]
pub(crate) fn fatal(msg: std::fmt::Arguments) -> ! {
    // SAFETY: only `fail` is called on the handle, which touches no segment.
    match unsafe { Gasnet::current() } {
        Some(g) => g.fail(msg),
        None => {
            gasnet_sys::report(format_args!("error: {msg}"));
            std::process::exit(1)
        }
    }
}

#[cold]
#[inline(never)]
pub(crate) fn deque_overflow(capacity: u64) -> ! {
    fatal(format_args!(
        "work-stealing deque overflow: more than {capacity} continuations are pending (spawn nested that deep); \
         raise UAT_DEQUE_CAPACITY (e.g. UAT_DEQUE_CAPACITY={}) or Config::deque_capacity",
        capacity * 4
    ))
}

#[cold]
#[inline(never)]
pub(crate) fn cells_exhausted(count: usize) -> ! {
    fatal(format_args!(
        "out of future cells: {count} spawned tasks are not yet joined; \
         raise UAT_FUTURE_CELLS (e.g. UAT_FUTURE_CELLS={}) or Config::future_cells",
        count * 4
    ))
}

#[cold]
#[inline(never)]
pub(crate) fn rdma_region_full(bytes: usize, need: usize) -> ! {
    fatal(format_args!(
        "the RDMA region ({}) has no room for {need} bytes of suspended frames; \
         raise UAT_RDMA_REGION (e.g. UAT_RDMA_REGION={}) or Config::rdma_region",
        fmt_size(bytes),
        fmt_size(bytes * 4)
    ))
}

/// Tasks outlived the run's root: their handles were never joined.
#[cold]
#[inline(never)]
pub(crate) fn leaked_tasks(count: u64, state: &str) -> ! {
    fatal(format_args!(
        "{count} spawned task(s) {state} after the root task returned: a JoinHandle was not joined \
         (std::mem::forget, a leak, or a handle kept in a thread-local past its spawner). Rule: every \
         spawned task must be joined, or its handle dropped (which joins), before the task that spawned it returns"
    ))
}

/// The message of a uni-address stack overflow (built before it is needed:
/// the signal handler that prints it may not allocate).
pub(crate) fn stack_overflow_message(rank: u32, stack_size: usize) -> String {
    format!(
        "[rank {rank}] error: uni-address stack overflow: a task recursed past the {} stack region \
         (or a frame without stack probes, e.g. C code or alloca, was larger than what was left of it); \
         raise UAT_STACK_SIZE (e.g. UAT_STACK_SIZE={}) or Config::stack_size\n",
        fmt_size(stack_size),
        fmt_size(stack_size * 4)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_overflow_message_prints_small_stacks_as_given() {
        let m = super::stack_overflow_message(3, 256 << 10);
        assert!(m.starts_with("[rank 3] error: uni-address stack overflow"), "{m}");
        assert!(m.contains("past the 256K stack region"), "{m}");
        assert!(m.contains("UAT_STACK_SIZE=1M"), "{m}");
        assert!(m.ends_with('\n') && m.matches('\n').count() == 1, "one line: {m}");
    }
}
