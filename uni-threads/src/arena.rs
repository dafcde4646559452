//! The arena: everything a remote rank touches, at one fixed virtual address
//! in every process.
//!
//! The arena is a second mapping (an alias) of this rank's GASNet segment:
//! `mremap(segment, 0, len, MREMAP_MAYMOVE | MREMAP_FIXED, lo)` duplicates a
//! shared (PSHM-backed) mapping. So arena address `x` on rank `r` is segment
//! address `segment(r).base + (x - lo)` for RMA and atomics ([`remote`]), and
//! a thief that gets frames into its own segment sees them at the same arena
//! address it will resume them at.
//!
//! Layout (page-aligned parts, low to high):
//!
//! ```text
//! guard          GUARD_RESERVE bytes of PROT_NONE, not part of the segment
//! stack region   [lo, ARENA_BASE): threads' frames grow down from ARENA_BASE
//! control page   at ARENA_BASE: the deque's words, finished, attention,
//!                sleep, lifeline slots
//! deque entries  capacity × 16 bytes (at a fixed address: DEQUE_OFFSET)
//! future cells   count × 64 bytes
//! side slots     count × 32 bytes (UAT_WORKSPAN: a child's final path)
//! stats slots    one per rank (rank 0's are gathered at the end of a run)
//! RDMA region    copies of suspended threads' frames
//! layer zone     the layer above's (global memory's heap, `uat::global`;
//!                UAT_GLOBAL_HEAP bytes)
//! ```
//!
//! The stack region is the lowest part of the segment, so below it lies
//! nothing but the guard: a reservation far larger than any stack frame
//! (1 TiB of address space, no memory). A frame compiled without stack
//! probes (C code, `alloca`) that is larger than the stack region lands in
//! the guard, not in the RDMA region or the heap, and the fault handler
//! reports it as an overflow ([`crate::guard`]). The control words stay at
//! fixed addresses (compile-time constants on the owner's hot path)
//! whatever the stack size.

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use gasnet_sys::Gasnet;

/// The arena's fixed point in every process: the control page; the stack
/// region ends here. Far from where Linux places heap, stacks, libraries and
/// (non-PIE) executables.
pub const ARENA_BASE: usize = 0x1000_0000_0000;

const PAGE: usize = 4096;
/// Bytes of PROT_NONE address space reserved below the stack region.
pub(crate) const GUARD_RESERVE: usize = 1 << 40;

fn page_up(n: usize) -> usize {
    n.div_ceil(PAGE) * PAGE
}

/// The arena's parts: offsets from [`ARENA_BASE`] for the parts above it,
/// sizes for the stack region below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub stats: usize,
    pub deque: usize,
    pub deque_capacity: usize,
    pub cells: usize,
    pub cell_count: usize,
    /// One side slot per future cell, same index: the child's final
    /// work/span path.
    pub sides: usize,
    pub rdma: usize,
    pub rdma_size: usize,
    /// The zone of the layer above the scheduler (global memory's heap,
    /// `uat::global`; see `crate::layer`).
    pub heap: usize,
    pub heap_size: usize,
    /// Bytes of the stack region `[ARENA_BASE - stack_size, ARENA_BASE)`.
    pub stack_size: usize,
    /// Bytes of the segment: the stack region and the parts above it.
    pub total: usize,
}

// Words of the control page (offsets from ARENA_BASE), each on its own
// line. The deque's words are at the offsets `crate::deque::words` names,
// below 192.
/// Set (to the run's number) on every rank when the root task has completed.
pub(crate) const FINISHED_WORD: ControlWord = ControlWord::at(192);
/// The worker's attention word, checked at every spawn (`crate::attention`).
pub(crate) const ATTENTION_WORD: ControlWord = ControlWord::at(256);
/// The worker's sleep word: awake, or quiescent and sleeping on it
/// (`am_fad::sleep`, `crate::lifeline`).
pub(crate) const SLEEP_WORD: ControlWord = ControlWord::at(320);
/// The rank (plus one) whose lifeline woke this one; 0: none since read.
pub(crate) const WOKEN_BY_WORD: ControlWord = ControlWord::at(384);
/// Lifelines per rank at most (dimensions of the lifeline graph, declared
/// with the protocol): the control page holds one slot per lifeline
/// ([`LIFELINE_SLOTS`]; the setting `UAT_LIFELINES` is checked against it).
pub(crate) use uat_protocol::lifeline::MAX_LIFELINES;
/// The first of [`MAX_LIFELINES`] words, one per dimension
/// of the lifeline graph: the rank (plus one) whose lifeline of that
/// dimension ends here and that waits for work; 0: none.
pub(crate) const LIFELINE_SLOTS: ControlWord = ControlWord::at(448);

/// A word of the control page, named by its offset from [`ARENA_BASE`]: the
/// same arena address in every process. Its three addresses — in the arena
/// here, in any rank's segment, and its offset in every segment — come
/// from it, so a word is never mistaken for a plain number or for another
/// kind of address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ControlWord(usize);

impl ControlWord {
    /// The word at `offset` (8-aligned, inside the control page).
    pub(crate) const fn at(offset: usize) -> ControlWord {
        assert!(
            offset & 7 == 0 && offset < PAGE,
            "a control word is an aligned word of the control page"
        );
        ControlWord(offset)
    }

    /// Bytes from the control page's start.
    pub(crate) const fn offset(self) -> usize {
        self.0
    }

    /// Its arena address (the same in every process).
    pub(crate) const fn addr(self) -> usize {
        ARENA_BASE + self.0
    }

    /// The word in this process's arena.
    ///
    /// # Safety
    /// The arena must be mapped, and everyone must access the word
    /// atomically (whole-word RMA counts).
    #[inline(always)]
    pub(crate) unsafe fn local(self) -> &'static AtomicU64 {
        // SAFETY: caller's contract; 8-aligned (checked in `at`).
        unsafe { &*(self.addr() as *const AtomicU64) }
    }

    /// Its address in `rank`'s segment (for RMA and remote atomics).
    #[inline]
    pub(crate) fn on(self, gasnet: Gasnet, rank: u32) -> usize {
        remote(gasnet, rank, self.addr())
    }

    /// Its offset in every rank's segment.
    pub(crate) fn segment_offset(self) -> usize {
        segment_offset(self.addr())
    }
}
/// Where the deque's entries start (fixed, so the hot path needs no load).
pub(crate) const DEQUE_OFFSET: usize = PAGE;
/// Bytes of a future cell's side slot: its child's final work/span path.
pub(crate) const SIDE_SLOT: usize = 32;
const _: () = assert!(crate::workspan::PATH_BYTES <= SIDE_SLOT);
/// Bytes of one rank's stats slot.
pub(crate) const STATS_SLOT: usize = 512;
const _: () = assert!(
    std::mem::size_of::<crate::stats::Stats>() <= STATS_SLOT,
    "a rank's stats must fit its slot"
);

/// The settings that size the arena's parts (from the runtime's `Config`:
/// `UAT_DEQUE_CAPACITY`, `UAT_FUTURE_CELLS`, `UAT_RDMA_REGION`,
/// `UAT_STACK_SIZE`; and the layer's zone, `Layer::zone_bytes`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sizes {
    pub(crate) deque_capacity: usize,
    pub(crate) future_cells: usize,
    pub(crate) rdma_region: usize,
    pub(crate) stack_size: usize,
    pub(crate) zone: usize,
}

impl Layout {
    /// The layout for the sizes `c` on `ranks` ranks, with deque entries
    /// and future cells of the given sizes.
    pub(crate) fn new(c: &Sizes, ranks: u32, entry_bytes: usize, cell_bytes: usize) -> Layout {
        let deque = DEQUE_OFFSET;
        let cells = deque + page_up(c.deque_capacity * entry_bytes);
        let sides = cells + page_up(c.future_cells * cell_bytes);
        let stats = sides + page_up(c.future_cells * SIDE_SLOT);
        let rdma = stats + page_up(ranks as usize * STATS_SLOT);
        let rdma_size = page_up(c.rdma_region);
        let stack_size = page_up(c.stack_size);
        let heap = rdma + rdma_size;
        let heap_size = page_up(c.zone);
        Layout {
            stats,
            deque,
            deque_capacity: c.deque_capacity,
            cells,
            cell_count: c.future_cells,
            sides,
            rdma,
            rdma_size,
            heap,
            heap_size,
            stack_size,
            total: stack_size + heap + heap_size,
        }
    }

    /// Arena address of a part's offset.
    #[inline]
    pub(crate) const fn addr(offset: usize) -> usize {
        ARENA_BASE + offset
    }

    /// The arena's lowest address (the stack region's bottom); the segment
    /// maps here.
    #[inline]
    pub(crate) fn lo(&self) -> usize {
        ARENA_BASE - self.stack_size
    }

    /// Lowest address of the uni-address stack region.
    #[inline]
    pub(crate) fn stack_lo(&self) -> usize {
        self.lo()
    }

    /// Highest address of the uni-address stack region (exclusive).
    #[inline]
    pub(crate) const fn stack_top(&self) -> usize {
        ARENA_BASE
    }

    /// The guard below the stack region, `[lo, hi)`.
    pub(crate) fn guard(&self) -> (usize, usize) {
        (self.lo() - GUARD_RESERVE, self.lo())
    }
}

/// `ARENA_BASE - lo` of the mapped arena (the stack region's size): the
/// segment offset of [`ARENA_BASE`]. Set once by [`map`].
static BASE_OFFSET: AtomicUsize = AtomicUsize::new(0);

/// Why the arena could not be set up, with what to do about it.
#[derive(Debug)]
pub enum ArenaError {
    Taken(std::io::Error),
    Segment(gasnet_sys::Error),
    NoPshm(std::io::Error),
}

impl fmt::Display for ArenaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArenaError::Taken(e) => write!(
                f,
                "cannot reserve the arena and its guard below {ARENA_BASE:#x} ({e}): something is already \
                 mapped there, or the address space is limited (ulimit -v must allow {} GiB of reservation).",
                GUARD_RESERVE >> 30
            ),
            ArenaError::Segment(e) => write!(
                f,
                "cannot attach the GASNet segment for the arena: {e}. The segment holds UAT_STACK_SIZE, \
                 UAT_RDMA_REGION and UAT_GLOBAL_HEAP (1G by default) besides the deque and cells: lower one of \
                 them, or raise GASNET_MAX_SEGSIZE"
            ),
            ArenaError::NoPshm(e) => write!(
                f,
                "cannot alias the GASNet segment at the arena address ({e}): this needs GASNet-EX built with \
                 PSHM (shared-memory segments, configure --enable-pshm, the default)"
            ),
        }
    }
}

/// Maps the arena: reserves the guard and the arena's range (never silently
/// replacing an existing mapping), attaches the GASNet segment (collective),
/// and aliases the segment over its part of the reservation.
pub(crate) fn map(gasnet: Gasnet, layout: &Layout) -> Result<(), ArenaError> {
    if !gasnet.pshm() {
        return Err(ArenaError::NoPshm(std::io::Error::other("GASNet reports no PSHM")));
    }
    let (guard_lo, _) = layout.guard();
    let reserve = GUARD_RESERVE + layout.total;
    // SAFETY: a fresh PROT_NONE reservation; MAP_FIXED_NOREPLACE fails
    // rather than replacing anything already there.
    let reserved = unsafe {
        libc::mmap(
            guard_lo as *mut _,
            reserve,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if reserved == libc::MAP_FAILED {
        return Err(ArenaError::Taken(std::io::Error::last_os_error()));
    }
    if reserved as usize != guard_lo {
        // Old kernels ignore MAP_FIXED_NOREPLACE and map elsewhere.
        // SAFETY: unmapping the mapping we just got.
        unsafe { libc::munmap(reserved, reserve) };
        return Err(ArenaError::Taken(std::io::Error::other(format!(
            "the kernel placed it at {reserved:p}"
        ))));
    }
    let seg = gasnet.attach_segment(layout.total).map_err(ArenaError::Segment)?;
    let own = seg.local.unwrap_or(seg.base);
    // SAFETY: `own` is our segment's mapping (shared, PSHM-backed, at least
    // layout.total bytes); the target range is our own reservation, so
    // MREMAP_FIXED replaces nothing but it. The guard below stays reserved.
    let alias = unsafe {
        libc::mremap(
            own as *mut _,
            0,
            layout.total,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            layout.lo() as *mut libc::c_void,
        )
    };
    if alias == libc::MAP_FAILED || alias as usize != layout.lo() {
        return Err(ArenaError::NoPshm(std::io::Error::last_os_error()));
    }
    BASE_OFFSET.store(layout.stack_size, Ordering::Relaxed);
    Ok(())
}

/// The segment address of arena address `addr` on `rank` (for RMA/atomics).
#[inline]
pub(crate) fn remote(gasnet: Gasnet, rank: u32, addr: usize) -> usize {
    gasnet.segment(rank).base + segment_offset(addr)
}

/// The offset of arena address `addr` in every rank's segment: every rank's
/// arena has the same layout (checked at start-up).
#[inline]
pub(crate) fn segment_offset(addr: usize) -> usize {
    addr + BASE_OFFSET.load(Ordering::Relaxed) - ARENA_BASE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_parts_are_ordered_page_aligned_and_disjoint() {
        let c = Sizes {
            deque_capacity: 1000,
            future_cells: 1000,
            rdma_region: 100_000,
            stack_size: 1 << 20,
            zone: 100_000,
        };
        let l = Layout::new(&c, 3, 16, 64);
        let parts = [
            0,
            l.deque,
            l.cells,
            l.sides,
            l.stats,
            l.rdma,
            l.heap,
            l.heap + l.heap_size,
        ];
        assert!(parts.windows(2).all(|w| w[0] < w[1]), "{l:?}");
        assert!(parts.iter().all(|p| p % PAGE == 0), "{l:?}");
        assert!(l.cells - l.deque >= 1000 * 16);
        assert!(l.sides - l.cells >= 1000 * 64);
        assert!(l.stats - l.sides >= 1000 * SIDE_SLOT);
        assert!(l.rdma - l.stats >= 3 * STATS_SLOT);
        assert_eq!(l.stack_top(), ARENA_BASE);
        assert_eq!(l.stack_lo(), ARENA_BASE - (1 << 20));
        assert!(l.heap - l.rdma >= 100_000 && l.heap_size >= 100_000);
        assert_eq!(l.lo() + l.total, ARENA_BASE + l.heap + l.heap_size);
        let (glo, ghi) = l.guard();
        assert_eq!((ghi, ghi - glo), (l.stack_lo(), GUARD_RESERVE));
        assert!(GUARD_RESERVE >= l.stack_size * 1024, "the guard dwarfs any frame");
    }
}
