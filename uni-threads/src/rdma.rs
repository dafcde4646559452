//! The RDMA region's allocator: buffers for the frames of suspended threads.
//!
//! Power-of-two size classes with free lists, and a bump pointer for fresh
//! space. Only the worker (on the scheduler stack) allocates and frees.

/// Smallest buffer: 256 bytes (class 0).
const MIN_SHIFT: u32 = 8;

pub(crate) struct RdmaAlloc {
    base: usize,
    size: usize,
    bump: usize,
    free: Vec<Vec<usize>>,
}

impl RdmaAlloc {
    pub(crate) fn new(base: usize, size: usize) -> RdmaAlloc {
        RdmaAlloc {
            base,
            size,
            bump: 0,
            free: vec![Vec::new(); 48],
        }
    }

    fn class(len: usize) -> u32 {
        len.max(1 << MIN_SHIFT).next_power_of_two().trailing_zeros() - MIN_SHIFT
    }

    /// A buffer of at least `len` bytes, or None when the region is full.
    pub(crate) fn alloc(&mut self, len: usize) -> Option<usize> {
        let class = Self::class(len);
        if let Some(addr) = self.free[class as usize].pop() {
            return Some(addr);
        }
        let bytes = 1usize << (class + MIN_SHIFT);
        if self.bump + bytes > self.size {
            return None;
        }
        let addr = self.base + self.bump;
        self.bump += bytes;
        Some(addr)
    }

    /// Returns a buffer obtained from `alloc(len)`.
    pub(crate) fn free(&mut self, addr: usize, len: usize) {
        debug_assert!(addr >= self.base && addr < self.base + self.size);
        self.free[Self::class(len) as usize].push(addr);
    }

    pub(crate) fn capacity(&self) -> usize {
        self.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_disjoint_reused_and_bounded() {
        let mut a = RdmaAlloc::new(0x1000, 4096);
        let x = a.alloc(100).unwrap();
        let y = a.alloc(300).unwrap();
        assert_eq!(x, 0x1000);
        assert_eq!(y, 0x1000 + 256, "classes are 256 B, 512 B, ...");
        a.free(x, 100);
        assert_eq!(a.alloc(200), Some(x), "a freed buffer of the same class is reused");
        assert!(a.alloc(4096).is_none(), "no room left for 4 KiB");
        assert!(a.alloc(2048).is_some());
    }
}
