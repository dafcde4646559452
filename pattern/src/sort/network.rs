//! Sorting networks on AVX-512 registers (`__m512i`, eight u64 keys each),
//! and the padded block load: the pieces cilksort's merge
//! ([`super::merge`]) and leaf sort ([`super::leaf`]) are built from. A run of `8 × N` keys lives in `N`
//! registers, in register order and then lane order.
//!
//! Every function here is `#[inline(always)]` and needs AVX-512F: callers
//! are `#[target_feature(enable = "avx512f")]` functions, into which these
//! inline (a call compiled without the feature would not inline the
//! intrinsics).

use std::arch::x86_64::*;

/// The lanes below `n` (at most 8).
#[inline(always)]
pub(crate) fn lanes(n: usize) -> __mmask8 {
    ((1u32 << n) - 1) as __mmask8
}

/// The next block of `s` from `at` (`at <= s.len()`), padded with
/// `u64::MAX`, and how many of its keys are real.
///
/// # Safety
/// The CPU has AVX-512F, and `at <= s.len()`.
#[inline(always)]
pub(crate) unsafe fn load_padded(s: &[u64], at: usize) -> (__m512i, usize) {
    debug_assert!(at <= s.len());
    let n = (s.len() - at).min(8);
    // SAFETY: `at <= s.len()`, so the pointer is in the slice or one past
    // its end, and the masked load touches only its first `n` (in-bounds)
    // lanes.
    let v = _mm512_mask_loadu_epi64(_mm512_set1_epi64(-1), lanes(n), s.as_ptr().add(at).cast());
    (v, n)
}

/// Sorts the bitonic sequence in `v` ascending: compare-exchange at
/// distances 4, 2, 1 (each: swap partners, min, max, keep the min in the
/// lower lane of each pair).
///
/// # Safety
/// The CPU has AVX-512F.
#[inline(always)]
pub(crate) unsafe fn sort_bitonic(v: __m512i) -> __m512i {
    let p = _mm512_shuffle_i64x2::<0b01_00_11_10>(v, v);
    let v = _mm512_mask_max_epu64(_mm512_min_epu64(v, p), 0xF0, v, p);
    let p = _mm512_permutex_epi64::<0b01_00_11_10>(v);
    let v = _mm512_mask_max_epu64(_mm512_min_epu64(v, p), 0xCC, v, p);
    let p = _mm512_permutex_epi64::<0b10_11_00_01>(v);
    _mm512_mask_max_epu64(_mm512_min_epu64(v, p), 0xAA, v, p)
}

/// `v`'s lanes in reverse order.
///
/// # Safety
/// The CPU has AVX-512F.
#[inline(always)]
unsafe fn reverse(v: __m512i) -> __m512i {
    _mm512_permutexvar_epi64(_mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), v)
}

/// (the 8 smallest, the 8 largest) of two sorted registers, each sorted:
/// `a` with `b` reversed is bitonic; lane-wise min and max split it into
/// two bitonic halves.
///
/// # Safety
/// The CPU has AVX-512F.
#[inline(always)]
pub(crate) unsafe fn merge_registers(a: __m512i, b: __m512i) -> (__m512i, __m512i) {
    let b = reverse(b);
    (
        sort_bitonic(_mm512_min_epu64(a, b)),
        sort_bitonic(_mm512_max_epu64(a, b)),
    )
}

/// Sorts the bitonic sequence held in `r`: compare-exchange whole
/// registers at distances `N / 2, N / 4, ..., 1`, then lanes within each.
///
/// # Safety
/// The CPU has AVX-512F; `N` is a power of two.
#[inline(always)]
unsafe fn sort_bitonic_run<const N: usize>(r: &mut [__m512i; N]) {
    let mut half = N / 2;
    while half > 0 {
        for i in (0..N).filter(|i| i & half == 0) {
            let (a, b) = (r[i], r[i + half]);
            r[i] = _mm512_min_epu64(a, b);
            r[i + half] = _mm512_max_epu64(a, b);
        }
        half /= 2;
    }
    for v in r.iter_mut() {
        *v = sort_bitonic(*v);
    }
}

/// Merges the sorted runs in `r`'s two halves into one sorted run: the
/// first with the second reversed is bitonic.
///
/// # Safety
/// The CPU has AVX-512F; `N` is a power of two, at least 2.
#[inline(always)]
unsafe fn merge_halves<const N: usize>(r: &mut [__m512i; N]) {
    r[N / 2..].reverse();
    for v in &mut r[N / 2..] {
        *v = reverse(*v);
    }
    sort_bitonic_run(r);
}

/// Transposes the 8 × 8 matrix of keys in `r` (row `i` in `r[i]`).
///
/// # Safety
/// The CPU has AVX-512F.
#[inline(always)]
unsafe fn transpose(r: &mut [__m512i; 8]) {
    // Pairs of rows, interleaved per 128-bit lane: t[2i] holds the even
    // columns of rows 2i and 2i + 1, t[2i + 1] the odd ones.
    let mut t = [_mm512_setzero_si512(); 8];
    for i in 0..4 {
        t[2 * i] = _mm512_unpacklo_epi64(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi64(r[2 * i], r[2 * i + 1]);
    }
    // Then a 4 × 4 transpose of 128-bit lanes among the even t's and
    // among the odd ones.
    for odd in 0..2 {
        let (a, b, c, d) = (t[odd], t[2 + odd], t[4 + odd], t[6 + odd]);
        let ab_lo = _mm512_shuffle_i64x2::<0b01_00_01_00>(a, b);
        let ab_hi = _mm512_shuffle_i64x2::<0b11_10_11_10>(a, b);
        let cd_lo = _mm512_shuffle_i64x2::<0b01_00_01_00>(c, d);
        let cd_hi = _mm512_shuffle_i64x2::<0b11_10_11_10>(c, d);
        r[odd] = _mm512_shuffle_i64x2::<0b10_00_10_00>(ab_lo, cd_lo);
        r[2 + odd] = _mm512_shuffle_i64x2::<0b11_01_11_01>(ab_lo, cd_lo);
        r[4 + odd] = _mm512_shuffle_i64x2::<0b10_00_10_00>(ab_hi, cd_hi);
        r[6 + odd] = _mm512_shuffle_i64x2::<0b11_01_11_01>(ab_hi, cd_hi);
    }
}

/// Sorts the 64 keys in `r`: an optimal 8-key network (19 comparators,
/// Knuth) down the columns, a transpose (each register is then a sorted
/// run of 8), and bitonic merges of runs of 8 → 16 → 32 → 64.
///
/// # Safety
/// The CPU has AVX-512F.
#[inline(always)]
pub(crate) unsafe fn sort64(r: &mut [__m512i; 8]) {
    const NETWORK: [(usize, usize); 19] = [
        (0, 2),
        (1, 3),
        (4, 6),
        (5, 7),
        (0, 4),
        (1, 5),
        (2, 6),
        (3, 7),
        (0, 1),
        (2, 3),
        (4, 5),
        (6, 7),
        (2, 4),
        (3, 5),
        (1, 4),
        (3, 6),
        (1, 2),
        (3, 4),
        (5, 6),
    ];
    for (i, j) in NETWORK {
        let (a, b) = (r[i], r[j]);
        r[i] = _mm512_min_epu64(a, b);
        r[j] = _mm512_max_epu64(a, b);
    }
    transpose(r);
    for pair in r.chunks_exact_mut(2) {
        let (lo, hi) = merge_registers(pair[0], pair[1]);
        (pair[0], pair[1]) = (lo, hi);
    }
    for quad in r.chunks_exact_mut(4) {
        merge_halves::<4>(quad.try_into().expect("4 registers"));
    }
    merge_halves::<8>(r);
}
