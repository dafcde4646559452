//! The lock of a work-stealing deque (THE protocol): a u64 word in a rank's
//! segment, 0 when free. Thieves take it with a remote fetch-and-add (held if
//! the fetched value was 0) and release it by storing 0; the owner takes it
//! only on a pop conflict.
//!
//! How each mode touches the word (DESIGN.md "Remote atomics rules"):
//! - `native`: only through the GASNet-EX atomic domain, the owner included;
//! - `am`, `rdma-emulated`: the owner and the AM handler use CPU atomics;
//!   thieves fetch-and-add by Active Message and release with an RMA put.

#[cfg(feature = "fad-native")]
use gasnet_sys::atomic::{AtomicDomain, Ops, Order};
use gasnet_sys::Gasnet;

#[cfg(not(feature = "fad-native"))]
use crate::service;

/// The deque lock service of this build's mode. Create it collectively (every
/// rank, once, before the segment is attached: it registers AM handlers).
pub struct DequeLock {
    gasnet: Gasnet,
    #[cfg(feature = "fad-native")]
    ad: std::sync::OnceLock<AtomicDomain>,
}

impl DequeLock {
    /// Collective: every rank calls it once, before attaching the segment.
    pub fn new(gasnet: Gasnet) -> Result<DequeLock, gasnet_sys::Error> {
        #[cfg(not(feature = "fad-native"))]
        gasnet.register_handlers(&service::handlers())?;
        Ok(DequeLock {
            gasnet,
            #[cfg(feature = "fad-native")]
            ad: std::sync::OnceLock::new(),
        })
    }

    /// Collective, after the segment is attached: initialises this rank's lock
    /// word (free) and the `spare` words after it (0), which remote
    /// fetch-and-adds may also target (micro-benchmarks). `word` is the lock's
    /// address in this rank's segment, `local` the same word in this
    /// process's mapping.
    pub fn init_own(&self, word: usize, local: *const u64, spare: usize) {
        #[cfg(feature = "fad-native")]
        {
            let _ = local;
            let ad = self.ad.get_or_init(|| {
                self.gasnet
                    .atomic_domain(Ops::FETCH_ADD | Ops::COMPARE_SWAP | Ops::SET | Ops::GET)
            });
            for i in 0..=spare {
                ad.set(self.gasnet.rank(), word + 8 * i, 0, Order::Release);
            }
        }
        #[cfg(not(feature = "fad-native"))]
        {
            for i in 0..=spare {
                // SAFETY: `local` and the spare words after it are this
                // rank's registered words (caller's contract).
                unsafe { atomic(local.add(i)).store(0, std::sync::atomic::Ordering::Release) };
            }
            service::allow(word, word + 8 * (spare + 1), local as usize);
        }
    }

    #[cfg(feature = "fad-native")]
    #[inline]
    fn ad(&self) -> &AtomicDomain {
        self.ad.get().expect("DequeLock::init_own runs before the lock is used")
    }

    /// Remote fetch-and-add in this build's mode on `rank`'s segment word
    /// `word`, which must be one of the registered words (see `init_own`).
    /// Returns the old value, or None when the target refused the address
    /// (AM modes; the atomic domain of `native` mode has no registration).
    pub fn fetch_add(&self, rank: u32, word: usize, value: u64) -> Option<u64> {
        #[cfg(feature = "fad-native")]
        return Some(self.ad().fetch_add(rank, word, value, Order::AcqRel));
        #[cfg(not(feature = "fad-native"))]
        service::fetch_add(self.gasnet, rank, word, value)
    }

    /// A thief tries to take `rank`'s lock (`word`: its segment address).
    /// Returns whether it got it. Polls while it waits for the answer. The
    /// fetch-and-add has acquire ordering (native: `GEX_FLAG_AD_ACQ`; AM
    /// modes: the reply is read with acquire after the handler's AcqRel
    /// atomic), so the thief's reads of head and tail come after it.
    pub fn try_lock(&self, rank: u32, word: usize) -> bool {
        match self.fetch_add(rank, word, 1) {
            Some(old) => old == 0,
            None => self.gasnet.fail(format_args!(
                "rank {rank} refused a fetch-and-add on its deque lock {word:#x}: the ranks disagree about the arena layout"
            )),
        }
    }

    /// A thief releases `rank`'s lock. Its earlier RMA on the victim (the
    /// head it advanced) is complete before this (blocking operations), and
    /// the release flag orders its earlier local accesses.
    pub fn unlock(&self, rank: u32, word: usize) {
        #[cfg(feature = "fad-native")]
        self.ad().set(rank, word, 0, Order::Release);
        #[cfg(not(feature = "fad-native"))]
        self.gasnet.put_u64(rank, word, 0);
    }

    /// The owner takes its own deque's lock, waiting while a thief holds it.
    #[inline]
    pub fn lock_own(&self, word: usize, local: *const u64) {
        #[cfg(feature = "fad-native")]
        {
            let _ = local;
            let me = self.gasnet.rank();
            // Acquire: the owner's reads of head after taking the lock see
            // what the last thief wrote before releasing it.
            while self.ad().compare_swap(me, word, 0, 1, Order::Acquire) != 0 {
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
            self.ad().set(self.gasnet.rank(), word, 0, Order::Release);
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
