//! Atomics on u64 words of the global heap (`uat_memory`), in
//! every fetch-and-add mode, with the operations a program needs:
//! fetch-add, compare-swap, fetch-min, fetch-max, load, store.
//!
//! How each mode reaches a word (the same rules as the deque's words,
//! docs/design/fetch-and-add.md, "Remote atomics rules"):
//! - `native`: only through a GASNet-EX atomic domain created for these
//!   words (its own domain, with `FMIN`/`FMAX`), the owner included;
//! - `am`, `rdma-emulated`: CPU atomics wherever the word is mapped in this
//!   process (its own rank, or a rank of its shared-memory neighbourhood:
//!   every other access to the word is a CPU atomic too, by a process that
//!   maps it or by the owner's handler); an Active Message
//!   (`GLOBAL_ATOMIC`, answered by the owner's worker when it polls in
//!   `am`, by its polling thread in `rdma-emulated`) otherwise.
//!
//! Every operation is sequentially consistent with respect to the others on
//! the same word and has acquire-release ordering for the caller.

#[cfg(feature = "fad-native")]
use gasnet_sys::atomic::{AtomicDomain, Ops, Order};
use gasnet_sys::Gasnet;

pub use crate::op::AtomicOp;

/// The global-word atomics of this build's mode. Create it on every rank,
/// once, then [`init`] (collective).
///
/// [`init`]: GlobalAtomics::init
pub struct GlobalAtomics {
    gasnet: Gasnet,
    #[cfg(feature = "fad-native")]
    ad: std::sync::OnceLock<AtomicDomain>,
}

impl GlobalAtomics {
    /// A handle; nothing is set up yet (the AM modes' handler is registered
    /// with the deque's: [`crate::DequeAtomics::new`]).
    pub fn new(gasnet: Gasnet) -> GlobalAtomics {
        GlobalAtomics {
            gasnet,
            #[cfg(feature = "fad-native")]
            ad: std::sync::OnceLock::new(),
        }
    }

    /// Collective, after the segment is attached: the words may lie in
    /// `[lo, hi)` of this rank's segment, seen at `local` here.
    ///
    /// # Safety
    /// As for [`crate::service::allow_global`]: `local` is this process's
    /// view of `lo`, `[local, local + hi - lo)` stays mapped, and the words
    /// that [`GlobalAtomics::apply`] names are accessed only atomically.
    pub unsafe fn init(&self, lo: usize, hi: usize, local: usize) {
        #[cfg(feature = "fad-native")]
        {
            let _ = (lo, hi, local);
            self.ad.get_or_init(|| self.gasnet.atomic_domain(Ops::ALL));
        }
        // SAFETY: this function's contract is allow_global's.
        #[cfg(not(feature = "fad-native"))]
        unsafe {
            crate::service::allow_global(lo, hi, local)
        };
    }

    /// Applies `op` to the word at segment address `addr` of `rank` (an
    /// aligned word of its global heap) and returns the old value.
    pub fn apply(&self, rank: u32, addr: usize, op: AtomicOp, a: u64, b: u64) -> u64 {
        #[cfg(feature = "fad-native")]
        {
            let ad = self
                .ad
                .get()
                .expect("GlobalAtomics::init runs before any global atomic");
            let o = Order::AcqRel;
            match op {
                AtomicOp::FetchAdd => ad.fetch_add(rank, addr, a, o),
                AtomicOp::CompareSwap => ad.compare_swap(rank, addr, a, b, o),
                AtomicOp::FetchMin => ad.fetch_min(rank, addr, a, o),
                AtomicOp::FetchMax => ad.fetch_max(rank, addr, a, o),
                AtomicOp::Load => ad.get(rank, addr, o),
                AtomicOp::Store => {
                    // gex_AD has no fetching swap of its own: loop on
                    // compare-swap (the caller gets the replaced value).
                    let mut old = ad.get(rank, addr, Order::Acquire);
                    loop {
                        let seen = ad.compare_swap(rank, addr, old, a, o);
                        if seen == old {
                            return old;
                        }
                        old = seen;
                    }
                }
            }
        }
        #[cfg(not(feature = "fad-native"))]
        {
            let seg = self.gasnet.segment(rank);
            // Our own segment is addressable at its base, mapped or not.
            let local = if rank == self.gasnet.rank() {
                Some(seg.local.unwrap_or(seg.base))
            } else {
                seg.local
            };
            if let Some(local) = local {
                assert!(
                    addr.is_multiple_of(8) && seg.contains(addr, 8),
                    "global atomic on {addr:#x}: not an aligned word of rank {rank}'s segment"
                );
                // SAFETY: an aligned word of `rank`'s segment, mapped here
                // (checked above); in the AM modes every access to a global
                // atomic word is a CPU atomic (module docs).
                let word = unsafe { &*((local + (addr - seg.base)) as *const std::sync::atomic::AtomicU64) };
                return op.apply(word, a, b);
            }
            crate::service::global_atomic(self.gasnet, rank, addr, op, a, b).unwrap_or_else(|| {
                self.gasnet.fail(format_args!(
                    "rank {rank} refused a global atomic on {addr:#x}: the ranks disagree about the global heap"
                ))
            })
        }
    }
}
