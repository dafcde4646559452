//! Quiescent ranks: each rank's *sleep word* says whether its worker
//! sleeps, and is the word it sleeps on.
//!
//! A worker that found no work for a while (the lifelines of
//! `uni-threads`) stores [`QUIESCENT`] in its own sleep word and waits until
//! another rank wakes it:
//!
//! - in shared memory (the sleeper's segment is mapped here, PSHM) a waker
//!   swaps the word and, if the worker sleeps, calls `futex(FUTEX_WAKE)` on
//!   it. The segment is a shared mapping, so the futex is keyed by the
//!   backing page, not the address: a process-shared futex across ranks,
//!   with no syscall at all when nobody sleeps;
//! - across the network a wake-up is a message of the waker's own (an
//!   Active Message it does not wait for: the sleeper polls on a back-off
//!   schedule while it sleeps); [`wake`] does nothing there.
//!
//! [`Wake::Work`] ends the sleep (work appeared, the job finished);
//! [`Wake::Service`] asks the sleeper to poll once and sleep on (an `am`
//! mode fetch-and-add request is waiting in its queue).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use gasnet_sys::Gasnet;

/// The sleep word's values (declared with the lifeline protocol's steps).
pub use uat_protocol::lifeline::{AWAKE, QUIESCENT, SERVE};

/// Why a sleeping rank is woken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// Leave the sleep: there is work (or the job is over).
    Work,
    /// Poll once for a waiting request, then sleep on (shared memory only:
    /// across the network the request itself reaches the sleeper's poll).
    Service,
}

/// The sleep word of `rank` at `segment_offset`, if its segment is mapped
/// here.
fn shared_word(gasnet: Gasnet, rank: u32, segment_offset: usize) -> Option<&'static AtomicU64> {
    let local = gasnet.segment(rank).local?;
    // SAFETY: the target's segment is mapped here (PSHM) for the job's
    // lifetime, and the offset names an aligned word of it that every
    // writer accesses atomically (local stores, swaps, CAS; whole-word puts).
    Some(unsafe { &*((local + segment_offset) as *const AtomicU64) })
}

/// Whether `rank` sleeps, when that costs one load (its segment is mapped
/// here); None otherwise.
#[inline]
pub fn is_sleeping(gasnet: Gasnet, rank: u32, segment_offset: usize) -> Option<bool> {
    shared_word(gasnet, rank, segment_offset).map(|w| w.load(Ordering::Relaxed) != AWAKE)
}

/// Wakes `rank` (its sleep word at `segment_offset`) if it sleeps and its
/// segment is mapped here. Returns whether it slept (false across the
/// network, where nothing is done: see the module docs).
pub fn wake(gasnet: Gasnet, rank: u32, segment_offset: usize, why: Wake) -> bool {
    match shared_word(gasnet, rank, segment_offset) {
        Some(word) => {
            let slept = match why {
                // SeqCst: pairs with the sleeper's SeqCst store of QUIESCENT
                // and its re-check of its reasons to wake (see uni-threads'
                // lifeline module): one of the two sees the other.
                Wake::Work => word.swap(AWAKE, Ordering::SeqCst) != AWAKE,
                // A load first: senders call this for every message, and
                // the target is usually awake (no write to its line then).
                // A message that races the target's falling asleep waits
                // at most for its next timed poll.
                Wake::Service => {
                    word.load(Ordering::Relaxed) == QUIESCENT
                        && word
                            .compare_exchange(QUIESCENT, SERVE, Ordering::SeqCst, Ordering::Relaxed)
                            .is_ok()
                }
            };
            if slept {
                futex_wake(word);
            }
            slept
        }
        None => false,
    }
}

/// The futex word of a sleep word: its low half (x86-64 is little-endian;
/// the states fit 32 bits).
fn futex_addr(word: &AtomicU64) -> *const u32 {
    word.as_ptr() as *const u32
}

/// Sleeps while `word` holds `value`, at most `timeout` (or until a
/// [`wake`]); returns at once if it holds another value. Spurious returns
/// are allowed: callers re-check.
pub fn futex_wait(word: &AtomicU64, value: u64, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: the address is a live, aligned u32 (the low half of an aligned
    // u64 in a shared mapping); FUTEX_WAIT only reads it. Not
    // FUTEX_PRIVATE_FLAG: wakers are other processes.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            futex_addr(word),
            libc::FUTEX_WAIT,
            value as u32,
            &ts as *const libc::timespec,
        )
    };
}

fn futex_wake(word: &AtomicU64) {
    // SAFETY: as in futex_wait; FUTEX_WAKE touches no memory.
    unsafe { libc::syscall(libc::SYS_futex, futex_addr(word), libc::FUTEX_WAKE, i32::MAX) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn a_wait_returns_at_once_when_the_value_differs_and_after_the_timeout_otherwise() {
        let word = AtomicU64::new(AWAKE);
        let t = Instant::now();
        futex_wait(&word, QUIESCENT, Duration::from_secs(5));
        assert!(t.elapsed() < Duration::from_secs(1));
        word.store(QUIESCENT, Ordering::SeqCst);
        let t = Instant::now();
        futex_wait(&word, QUIESCENT, Duration::from_millis(20));
        assert!(t.elapsed() >= Duration::from_millis(15));
    }

    #[test]
    fn a_wake_from_another_thread_ends_the_wait() {
        static WORD: AtomicU64 = AtomicU64::new(QUIESCENT);
        let waker = std::thread::spawn(|| {
            std::thread::sleep(Duration::from_millis(50));
            WORD.swap(AWAKE, Ordering::SeqCst);
            futex_wake(&WORD);
        });
        let t = Instant::now();
        while WORD.load(Ordering::SeqCst) == QUIESCENT {
            futex_wait(&WORD, QUIESCENT, Duration::from_secs(30));
        }
        assert!(t.elapsed() < Duration::from_secs(20));
        waker.join().unwrap();
    }
}
