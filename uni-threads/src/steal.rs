//! Stealing a continuation from another rank by RDMA (IPSJ 2016 §5.3,
//! Table 3): empty check (one GET), lock (remote fetch-and-add through
//! am-fad), read head/tail and the entry, advance head (one PUT), copy the
//! frames with one GET from the victim's segment into this rank's own
//! segment, where they appear at the same arena address, unlock, resume.
//!
//! Only a worker whose uni-address region is empty steals (the scheduler
//! calls [`try_steal`] only then), so any stolen frames fit.

use std::sync::atomic::{fence, Ordering};

use crate::arena::{remote, DEQUE_OFFSET, HEAD_WORD, LOCK_WORD, TAIL_WORD};
use crate::deque::Entry;
use crate::tsc;
use crate::worker::worker_in_task;

/// Victim choice: xorshift64* per rank, seeded from the rank and the run's
/// seed, so ranks do not all probe the same victims in the same order.
pub struct VictimRng(std::cell::Cell<u64>);

impl VictimRng {
    pub fn new(seed: u64, rank: u32) -> VictimRng {
        // splitmix64 of (seed, rank): distinct, well-mixed, never zero.
        let mut z = seed ^ (rank as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        VictimRng(std::cell::Cell::new((z ^ (z >> 31)) | 1))
    }

    /// A rank in `0..ranks` other than `me` (ranks ≥ 2).
    pub fn pick(&self, me: u32, ranks: u32) -> u32 {
        let mut x = self.0.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0.set(x);
        let r = (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) % (ranks as u64 - 1);
        let r = r as u32;
        if r >= me {
            r + 1
        } else {
            r
        }
    }
}

/// Reads a victim's (head, tail) with one GET (they are 64 bytes apart).
fn head_and_tail(victim: u32) -> (u64, u64) {
    let w = worker_in_task();
    let mut buf = [0u8; TAIL_WORD + 8 - HEAD_WORD];
    w.gasnet.get(
        &mut buf,
        victim,
        remote(w.gasnet, victim, crate::ARENA_BASE + HEAD_WORD),
    );
    let word = |at: usize| u64::from_ne_bytes(buf[at..at + 8].try_into().unwrap());
    (word(0), word(TAIL_WORD - HEAD_WORD))
}

/// One steal attempt. On success the stolen frames are in place in this
/// rank's stack region and the entry is returned, ready to resume.
pub fn try_steal() -> Option<Entry> {
    let w = worker_in_task();
    let (g, me, ranks) = (w.gasnet, w.rank, w.ranks);
    if ranks < 2 {
        return None;
    }
    let victim = w.victims.pick(me, ranks);
    let c = &w.counters;
    c.update(|c| c.steals_attempted += 1);
    let at = |offset: usize| remote(g, victim, crate::ARENA_BASE + offset);
    // Phase timestamps (TSC), kept only for successful steals.
    let t0 = tsc::now();
    if w.config.empty_check {
        let (h, t) = head_and_tail(victim);
        if h >= t {
            c.update(|c| c.empty_check_aborts += 1);
            return None;
        }
    }
    let t1 = tsc::now();
    let lock = at(LOCK_WORD);
    if !w.lock.try_lock(victim, lock) {
        c.update(|c| c.lock_failures += 1);
        return None;
    }
    let t2 = tsc::now();
    let (h, t) = head_and_tail(victim);
    if h >= t {
        w.lock.unlock(victim, lock);
        return None;
    }
    // THE: claim the oldest entry, then check the owner did not pop it.
    g.put_u64(victim, at(HEAD_WORD), h + 1);
    fence(Ordering::SeqCst);
    let t = g.get_u64(victim, at(TAIL_WORD));
    if h + 1 > t {
        g.put_u64(victim, at(HEAD_WORD), h);
        w.lock.unlock(victim, lock);
        return None;
    }
    let mut raw = [0u8; 16];
    g.get(
        &mut raw,
        victim,
        at(DEQUE_OFFSET + h as usize * std::mem::size_of::<Entry>()),
    );
    let entry = Entry {
        ctx: u64::from_ne_bytes(raw[..8].try_into().unwrap()),
        top: u64::from_ne_bytes(raw[8..].try_into().unwrap()),
    };
    if !(entry.ctx as usize >= w.layout.stack_lo()
        && entry.top as usize <= w.layout.stack_top()
        && entry.ctx < entry.top)
    {
        crate::fatal::fatal(format_args!(
            "stole a malformed entry {entry:?} from rank {victim}: ranks disagree about the arena layout"
        ));
    }
    let len = (entry.top - entry.ctx) as usize;
    let t3 = tsc::now();
    // The frames go straight to their address in our (empty) stack region,
    // through our segment's own mapping of it (the same pages as the arena
    // alias; on ibv, memory GASNet has registered, so no bounce buffer). The
    // victim cannot reuse them before we unlock: its pop of this entry would
    // need the lock.
    let dst = remote(g, me, entry.ctx as usize);
    // SAFETY: dst is our own segment's mapping of [ctx, top), which lies in
    // our stack region; the region is empty (we are in the scheduler, on its
    // own stack), so nothing else uses that memory.
    unsafe { g.get_raw(dst as *mut u8, victim, remote(g, victim, entry.ctx as usize), len) };
    let t4 = tsc::now();
    w.lock.unlock(victim, lock);
    let t5 = tsc::now();
    c.update(|c| {
        c.steal_empty_check_cycles += t1 - t0;
        c.steal_lock_cycles += t2 - t1;
        c.steal_claim_cycles += t3 - t2;
        c.steal_transfer_cycles += t4 - t3;
        c.steal_unlock_cycles += t5 - t4;
        c.steals_succeeded += 1;
        c.frame_bytes_stolen += len as u64;
    });
    Some(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn victims_are_never_self_and_cover_every_other_rank() {
        for ranks in [2u32, 3, 7] {
            for me in 0..ranks {
                let rng = VictimRng::new(42, me);
                let mut seen = vec![0u32; ranks as usize];
                for _ in 0..10_000 {
                    let v = rng.pick(me, ranks);
                    assert_ne!(v, me);
                    seen[v as usize] += 1;
                }
                for (r, n) in seen.iter().enumerate() {
                    assert!(
                        r as u32 == me || *n > 10_000 / ranks / 2,
                        "ranks={ranks} me={me}: {seen:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn ranks_draw_different_sequences() {
        let (a, b) = (VictimRng::new(7, 0), VictimRng::new(7, 1));
        let sa: Vec<u32> = (0..32).map(|_| a.pick(5, 16)).collect();
        let sb: Vec<u32> = (0..32).map(|_| b.pick(5, 16)).collect();
        assert_ne!(sa, sb);
    }
}
