//! The lock of a work-stealing deque (THE protocol): a u64 word in a rank's
//! segment, 0 when free. Thieves take it with a remote fetch-and-add (held if
//! the fetched value was 0); the owner takes it only on a pop conflict.

#[cfg(feature = "fad-native")]
use gasnet_sys::atomic::{AtomicDomain, Ops};
use gasnet_sys::Gasnet;

/// The deque lock service of this build's mode. Create it collectively (every
/// rank, once) after the segment is attached.
pub struct DequeLock {
    gasnet: Gasnet,
    #[cfg(feature = "fad-native")]
    ad: AtomicDomain,
}

impl DequeLock {
    /// Collective: every rank calls it once.
    pub fn new(gasnet: Gasnet) -> DequeLock {
        DequeLock {
            gasnet,
            #[cfg(feature = "fad-native")]
            ad: gasnet.atomic_domain(Ops::FETCH_ADD | Ops::COMPARE_SWAP | Ops::SET | Ops::GET),
        }
    }

    /// Initialises this rank's lock word (free). `word` is its address in
    /// this rank's segment, `local` the same word in this process's mapping.
    pub fn init_own(&self, word: usize, local: *const u64) {
        #[cfg(feature = "fad-native")]
        {
            let _ = local;
            self.ad.set(self.gasnet.rank(), word, 0);
        }
        #[cfg(not(feature = "fad-native"))]
        {
            let _ = word;
            // SAFETY: `local` is this rank's lock word (caller's contract).
            unsafe { atomic(local).store(0, std::sync::atomic::Ordering::Release) };
        }
    }

    /// The owner takes its own deque's lock, waiting while a thief holds it.
    #[inline]
    pub fn lock_own(&self, word: usize, local: *const u64) {
        #[cfg(feature = "fad-native")]
        {
            let _ = local;
            let me = self.gasnet.rank();
            while self.ad.compare_swap(me, word, 0, 1) != 0 {
                self.gasnet.poll();
                std::hint::spin_loop();
            }
        }
        #[cfg(not(feature = "fad-native"))]
        {
            let _ = word;
            use std::sync::atomic::Ordering::{Acquire, Relaxed};
            // SAFETY: as in init_own.
            let w = unsafe { atomic(local) };
            while w.compare_exchange(0, 1, Acquire, Relaxed).is_err() {
                self.gasnet.poll();
                std::hint::spin_loop();
            }
        }
    }

    /// The owner releases its own deque's lock.
    #[inline]
    pub fn unlock_own(&self, word: usize, local: *const u64) {
        #[cfg(feature = "fad-native")]
        {
            let _ = local;
            self.ad.set(self.gasnet.rank(), word, 0);
        }
        #[cfg(not(feature = "fad-native"))]
        {
            let _ = word;
            // SAFETY: as in init_own.
            unsafe { atomic(local).store(0, std::sync::atomic::Ordering::Release) };
        }
    }
}

/// # Safety
/// `p` must point to a live, 8-aligned u64 accessed only atomically.
#[cfg(not(feature = "fad-native"))]
unsafe fn atomic<'a>(p: *const u64) -> &'a std::sync::atomic::AtomicU64 {
    // SAFETY: caller's contract; AtomicU64 has u64's layout.
    unsafe { &*(p as *const std::sync::atomic::AtomicU64) }
}
