//! Small collectives over the arena's per-rank slots (`STATS_SLOT` bytes per
//! rank on rank 0): what the runtime needs for start-up checks, statistics
//! and benchmark bookkeeping. Every rank calls them, in the same order.

use gasnet_sys::Gasnet;

use crate::arena::{remote, Layout, STATS_SLOT};

fn slot(layout: &Layout, rank: u32) -> usize {
    Layout::addr(layout.stats) + rank as usize * STATS_SLOT
}

fn to_bytes(words: &[u64]) -> Vec<u8> {
    assert!(
        words.len() * 8 <= STATS_SLOT,
        "at most {} words per rank",
        STATS_SLOT / 8
    );
    words.iter().flat_map(|w| w.to_ne_bytes()).collect()
}

/// Every rank's `words` (all of the same length), on rank 0; empty elsewhere.
pub(crate) fn gather(g: Gasnet, layout: &Layout, words: &[u64]) -> Vec<Vec<u64>> {
    g.put(0, remote(g, 0, slot(layout, g.rank())), &to_bytes(words));
    g.barrier();
    let all = if g.rank() == 0 {
        (0..g.size())
            .map(|r| {
                let base = slot(layout, r);
                // SAFETY: rank 0's slots in the mapped arena, written by
                // blocking puts that completed before the barrier.
                (0..words.len())
                    .map(|i| unsafe { std::ptr::read_volatile((base + i * 8) as *const u64) })
                    .collect()
            })
            .collect()
    } else {
        Vec::new()
    };
    g.barrier();
    all
}

/// Rank 0's `words`, on every rank.
pub(crate) fn broadcast(g: Gasnet, layout: &Layout, words: &[u64]) -> Vec<u64> {
    let at = remote(g, 0, slot(layout, 0));
    if g.rank() == 0 {
        g.put(0, at, &to_bytes(words));
    }
    g.barrier();
    let mut bytes = vec![0u8; words.len() * 8];
    g.get(&mut bytes, 0, at);
    g.barrier();
    bytes
        .chunks(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// Rank 0's `T` (at most a slot's bytes), on every rank: its bytes go as
/// bytes (GASNet reads them; no Rust read of a padding byte as a number).
pub(crate) fn broadcast_value<T: Copy>(g: Gasnet, layout: &Layout, value: Option<&T>) -> T {
    let len = std::mem::size_of::<T>();
    assert!(len <= STATS_SLOT, "at most {STATS_SLOT} bytes");
    let at = remote(g, 0, slot(layout, 0));
    if let (0, Some(v)) = (g.rank(), value) {
        // SAFETY: `v` is `len` readable bytes, unchanged until the wait.
        unsafe { g.put_nbi(0, at, (v as *const T).cast::<u8>(), len) };
        g.wait_nbi();
    }
    g.barrier();
    let mut out = std::mem::MaybeUninit::<T>::uninit();
    // SAFETY: `out` is `len` writable bytes that no reference covers.
    unsafe { g.get_raw(out.as_mut_ptr().cast::<u8>(), 0, at, len) };
    g.barrier();
    // SAFETY: rank 0 put a T's bytes there (a T's padding may hold any
    // bytes: every byte of `out` was written by the get).
    unsafe { out.assume_init() }
}
