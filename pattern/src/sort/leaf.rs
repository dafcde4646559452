//! Cilksort's leaf sort: `sort_leaf(x)` sorts a part below the sort
//! cut-off (2048 keys by default; see `cut`) serially.
//!
//! - **AVX-512** (x86-64 with AVX-512F, detected at run time; parts of 64
//!   keys or more): each block of 64 keys is sorted in eight registers
//!   ([`super::network::sort64`]; the last block padded with `u64::MAX`),
//!   then the runs are merged pairwise ([`super::merge::merge_serial`]),
//!   between the part and a scratch buffer of this thread's, until one
//!   run is left. (Not cilksort's temporary array: beyond shared memory a
//!   write checkout of it would send the scratch's bytes home.)
//! - **Otherwise** `slice::sort_unstable`.
//!
//! Why not `sort_unstable` everywhere: on random keys its branches are
//! mispredicted often; measured here on 1024-key parts it costs ~7.5 ns
//! per key, and the merges' and networks' comparisons select without
//! branching (docs/results/2026-11-23-dev2core-cilksort-kernels/).

use std::cell::RefCell;

use super::merge::merge_serial;

thread_local! {
    /// The merge passes' scratch (grown to the longest part seen). Used
    /// only inside one `sort_leaf`, which neither spawns nor joins: the
    /// task cannot move to another thread while it holds the buffer.
    static SCRATCH: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Sorts `x`.
pub(crate) fn sort_leaf(x: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if x.len() >= 64 && std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (just detected).
        unsafe { avx512::sort_blocks(x) };
        return SCRATCH.with_borrow_mut(|scratch| {
            if scratch.len() < x.len() {
                scratch.resize(x.len(), 0);
            }
            merge_runs(x, &mut scratch[..x.len()], 64)
        });
    }
    x.sort_unstable()
}

/// Merges the sorted runs of `run` keys in `x` (the last may be shorter)
/// pairwise, back and forth between `x` and `scratch` (as long), until `x`
/// is one sorted run. (For the AVX-512 path, which sorts the runs.)
#[cfg(target_arch = "x86_64")]
fn merge_runs(x: &mut [u64], scratch: &mut [u64], mut run: usize) {
    let mut in_x = true;
    while run < x.len() {
        if in_x {
            merge_pass(x, scratch, run);
        } else {
            merge_pass(scratch, x, run);
        }
        in_x = !in_x;
        run *= 2;
    }
    if !in_x {
        x.copy_from_slice(scratch);
    }
}

/// One pass: each pair of runs of `src` merged into the same place in `dst`.
#[cfg(target_arch = "x86_64")]
fn merge_pass(src: &[u64], dst: &mut [u64], run: usize) {
    for (s, d) in src.chunks(2 * run).zip(dst.chunks_mut(2 * run)) {
        let (a, b) = s.split_at(run.min(s.len()));
        merge_serial(a, b, d);
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::super::network::{lanes, load_padded, sort64};

    /// Sorts each block of 64 keys of `x` (the last one may be shorter).
    ///
    /// # Safety
    /// The CPU has AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn sort_blocks(x: &mut [u64]) {
        for block in x.chunks_mut(64) {
            let n = block.len();
            // SAFETY (loads): AVX-512F; each offset is at most n.
            let mut r = std::array::from_fn(|k| load_padded(block, (8 * k).min(n)).0);
            // The padding keys (u64::MAX) sort last, or tie with real keys:
            // the first n keys sorted are the block's.
            sort64(&mut r);
            for (k, v) in r.iter().enumerate() {
                let (at, m) = ((8 * k).min(n), n.saturating_sub(8 * k).min(8));
                // SAFETY: the masked store writes only the `m` keys of the
                // block from `at`, which load_padded read there.
                _mm512_mask_storeu_epi64(block.as_mut_ptr().add(at).cast(), lanes(m), *v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sort_leaf;

    /// Every length up to 2048 near the block edges and random ones, keys
    /// from narrow ranges (many ties) to full u64 with the extremes.
    #[test]
    fn sorts_every_length() {
        let mut seed = 5u64;
        let mut next = |m: u64| {
            seed = uni_threads::testing::splitmix(seed, 3);
            seed % m
        };
        let mut lengths: Vec<usize> = (0..200).collect();
        lengths.extend([255, 256, 257, 511, 512, 513, 1000, 1023, 1024, 1025, 2047, 2048]);
        lengths.extend((0..30).map(|_| next(2049) as usize));
        for n in lengths {
            for range in [u64::MAX, 3, 1000] {
                let mut x: Vec<u64> = (0..n).map(|_| next(range)).collect();
                if n > 2 {
                    x[0] = u64::MAX;
                    x[n - 1] = 0;
                }
                let mut want = x.clone();
                want.sort_unstable();
                sort_leaf(&mut x);
                assert_eq!(x, want, "n={n} range={range}");
            }
        }
    }
}
