//! Cilksort's serial merge: `merge_serial(x, y, d)` merges sorted `x` and
//! `y` into `d`. Two kernels, chosen per call by the CPU's features (std
//! caches the detection: one load):
//!
//! - **AVX-512** (x86-64 with AVX-512F, detected at run time): a bitonic
//!   merge network on eight keys per register ([`super::network`]). One
//!   chain of it is bound by the network's latency (about 30 cycles per 8
//!   keys here), so several run in one loop: one from each end of the
//!   output (no search needed where they meet), and from 512 keys on, the
//!   output is first split in two by one merge-path search, each half
//!   merged from both ends (four chains).
//! - **Scalar** (everywhere else): four two-ended branch-free chains (the
//!   output split in two halves, each merged from the front and the back
//!   at once).
//!
//! Why one search and not three (four front chains, the kernel before):
//! cilksort's merge pieces are ≤ 2048 keys of arrays far larger than the
//! caches, and each probe of a search there is a cache miss that the
//! next probe waits for; with one search, 2^24 keys sort ~10% faster.
//! Measured on this machine's AMD EPYC: docs/results/2026-11-23-dev2core-cilksort-kernels/.

/// Merges sorted `x` and `y` into `d` (`x.len() + y.len()` long).
pub(crate) fn merge_serial(x: &[u64], y: &[u64], d: &mut [u64]) {
    assert_eq!(x.len() + y.len(), d.len(), "merge: the output's length");
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (just detected).
        return unsafe { avx512::merge(x, y, d) };
    }
    merge_scalar(x, y, d)
}

/// The scalar kernel (also what the AVX-512 kernel falls back to).
pub(crate) fn merge_scalar(x: &[u64], y: &[u64], d: &mut [u64]) {
    let h = d.len() / 2;
    let lo = split(x, y, h);
    let (x1, x2) = x.split_at(lo);
    let (y1, y2) = y.split_at(h - lo);
    let both = (h / 2).min((d.len() - h) / 2);
    let (d1, d2) = d.split_at_mut(h);
    let (mut p, mut q) = (TwoEnded::new(x1, y1, d1), TwoEnded::new(x2, y2, d2));
    for k in 0..both {
        p.step(k);
        q.step(k);
    }
    p.finish(both);
    q.finish(both);
}

/// Where the first `h` keys of the merge end: `i` such that `x[..i]` and
/// `y[..h - i]` are they (a binary search along the merge path; ties go to
/// `x`).
fn split(x: &[u64], y: &[u64], h: usize) -> usize {
    let (mut lo, mut hi) = (h.saturating_sub(y.len()), h.min(x.len()));
    while lo < hi {
        let i = lo + (hi - lo) / 2;
        if x[i] <= y[h - i - 1] {
            lo = i + 1;
        } else {
            hi = i;
        }
    }
    lo
}

/// One two-ended serial merge: the front takes the smaller head, the back
/// the larger tail. An exhausted side reads as `u64::MAX` at the front and
/// 0 at the back: it can then only be chosen against an equal key, and
/// writes that key. Branch-free (the comparison selects, it does not jump;
/// a branch on random keys is mispredicted half the time).
struct TwoEnded<'a> {
    x: &'a [u64],
    y: &'a [u64],
    d: &'a mut [u64],
    /// Front heads.
    i: usize,
    j: usize,
    /// Back ends (exclusive).
    ie: usize,
    je: usize,
}

impl<'a> TwoEnded<'a> {
    fn new(x: &'a [u64], y: &'a [u64], d: &'a mut [u64]) -> Self {
        debug_assert_eq!(x.len() + y.len(), d.len());
        let (ie, je) = (x.len(), y.len());
        TwoEnded {
            x,
            y,
            d,
            i: 0,
            j: 0,
            ie,
            je,
        }
    }

    /// Steps the front and the back (step `k` of `d.len() / 2`).
    #[inline(always)]
    fn step(&mut self, k: usize) {
        let (a, b) = self.heads();
        let front_x = a <= b; // ties: x first
        self.d[k] = if front_x { a } else { b };
        self.i += front_x as usize;
        self.j += !front_x as usize;
        let tail = |s: &[u64], e: usize| e.checked_sub(1).map_or(0, |t| s[t]);
        let (a, b) = (tail(self.x, self.ie), tail(self.y, self.je));
        let back_y = b >= a; // ties: y last
        let n = self.d.len();
        self.d[n - 1 - k] = if back_y { b } else { a };
        // Saturating: a phantom 0 chosen at an exhausted end stays there.
        self.je = self.je.saturating_sub(back_y as usize);
        self.ie = self.ie.saturating_sub(!back_y as usize);
    }

    #[inline(always)]
    fn heads(&self) -> (u64, u64) {
        let x = self.x.get(self.i).copied().unwrap_or(u64::MAX);
        (x, self.y.get(self.j).copied().unwrap_or(u64::MAX))
    }

    /// Runs steps `from..` to the end.
    fn finish(mut self, from: usize) {
        let n = self.d.len();
        for k in from..n / 2 {
            self.step(k);
        }
        if n % 2 == 1 {
            let (a, b) = self.heads();
            self.d[n / 2] = a.min(b);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    //! The bitonic merge network on `__m512i` (eight u64 keys).
    //!
    //! A merge keeps one register of carry (sorted). Each step merges it
    //! with the next block of eight from the input whose next key is
    //! smaller: the network yields the eight smallest of the sixteen, which
    //! are the next eight of the output (every key still in either input is
    //! at least the smaller head, hence at least all of them), and the eight
    //! largest, the new carry.
    //!
    //! Each input reads as followed by endless `u64::MAX` keys (a block past
    //! its end is padded with them by a masked load). The merge of the
    //! padded inputs begins with the merge of the real ones — a padding key
    //! sorts after every real key or ties with it — so the chain stops when
    //! the output is full, and never needs a scalar tail.
    //!
    //! A chain from the back is the mirror image: it merges the 8 largest
    //! out of the carry, loads from the input whose last key is larger,
    //! and reads an exhausted input as preceded by endless zeros. Chains
    //! may write less than the whole merge (a front chain its first keys,
    //! a back chain its last), so a front and a back chain over the same
    //! inputs meet in the middle of one output. For plain keys any split
    //! of the output is exact: the first `m` keys of a merge, as a multiset,
    //! are determined whatever the order ties are taken in.

    use std::arch::x86_64::*;

    use super::super::network::{lanes, load_padded, merge_registers};
    use super::split;

    /// The upper `n` lanes (at most 8).
    #[inline(always)]
    fn upper_lanes(n: usize) -> __mmask8 {
        !lanes(8 - n)
    }

    /// Lane indices `0 + shift, 1 + shift, ...` (for moving lanes down by
    /// `shift`, or up by a negative one).
    ///
    /// # Safety
    /// The CPU has AVX-512F.
    #[inline(always)]
    unsafe fn shifted_iota(shift: i64) -> __m512i {
        _mm512_add_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi64(shift))
    }

    /// The block of `s` that ends at `end` (`end <= s.len()`), its keys in
    /// the upper lanes and 0 below, and how many of its keys are real.
    ///
    /// # Safety
    /// The CPU has AVX-512F, and `end <= s.len()`.
    #[inline(always)]
    unsafe fn load_padded_back(s: &[u64], end: usize) -> (__m512i, usize) {
        debug_assert!(end <= s.len());
        let n = end.min(8);
        // SAFETY: `end - n..end` lies in the slice, and the masked load
        // touches only its `n` lanes.
        let v = _mm512_maskz_loadu_epi64(lanes(n), s.as_ptr().add(end - n).cast());
        let up = _mm512_maskz_permutexvar_epi64(upper_lanes(n), shifted_iota(n as i64 - 8), v);
        (up, n)
    }

    /// One merge in progress from one end of the output. From the front
    /// (`BACK == false`): `x[i..]` and `y[j..]` remain besides `next` (the
    /// block taken, not yet merged) and `carry`, `k` keys of `d` are
    /// written from its start, and every key left anywhere is at least all
    /// of them. From the back, mirrored: `x[..i]` and `y[..j]` remain, `k`
    /// keys are written at the end of `d`, every key left is at most all of
    /// them, and an exhausted side reads as preceded by endless zeros.
    ///
    /// `d` may be shorter than `x.len() + y.len()`: a front chain then
    /// writes the merge's first `d.len()` keys, a back chain its last — so
    /// two chains meet in the middle of one output with no search.
    struct Chain<'a, const BACK: bool> {
        x: &'a [u64],
        y: &'a [u64],
        d: &'a mut [u64],
        i: usize,
        j: usize,
        k: usize,
        next: __m512i,
        carry: __m512i,
    }

    impl<'a, const BACK: bool> Chain<'a, BACK> {
        /// # Safety
        /// The CPU has AVX-512F.
        #[inline(always)]
        unsafe fn new(x: &'a [u64], y: &'a [u64], d: &'a mut [u64]) -> Self {
            assert!(d.len() <= x.len() + y.len());
            // SAFETY: AVX-512F (our contract); each length bounds itself.
            let (next, i, carry, j) = if BACK {
                let (next, n) = load_padded_back(x, x.len());
                let (carry, m) = load_padded_back(y, y.len());
                (next, x.len() - n, carry, y.len() - m)
            } else {
                let (next, n) = load_padded(x, 0);
                let (carry, m) = load_padded(y, 0);
                (next, n, carry, m)
            };
            Chain {
                x,
                y,
                d,
                i,
                j,
                k: 0,
                next,
                carry,
            }
        }

        /// Steps this chain may take unchecked: while 8 keys remain on both
        /// sides and 8 places in the output, a step loads and stores in
        /// bounds.
        #[inline(always)]
        fn safe_steps(&self) -> usize {
            let (rx, ry) = if BACK {
                (self.i, self.j)
            } else {
                (self.x.len() - self.i, self.y.len() - self.j)
            };
            rx.min(ry).min(self.d.len() - self.k) / 8
        }

        /// One step: merge `next` into `carry`, write the 8 smallest (from
        /// the back: largest), load the next block from the side whose
        /// next key is smaller (from the back: larger).
        ///
        /// # Safety
        /// The CPU has AVX-512F, and [`Chain::safe_steps`] is positive.
        #[inline(always)]
        unsafe fn step(&mut self) {
            let (low, high) = merge_registers(self.next, self.carry);
            debug_assert!(self.safe_steps() > 0);
            let (x, y) = (self.x.as_ptr(), self.y.as_ptr());
            // SAFETY (every access below): safe_steps > 0, so 8 places
            // remain in d and 8 keys on each side.
            if BACK {
                let at = self.d.len() - self.k - 8;
                _mm512_storeu_si512(self.d.as_mut_ptr().add(at).cast(), high);
                self.carry = low;
                let (a, b) = (*x.add(self.i - 1), *y.add(self.j - 1));
                let from_y = b >= a;
                let at = if from_y { y.add(self.j - 8) } else { x.add(self.i - 8) };
                self.next = _mm512_loadu_si512(at.cast());
                self.i -= 8 * !from_y as usize;
                self.j -= 8 * from_y as usize;
            } else {
                _mm512_storeu_si512(self.d.as_mut_ptr().add(self.k).cast(), low);
                self.carry = high;
                let (a, b) = (*x.add(self.i), *y.add(self.j));
                let from_x = a <= b;
                let at = if from_x { x.add(self.i) } else { y.add(self.j) };
                self.next = _mm512_loadu_si512(at.cast());
                self.i += 8 * from_x as usize;
                self.j += 8 * !from_x as usize;
            }
            self.k += 8;
        }

        /// One step near an end (bounds checked, blocks padded); false
        /// when this chain's output is full.
        ///
        /// # Safety
        /// The CPU has AVX-512F.
        #[inline(always)]
        unsafe fn step_checked(&mut self) -> bool {
            let (low, high) = merge_registers(self.next, self.carry);
            let n = (self.d.len() - self.k).min(8);
            // SAFETY (stores): the masked store writes `n` lanes at a range
            // of d's `n` free places; (loads) i and j only ever move by the
            // real keys a load returned, so they stay within their slices.
            if BACK {
                let at = self.d.len() - self.k - n;
                let down = _mm512_permutexvar_epi64(shifted_iota(8 - n as i64), high);
                _mm512_mask_storeu_epi64(self.d.as_mut_ptr().add(at).cast(), lanes(n), down);
                self.carry = low;
            } else {
                _mm512_mask_storeu_epi64(self.d.as_mut_ptr().add(self.k).cast(), lanes(n), low);
                self.carry = high;
            }
            self.k += n;
            if self.k == self.d.len() {
                return false;
            }
            if BACK {
                let a = self.i.checked_sub(1).map_or(0, |t| self.x[t]);
                let b = self.j.checked_sub(1).map_or(0, |t| self.y[t]);
                if b >= a {
                    let (v, m) = load_padded_back(self.y, self.j);
                    (self.next, self.j) = (v, self.j - m);
                } else {
                    let (v, m) = load_padded_back(self.x, self.i);
                    (self.next, self.i) = (v, self.i - m);
                }
            } else {
                let a = self.x.get(self.i).copied().unwrap_or(u64::MAX);
                let b = self.y.get(self.j).copied().unwrap_or(u64::MAX);
                if a <= b {
                    let (v, m) = load_padded(self.x, self.i);
                    (self.next, self.i) = (v, self.i + m);
                } else {
                    let (v, m) = load_padded(self.y, self.j);
                    (self.next, self.j) = (v, self.j + m);
                }
            }
            true
        }

        /// Runs the chain to the end of its output.
        ///
        /// # Safety
        /// The CPU has AVX-512F.
        #[target_feature(enable = "avx512f")]
        unsafe fn finish(mut self) {
            while self.safe_steps() > 0 {
                // SAFETY: AVX-512F (the caller's contract); a safe step.
                self.step();
            }
            // SAFETY: AVX-512F.
            while self.step_checked() {}
        }
    }

    /// From this many output keys, the AVX-512 merge splits the output
    /// in two first (four chains instead of two; measured: below it the
    /// search costs more than the two chains gain).
    const SEARCH_FROM: usize = 512;

    /// The AVX-512 merge: two chains from the ends of the output, or four
    /// from the ends of its two halves (one merge-path search).
    ///
    /// # Safety
    /// The CPU has AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn merge(x: &[u64], y: &[u64], d: &mut [u64]) {
        let n = d.len();
        if n < SEARCH_FROM {
            let (d1, d2) = d.split_at_mut(n / 2);
            // SAFETY (all chains): AVX-512F (our contract).
            return interleave([Chain::new(x, y, d1)], [Chain::new(x, y, d2)]);
        }
        let h = n / 2;
        let at_x = split(x, y, h);
        let ((x1, x2), (y1, y2)) = (x.split_at(at_x), y.split_at(h - at_x));
        let (d1, d2) = d.split_at_mut(h);
        let (d11, d12) = d1.split_at_mut(h / 2);
        let (d21, d22) = d2.split_at_mut((n - h) / 2);
        interleave(
            [Chain::new(x1, y1, d11), Chain::new(x2, y2, d21)],
            [Chain::new(x1, y1, d12), Chain::new(x2, y2, d22)],
        )
    }

    /// Runs the chains to the ends of their outputs, a step of each in
    /// turn while all can step unchecked (their latencies overlap), then
    /// each alone.
    ///
    /// # Safety
    /// The CPU has AVX-512F.
    #[inline(always)]
    unsafe fn interleave<const N: usize>(mut fronts: [Chain<'_, false>; N], mut backs: [Chain<'_, true>; N]) {
        loop {
            let steps = fronts
                .iter()
                .map(Chain::safe_steps)
                .chain(backs.iter().map(Chain::safe_steps))
                .min()
                .unwrap_or(0);
            if steps == 0 {
                break;
            }
            for _ in 0..steps {
                for (f, b) in fronts.iter_mut().zip(&mut backs) {
                    // SAFETY: AVX-512F; each chain has at least `steps`
                    // safe steps left.
                    f.step();
                    b.step();
                }
            }
        }
        for f in fronts {
            // SAFETY: AVX-512F (our contract).
            f.finish();
        }
        for b in backs {
            // SAFETY: AVX-512F (our contract).
            b.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{merge_scalar, merge_serial};

    /// Random sorted pairs of every small shape, keys from narrow ranges
    /// (many ties) to full u64 with the extremes: both kernels must agree
    /// with sorting the concatenation.
    #[test]
    fn both_kernels_merge_every_shape() {
        let mut seed = 1u64;
        let mut next = |m: u64| {
            seed = uni_threads::testing::splitmix(seed, 7);
            seed % m
        };
        for round in 0..4000 {
            // Mostly small shapes; some past SEARCH_FROM (four chains).
            let big = match round % 20 {
                0 => 1500,
                1 | 11 => 300,
                _ => 40,
            };
            let (lx, ly) = (next(big) as usize, next(big) as usize);
            let m = if next(3) == 0 { u64::MAX } else { 1 + next(50) };
            let mut x: Vec<u64> = (0..lx).map(|_| next(m)).collect();
            let mut y: Vec<u64> = (0..ly).map(|_| next(m)).collect();
            // Keys at the ends of u64 too (the exhausted-side readings).
            if next(4) == 0 {
                x.push(u64::MAX);
                y.insert(0, 0);
            }
            x.sort_unstable();
            y.sort_unstable();
            let mut want = [x.clone(), y.clone()].concat();
            want.sort_unstable();
            for kernel in [merge_scalar, merge_serial] {
                let mut d = vec![7u64; x.len() + y.len()];
                kernel(&x, &y, &mut d);
                assert_eq!(d, want, "x={x:?} y={y:?}");
            }
        }
    }

    /// Long merges, balanced and lopsided (one side's blocks run out long
    /// before the other's).
    #[test]
    fn long_and_lopsided_merges() {
        for (lx, ly, seed) in [(5000, 5000, 1), (20000, 17, 2), (9, 30000, 3), (4096, 4095, 4)] {
            let mut x: Vec<u64> = (0..lx).map(|i| uni_threads::testing::splitmix(seed, i)).collect();
            let mut y: Vec<u64> = (0..ly)
                .map(|i| uni_threads::testing::splitmix(seed + 10, i) >> (seed * 8))
                .collect();
            x.sort_unstable();
            y.sort_unstable();
            let mut want = [x.clone(), y.clone()].concat();
            want.sort_unstable();
            let mut d = vec![0u64; want.len()];
            merge_serial(&x, &y, &mut d);
            assert_eq!(d, want);
        }
    }
}
