//! The global heap: the top part of every rank's arena, in two zones.
//!
//! ```text
//! [local zone | symmetric zone]      (each UAT_GLOBAL_HEAP / 2 bytes)
//! ```
//!
//! - The **local zone** serves allocations on the calling task's rank
//!   (`GlobalSlice::alloc`, `GlobalAtomicU64::new`): a first-fit free list
//!   owned by the rank, behind a lock (the `rdma-emulated` poller frees
//!   blocks handed back by other ranks).
//! - The **symmetric zone** serves allocations that need the *same* offset
//!   on every rank (`GlobalSlice::alloc_distributed`, `alloc_on`): a bump
//!   pointer in one word on rank 0, changed by global compare-and-swap (so
//!   any task on any rank allocates, in every fetch-and-add mode). The word
//!   also counts the live symmetric allocations; the zone is reclaimed as a
//!   whole when that count returns to zero.
//!
//! Every allocation starts with a 64-byte header whose first word, the
//! *tag*, mixes `LIVE_TAG`, the data address and the size word (below)
//! while the block is allocated: `free` swaps it to 0 with one global
//! compare-and-swap against the tag its handle implies, so a second free of
//! the same block, a free through a slice handle of an earlier generation
//! of the same address (a `GlobalAtomicU64` keeps no generation: its free
//! reads the size word first), or a free of something that is not a block,
//! is caught on the freeing rank, whichever rank that is, and ends the job
//! with a message. The header's second word holds the block's size in bytes and a 16-bit *generation*
//! (drawn at each allocation): a handle read back from global memory
//! (`GlobalSlice::from_raw_checked`) must name both, so one that outlived
//! its block is refused even where the address was handed out again
//! (unless the 16-bit generations collide). These two header words are
//! read and written by the heap only through global atomics (the `native`
//! rule for atomic domain words); the cache's fetch of a granule may copy
//! a neighbour's header bytes into the mirror, where nothing reads them. The third is the *check word*: `CHECK_TAG ^ address ^ size word`
//! while the block is live, 0 once freed, written by a CPU store where the
//! header is mapped and by a put elsewhere — for a block of another rank's
//! local zone across the network, by its home when the GLOBAL_FREE message
//! that returns the block arrives, before the block can be handed out again
//! (so such a free costs one round trip, the compare-and-swap, and one
//! message; until the message arrives, a checkout of a stale copy on the
//! home is not refused, but nothing can reuse the block under it) —
//! never through the atomic domain,
//! so a checkout reads it with one plain load where the header is mapped
//! (`Heap::freed_here`).
//!
//! The symmetric zone's bump pointer goes back to a freed block's start when
//! that block is the topmost one (its size read from its header), so
//! scratch freed in the reverse order of allocation is reused at once; the
//! rest of the zone is reclaimed as a whole when nothing in it is live.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use am_fad::AtomicOp;
use gasnet_sys::am::ids::GLOBAL_FREE;
use gasnet_sys::am::{join_u64, split_u64, Arg, Handler, Token};

use uni_threads::layer::{fatal, fmt_size, FuzzDraw, FuzzRequest, Here};

use crate::net::net;

/// Bytes of an allocation's header, and the alignment of every allocation.
pub(crate) const HEADER: usize = 64;
/// Mixed into the header word of a live block ([`live_tag`]).
const LIVE_TAG: u64 = 0x6c69_7665_0000_0000;

/// The header word of a live block whose data starts at `data` with the
/// size word `size_word`: never 0 (the word of a freed block), and
/// different for another generation or size of the same address.
#[inline]
fn live_tag(data: usize, size_word: u64) -> u64 {
    (LIVE_TAG ^ data as u64 ^ size_word.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1
}

/// The header's third word while the block is live: this tag mixed with the
/// data address and the size word (0 once freed).
const CHECK_TAG: u64 = 0x6368_6563_6b00_0000;
/// The check word's offset in the header.
const CHECK_WORD: usize = 16;
/// The header's second word: the generation in the top 16 bits, the size in
/// bytes in the low 48 (`SIZE_MASK`).
const GENERATION_SHIFT: u32 = 48;
const SIZE_MASK: u64 = (1 << GENERATION_SHIFT) - 1;
/// The next generation this process draws (mixed with its rank, so that
/// two ranks reusing one symmetric address rarely draw the same).
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(0);

/// The header's second word of a block of `bytes` bytes and generation
/// `generation`.
#[inline]
pub(crate) fn size_word(bytes: usize, generation: u16) -> u64 {
    assert!(
        (bytes as u64) <= SIZE_MASK,
        "a global allocation of {bytes} bytes is too large"
    );
    (u64::from(generation) << GENERATION_SHIFT) | bytes as u64
}

/// Bytes at the start of the symmetric zone holding its control word (on
/// rank 0).
const SYMMETRIC_CONTROL: usize = 4096;
/// The control word: live allocations in the top 16 bits, the bump offset
/// (bytes from the zone's data start) in the low 48.
const LIVE_SHIFT: u32 = 48;
const OFFSET_MASK: u64 = (1 << LIVE_SHIFT) - 1;

/// The heap's zones, as arena addresses (the same on every rank).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Zones {
    pub local: (usize, usize),
    pub symmetric: (usize, usize),
}

impl Zones {
    pub(crate) fn new(lo: usize, size: usize) -> Zones {
        let half = (size / 2) & !(4095);
        Zones {
            local: (lo, lo + half),
            symmetric: (lo + half, lo + size),
        }
    }

    fn symmetric_control(&self) -> usize {
        self.symmetric.0
    }

    fn symmetric_data(&self) -> usize {
        self.symmetric.0 + SYMMETRIC_CONTROL
    }
}

/// The local zone's free list (offsets are arena addresses).
struct FreeList {
    /// Free ranges: start → length.
    free: BTreeMap<usize, usize>,
    /// Live blocks (header address) → length with the header.
    live: BTreeMap<usize, usize>,
}

/// This rank's local zone.
pub(crate) struct LocalHeap {
    list: Mutex<FreeList>,
    zones: Zones,
}

/// This rank's zones, for the GLOBAL_FREE handler (set before the first
/// barrier of the runtime, like the cells' range).
static LOCAL_LO: AtomicUsize = AtomicUsize::new(0);
static LOCAL_HI: AtomicUsize = AtomicUsize::new(0);
/// GLOBAL_FREE messages refused by this rank.
static REFUSED: AtomicU64 = AtomicU64::new(0);
/// Their reports (the first few in full).
static REFUSALS: am_fad::refusals::Refusals = am_fad::refusals::Refusals::new("GLOBAL_FREE messages");
/// The heap, for the handler (a `&'static` of the installed worker's).
static HEAP: std::sync::OnceLock<&'static LocalHeap> = std::sync::OnceLock::new();

/// Rounds a byte count up to the allocation granularity.
fn granules(bytes: usize) -> Option<usize> {
    bytes.checked_add(HEADER - 1).map(|b| b & !(HEADER - 1))
}

impl LocalHeap {
    pub(crate) fn new(zones: Zones) -> LocalHeap {
        let (lo, hi) = zones.local;
        LOCAL_LO.store(lo, Ordering::Relaxed);
        LOCAL_HI.store(hi, Ordering::Release);
        LocalHeap {
            list: Mutex::new(FreeList {
                free: BTreeMap::from([(lo, hi - lo)]),
                live: BTreeMap::new(),
            }),
            zones,
        }
    }

    pub(crate) fn zones(&self) -> Zones {
        self.zones
    }

    /// Makes the heap reachable from the GLOBAL_FREE handler.
    pub(crate) fn publish(&'static self) {
        let _ = HEAP.set(self);
    }

    /// A block for `bytes` of data: the data's arena address, or None when
    /// the zone has no free range that large.
    fn alloc(&self, bytes: usize) -> Option<usize> {
        let need = granules(bytes)?.checked_add(HEADER)?;
        let mut l = self.list.lock().unwrap_or_else(|e| e.into_inner());
        let (&start, &len) = l.free.iter().find(|(_, &len)| len >= need)?;
        l.free.remove(&start);
        if len > need {
            l.free.insert(start + need, len - need);
        }
        l.live.insert(start, need);
        Some(start + HEADER)
    }

    /// Returns the block whose data starts at `data` to the free list, or
    /// says why it is not a live block of this zone.
    fn release(&self, data: usize) -> Result<(), &'static str> {
        self.release_with(data, |_| {})
    }

    /// [`LocalHeap::release`], calling `before(data)` once the block is
    /// known to be live and before it is free: under the list's lock, so no
    /// allocation can hand it out in between.
    fn release_with(&self, data: usize, before: impl FnOnce(usize)) -> Result<(), &'static str> {
        let (lo, hi) = self.zones.local;
        // `data == hi` is the block of an empty allocation in the zone's last
        // header: a live block like any other.
        if data < lo + HEADER || data > hi || !data.is_multiple_of(HEADER) {
            return Err("not a block of this rank's global heap");
        }
        let start = data - HEADER;
        let mut l = self.list.lock().unwrap_or_else(|e| e.into_inner());
        let Some(len) = l.live.remove(&start) else {
            return Err("not a live block");
        };
        before(data);
        // Coalesce with the free neighbours.
        let (mut s, mut n) = (start, len);
        if let Some((&ps, &pn)) = l.free.range(..start).next_back() {
            if ps + pn == start {
                l.free.remove(&ps);
                s = ps;
                n += pn;
            }
        }
        if let Some(&nn) = l.free.get(&(start + len)) {
            l.free.remove(&(start + len));
            n += nn;
        }
        l.free.insert(s, n);
        Ok(())
    }

    /// Bytes free in the local zone (for messages).
    fn free_bytes(&self) -> usize {
        let l = self.list.lock().unwrap_or_else(|e| e.into_inner());
        l.free.values().sum()
    }
}

/// This process's heap: its local zone's free list and the global atomics
/// every header word and the symmetric control word are reached through.
pub(crate) struct Heap {
    pub atomics: am_fad::GlobalAtomics,
    pub local: &'static LocalHeap,
    /// `UAT_GLOBAL_HEAP` as set (the messages of a full heap name it).
    pub setting: usize,
}

impl Heap {
    /// A global atomic on a header or control word of `rank` (at `remote`,
    /// its address there: `Here::remote`), reported like every blocking
    /// operation on another rank's memory (`net::on_rank`: a rank asleep on
    /// its lifelines is asked to keep polling while it is used).
    fn apply(&self, w: Here, rank: u32, remote: usize, op: AtomicOp, a: u64, b: u64) -> u64 {
        crate::net::on_rank(w, rank, || self.atomics.apply(rank, remote, op, a, b))
    }

    /// The zones (arena addresses, the same on every rank).
    pub(crate) fn zones(&self) -> Zones {
        self.local.zones()
    }

    /// Draws the block's generation, writes its size word, then its tag
    /// (the block is live from the tag on; through global atomics: the
    /// header's words are atomic words); returns the generation.
    fn mark_live(&self, w: Here, rank: u32, data: usize, bytes: usize) -> u16 {
        let drawn = NEXT_GENERATION.fetch_add(1, Ordering::Relaxed);
        let generation = (drawn.wrapping_add(u64::from(w.rank()).wrapping_mul(0x9e37)) & 0xffff) as u16;
        let header = w.remote(rank, data - HEADER);
        let size = size_word(bytes, generation);
        self.apply(w, rank, header + 8, AtomicOp::Store, size, 0);
        self.apply(w, rank, header, AtomicOp::Store, live_tag(data, size), 0);
        Self::write_check(w, rank, data, CHECK_TAG ^ data as u64 ^ size);
        generation
    }

    /// Writes the check word of the block whose data starts at `data`, its
    /// header on `rank`: a CPU store where mapped, a put (complete when it
    /// returns) elsewhere.
    fn write_check(w: Here, rank: u32, data: usize, value: u64) {
        let at = data - HEADER + CHECK_WORD;
        match w.mapped(rank, at) {
            // SAFETY: an aligned word of a header in a mapped segment (the
            // heap's zone, mapped for the rest of the process), reached only
            // by these stores, puts and `freed_here`'s loads.
            Some(p) => unsafe { AtomicU64::from_ptr(p as *mut u64) }.store(value, Ordering::Release),
            None => net(w).put(rank, w.remote(rank, at), &value.to_ne_bytes()),
        }
    }

    /// Whether this process maps the header of the block whose data starts
    /// at `data` (on `header_rank`) and the header says the block is not
    /// live with the size word `size_word` (freed, or freed and handed out
    /// again with another generation): one load of its check word. False
    /// where the header is not mapped here (a round trip per checkout would
    /// cost more than the checkout).
    #[inline]
    pub(crate) fn freed_here(&self, w: Here, header_rank: u32, data: usize, size_word: u64) -> bool {
        let Some(p) = w.mapped(header_rank, data - HEADER + CHECK_WORD) else {
            return false;
        };
        // SAFETY: as in `write_check` (a slice's base is a block's data
        // address: `alloc*`, or `from_raw`, whose contract says so).
        let check = unsafe { AtomicU64::from_ptr(p as *mut u64) }.load(Ordering::Acquire);
        check != CHECK_TAG ^ data as u64 ^ size_word
    }

    /// Clears a block's header word if it is live with the size word
    /// `size_word`; false if it was not (freed already, handed out again
    /// with another generation, or never allocated).
    fn mark_free(&self, w: Here, rank: u32, data: usize, size_word: u64) -> bool {
        let header = w.remote(rank, data - HEADER);
        let live = live_tag(data, size_word);
        self.apply(w, rank, header, AtomicOp::CompareSwap, live, 0) == live
    }

    /// Allocates `bytes` in the calling rank's local zone; returns the data's
    /// arena address and the block's generation. Ends the job with a message
    /// when the zone is full. `before_live` gets the data address before the
    /// block's header is written (the caller refuses a block under one of
    /// this thread's checkouts there: see `Memory::refuse_reuse`).
    pub(crate) fn alloc_local(&self, w: Here, bytes: usize, before_live: impl FnOnce(usize)) -> (usize, u16) {
        let heap = &self.local;
        let Some(data) = heap.alloc(bytes) else {
            fatal(format_args!(
                "the global heap of rank {} is full: {} requested, {} free in its local zone (half of \
                 UAT_GLOBAL_HEAP={}); raise UAT_GLOBAL_HEAP or free global memory",
                w.rank(),
                fmt_size(bytes),
                fmt_size(heap.free_bytes()),
                fmt_size(self.setting),
            ))
        };
        before_live(data);
        let generation = self.mark_live(w, w.rank(), data, bytes);
        (data, generation)
    }

    /// Allocates `bytes` at the same offset on every rank (the symmetric zone);
    /// returns the data's arena address and the block's generation (its
    /// header is rank 0's). `before_live` as for [`Heap::alloc_local`].
    pub(crate) fn alloc_symmetric(&self, w: Here, bytes: usize, before_live: impl FnOnce(usize)) -> (usize, u16) {
        let zones = self.local.zones();
        let control = w.remote(0, zones.symmetric_control());
        let capacity = (zones.symmetric.1 - zones.symmetric_data()) as u64;
        let need = granules(bytes)
            .and_then(|b| b.checked_add(HEADER))
            .unwrap_or(usize::MAX) as u64;
        let mut old = self.apply(w, 0, control, AtomicOp::Load, 0, 0);
        let offset = loop {
            let (live, offset) = (old >> LIVE_SHIFT, old & OFFSET_MASK);
            if need > capacity - offset {
                fatal(format_args!(
                    "the global heap's symmetric zone is full: {} requested on every rank, {} left (half of \
                     UAT_GLOBAL_HEAP={}; the topmost allocation is reclaimed when it is freed, the rest when every \
                     distributed allocation is); raise UAT_GLOBAL_HEAP \
                     or free global memory",
                    fmt_size(bytes),
                    fmt_size((capacity - offset) as usize),
                    fmt_size(self.setting),
                ));
            }
            if live + 1 >= 1 << (64 - LIVE_SHIFT) {
                fatal(format_args!(
                    "more than {} distributed global allocations are live at once",
                    (1u64 << (64 - LIVE_SHIFT)) - 2
                ));
            }
            let new = ((live + 1) << LIVE_SHIFT) | (offset + need);
            let seen = self.apply(w, 0, control, AtomicOp::CompareSwap, old, new);
            if seen == old {
                break offset;
            }
            old = seen;
        };
        let data = zones.symmetric_data() + offset as usize + HEADER;
        before_live(data);
        let generation = self.mark_live(w, 0, data, bytes);
        (data, generation)
    }

    /// Frees the block whose data starts at `data`: a local-zone block of
    /// `rank`, or (`symmetric`) a symmetric allocation. Ends the job with a
    /// message when it is not a live block, or (`expect`: the handle's size
    /// word, for a one-rank allocation) not the one the handle was made
    /// for — a second free after the address was handed out again.
    ///
    /// The symmetric zone is a bump pointer: a free lowers the live count, and
    /// when the block is the topmost one the pointer goes back to its start
    /// (so scratch freed in the reverse order of allocation — a pattern's,
    /// while the input it works on stays live — is reused at once); the whole
    /// zone is reclaimed when nothing is live.
    pub(crate) fn free(&self, w: Here, rank: u32, data: usize, symmetric: bool, expect: Option<u64>) {
        let header_rank = if symmetric { 0 } else { rank };
        // The block's size word: the handle's (the compare-and-swap below
        // fails unless the header was made with it), or as its allocation
        // recorded it (read before the tag is cleared: a block is its size
        // while it is live).
        let word = match expect {
            Some(word) => word,
            None => self.apply(
                w,
                header_rank,
                w.remote(header_rank, data - HEADER + 8),
                AtomicOp::Load,
                0,
                0,
            ),
        };
        let size = word & SIZE_MASK;
        if !self.mark_free(w, header_rank, data, word) {
            fatal(format_args!(
                "a global slice at {data:#x} (rank {rank}) was freed twice, or is not an allocation: free only what \
                 alloc returned, once"
            ));
        }
        // The check word: a CPU store where this process maps the header
        // (its own block, or a shared-memory neighbour's: a later checkout
        // here of a stale copy is refused at once), a put for a symmetric
        // block's header elsewhere. Another rank's local block across the
        // network: its home clears the word when the GLOBAL_FREE message
        // arrives (below), before it can hand the block out again — no
        // round trip here.
        if symmetric || w.mapped(header_rank, data - HEADER + CHECK_WORD).is_some() {
            Self::write_check(w, header_rank, data, 0);
        }
        if symmetric {
            let zones = self.local.zones();
            let control = w.remote(0, zones.symmetric_control());
            // The block's offset and end in the zone (as alloc_symmetric made
            // them: the header, then the data rounded up to granules).
            let start = (data - HEADER - zones.symmetric_data()) as u64;
            let end = start + granules(size as usize).map_or(u64::MAX, |b| (b + HEADER) as u64);
            let mut old = self.apply(w, 0, control, AtomicOp::Load, 0, 0);
            loop {
                let new = control_after_free(old, start, end);
                let seen = self.apply(w, 0, control, AtomicOp::CompareSwap, old, new);
                if seen == old {
                    return;
                }
                old = seen;
            }
        } else if rank == w.rank() {
            if let Err(why) = self.local.release(data) {
                fatal(format_args!("freeing global memory at {data:#x}: {why}"));
            }
        } else {
            let [lo, hi] = split_u64(data as u64);
            net(w).request(rank, GLOBAL_FREE, &[lo, hi]);
            w.serve(rank);
        }
    }

    /// Test support (the fuzzer): whether `data` is the data address of a live
    /// block of `rank`'s local zone (its header word says so; the zone's end
    /// included: an empty allocation in its last header).
    pub(crate) fn is_live(&self, w: Here, rank: u32, data: usize) -> bool {
        let (lo, hi) = self.local.zones().local;
        if data < lo + HEADER || data > hi || !data.is_multiple_of(8) {
            return false;
        }
        let header = w.remote(rank, data - HEADER);
        let size = self.apply(w, rank, header + 8, AtomicOp::Load, 0, 0);
        self.apply(w, rank, header, AtomicOp::Load, 0, 0) == live_tag(data, size)
    }

    /// Whether `data` is the data address of a live block of exactly `bytes`
    /// bytes and generation `generation` in one zone of the heap (its header,
    /// on `rank` for the local zone and on rank 0 for the symmetric one, says
    /// so): what a handle read back from global memory is checked against
    /// before it is used ([`crate::GlobalSlice::from_raw_checked`]).
    pub(crate) fn is_live_block(&self, w: Here, rank: u32, data: usize, bytes: usize, generation: u16) -> bool {
        let zones = self.local.zones();
        let inside = |(lo, hi): (usize, usize)| {
            data >= lo + HEADER && data.is_multiple_of(HEADER) && data.checked_add(bytes).is_some_and(|end| end <= hi)
        };
        let header_rank = if inside(zones.local) {
            rank
        } else if inside((zones.symmetric_data(), zones.symmetric.1)) {
            0
        } else {
            return false;
        };
        if bytes as u64 > SIZE_MASK {
            return false;
        }
        let header = w.remote(header_rank, data - HEADER);
        let tag = self.apply(w, header_rank, header, AtomicOp::Load, 0, 0);
        let size = self.apply(w, header_rank, header + 8, AtomicOp::Load, 0, 0);
        let want = size_word(bytes, generation);
        tag == live_tag(data, want) && size == want
    }

    /// The handler fuzz's GLOBAL_FREE(data address) requests: around the
    /// target's local zone and into its symmetric zone. A live block's exact
    /// address becomes one inside its header (the message would free it for
    /// real: freeing is allowed from any rank).
    pub(crate) fn fuzz(&self, w: Here, target: u32, count: u32, draw: &mut dyn FuzzDraw, request: &mut FuzzRequest) {
        let zones = self.local.zones();
        for _ in 0..count {
            let mut data = if draw.next().is_multiple_of(4) {
                draw.near(zones.symmetric.0, zones.symmetric.1, HEADER)
            } else {
                draw.near(zones.local.0, zones.local.1, HEADER)
            };
            if self.is_live(w, target, data) {
                data -= 8;
            }
            let [lo, hi] = split_u64(data as u64);
            request(GLOBAL_FREE, &[lo, hi]);
        }
    }
}

/// The symmetric zone's control word after the block `[start, end)` (zone
/// offsets) is freed from `old`: one live allocation fewer; the bump pointer
/// back to `start` when the block was the topmost one; all reclaimed when
/// nothing is live.
fn control_after_free(old: u64, start: u64, end: u64) -> u64 {
    let live = (old >> LIVE_SHIFT).checked_sub(1).unwrap_or_else(|| {
        fatal(format_args!(
            "the global heap's symmetric zone has no live allocation to free (its control word is {old:#x})"
        ))
    });
    let offset = old & OFFSET_MASK;
    if live == 0 {
        0
    } else if offset == end {
        (live << LIVE_SHIFT) | start
    } else {
        (live << LIVE_SHIFT) | offset
    }
}

extern "C" fn on_global_free(token: Token, lo: Arg, hi: Arg) {
    let data = join_u64(lo, hi) as usize;
    let result = match HEAP.get() {
        // The freeing rank cleared the tag; the check word is this rank's
        // to clear, before the block can be handed out again.
        Some(heap) => heap.release_with(data, |data| {
            // SAFETY: the check word of a live block of this rank's local
            // zone (`release_with` checked it is one), which this process
            // maps at its arena address for the rest of its life; reached
            // only by plain stores, puts and loads.
            unsafe { AtomicU64::from_ptr((data - HEADER + CHECK_WORD) as *mut u64) }.store(0, Ordering::Release)
        }),
        None => Err("this rank has no global heap yet"),
    };
    if let Err(why) = result {
        REFUSED.fetch_add(1, Ordering::Relaxed);
        REFUSALS.refuse(format_args!(
            "refused a GLOBAL_FREE from rank {} for {data:#x}: {why}",
            token.source()
        ));
    }
}

pub(crate) fn handlers() -> [Handler; 1] {
    let f: for<'a> extern "C" fn(Token<'a>, Arg, Arg) = on_global_free;
    [Handler::new(GLOBAL_FREE, f)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones() -> Zones {
        Zones {
            local: (1 << 20, 1 << 21),
            symmetric: (1 << 21, 1 << 22),
        }
    }

    #[test]
    fn a_free_rolls_the_bump_pointer_back_only_for_the_topmost_block() {
        use super::{control_after_free, LIVE_SHIFT};
        let word = |live: u64, offset: u64| (live << LIVE_SHIFT) | offset;
        // Three blocks live: [0, 128), [128, 4224), [4224, 4352).
        assert_eq!(control_after_free(word(3, 4352), 4224, 4352), word(2, 4224));
        assert_eq!(control_after_free(word(3, 4352), 128, 4224), word(2, 4352));
        // The last one: the whole zone.
        assert_eq!(control_after_free(word(1, 4352), 128, 4224), 0);
    }

    #[test]
    fn blocks_are_aligned_disjoint_and_coalesce_when_freed() {
        let h = LocalHeap::new(zones());
        let a = h.alloc(100).unwrap();
        let b = h.alloc(1).unwrap();
        let c = h.alloc(4096).unwrap();
        assert!(a.is_multiple_of(HEADER) && b.is_multiple_of(HEADER) && c.is_multiple_of(HEADER));
        assert!(a + 128 <= b - HEADER && b + 64 <= c - HEADER);
        h.release(b).unwrap();
        assert_eq!(h.release(b), Err("not a live block"));
        h.release(a).unwrap();
        h.release(c).unwrap();
        // Everything coalesced back into one range.
        assert_eq!(h.free_bytes(), 1 << 20);
        assert_eq!(h.list.lock().unwrap().free.len(), 1);
        assert!(h.alloc((1 << 20) - HEADER).is_some());
        assert!(h.alloc(1).is_none());
        assert_eq!(h.release(12345), Err("not a block of this rank's global heap"));
    }

    #[test]
    fn the_home_clears_a_check_word_only_for_a_live_block_and_before_it_is_free() {
        // What GLOBAL_FREE's handler relies on: `before` runs for a live
        // block only, while the block is still not free (an allocation
        // cannot hand it out in between: the list's lock is held).
        let h = LocalHeap::new(zones());
        let a = h.alloc(100).unwrap();
        let mut seen = Vec::new();
        h.release_with(a, |d| {
            seen.push(d);
            assert!(h.list.try_lock().is_err(), "called under the list's lock");
        })
        .unwrap();
        assert_eq!(seen, [a]);
        assert_eq!(
            h.release_with(a, |_| panic!("not for a freed block")),
            Err("not a live block")
        );
        assert_eq!(
            h.release_with(12345, |_| panic!("not for a non-block")),
            Err("not a block of this rank's global heap")
        );
        assert_eq!(h.alloc(100), Some(a), "free again after the call");
    }

    #[test]
    fn an_empty_allocation_in_the_zones_last_header_can_be_freed() {
        let h = LocalHeap::new(zones());
        let (lo, hi) = zones().local;
        let all_but_one_header = h.alloc(hi - lo - 2 * HEADER).unwrap();
        let empty = h.alloc(0).unwrap();
        assert_eq!(empty, hi, "its data address is the zone's end");
        assert!(h.alloc(0).is_none());
        h.release(empty).unwrap();
        h.release(all_but_one_header).unwrap();
        assert_eq!(h.release(hi + HEADER), Err("not a block of this rank's global heap"));
        assert_eq!(h.free_bytes(), hi - lo);
    }
}
