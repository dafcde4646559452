//! The migration checker (`UAT_CHECK_MIGRATION=1`): a pointer into a rank's
//! heap that is used on another rank is reported with its origin, instead of
//! reading whatever the other process has at that address.
//!
//! # How
//! Exact detection by address ranges, not by guessing. With the checker on,
//! every rank reserves the same 48 TiB span `[HEAP_LO, HEAP_LO + HEAP_SPAN)`
//! (no memory, PROT_NONE) and maps only its own slice of it,
//! `HEAP_LO + rank × stride`, as its heap: from `Runtime::start` on, Rust
//! allocations of that process ([`RankHeap`], the global allocator) come from
//! there. So a pointer into rank r's heap means nothing on any other rank:
//! - used there (read or written), it faults in r's slice, and the SIGSEGV
//!   handler ([`crate::guard`]) prints the origin rank, the address, the
//!   faulting instruction and a backtrace, then the job ends;
//! - freed or reallocated there (a `Vec` dropped after its thread moved), the
//!   allocator sees the foreign address and reports it the same way.
//!
//! This holds whatever else coincides between ranks: smp ranks forked from
//! one parent, or ranks started with address randomisation off, have the
//! same *pre-start* layout, but each one's checked heap is its own slice.
//!
//! # What it cannot catch
//! - memory allocated before `Runtime::start` (on smp, the parent's heap
//!   before the fork, shared by every rank's layout): it stays in the system
//!   allocator;
//! - memory not from Rust's global allocator: C `malloc`, `mmap`, the
//!   native (main) stack, thread-locals, file descriptors and other
//!   per-process handles;
//! - a thread that moves away and back to its own rank before using the
//!   pointer (then nothing is wrong at the time of use).
//!
//! # Cost
//! Off (the default): one relaxed load per allocation, and an address
//! comparison with constants per free. On: a size-class allocator under a
//! lock (see docs/design/addresses-and-arena.md for the measured cost on the benchmarks).
//!
//! The global allocator is installed by the `migration-checker` cargo
//! feature (on by default); a program that needs its own global allocator
//! turns the feature off and loses the checker.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Where the ranks' checked heaps live: above the arena (16 TiB) and below
/// where Linux loads PIE executables and their heap (from 0x5555_5555_4000,
/// plus up to 1 TiB of randomisation) and maps libraries and thread stacks
/// (top-down from 0x7fxx_xxxx_xxxx); a non-PIE heap starts near 4 MiB.
pub const HEAP_LO: usize = 0x2000_0000_0000;
/// Bytes of the span shared out among the ranks (48 TiB).
pub const HEAP_SPAN: usize = 0x3000_0000_0000;
/// The largest slice a rank gets, and the smallest accepted.
const MAX_STRIDE: usize = 64 << 30;
const MIN_STRIDE: usize = 1 << 30;
const PAGE: usize = 4096;

/// Whether allocations go to this rank's checked heap.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Bytes of each rank's slice (0: checker off).
static STRIDE: AtomicUsize = AtomicUsize::new(0);
static RANK: AtomicUsize = AtomicUsize::new(0);

/// The slice size for `ranks` ranks: a power of two, at most 64 GiB.
fn stride_for(ranks: u32) -> Option<usize> {
    let share = HEAP_SPAN / ranks.max(1) as usize;
    let stride = (1usize << share.ilog2()).min(MAX_STRIDE);
    (stride >= MIN_STRIDE).then_some(stride)
}

/// Turns the checker on for this process (rank `rank` of `ranks`): reserves
/// the span, maps this rank's slice, and sends later allocations there.
pub fn enable(rank: u32, ranks: u32) -> Result<(), String> {
    if !cfg!(feature = "migration-checker") {
        return Err(
            "UAT_CHECK_MIGRATION=1 needs uat's global allocator: build with the cargo feature \
                    `migration-checker` (on by default)"
                .into(),
        );
    }
    let stride = stride_for(ranks).ok_or_else(|| {
        format!(
            "the migration checker supports at most {} ranks",
            HEAP_SPAN / MIN_STRIDE
        )
    })?;
    // SAFETY: a fresh PROT_NONE reservation that replaces nothing
    // (MAP_FIXED_NOREPLACE); then this rank's slice, mapped over our own
    // reservation only.
    unsafe {
        let span = libc::mmap(
            HEAP_LO as *mut _,
            HEAP_SPAN,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        );
        if span as usize != HEAP_LO {
            return Err(format!(
                "the migration checker cannot reserve its heaps at {HEAP_LO:#x}: {}",
                std::io::Error::last_os_error()
            ));
        }
        let mine = HEAP_LO + rank as usize * stride;
        let slice = libc::mmap(
            mine as *mut _,
            stride,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
            -1,
            0,
        );
        if slice as usize != mine {
            return Err(format!(
                "the migration checker cannot map rank {rank}'s heap: {}",
                std::io::Error::last_os_error()
            ));
        }
        let mut heap = HEAP.lock();
        heap.next = mine;
        heap.end = mine + stride;
    }
    RANK.store(rank as usize, Ordering::Relaxed);
    STRIDE.store(stride, Ordering::Release);
    ACTIVE.store(true, Ordering::Release);
    Ok(())
}

/// The rank whose heap `addr` lies in, if that is not this rank's.
pub fn foreign_rank(addr: usize) -> Option<u32> {
    let stride = STRIDE.load(Ordering::Acquire);
    if stride == 0 || !in_span(addr) {
        return None;
    }
    let origin = (addr - HEAP_LO) / stride;
    (origin != RANK.load(Ordering::Relaxed)).then_some(origin as u32)
}

#[inline(always)]
fn in_span(addr: usize) -> bool {
    addr.wrapping_sub(HEAP_LO) < HEAP_SPAN
}

/// Whether `addr` is a block of a checked heap: in the span, with the
/// checker on (then the span is reserved by us, and nothing else can be
/// there; with it off, nothing of ours is).
#[inline(always)]
fn checked(addr: usize) -> bool {
    in_span(addr) && ACTIVE.load(Ordering::Relaxed)
}

/// The report of a fault at `addr` (in `origin`'s heap) by the instruction
/// at `ip`. Called from the SIGSEGV handler: the first line is written
/// without allocating; the backtrace after it is best effort.
pub(crate) fn report_fault(origin: u32, addr: usize, ip: usize) {
    let me = RANK.load(Ordering::Relaxed) as u64;
    let mut line = crate::signal_line::Line::new();
    line.text("[rank ")
        .dec(me)
        .text("] error: migration check: a pointer into rank ")
        .dec(origin as u64)
        .text("'s heap (")
        .hex(addr as u64)
        .text(") was used on rank ")
        .dec(me)
        .text(" by the instruction at ")
        .hex(ip as u64)
        .text(". ")
        .text(RULE)
        .text("\n");
    gasnet_sys::write_stderr(line.bytes());
    gasnet_sys::write_stderr(format!("[rank {me}] where it was used:\n{}\n", backtrace()).as_bytes());
}

/// What the user did wrong, and the rule (shared by both reports).
const RULE: &str = "A task kept a pointer into process-local memory (a Box, Vec, String, Rc, or a reference \
                    into one) across spawn or join and continued on another rank, where that memory does not \
                    exist. Rule: no pointer into process-local memory may be live across spawn, join or \
                    poll_point (the contract taken on by `unsafe` Runtime::start); move such data into the \
                    task's own variables (plain values) or a static";

#[cold]
#[inline(never)]
fn foreign_free(ptr: usize, what: &str) -> ! {
    let origin = foreign_rank(ptr).unwrap_or(u32::MAX);
    crate::fatal::fatal(format_args!(
        "migration check: {what} a heap object of rank {origin} ({ptr:#x}) on rank {}. {RULE}\nwhere:\n{}",
        RANK.load(Ordering::Relaxed),
        backtrace()
    ))
}

fn backtrace() -> std::backtrace::Backtrace {
    std::backtrace::Backtrace::force_capture()
}

/// The global allocator: the system allocator, except that with the checker
/// on (after [`enable`]) new allocations come from this rank's slice.
/// Deallocations go by address: a block keeps being freed where it came from.
pub struct RankHeap;

// SAFETY: every block is returned by exactly one of the two allocators and
// freed by the same one (by address range); the checked heap hands out
// disjoint, correctly aligned blocks of at least the requested size.
unsafe impl GlobalAlloc for RankHeap {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ACTIVE.load(Ordering::Relaxed) {
            HEAP.lock().alloc(layout)
        } else {
            // SAFETY: forwarding the caller's contract.
            unsafe { System.alloc(layout) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if ACTIVE.load(Ordering::Relaxed) {
            let p = HEAP.lock().alloc(layout);
            if !p.is_null() {
                // SAFETY: a fresh block of at least layout.size() bytes.
                unsafe { p.write_bytes(0, layout.size()) };
            }
            p
        } else {
            // SAFETY: forwarding the caller's contract.
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if checked(ptr as usize) {
            if foreign_rank(ptr as usize).is_some() {
                foreign_free(ptr as usize, "freed");
            }
            HEAP.lock().free(ptr as usize, layout);
        } else {
            // SAFETY: a block of the system allocator (by address).
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !checked(ptr as usize) {
            // SAFETY: a block of the system allocator; it stays there.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        if foreign_rank(ptr as usize).is_some() {
            foreign_free(ptr as usize, "reallocated");
        }
        // SAFETY: the caller guarantees a valid layout for new_size.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if class_of(new_layout) == class_of(layout) {
            return ptr; // the block already has room
        }
        let mut heap = HEAP.lock();
        let new = heap.alloc(new_layout);
        if !new.is_null() {
            // SAFETY: both blocks are live and distinct; copy what both hold.
            unsafe { std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size)) };
            heap.free(ptr as usize, layout);
        }
        new
    }
}

#[cfg(feature = "migration-checker")]
#[global_allocator]
static GLOBAL: RankHeap = RankHeap;

/// Size classes: powers of two from 16 bytes; a block of class c is aligned
/// to min(2^c, PAGE) (or more, when its first request asked for more).
const CLASSES: usize = 48;

fn class_of(layout: Layout) -> usize {
    let size = layout.size().max(layout.align()).max(16);
    size.next_power_of_two().trailing_zeros() as usize
}

/// This rank's checked heap: a bump pointer over the slice and one free
/// list per size class (the next pointer in a free block's first word).
struct Heap {
    next: usize,
    end: usize,
    free: [usize; CLASSES],
}

impl Heap {
    fn alloc(&mut self, layout: Layout) -> *mut u8 {
        let class = class_of(layout);
        if class >= CLASSES {
            return std::ptr::null_mut();
        }
        let size = 1usize << class;
        let head = self.free[class];
        // A listed block is aligned to min(size, PAGE): enough unless the
        // request wants more than a page of alignment.
        if head != 0 && layout.align() <= PAGE {
            // SAFETY: a free block of this heap; its first word is the link.
            self.free[class] = unsafe { *(head as *const usize) };
            return head as *mut u8;
        }
        let align = size.min(PAGE).max(layout.align());
        let start = self.next.next_multiple_of(align);
        match start.checked_add(size) {
            Some(end) if end <= self.end => {
                self.next = end;
                start as *mut u8
            }
            _ => std::ptr::null_mut(),
        }
    }

    fn free(&mut self, block: usize, layout: Layout) {
        let class = class_of(layout);
        let size = 1usize << class;
        if size >= 16 * PAGE {
            // Give big blocks' pages back (all but the link's page).
            // SAFETY: whole pages inside a block we own and no one uses.
            unsafe { libc::madvise((block + PAGE) as *mut _, size - PAGE, libc::MADV_DONTNEED) };
        }
        // SAFETY: the block is ours, free, and at least 16 bytes.
        unsafe { *(block as *mut usize) = self.free[class] };
        self.free[class] = block;
    }
}

/// The heap behind a spin lock (an allocator cannot use a lock that
/// allocates; the critical sections are a few instructions).
struct Locked {
    busy: AtomicBool,
    heap: std::cell::UnsafeCell<Heap>,
}

// SAFETY: the heap is reached only through `lock`, which serialises access.
unsafe impl Sync for Locked {}

static HEAP: Locked = Locked {
    busy: AtomicBool::new(false),
    heap: std::cell::UnsafeCell::new(Heap {
        next: 0,
        end: 0,
        free: [0; CLASSES],
    }),
};

struct Guard<'a>(&'a Locked);

impl Locked {
    fn lock(&self) -> Guard<'_> {
        while self
            .busy
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        Guard(self)
    }
}

impl std::ops::Deref for Guard<'_> {
    type Target = Heap;
    fn deref(&self) -> &Heap {
        // SAFETY: we hold the lock.
        unsafe { &*self.0.heap.get() }
    }
}

impl std::ops::DerefMut for Guard<'_> {
    fn deref_mut(&mut self) -> &mut Heap {
        // SAFETY: we hold the lock.
        unsafe { &mut *self.0.heap.get() }
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.0.busy.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_powers_of_two_within_the_span() {
        assert_eq!(stride_for(1), Some(MAX_STRIDE));
        assert_eq!(stride_for(512), Some(MAX_STRIDE));
        assert_eq!(stride_for(1024), Some(MAX_STRIDE / 2));
        let s = stride_for(3000).unwrap();
        assert!(s.is_power_of_two() && s * 3000 <= HEAP_SPAN && s >= MIN_STRIDE);
        assert_eq!(stride_for(u32::MAX), None);
    }

    #[test]
    fn the_heap_reuses_blocks_by_class_and_keeps_alignment() {
        let mut region = vec![0u64; 1 << 16];
        let base = (region.as_mut_ptr() as usize).next_multiple_of(PAGE);
        let mut h = Heap {
            next: base,
            end: base + (1 << 18),
            free: [0; CLASSES],
        };
        let l24 = Layout::from_size_align(24, 8).unwrap();
        let a = h.alloc(l24) as usize;
        let b = h.alloc(l24) as usize;
        assert_ne!(a, b);
        assert_eq!(a % 32, 0);
        h.free(a, l24);
        assert_eq!(
            h.alloc(Layout::from_size_align(20, 4).unwrap()) as usize,
            a,
            "same class reused"
        );
        let big = Layout::from_size_align(5000, 64).unwrap();
        let c = h.alloc(big) as usize;
        assert_eq!(c % PAGE, 0);
        assert!(
            h.alloc(Layout::from_size_align(1 << 20, 8).unwrap()).is_null(),
            "past the end"
        );
    }
}
