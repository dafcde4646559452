//! [`MappedPages`]: the cache's blocks that are no longer held but whose
//! mirror pages are still mapped, oldest first, each counted once.
//!
//! An acquire point forgets every block no checkout holds; returning their
//! pages at once would make the next fetch into them pay a page fault per
//! page (zero-filled again by the kernel). They stay mapped instead, and
//! count against the capacity beside the held blocks, so `UAT_CACHE_SIZE`
//! still bounds the resident mirror. A block forgotten at every acquire
//! point (a stencil's halo, a loop's rows) must count once, however often
//! it is listed: entries carry a stamp, and only the latest stamp of a
//! block is live.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

/// A block of the cache: (home rank, block index).
pub(crate) type Key = (u32, usize);

/// Forgotten blocks whose pages are mapped.
#[derive(Default)]
pub(crate) struct MappedPages {
    /// Each block listed, with the stamp of its live entry in `order`.
    live: FxHashMap<Key, u64>,
    /// Entries, oldest first; one whose stamp is not its block's in `live`
    /// is stale (the block was held again, or forgotten again later).
    order: VecDeque<(Key, u64)>,
    /// The stamp of the next entry.
    next: u64,
}

impl MappedPages {
    /// Blocks listed (each once).
    pub(crate) fn len(&self) -> usize {
        self.live.len()
    }

    /// `key` was forgotten with its pages kept: it is now the newest.
    pub(crate) fn list(&mut self, key: Key) {
        self.next += 1;
        self.live.insert(key, self.next);
        self.order.push_back((key, self.next));
        // Stale entries are dropped in bulk, so `order` stays within twice
        // the live ones (amortised O(1) per call).
        if self.order.len() > 2 * self.live.len() + 64 {
            let live = &self.live;
            self.order.retain(|(k, s)| live.get(k) == Some(s));
        }
    }

    /// `key` is held again: its pages count among the held blocks.
    pub(crate) fn unlist(&mut self, key: Key) {
        self.live.remove(&key);
    }

    /// Removes and returns the oldest block listed (its pages are to be
    /// returned), or None when none is.
    pub(crate) fn pop_oldest(&mut self) -> Option<Key> {
        while let Some((key, stamp)) = self.order.pop_front() {
            if self.live.get(&key) == Some(&stamp) {
                self.live.remove(&key);
                return Some(key);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_forgotten_again_and_again_counts_once() {
        let mut m = MappedPages::default();
        for _ in 0..1000 {
            for b in 0..10 {
                m.list((1, b));
            }
        }
        assert_eq!(m.len(), 10);
        assert!(
            m.order.len() <= 2 * 10 + 64 + 1,
            "stale entries are dropped: {}",
            m.order.len()
        );
        // Oldest first: block 0 was last listed before blocks 1..10.
        assert_eq!(m.pop_oldest(), Some((1, 0)));
        assert_eq!(m.len(), 9);
    }

    #[test]
    fn the_oldest_is_the_least_recently_forgotten_and_held_blocks_are_skipped() {
        let mut m = MappedPages::default();
        m.list((0, 1));
        m.list((0, 2));
        m.list((0, 3));
        m.list((0, 1)); // forgotten again: now the newest
        m.unlist((0, 2)); // held again
        assert_eq!(m.len(), 2);
        assert_eq!(m.pop_oldest(), Some((0, 3)));
        assert_eq!(m.pop_oldest(), Some((0, 1)));
        assert_eq!(m.pop_oldest(), None);
        assert_eq!(m.len(), 0);
    }
}
