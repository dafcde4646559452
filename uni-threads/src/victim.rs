//! Victim choice: xorshift64* per rank, seeded from the rank and the run's
//! seed, so ranks do not all probe the same victims in the same order.

/// A rank's sequence of victims.
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
