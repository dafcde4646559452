//! The arena: everything a remote rank touches, at one fixed virtual address
//! in every process.
//!
//! The arena is a second mapping (an alias) of this rank's GASNet segment at
//! [`ARENA_BASE`]: `mremap(segment, 0, len, MREMAP_MAYMOVE | MREMAP_FIXED,
//! ARENA_BASE)` duplicates a shared (PSHM-backed) mapping. So arena address
//! `x` on rank `r` is segment address `segment(r).base + (x - ARENA_BASE)`
//! for RMA and atomics, and a thief that gets frames into its own segment
//! sees them at the same arena address it will resume them at.
//!
//! Layout (page-aligned parts, low to high):
//!
//! ```text
//! control page   deque lock word, head, tail (one cache line each), ...
//! deque entries  capacity × 16 bytes (at a fixed offset: DEQUE_OFFSET)
//! future cells   count × 64 bytes
//! stats slots    one per rank (rank 0's are summed at the end of a run)
//! RDMA region    copies of suspended threads' frames
//! guard          PROT_NONE in the alias, ≥ 64 KiB: stack overflow traps here
//! stack region   the uni-address stack; threads' frames grow down from the top
//! ```

use std::fmt;

use gasnet_sys::Gasnet;

use crate::config::Config;
use crate::deque::Entry;
use crate::future::CELL_SIZE;

/// Where the arena lives in every process: far from where Linux places
/// heap, stacks, libraries and (non-PIE) executables.
pub const ARENA_BASE: usize = 0x1000_0000_0000;

const PAGE: usize = 4096;
/// Bytes of PROT_NONE between the RDMA region and the stack region.
pub const GUARD_SIZE: usize = 256 << 10;

fn page_up(n: usize) -> usize {
    n.div_ceil(PAGE) * PAGE
}

/// Offsets of the arena's parts (from [`ARENA_BASE`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub stats: usize,
    pub deque: usize,
    pub deque_capacity: usize,
    pub cells: usize,
    pub cell_count: usize,
    pub rdma: usize,
    pub rdma_size: usize,
    pub guard: usize,
    pub stack: usize,
    pub stack_size: usize,
    pub total: usize,
}

// Words of the control page (offsets from ARENA_BASE), each on its own line.
pub const LOCK_WORD: usize = 0;
/// A word next to the lock that remote fetch-and-adds may target too
/// (registered with it; used by the micro-benchmarks).
pub const FAD_BENCH_WORD: usize = 8;
pub const HEAD_WORD: usize = 64;
pub const TAIL_WORD: usize = 128;
/// Set (to the run's number) on every rank when the root task has completed.
pub const FINISHED_WORD: usize = 192;
/// Where the deque's entries start (fixed, so the hot path needs no load).
pub const DEQUE_OFFSET: usize = PAGE;
/// Bytes of one rank's stats slot.
pub const STATS_SLOT: usize = 256;
const _: () = assert!(
    std::mem::size_of::<crate::stats::Stats>() <= STATS_SLOT,
    "a rank's stats must fit its slot"
);

impl Layout {
    pub fn new(c: &Config, ranks: u32) -> Layout {
        let deque = DEQUE_OFFSET;
        let cells = deque + page_up(c.deque_capacity * std::mem::size_of::<Entry>());
        let stats = cells + page_up(c.future_cells * CELL_SIZE);
        let rdma = stats + page_up(ranks as usize * STATS_SLOT);
        let guard = rdma + page_up(c.rdma_region);
        let stack = guard + GUARD_SIZE;
        let stack_size = page_up(c.stack_size);
        Layout {
            stats,
            deque,
            deque_capacity: c.deque_capacity,
            cells,
            cell_count: c.future_cells,
            rdma,
            rdma_size: page_up(c.rdma_region),
            guard,
            stack,
            stack_size,
            total: stack + stack_size,
        }
    }

    /// Arena address of a part's offset.
    #[inline]
    pub const fn addr(offset: usize) -> usize {
        ARENA_BASE + offset
    }

    /// Highest address of the uni-address stack region (exclusive).
    #[inline]
    pub fn stack_top(&self) -> usize {
        ARENA_BASE + self.total
    }
}

/// Why the arena could not be set up, with what to do about it.
#[derive(Debug)]
pub enum ArenaError {
    Taken(std::io::Error),
    Segment(gasnet_sys::Error),
    NoPshm(std::io::Error),
    Protect(std::io::Error),
}

impl fmt::Display for ArenaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArenaError::Taken(e) => write!(
                f,
                "cannot reserve the arena at {ARENA_BASE:#x} ({e}): something is already mapped there. \
                 Is the program built as a non-PIE executable (the root package's build.rs does that)?"
            ),
            ArenaError::Segment(e) => write!(f, "cannot attach the GASNet segment for the arena: {e}"),
            ArenaError::NoPshm(e) => write!(
                f,
                "cannot alias the GASNet segment at the arena address ({e}): this needs GASNet-EX built with \
                 PSHM (shared-memory segments, configure --enable-pshm, the default)"
            ),
            ArenaError::Protect(e) => write!(f, "cannot protect the stack guard: {e}"),
        }
    }
}

/// Maps the arena: reserves [`ARENA_BASE`] (never silently replacing an
/// existing mapping), attaches the GASNet segment (collective), and aliases
/// the segment over the reservation. Returns the layout.
pub fn map(gasnet: Gasnet, layout: &Layout) -> Result<(), ArenaError> {
    if !gasnet.pshm() {
        return Err(ArenaError::NoPshm(std::io::Error::other("GASNet reports no PSHM")));
    }
    // SAFETY: a fresh PROT_NONE reservation; MAP_FIXED_NOREPLACE fails
    // rather than replacing anything already there.
    let reserved = unsafe {
        libc::mmap(
            ARENA_BASE as *mut _,
            layout.total,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if reserved == libc::MAP_FAILED {
        return Err(ArenaError::Taken(std::io::Error::last_os_error()));
    }
    if reserved as usize != ARENA_BASE {
        // Old kernels ignore MAP_FIXED_NOREPLACE and map elsewhere.
        // SAFETY: unmapping the mapping we just got.
        unsafe { libc::munmap(reserved, layout.total) };
        return Err(ArenaError::Taken(std::io::Error::other(format!(
            "the kernel placed it at {reserved:p}"
        ))));
    }
    let seg = gasnet.attach_segment(layout.total).map_err(ArenaError::Segment)?;
    let own = seg.local.unwrap_or(seg.base);
    // SAFETY: `own` is our segment's mapping (shared, PSHM-backed, at least
    // layout.total bytes); the target range is our own reservation, so
    // MREMAP_FIXED replaces nothing but it.
    let alias = unsafe {
        libc::mremap(
            own as *mut _,
            0,
            layout.total,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            ARENA_BASE as *mut libc::c_void,
        )
    };
    if alias == libc::MAP_FAILED || alias as usize != ARENA_BASE {
        return Err(ArenaError::NoPshm(std::io::Error::last_os_error()));
    }
    // SAFETY: the guard lies inside the alias; protecting it changes only
    // this mapping (the segment's own mapping stays read-write for RMA).
    let rc = unsafe { libc::mprotect(Layout::addr(layout.guard) as *mut _, GUARD_SIZE, libc::PROT_NONE) };
    if rc != 0 {
        return Err(ArenaError::Protect(std::io::Error::last_os_error()));
    }
    Ok(())
}

/// The segment address of arena address `addr` on `rank` (for RMA/atomics).
#[inline]
pub fn remote(gasnet: Gasnet, rank: u32, addr: usize) -> usize {
    gasnet.segment(rank).base + (addr - ARENA_BASE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_parts_are_ordered_page_aligned_and_disjoint() {
        let c = Config::default()
            .deque_capacity(1000)
            .future_cells(1000)
            .rdma_region(100_000)
            .stack_size(1 << 20);
        let l = Layout::new(&c, 3);
        let parts = [0, l.deque, l.cells, l.stats, l.rdma, l.guard, l.stack, l.total];
        assert!(parts.windows(2).all(|w| w[0] < w[1]), "{l:?}");
        assert!(parts.iter().all(|p| p % PAGE == 0), "{l:?}");
        assert!(l.cells - l.deque >= 1000 * 16);
        assert!(l.stats - l.cells >= 1000 * CELL_SIZE);
        assert!(l.rdma - l.stats >= 3 * STATS_SLOT);
        assert_eq!(l.stack - l.guard, GUARD_SIZE);
        assert!(GUARD_SIZE >= 64 << 10);
        assert_eq!(l.stack_top(), ARENA_BASE + l.total);
    }
}
