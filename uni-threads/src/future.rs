//! Future cells: where a child leaves its result for its joiner, in the
//! arena of the rank that spawned it.
//!
//! A cell is 64 bytes: a state word and up to [`MAX_RESULT_SIZE`] bytes of
//! result. The completer writes the result, then sets the state to DONE with
//! release ordering (across ranks: a blocking put of the result, then a put of
//! the state); the joiner reads the state with acquire ordering, then the
//! result. Free cells form a LIFO list threaded through the state word's
//! neighbour, owned by the rank (allocation and freeing are local).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use gasnet_sys::am::{join_u64, split_u64, Arg, Handler, Token};
use gasnet_sys::Gasnet;

use crate::arena::{remote, Layout};

/// Bytes per cell.
pub(crate) const CELL_SIZE: usize = 64;
/// Largest task result a cell holds.
pub(crate) const MAX_RESULT_SIZE: usize = 48;

const PENDING: u64 = 0;
/// Completed by a task on this cell's own process.
pub(crate) const DONE: u64 = 1;
const FREE: u64 = 2;
/// Completed from another process (its joiner calls the layer's
/// `Acquire::Join`: `crate::layer`). Odd, like DONE: `state & 1` means done.
pub(crate) const DONE_REMOTE: u64 = 3;

#[repr(C, align(64))]
pub(crate) struct Cell {
    state: AtomicU64,
    next_free: u64,
    result: [u8; MAX_RESULT_SIZE],
}

const _: () = assert!(std::mem::size_of::<Cell>() == CELL_SIZE);

/// A cell's arena address (identical on every rank) and the rank it lives on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CellRef {
    pub addr: usize,
    pub rank: u32,
}

impl CellRef {
    #[inline(always)]
    fn cell(self) -> &'static Cell {
        // SAFETY: CellRefs are made only from the pool's cells, in the
        // mapped arena; only the state word is accessed concurrently, and
        // atomically.
        unsafe { &*(self.addr as *const Cell) }
    }

    /// Whether the child has completed (local cells).
    #[inline(always)]
    pub(crate) fn is_done_local(self) -> bool {
        self.state_local() & 1 == 1
    }

    /// The state word of a local cell (acquire).
    #[inline(always)]
    pub(crate) fn state_local(self) -> u64 {
        self.cell().state.load(Ordering::Acquire)
    }

    /// Writes the result and marks the cell done (local cells).
    ///
    /// # Safety
    /// `T` must fit (checked at compile time by the callers) and the cell must
    /// be pending, written by one completer.
    #[inline(always)]
    pub(crate) unsafe fn complete_local<T: Copy>(self, value: &T) {
        // SAFETY: the cell is pending: nobody reads its result yet; the
        // result part is 16-aligned and holds MAX_RESULT_SIZE >= size_of T.
        unsafe { copy_in_field_sized_pieces(value, (self.addr as *mut u8).add(16)) };
        self.cell().state.store(DONE, Ordering::Release);
    }

    /// Reads the result of a done local cell.
    ///
    /// # Safety
    /// The cell must be done and hold a `T`.
    #[inline(always)]
    pub(crate) unsafe fn result_local<T: Copy>(self) -> T {
        // SAFETY: caller's contract; the Acquire load in is_done_local
        // ordered this read after the completer's write.
        unsafe { (self.addr as *const u8).add(16).cast::<T>().read_unaligned() }
    }
}

/// Copies a `T` in pieces of its alignment (at most 8 bytes), with loads
/// the compiler may not merge: each piece lies within one store of a field
/// of `value`, so a value written just before is forwarded from the store
/// buffer instead of waited for (a wider load spanning two stores waits).
///
/// # Safety
/// `dst` must be valid for `size_of::<T>()` bytes and aligned like `T`
/// (up to 8).
#[inline(always)]
pub(crate) unsafe fn copy_in_field_sized_pieces<T>(value: &T, dst: *mut u8) {
    let src = value as *const T as *const u8;
    let n = std::mem::size_of::<T>();
    macro_rules! pieces {
        ($t:ty) => {{
            let w = std::mem::size_of::<$t>();
            for i in 0..n / w {
                // SAFETY: in bounds of both (n bytes), aligned to w. Read as
                // MaybeUninit: a piece may hold padding (uninit bytes).
                unsafe {
                    let v = std::ptr::read_volatile(src.add(i * w).cast::<std::mem::MaybeUninit<$t>>());
                    dst.add(i * w).cast::<std::mem::MaybeUninit<$t>>().write(v);
                }
            }
        }};
    }
    match std::mem::align_of::<T>() {
        a if a >= 8 && n.is_multiple_of(8) => pieces!(u64),
        a if a >= 4 && n.is_multiple_of(4) => pieces!(u32),
        a if a >= 2 && n.is_multiple_of(2) => pieces!(u16),
        _ => pieces!(u8),
    }
}

/// Handler index of CELL_FREE(cell address).
pub(crate) const CELL_FREE: u8 = 210;

/// Cells handed back by other ranks (a Treiber stack through `next_free`;
/// many pushers, one consumer that takes the whole list: no ABA).
static RETURNED: AtomicUsize = AtomicUsize::new(0);
/// This rank's cells, `[CELLS_LO, CELLS_HI)` (set before the handler can
/// run: the pool is made before the first barrier of the runtime).
static CELLS_LO: AtomicUsize = AtomicUsize::new(0);
static CELLS_HI: AtomicUsize = AtomicUsize::new(0);
/// CELL_FREE messages refused by this rank.
static REFUSED: AtomicU64 = AtomicU64::new(0);
/// Their reports (the first few in full).
static REFUSALS: am_fad::refusals::Refusals = am_fad::refusals::Refusals::new("CELL_FREE messages");

/// CELL_FREE messages this rank has refused so far (test support).
#[cfg(feature = "testing")]
pub(crate) fn refused() -> u64 {
    REFUSED.load(Ordering::Relaxed)
}

/// Why `addr` (from `source`) is not a cell this rank may take back: its
/// address must be one of this rank's cells, and the cell must be DONE
/// (which this call turns into FREE, so a repeat is refused).
fn accept_returned(addr: usize) -> Result<(), &'static str> {
    let (lo, hi) = (CELLS_LO.load(Ordering::Acquire), CELLS_HI.load(Ordering::Acquire));
    // (A cell on the owner's free list is PENDING: refused as unfinished.)
    if addr < lo || addr >= hi {
        return Err("not an address of this rank's future cells");
    }
    if !(addr - lo).is_multiple_of(CELL_SIZE) {
        return Err("not the start of a future cell");
    }
    // SAFETY: a cell of this rank's pool (checked above); its state word is
    // accessed atomically by everyone.
    let state = unsafe { &(*(addr as *const Cell)).state };
    state
        .compare_exchange(DONE, FREE, Ordering::Acquire, Ordering::Relaxed)
        .or_else(|_| state.compare_exchange(DONE_REMOTE, FREE, Ordering::Acquire, Ordering::Relaxed))
        .map(|_| ())
        .map_err(|now| {
            if now == FREE {
                "the cell was already handed back"
            } else {
                "the cell holds no finished task's result (it is free, or its task has not finished)"
            }
        })
}

extern "C" fn on_cell_free(token: Token, lo: Arg, hi: Arg) {
    let addr = join_u64(lo, hi) as usize;
    if let Err(why) = accept_returned(addr) {
        REFUSED.fetch_add(1, Ordering::Relaxed);
        REFUSALS.refuse(format_args!(
            "refused a CELL_FREE from rank {} for {addr:#x}: {why}",
            token.source()
        ));
        return;
    }
    let mut head = RETURNED.load(Ordering::Relaxed);
    loop {
        // SAFETY: a cell of this rank's pool that its joiner gave up
        // (accept_returned checked both).
        unsafe { (*(addr as *mut Cell)).next_free = head as u64 };
        match RETURNED.compare_exchange_weak(head, addr, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => return,
            Err(now) => head = now,
        }
    }
}

pub(crate) fn handlers() -> [Handler; 1] {
    let free: for<'a> extern "C" fn(Token<'a>, Arg, Arg) = on_cell_free;
    [Handler::request(CELL_FREE, c"uat cell free", free)]
}

impl CellRef {
    /// Completes a cell of another rank: the result, then the state, the
    /// second put started after the first is complete.
    pub(crate) fn complete_remote(self, g: Gasnet, value: *const u8, len: usize) {
        // SAFETY: value points to len readable bytes (the caller's T) that
        // stay unchanged until the wait below; read by GASNet as bytes (no
        // Rust reference is made over the T's padding).
        unsafe { g.put_nbi(self.rank, remote(g, self.rank, self.addr + 16), value, len) };
        g.wait_nbi();
        g.put_u64(self.rank, remote(g, self.rank, self.addr), DONE_REMOTE);
    }

    /// Work/span: where this cell's child leaves its final path (the same
    /// index among the arena's side slots as the cell among the cells).
    fn side(self, layout: &Layout) -> usize {
        Layout::addr(layout.sides) + (self.addr - Layout::addr(layout.cells)) / CELL_SIZE * crate::arena::SIDE_SLOT
    }

    /// Work/span: leaves the child's final path next to the cell (a put if
    /// the cell is another rank's), before the completion.
    pub(crate) fn put_child_path(self, g: Gasnet, layout: &Layout, me: u32, path: crate::workspan::Path) {
        let at = self.side(layout);
        let words = path.to_words();
        if self.rank == me {
            // SAFETY: this cell's side slot in the mapped arena, written by
            // the child's one completer and read by its joiner only after
            // the cell is done.
            unsafe { std::ptr::write(at as *mut [u64; 3], words) };
        } else {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
            g.put(self.rank, remote(g, self.rank, at), &bytes);
        }
    }

    /// Work/span: the final path of a done cell's child (before the cell is
    /// freed).
    pub(crate) fn child_path(self, g: Gasnet, layout: &Layout, me: u32) -> crate::workspan::Path {
        let at = self.side(layout);
        let words = if self.rank == me {
            // SAFETY: as for put_child_path: the cell is done.
            unsafe { std::ptr::read(at as *const [u64; 3]) }
        } else {
            let mut b = [0u8; 24];
            g.get(&mut b, self.rank, remote(g, self.rank, at));
            [0, 1, 2].map(|i| u64::from_ne_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes")))
        };
        crate::workspan::Path::from_words(words)
    }

    /// Tracing (timeline): who completed this cell, and when, in its spare
    /// word (unused while the cell is pending or done), before the
    /// completion.
    pub(crate) fn put_tag(self, g: Gasnet, me: u32, tag: u64) {
        if self.rank == me {
            // SAFETY: the spare word of a pending cell, written by its one
            // completer and read by its joiner after the cell is done.
            unsafe { (self.addr as *mut u64).add(1).write(tag) };
        } else {
            g.put_u64(self.rank, remote(g, self.rank, self.addr + 8), tag);
        }
    }

    /// Tracing (timeline): the completion tag of a done cell.
    pub(crate) fn tag(self, g: Gasnet, me: u32) -> u64 {
        if self.rank == me {
            // SAFETY: done: the completer's write came before.
            unsafe { (self.addr as *const u64).add(1).read() }
        } else {
            g.get_u64(self.rank, remote(g, self.rank, self.addr + 8))
        }
    }

    /// Whether a cell of another rank is done (one GET).
    pub(crate) fn is_done_remote(self, g: Gasnet) -> bool {
        g.get_u64(self.rank, remote(g, self.rank, self.addr)) & 1 == 1
    }

    /// Reads the result of a done remote cell and hands the cell back to its
    /// owner.
    pub(crate) fn take_remote<T: Copy>(self, g: Gasnet) -> T {
        let mut buf = [0u8; MAX_RESULT_SIZE];
        let len = std::mem::size_of::<T>();
        g.get(&mut buf[..len], self.rank, remote(g, self.rank, self.addr + 16));
        let [lo, hi] = split_u64(self.addr as u64);
        g.request(self.rank, CELL_FREE, &[lo, hi]);
        // A sleeping owner (lifelines) would poll for it only every
        // millisecond; meanwhile its shared-memory message queue fills and
        // this rank's next request blocks. Have it poll now (one load when
        // it is awake; after the request, so the message is queued first).
        crate::sleep_word::serve(g, self.rank);
        // SAFETY: the completer wrote a T's bytes there.
        unsafe { buf.as_ptr().cast::<T>().read_unaligned() }
    }
}

/// A rank's pool of cells.
pub(crate) struct CellPool {
    free: std::cell::Cell<usize>,
    rank: u32,
}

impl CellPool {
    /// Threads every cell of the arena onto the free list.
    ///
    /// # Safety
    /// The arena must be mapped with `layout`; one pool per process.
    pub(crate) unsafe fn new(layout: &Layout, rank: u32) -> CellPool {
        let base = Layout::addr(layout.cells);
        for i in 0..layout.cell_count {
            let cell = (base + i * CELL_SIZE) as *mut Cell;
            let next = if i + 1 < layout.cell_count {
                base + (i + 1) * CELL_SIZE
            } else {
                0
            };
            // SAFETY: inside the mapped cells part; no one else uses it yet.
            unsafe {
                (*cell).state.store(PENDING, Ordering::Relaxed);
                (*cell).next_free = next as u64;
            }
        }
        CELLS_LO.store(base, Ordering::Relaxed);
        CELLS_HI.store(base + layout.cell_count * CELL_SIZE, Ordering::Release);
        CellPool {
            free: std::cell::Cell::new(if layout.cell_count > 0 { base } else { 0 }),
            rank,
        }
    }

    /// A pending cell, or None when the pool is exhausted.
    #[inline(always)]
    pub(crate) fn alloc(&self) -> Option<CellRef> {
        let mut addr = self.free.get();
        if addr == 0 {
            addr = Self::returned();
            if addr == 0 {
                return None;
            }
        }
        let cell = CellRef { addr, rank: self.rank };
        // SAFETY: a free cell of this pool (PENDING already); only the owner
        // touches free ones.
        unsafe { self.free.set((*(addr as *mut Cell)).next_free as usize) };
        Some(cell)
    }

    /// Takes every cell other ranks have handed back (a list, 0 if none),
    /// making each PENDING.
    #[cold]
    #[inline(never)]
    fn returned() -> usize {
        let list = RETURNED.swap(0, Ordering::Acquire);
        let mut at = list;
        while at != 0 {
            // SAFETY: cells of this pool that their joiners handed back
            // (on_cell_free checked them); nobody else touches them now.
            unsafe {
                let c = at as *mut Cell;
                (*c).state.store(PENDING, Ordering::Relaxed);
                at = (*c).next_free as usize;
            }
        }
        list
    }

    /// Returns a cell of this pool (its result consumed).
    #[inline(always)]
    pub(crate) fn free(&self, cell: CellRef) {
        debug_assert_eq!(cell.rank, self.rank);
        // SAFETY: a cell of this pool that nobody uses any more; PENDING
        // (ready for its next task) makes a stray CELL_FREE for it refused.
        unsafe {
            let c = cell.addr as *mut Cell;
            (*c).state.store(PENDING, Ordering::Relaxed);
            (*c).next_free = self.free.get() as u64;
        }
        self.free.set(cell.addr);
    }
}

/// Test support (the fuzzer): whether cell `addr` of `rank` (another rank)
/// is handed back (FREE) — a CELL_FREE for it is refused whatever happens
/// meanwhile short of a spawn and a finished task there.
#[cfg(feature = "testing")]
pub(crate) fn handed_back_remote(g: Gasnet, rank: u32, addr: usize) -> bool {
    g.get_u64(rank, remote(g, rank, addr)) == FREE
}

/// Test support: sends CELL_FREE messages that their handler must refuse:
/// to `rank`, an address outside its cells, a misaligned one, and its last
/// cell (free unless nearly all cells are in use); to this rank, a cell of
/// `pool` that is pending (its task has not finished), polled for until the
/// handler has seen it. Returns how many were sent.
#[cfg(feature = "testing")]
pub(crate) fn send_malformed_cell_frees(g: Gasnet, rank: u32, layout: &Layout, pool: &CellPool) -> u32 {
    let base = Layout::addr(layout.cells);
    let last = base + (layout.cell_count - 1) * CELL_SIZE;
    let send = |to: u32, addr: usize| {
        let [lo, hi] = split_u64(addr as u64);
        g.request(to, CELL_FREE, &[lo, hi]);
    };
    for addr in [0x10usize, base + 8, last] {
        send(rank, addr);
    }
    let Some(pending) = pool.alloc() else { return 3 };
    let before = refused();
    send(g.rank(), pending.addr);
    while refused() == before {
        g.poll();
    }
    pool.free(pending);
    4
}
