//! The atomic words of a work-stealing deque: u64 words in a rank's
//! segment that thieves update with remote fetch-and-add and the owner with
//! local atomics — a deque lock (the paper's protocol) or a packed
//! head/split word (the split protocol) — served in this build's mode.
//!
//! How each mode touches the words (docs/design/fetch-and-add.md, "Remote atomics rules"):
//! - `native`: only through the GASNet-EX atomic domain, the owner included;
//! - `am`, `rdma-emulated`: the owner and the AM handler use CPU atomics;
//!   thieves fetch-and-add by Active Message, read and release with RMA.
//!
//! In `am` mode the target's worker serves a request only when it polls:
//! a requester raises the target's *attention word* ([`crate::attention::raise_attention`])
//! after sending, and the target checks that word at every spawn.

#[cfg(feature = "fad-native")]
use gasnet_sys::atomic::{AtomicDomain, Ops, Order};
use gasnet_sys::Gasnet;

#[cfg(not(feature = "fad-native"))]
use crate::service;

/// The deque-word service of this build's mode. Create it collectively
/// (every rank, once, before the segment is attached: it registers AM
/// handlers).
pub struct DequeAtomics {
    gasnet: Gasnet,
    #[cfg(feature = "fad-native")]
    ad: std::sync::OnceLock<AtomicDomain>,
}

impl DequeAtomics {
    /// Collective: every rank calls it once, before attaching the segment.
    pub fn new(gasnet: Gasnet) -> Result<DequeAtomics, gasnet_sys::Error> {
        #[cfg(not(feature = "fad-native"))]
        gasnet.register_handlers(&service::handlers())?;
        Ok(DequeAtomics {
            gasnet,
            #[cfg(feature = "fad-native")]
            ad: std::sync::OnceLock::new(),
        })
    }

    /// Collective, after the segment is attached: zeroes this rank's `count`
    /// consecutive atomic words starting at segment address `word` (seen at
    /// `local` here), the only words remote fetch-and-adds may target, and
    /// names the attention and sleep words of every rank (AM requests raise
    /// the first and wake a sleeping target through the second).
    ///
    /// # Safety
    /// `local` must point to this process's view of the `count` consecutive
    /// 8-aligned u64 words at segment address `word`, mapped for the rest of
    /// the process and accessed only atomically (in the AM modes the owner
    /// and the AM handler dereference it), and `attention_offset` and
    /// `sleep_offset` must name such words of this rank's segment too.
    pub unsafe fn init_own(
        &self,
        word: usize,
        local: *const u64,
        count: usize,
        attention_offset: usize,
        sleep_offset: usize,
    ) {
        #[cfg(feature = "fad-native")]
        {
            let _ = (local, attention_offset, sleep_offset);
            let ad = self.ad.get_or_init(|| self.gasnet.atomic_domain(Ops::ALL));
            for i in 0..count {
                ad.set(self.gasnet.rank(), word + 8 * i, 0, Order::Release);
            }
        }
        #[cfg(not(feature = "fad-native"))]
        {
            for i in 0..count {
                // SAFETY: `local` and the words after it are this rank's
                // registered words (this function's contract).
                unsafe { atomic(local.add(i)).store(0, std::sync::atomic::Ordering::Release) };
            }
            // SAFETY: this function's contract is allow's.
            unsafe { service::allow(word, word + 8 * count, local as usize, attention_offset, sleep_offset) };
        }
    }

    #[cfg(feature = "fad-native")]
    #[inline]
    fn ad(&self) -> &AtomicDomain {
        self.ad
            .get()
            .expect("DequeAtomics::init_own runs before the words are used")
    }

    /// Remote fetch-and-add (acquire-release) on `rank`'s segment word
    /// `word`, one of its registered words. Returns the old value, or None
    /// when the target refused the address (AM modes; the atomic domain of
    /// `native` mode has no registration).
    pub fn fetch_add(&self, rank: u32, word: usize, value: u64) -> Option<u64> {
        #[cfg(feature = "fad-native")]
        return Some(self.ad().fetch_add(rank, word, value, Order::AcqRel));
        #[cfg(not(feature = "fad-native"))]
        service::fetch_add(self.gasnet, rank, word, value)
    }

    /// Reads `rank`'s registered word (acquire): an atomic-domain get in
    /// `native` mode, one RMA get otherwise.
    pub fn load(&self, rank: u32, word: usize) -> u64 {
        #[cfg(feature = "fad-native")]
        return self.ad().get(rank, word, Order::Acquire);
        #[cfg(not(feature = "fad-native"))]
        {
            let v = self.gasnet.get_u64(rank, word);
            std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
            v
        }
    }

    /// A thief tries to take `rank`'s deque lock (`word`: its segment
    /// address; the paper's protocol). Returns whether it got it. The
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
    ///
    /// # Safety
    /// `local` must be this process's view of segment word `word`, one of
    /// the words given to [`DequeAtomics::init_own`] (its contract holds).
    #[inline]
    pub unsafe fn lock_own(&self, word: usize, local: *const u64) {
        // Acquire: the owner's reads of head after taking the lock see what
        // the last thief wrote before releasing it.
        // SAFETY: this function's contract.
        while unsafe { self.own_compare_swap(word, local, 0, 1) } != 0 {
            self.gasnet.poll();
            std::hint::spin_loop();
        }
    }

    /// The owner releases its own deque's lock.
    ///
    /// # Safety
    /// `local` must be this process's view of segment word `word`, one of
    /// the words given to [`DequeAtomics::init_own`] (its contract holds).
    #[inline]
    pub unsafe fn unlock_own(&self, word: usize, local: *const u64) {
        // SAFETY: this function's contract.
        unsafe { self.own_store(word, local, 0) }
    }

    /// The owner's fetch-and-add (acquire-release) on its own word.
    ///
    /// # Safety
    /// `local` must be this process's view of segment word `word`, one of
    /// the words given to [`DequeAtomics::init_own`] (its contract holds).
    pub unsafe fn own_fetch_add(&self, word: usize, local: *const u64, value: u64) -> u64 {
        #[cfg(feature = "fad-native")]
        {
            let _ = local;
            self.ad().fetch_add(self.gasnet.rank(), word, value, Order::AcqRel)
        }
        #[cfg(not(feature = "fad-native"))]
        {
            let _ = word;
            // SAFETY: `local` is one of init_own's words (this function's
            // contract).
            unsafe { atomic(local) }.fetch_add(value, std::sync::atomic::Ordering::AcqRel)
        }
    }

    /// The owner's compare-and-swap (acquire-release) on its own word;
    /// returns the old value (`current` on success).
    ///
    /// # Safety
    /// `local` must be this process's view of segment word `word`, one of
    /// the words given to [`DequeAtomics::init_own`] (its contract holds).
    pub unsafe fn own_compare_swap(&self, word: usize, local: *const u64, current: u64, new: u64) -> u64 {
        #[cfg(feature = "fad-native")]
        {
            let _ = local;
            self.ad()
                .compare_swap(self.gasnet.rank(), word, current, new, Order::AcqRel)
        }
        #[cfg(not(feature = "fad-native"))]
        {
            let _ = word;
            use std::sync::atomic::Ordering::{AcqRel, Acquire};
            // SAFETY: `local` is one of init_own's words (this function's
            // contract).
            match unsafe { atomic(local) }.compare_exchange(current, new, AcqRel, Acquire) {
                Ok(v) | Err(v) => v,
            }
        }
    }

    /// The owner's load (acquire) of its own word.
    ///
    /// # Safety
    /// `local` must be this process's view of segment word `word`, one of
    /// the words given to [`DequeAtomics::init_own`] (its contract holds).
    pub unsafe fn own_load(&self, word: usize, local: *const u64) -> u64 {
        #[cfg(feature = "fad-native")]
        {
            let _ = local;
            self.ad().get(self.gasnet.rank(), word, Order::Acquire)
        }
        #[cfg(not(feature = "fad-native"))]
        {
            let _ = word;
            // SAFETY: `local` is one of init_own's words (this function's
            // contract).
            unsafe { atomic(local) }.load(std::sync::atomic::Ordering::Acquire)
        }
    }

    /// The owner's store (release) to its own word.
    ///
    /// # Safety
    /// `local` must be this process's view of segment word `word`, one of
    /// the words given to [`DequeAtomics::init_own`] (its contract holds).
    pub unsafe fn own_store(&self, word: usize, local: *const u64, value: u64) {
        #[cfg(feature = "fad-native")]
        {
            let _ = local;
            self.ad().set(self.gasnet.rank(), word, value, Order::Release)
        }
        #[cfg(not(feature = "fad-native"))]
        {
            let _ = word;
            // SAFETY: `local` is one of init_own's words (this function's
            // contract).
            unsafe { atomic(local) }.store(value, std::sync::atomic::Ordering::Release)
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
