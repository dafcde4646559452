//! The software cache of global memory that this process cannot map:
//! another rank's heap across the network (udp `--real-udp`, mpi without
//! shared memory, ibv). Where a rank's segment is mapped (its own, and
//! every rank of its shared-memory neighbourhood) nothing is cached:
//! checkouts load and store there directly.
//!
//! The cache is a *mirror*: a process-local reservation as large as every
//! rank's heap side by side (`ranks × UAT_GLOBAL_HEAP` of address space,
//! backed only where blocks are held), in which rank `r`'s heap byte `x`
//! lives at `mirror + r × heap + x`. A checkout of a range on one rank is
//! then a contiguous slice of the mirror, whatever blocks it spans.
//!
//! - Blocks of `UAT_CACHE_BLOCK` bytes are the table's unit, counted
//!   against `UAT_CACHE_SIZE`; the least recently used block not in a
//!   checkout is evicted (written back first if dirty, its mirror pages
//!   returned). A block holds *granules* of `block / 64` bytes (at least
//!   [`MIN_GRANULE`]): a miss of a read of a block or more fetches only
//!   the granules it touches that are not held, a smaller read every
//!   granule of its block not held (neighbouring small records are read
//!   together), runs of them (across blocks too) with one get each,
//!   straight into the mirror, around this process's dirty bytes; a
//!   write checkout fetches nothing (its bytes are marked dirty when it
//!   starts).
//! - A write checkout marks its bytes dirty (one bit per byte), and dirty
//!   bytes — only those, so two ranks writing different parts of one block
//!   do not overwrite each other — are written back at the next *release*
//!   point (lazy release: see `crate`), of pinned blocks too, except the
//!   bytes under this thread's active write checkouts (a live `&mut`).
//! - An *acquire* point writes back, forgets every block no checkout
//!   holds, and in a pinned block keeps only the granules active
//!   checkouts or dirty bytes touch, refetching their other bytes at once:
//!   a checkout's own view never changes.
//! - Allocation and free drop only their range's granules and dirty bits;
//!   neighbours stay held.
//!
//! With `UAT_CACHE=off` nothing is kept: every checkout gets its range and
//! every write checkout puts it back when it ends.

use rustc_hash::FxHashMap;

use uni_threads::layer::{fatal, fmt_size, Count, Here};

use crate::active::Active;
use crate::dirty::{mask, DirtyBytes};
use crate::mapped::MappedPages;
use crate::net::net;

/// The smallest granule (bytes): a miss fetches at least this much.
const MIN_GRANULE: usize = 256;

/// This machine's page size.
fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf only reads a constant of the system.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(page).unwrap_or(4096).max(1)
    })
}

/// One cached block.
struct Block {
    /// One bit per granule whose bytes are held (the rest are fetched
    /// when a checkout needs them, around their dirty bytes). In a granule
    /// not held, every byte of an active checkout is dirty (a write
    /// checkout's, marked when it starts).
    valid: u64,
    /// The bytes written since the last write-back (None: clean).
    dirty: Option<DirtyBytes>,
    /// When a checkout last used it (the cache's clock).
    used: u64,
    /// Checkouts holding it now (not evictable while > 0).
    pins: u32,
}

/// This process's cache of other ranks' global memory.
pub(super) struct Cache {
    on: bool,
    fault: crate::CacheFault,
    block: usize,
    /// Bytes of a granule: the unit of validity (`block / 64`, at least
    /// [`MIN_GRANULE`]).
    granule: usize,
    capacity: usize,
    heap_lo: usize,
    heap_size: usize,
    ranks: u32,
    /// The mirror's base (0 until the first checkout needs it).
    mirror: usize,
    blocks: FxHashMap<(u32, usize), Block>,
    /// Blocks forgotten whose mirror pages stay mapped (the next fetch
    /// into them costs no page faults), counted with `blocks` against the
    /// capacity: past it the oldest return their pages
    /// ([`Cache::trim_mapped`]), so `UAT_CACHE_SIZE` bounds this process's
    /// resident mirror.
    mapped: MappedPages,
    /// Blocks with dirty bytes.
    dirty: usize,
    /// Their keys (and perhaps some since cleaned or forgotten; sorted and
    /// deduplicated at the next release), so that a release visits only
    /// them, not every block held.
    dirty_keys: Vec<(u32, usize)>,
    clock: u64,
}

impl Cache {
    pub(super) fn new(
        on: bool,
        fault: crate::CacheFault,
        block: usize,
        size: usize,
        heap_lo: usize,
        heap_size: usize,
        ranks: u32,
    ) -> Cache {
        Cache {
            on,
            fault,
            block,
            granule: (block / 64).max(MIN_GRANULE),
            capacity: (size / block).max(1),
            heap_lo,
            heap_size,
            ranks,
            mirror: 0,
            blocks: FxHashMap::default(),
            mapped: MappedPages::default(),
            dirty: 0,
            dirty_keys: Vec::new(),
            clock: 0,
        }
    }

    /// Whether the cache is on (`UAT_CACHE`).
    pub(super) fn is_on(&self) -> bool {
        self.on
    }

    /// Whether dirty bytes wait for a release point.
    pub(super) fn is_dirty(&self) -> bool {
        self.dirty > 0
    }

    /// Whether anything is held (an acquire point has work to do).
    pub(super) fn holds_blocks(&self) -> bool {
        !self.blocks.is_empty()
    }

    fn mirror_addr(&mut self, rank: u32, addr: usize) -> usize {
        if self.mirror == 0 {
            let len = self.heap_size * self.ranks as usize;
            // SAFETY: a fresh private anonymous reservation; nothing is
            // replaced (no MAP_FIXED).
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                fatal(format_args!(
                    "cannot reserve {} of address space for the global-memory cache ({}): lower UAT_GLOBAL_HEAP \
                     or raise ulimit -v",
                    fmt_size(len),
                    std::io::Error::last_os_error()
                ));
            }
            self.mirror = p as usize;
        }
        self.mirror + rank as usize * self.heap_size + (addr - self.heap_lo)
    }

    /// The blocks `[first, last]` of `[addr, addr + len)` (len > 0).
    fn block_span(&self, addr: usize, len: usize) -> (usize, usize) {
        let lo = addr - self.heap_lo;
        (lo / self.block, (lo + len - 1) / self.block)
    }

    /// The granules `[from, to)` (offsets in block `b`) touch, as a mask.
    fn granules(&self, from: usize, to: usize) -> u64 {
        let (g0, g1) = (from / self.granule, to.div_ceil(self.granule));
        mask(g0, g1)
    }

    /// Makes `[addr, addr + len)` of `rank`'s heap (len > 0) readable and
    /// writable here and returns its address in the mirror. `fetch`: its
    /// current contents are needed (false: the caller overwrites all of
    /// it: nothing is fetched, and its bytes are marked dirty at once).
    /// Only the granules of the range that are not held are fetched (runs
    /// of them with one get each, around dirty bytes), not whole blocks.
    /// Blocks stay pinned until [`Cache::finish`].
    pub(super) fn view(&mut self, w: Here, rank: u32, addr: usize, len: usize, fetch: bool) -> *mut u8 {
        let at = self.mirror_addr(rank, addr);
        let start = if w.tracing() { w.now() } else { 0 };
        if !self.on {
            if fetch {
                // SAFETY: `at` is `len` writable bytes of the mirror that no
                // reference covers: `Memory::view` asks only for bytes no
                // other active checkout of this thread covers (the registry
                // refuses overlaps with a write; read overlaps are fetched
                // around).
                unsafe { net(w).get_raw(at as *mut u8, rank, w.remote(rank, addr), len) };
                w.count(Count::CacheMisses, 1);
                w.count(Count::FetchedBytes, len as u64);
                w.trace_since(uat_trace::Kind::Fetch, rank, start, len as u64);
            }
            return at as *mut u8;
        }
        let (first, last) = self.block_span(addr, len);
        self.clock += 1;
        let (mut hits, mut misses, mut bytes) = (0u64, 0u64, 0u64);
        // A run of granules to fetch, [lo, hi) as heap addresses: one get.
        let mut run: Option<(usize, usize)> = None;
        let heap_hi = self.heap_lo + self.heap_size;
        for b in first..=last {
            let blo = self.heap_lo + b * self.block;
            let from = addr.max(blo) - blo;
            let to = (addr + len).min(blo + self.block) - blo;
            if !self.blocks.contains_key(&(rank, b)) {
                // Its pages (if still mapped) count as held from now on.
                self.mapped.unlist((rank, b));
                self.make_room(w);
                self.blocks.insert(
                    (rank, b),
                    Block {
                        valid: 0,
                        dirty: None,
                        used: self.clock,
                        pins: 0,
                    },
                );
            }
            // A read smaller than a block fetches every granule of the
            // block not held yet, as a block cache would: small records
            // laid out together (a tree's nodes, a list's links) are read
            // together. A read of a block or more fetches only its own
            // granules, straight into place.
            let touched = if fetch && len < self.block {
                self.granules(0, self.block)
            } else {
                self.granules(from, to)
            };
            // Pinned at once: making room for the next block of this
            // checkout must not evict this one.
            let block = self.blocks.get_mut(&(rank, b)).expect("present");
            block.pins += 1;
            block.used = self.clock;
            let missing = if fetch {
                let missing = touched & !block.valid;
                block.valid |= touched;
                missing
            } else {
                // An overwrite fetches nothing: the granules it covers whole
                // are held from now on; its bytes in the others are marked
                // dirty at once, so a fetch of the rest of those granules
                // (a later checkout of neighbours) goes around them.
                block.valid |= mask(from.div_ceil(self.granule), to / self.granule);
                self.mark_dirty((rank, b), from, to);
                0
            };
            if missing == 0 {
                hits += 1;
            } else {
                misses += 1;
            }
            let dirty: Vec<(usize, usize)> = match &self.blocks[&(rank, b)].dirty {
                Some(d) if missing != 0 => d.runs().collect(),
                _ => Vec::new(),
            };
            let mut m = missing;
            while m != 0 {
                let g0 = m.trailing_zeros() as usize;
                let g1 = g0 + (m >> g0).trailing_ones() as usize;
                m &= !mask(g0, g1);
                let (glo, ghi) = (g0 * self.granule, g1 * self.granule);
                // The granules' bytes that are not dirty (this process's
                // writes, never overwritten by a fetch).
                let mut pieces = Vec::new();
                let mut at = glo;
                for &(dlo, dhi) in dirty.iter().filter(|&&(dlo, dhi)| dlo < ghi && glo < dhi) {
                    if dlo > at {
                        pieces.push((at, dlo));
                    }
                    at = at.max(dhi);
                }
                if at < ghi {
                    pieces.push((at, ghi));
                }
                for (plo, phi) in pieces {
                    let lo = blo + plo;
                    let hi = (blo + phi).min(heap_hi);
                    match run {
                        Some((rlo, rhi)) if rhi == lo => run = Some((rlo, hi)),
                        _ => {
                            if let Some((rlo, rhi)) = run.take() {
                                bytes += self.get_run(w, rank, rlo, rhi);
                            }
                            run = Some((lo, hi));
                        }
                    }
                }
            }
        }
        if let Some((rlo, rhi)) = run {
            bytes += self.get_run(w, rank, rlo, rhi);
        }
        net(w).wait_nbi();
        w.count(Count::CacheHits, hits);
        w.count(Count::CacheMisses, misses);
        w.count(Count::FetchedBytes, bytes);
        if bytes != 0 {
            w.trace_since(uat_trace::Kind::Fetch, rank, start, bytes);
        }
        at as *mut u8
    }

    /// Starts fetching `[lo, hi)` of `rank`'s heap into the mirror
    /// (complete at `wait_nbi`); returns the bytes.
    fn get_run(&mut self, w: Here, rank: u32, lo: usize, hi: usize) -> u64 {
        let dst = self.mirror_addr(rank, lo);
        // SAFETY: mirror bytes of granules that were not held, outside
        // their dirty bytes: no active checkout's byte lies there
        // (`Block::valid`), so no reference covers them; complete at
        // wait_nbi.
        unsafe { net(w).get_nbi(dst as *mut u8, rank, w.remote(rank, lo), hi - lo) };
        (hi - lo) as u64
    }

    /// Ends a checkout of `[addr, addr + len)` on `rank` made with
    /// [`Cache::view`]: `wrote`, its bytes are dirty (written back at the
    /// next release point; at once with the cache off).
    pub(super) fn finish(&mut self, w: Here, rank: u32, addr: usize, len: usize, wrote: bool) {
        if !self.on {
            if wrote {
                let at = self.mirror_addr(rank, addr);
                // SAFETY: the checkout's bytes in the mirror; it has ended.
                let bytes = unsafe { std::slice::from_raw_parts(at as *const u8, len) };
                let start = if w.tracing() { w.now() } else { 0 };
                net(w).put(rank, w.remote(rank, addr), bytes);
                w.count(Count::WrittenBytes, len as u64);
                w.trace_since(uat_trace::Kind::WriteBack, rank, start, len as u64);
            }
            return;
        }
        let (first, last) = self.block_span(addr, len);
        for b in first..=last {
            let block = self.blocks.get_mut(&(rank, b)).expect("a checkout pins its blocks");
            block.pins -= 1;
            if wrote {
                let blo = self.heap_lo + b * self.block;
                let from = addr.max(blo) - blo;
                let to = (addr + len).min(blo + self.block) - blo;
                self.mark_dirty((rank, b), from, to);
            }
        }
    }

    /// Marks bytes `[from, to)` of held block `key` dirty.
    fn mark_dirty(&mut self, key: (u32, usize), from: usize, to: usize) {
        if from >= to {
            return;
        }
        let block = self.blocks.get_mut(&key).expect("held");
        match block.dirty.as_mut() {
            Some(d) => d.mark(from, to),
            None => {
                block.dirty = Some(DirtyBytes::new(self.block, from, to));
                self.dirty += 1;
                self.dirty_keys.push(key);
            }
        }
    }

    /// Writes back every dirty byte (a release point) except those inside
    /// this thread's active write checkouts (`active`): a live `&mut [T]`
    /// covers them, so reading them as a put's source would alias it; they
    /// stay dirty (the mark stays up) for the next release point after the
    /// checkout ends. Bytes of blocks that other checkouts pin are written
    /// back too (a read checkout's `&[T]` may be read).
    pub(super) fn release(&mut self, w: Here, active: &[Active]) {
        if self.dirty == 0 {
            self.dirty_keys.clear();
        }
        if self.dirty == 0 || self.fault == crate::CacheFault::NoWriteBack {
            return;
        }
        let start = if w.tracing() { w.now() } else { 0 };
        let mut written = 0u64;
        // The home rank, for the trace (this rank's own when there are
        // several: one record per release point).
        let mut home: Option<u32> = None;
        let mut dirty = std::mem::take(&mut self.dirty_keys);
        // In address order, so that runs continuing into the next block
        // join it.
        dirty.sort_unstable();
        dirty.dedup();
        let mut pending = None;
        for key in dirty {
            let held = self.held_in_block(key, active, true);
            let n = self.write_back(w, key, &held, &mut pending);
            written += n;
            if n != 0 {
                home = Some(if home.is_none_or(|h| h == key.0) {
                    key.0
                } else {
                    w.rank()
                });
            }
        }
        self.put_run(w, pending);
        net(w).wait_nbi();
        w.count(Count::WrittenBytes, written);
        if let Some(rank) = home {
            w.trace_since(uat_trace::Kind::WriteBack, rank, start, written);
        }
    }

    /// The parts `[from, to)` (offsets in the block) of block `key` that
    /// this thread's active checkouts cover (only the write ones when
    /// `writes_only`), sorted.
    fn held_in_block(&self, (rank, b): (u32, usize), active: &[Active], writes_only: bool) -> Vec<(usize, usize)> {
        if self.blocks.get(&(rank, b)).is_none_or(|x| x.pins == 0) {
            return Vec::new();
        }
        let blo = self.heap_lo + b * self.block;
        let bhi = blo + self.block;
        let mut out: Vec<(usize, usize)> = active
            .iter()
            .filter(|a| a.rank == rank && a.lo < bhi && blo < a.hi && (a.write || !writes_only))
            .map(|a| (a.lo.max(blo) - blo, a.hi.min(bhi) - blo))
            .collect();
        out.sort_unstable();
        out
    }

    /// The blocks no checkout holds.
    fn unpinned(&self) -> Vec<(u32, usize)> {
        self.blocks
            .iter()
            .filter(|(_, x)| x.pins == 0)
            .map(|(k, _)| *k)
            .collect()
    }

    /// Starts writing back `key`'s dirty runs outside `held` (offsets in
    /// the block that a live `&mut` covers: they stay dirty); complete at
    /// `wait_nbi`. A run that continues `pending` (the previous block's
    /// last, not yet put) extends it, so a range dirty across blocks goes
    /// in one put; the caller puts the last one ([`Cache::put_run`]).
    /// Returns the bytes.
    fn write_back(
        &mut self,
        w: Here,
        (rank, b): (u32, usize),
        held: &[(usize, usize)],
        pending: &mut Option<(u32, usize, usize)>,
    ) -> u64 {
        let Some(mut send) = self.blocks.get_mut(&(rank, b)).and_then(|x| x.dirty.take()) else {
            return 0;
        };
        // The bytes under a live `&mut` stay dirty; `send` keeps the rest
        // (perhaps nothing).
        let keep = if held.is_empty() { None } else { send.split_off(held) };
        if let Some(rest) = keep {
            self.blocks.get_mut(&(rank, b)).expect("present").dirty = Some(rest);
            self.dirty_keys.push((rank, b));
        } else {
            self.dirty -= 1;
        }
        let blo = self.heap_lo + b * self.block;
        let mut n = 0;
        for (from, to) in send.runs() {
            let (lo, hi) = (blo + from, blo + to);
            match pending {
                Some((r, _, phi)) if *r == rank && *phi == lo => *phi = hi,
                _ => {
                    self.put_run(w, pending.take());
                    *pending = Some((rank, lo, hi));
                }
            }
            n += (to - from) as u64;
        }
        n
    }

    /// Starts putting a run `(rank, lo, hi)` of dirty bytes (heap
    /// addresses) from the mirror to its home; complete at `wait_nbi`.
    fn put_run(&mut self, w: Here, run: Option<(u32, usize, usize)>) {
        let Some((rank, lo, hi)) = run else {
            return;
        };
        let src = self.mirror_addr(rank, lo);
        // SAFETY: bytes of blocks held in the mirror (a rank's part of the
        // mirror is contiguous) that no `&mut` covers (`held` excludes this
        // thread's active write checkouts; read checkouts' `&[T]` may be
        // read); unchanged until wait_nbi (nothing runs before).
        unsafe { net(w).put_nbi(rank, w.remote(rank, lo), src as *const u8, hi - lo) };
    }

    /// An acquire point: writes back (as [`Cache::release`]), then
    /// forgets every block no checkout holds and refetches the bytes of the
    /// pinned ones that no active checkout (`active`) covers, so later
    /// element accesses and checkouts see what was released before, while
    /// each active checkout's own view stays as it was.
    pub(super) fn acquire(&mut self, w: Here, active: &[Active]) {
        self.release(w, active);
        if self.fault == crate::CacheFault::NoInvalidate {
            return;
        }
        let start = if w.tracing() { w.now() } else { 0 };
        let mut fetched = 0u64;
        let pinned: Vec<(u32, usize)> = self
            .blocks
            .iter()
            .filter(|(_, x)| x.pins > 0)
            .map(|(k, _)| *k)
            .collect();
        for key in self.unpinned() {
            self.forget(key, false);
        }
        self.trim_mapped(0);
        for (rank, b) in pinned {
            // Bytes under a checkout and bytes still dirty (a write
            // checkout's, kept by the release) stay as they are; held
            // granules they do not touch are dropped (fetched when next
            // needed), the rest of the granules they touch refetched now.
            let mut keep = self.held_in_block((rank, b), active, false);
            let block = self.blocks.get_mut(&(rank, b)).expect("present");
            if let Some(d) = block.dirty.as_ref() {
                keep.extend(d.runs());
                keep.sort_unstable();
            }
            let mut touched = 0;
            for &(from, to) in &keep {
                touched |= mask(from / self.granule, to.div_ceil(self.granule));
            }
            block.valid &= touched;
            let valid = block.valid;
            let blo = self.heap_lo + b * self.block;
            let end = self.block.min(self.heap_lo + self.heap_size - blo);
            let mut at = 0;
            for (from, to) in keep.into_iter().chain([(end, end)]) {
                // The gap [at, from), within held granules only.
                let mut x = at;
                while x < from {
                    let g = x / self.granule;
                    let ghi = ((g + 1) * self.granule).min(from);
                    if valid & (1 << g) != 0 {
                        let dst = self.mirror_addr(rank, blo + x);
                        // SAFETY: mirror bytes of a held block that no
                        // active checkout covers (so no reference), and not
                        // dirty; complete at wait_nbi below.
                        unsafe { net(w).get_nbi(dst as *mut u8, rank, w.remote(rank, blo + x), ghi - x) };
                        fetched += (ghi - x) as u64;
                    }
                    x = ghi;
                }
                at = at.max(to);
            }
        }
        net(w).wait_nbi();
        if fetched != 0 {
            w.count(Count::FetchedBytes, fetched);
            w.trace_since(uat_trace::Kind::Fetch, w.rank(), start, fetched);
        }
    }

    /// Drops this process's copies of `[addr, addr + len)` of `rank`
    /// (memory being allocated or freed), leaving the rest of its blocks
    /// held: the range's dirty bits are cleared, so freed bytes are never
    /// written back over a later allocation; granules it covers whole are
    /// no longer held; and for a new allocation (`zeroed`: its home was
    /// just zeroed) its bytes in held granules are zeroed, so a neighbour's
    /// checkout of the same granule reads 0, not the previous owner's
    /// bytes. No reference covers those bytes: this thread's overlapping
    /// checkouts are refused, and so is freeing memory inside this
    /// thread's checkout of it; another task's checkout of memory being
    /// freed or reallocated is a race `Runtime::start`'s contract excludes.
    pub(super) fn drop_range(&mut self, rank: u32, addr: usize, len: usize, zeroed: bool) {
        if len == 0 || self.blocks.is_empty() {
            return;
        }
        let (first, last) = self.block_span(addr, len);
        for b in first..=last {
            let Some(block) = self.blocks.get(&(rank, b)) else {
                continue;
            };
            let blo = self.heap_lo + b * self.block;
            let from = addr.max(blo) - blo;
            let to = (addr + len).min(blo + self.block) - blo;
            let whole = mask(from.div_ceil(self.granule), to / self.granule);
            let partial = self.granules(from, to) & !whole & block.valid;
            if zeroed && partial != 0 {
                for (lo, hi) in [
                    (from, to.min(from.next_multiple_of(self.granule))),
                    (from.max(to / self.granule * self.granule), to),
                ] {
                    if lo < hi && partial & (1 << (lo / self.granule)) != 0 {
                        let at = self.mirror_addr(rank, blo + lo);
                        // SAFETY: held mirror bytes that no reference
                        // covers (above).
                        unsafe { std::ptr::write_bytes(at as *mut u8, 0, hi - lo) };
                    }
                }
            }
            let block = self.blocks.get_mut(&(rank, b)).expect("present");
            block.valid &= !whole;
            if let Some(d) = block.dirty.as_mut() {
                if !d.clear(from, to) {
                    block.dirty = None;
                    self.dirty -= 1;
                }
            }
            if block.valid == 0 && block.pins == 0 && block.dirty.is_none() {
                self.forget((rank, b), false);
            }
        }
    }

    /// Forgets block `key` (clean, no checkout holds it); `evict`: its
    /// mirror pages are returned too (the capacity bound), else kept
    /// mapped for the next fetch into them (listed in `mapped`).
    fn forget(&mut self, (rank, b): (u32, usize), evict: bool) {
        if let Some(x) = self.blocks.remove(&(rank, b)) {
            debug_assert!(x.dirty.is_none() || self.fault == crate::CacheFault::NoWriteBack);
            if x.dirty.is_some() {
                self.dirty -= 1;
            }
            if evict {
                self.return_pages((rank, b));
            } else {
                self.mapped.list((rank, b));
            }
        }
    }

    /// Returns block `key`'s mirror pages (it is not held).
    fn return_pages(&mut self, (rank, b): (u32, usize)) {
        let lo = self.heap_lo + b * self.block;
        let at = self.mirror_addr(rank, lo);
        let n = self.block.min(self.heap_lo + self.heap_size - lo);
        // Only the pages wholly inside the block: where pages are larger
        // than a block (16K or 64K pages, 4K blocks) a page also holds
        // neighbouring blocks, perhaps held, and keeps its contents.
        let page = page_size();
        let (first, end) = (at.next_multiple_of(page), (at + n) / page * page);
        if first >= end {
            return;
        }
        // SAFETY: whole pages of a block of our private mirror (clamped to
        // its rank's part) that no checkout holds (it is not in `blocks`,
        // and every view of a held cache is in a held block); they return
        // to zero-fill.
        unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_DONTNEED) };
    }

    /// Returns the pages of the oldest forgotten blocks while the blocks
    /// held and those still mapped, plus `room` blocks about to be held,
    /// exceed the capacity (a block held again keeps its pages: it is
    /// counted in `blocks`).
    fn trim_mapped(&mut self, room: usize) {
        while self.blocks.len() + self.mapped.len() + room > self.capacity {
            let Some(key) = self.mapped.pop_oldest() else {
                break;
            };
            self.return_pages(key);
        }
    }

    /// Evicts the least recently used unpinned block when the cache is full.
    fn make_room(&mut self, w: Here) {
        self.trim_mapped(1);
        if self.blocks.len() < self.capacity {
            return;
        }
        let victim = self
            .blocks
            .iter()
            .filter(|(_, x)| x.pins == 0)
            .min_by_key(|(_, x)| x.used)
            .map(|(k, _)| *k);
        let Some(key) = victim else {
            fatal(format_args!(
                "the global-memory cache is full of checked-out blocks ({} of UAT_CACHE_BLOCK={}): raise \
                 UAT_CACHE_SIZE or check out less at once",
                self.capacity,
                fmt_size(self.block)
            ))
        };
        // An injected fault skips the write-back here too (else a small
        // cache would write back what the fault withholds).
        if self.fault != crate::CacheFault::NoWriteBack {
            let mut pending = None;
            let written = self.write_back(w, key, &[], &mut pending);
            self.put_run(w, pending);
            net(w).wait_nbi();
            w.count(Count::WrittenBytes, written);
        }
        self.forget(key, true);
    }
}
