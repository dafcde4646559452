//! Victim choice: the `rand` crate's small fast generator per rank,
//! seeded from the run's seed and the rank, so ranks do not all probe the
//! same victims in the same order (and `UAT_SEED` repeats a job's choices).

use std::cell::RefCell;

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

/// A rank's sequence of victims (worker thread only).
pub struct VictimRng(RefCell<SmallRng>);

impl VictimRng {
    pub fn new(seed: u64, rank: u32) -> VictimRng {
        let mixed = seed ^ (rank as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        VictimRng(RefCell::new(SmallRng::seed_from_u64(mixed)))
    }

    /// A rank in `0..ranks` other than `me` (ranks ≥ 2), uniformly.
    pub fn pick(&self, me: u32, ranks: u32) -> u32 {
        let r = self.0.borrow_mut().random_range(0..ranks - 1);
        if r >= me {
            r + 1
        } else {
            r
        }
    }
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
