//! [`DirtyBytes`]: the bytes of one cached block written since its last
//! write-back, one bit per byte, and the span they lie in.
//!
//! Bytes, not blocks: two ranks writing different parts of one block write
//! back only their own bytes, so neither overwrites the other's. Most
//! writes are whole ranges (a write checkout of a row block, a loop's
//! leaf): those stay *one run*, known without a scan; marking a range is a
//! fill of whole words; a scan, when needed, covers only the span.

/// Bits `[lo, hi)` of a u64 (hi ≤ 64).
pub(crate) fn mask(lo: usize, hi: usize) -> u64 {
    if hi <= lo {
        return 0;
    }
    let upper = if hi >= 64 { u64::MAX } else { (1u64 << hi) - 1 };
    upper & !((1u64 << lo) - 1)
}

/// The dirty bytes of one block (never empty while a block holds it).
#[derive(Clone)]
pub(crate) struct DirtyBytes {
    /// One bit per byte of the block.
    bits: Box<[u64]>,
    /// Every set bit lies in `[lo, hi)`.
    lo: usize,
    hi: usize,
    /// Every bit of `[lo, hi)` is set: the bytes are the one run `[lo, hi)`.
    one_run: bool,
}

impl DirtyBytes {
    /// Bytes `[from, to)` (from < to) of a block of `len` bytes (a
    /// multiple of 64).
    pub(crate) fn new(len: usize, from: usize, to: usize) -> DirtyBytes {
        let mut d = DirtyBytes {
            bits: vec![0u64; len / 64].into_boxed_slice(),
            lo: from,
            hi: to,
            one_run: true,
        };
        set_bits(&mut d.bits, from, to);
        d
    }

    /// Marks `[from, to)` (from < to) dirty too.
    pub(crate) fn mark(&mut self, from: usize, to: usize) {
        set_bits(&mut self.bits, from, to);
        if self.hi <= self.lo {
            // Was empty (every bit clear): this range alone.
            (self.lo, self.hi, self.one_run) = (from, to, true);
            return;
        }
        // Still one run when the new range touches or overlaps it.
        self.one_run &= from <= self.hi && self.lo <= to;
        self.lo = self.lo.min(from);
        self.hi = self.hi.max(to);
    }

    /// Clears `[from, to)`; false when nothing stays dirty (an empty
    /// span: `runs` yields nothing).
    pub(crate) fn clear(&mut self, from: usize, to: usize) -> bool {
        if self.hi <= self.lo {
            return false;
        }
        if to <= self.lo || self.hi <= from {
            return true;
        }
        clear_bits(&mut self.bits, from, to);
        if from <= self.lo && self.hi <= to {
            self.one_run = false;
            self.hi = self.lo;
            return false;
        }
        if self.one_run && (from <= self.lo || self.hi <= to) {
            // An end cut off: still one run.
            if from <= self.lo {
                self.lo = to;
            } else {
                self.hi = from;
            }
            return true;
        }
        self.one_run = false;
        let nonempty = self.runs().next().is_some();
        if !nonempty {
            self.hi = self.lo;
        }
        nonempty
    }

    /// The dirty runs `[from, to)`, in order, maximal.
    pub(crate) fn runs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let whole = self.one_run.then_some((self.lo, self.hi));
        let scan = (!self.one_run).then(|| runs(&self.bits, self.lo / 64, self.hi.div_ceil(64)));
        whole.into_iter().chain(scan.into_iter().flatten())
    }

    /// Splits off the dirty bytes inside `held` (ranges in the block):
    /// `self` keeps the rest (perhaps none), the result (None: nothing)
    /// those inside.
    pub(crate) fn split_off(&mut self, held: &[(usize, usize)]) -> Option<DirtyBytes> {
        let mut inside = self.clone();
        for &(from, to) in held {
            self.clear(from, to);
        }
        inside.one_run = false;
        for (word, kept) in inside.bits.iter_mut().zip(self.bits.iter()) {
            *word &= !kept;
        }
        let nonempty = inside.runs().next().is_some();
        nonempty.then_some(inside)
    }
}

/// Sets bits `[from, to)`.
fn set_bits(bits: &mut [u64], from: usize, to: usize) {
    for_bit_words(bits, from, to, |x, mask| *x |= mask, |whole| whole.fill(u64::MAX));
}

/// Clears bits `[from, to)`.
fn clear_bits(bits: &mut [u64], from: usize, to: usize) {
    for_bit_words(bits, from, to, |x, mask| *x &= !mask, |whole| whole.fill(0));
}

/// `part(word, mask)` for the partly covered words of the bits
/// `[from, to)` (the first and the last), `whole(words)` once for the
/// words they cover whole: one fill, not a loop over words.
fn for_bit_words(
    bits: &mut [u64],
    from: usize,
    to: usize,
    mut part: impl FnMut(&mut u64, u64),
    whole: impl FnOnce(&mut [u64]),
) {
    if from >= to {
        return;
    }
    let (w0, w1) = (from / 64, (to - 1) / 64);
    if w0 == w1 {
        part(&mut bits[w0], mask(from % 64, (to - 1) % 64 + 1));
        return;
    }
    // Whole words: [first, last).
    let mut first = w0;
    if !from.is_multiple_of(64) {
        part(&mut bits[w0], mask(from % 64, 64));
        first += 1;
    }
    let mut last = w1 + 1;
    if !to.is_multiple_of(64) {
        part(&mut bits[w1], mask(0, to % 64));
        last -= 1;
    }
    whole(&mut bits[first..last]);
}

/// The runs `[from, to)` of set bits in words `[w0, w1)`, a word at a time
/// (a full word extends the run at once).
fn runs(bits: &[u64], w0: usize, w1: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut push = |from: usize, to: usize| match out.last_mut() {
        Some(last) if last.1 == from => last.1 = to,
        _ => out.push((from, to)),
    };
    for (i, &word) in bits.iter().enumerate().take(w1).skip(w0) {
        if word == u64::MAX {
            push(i * 64, i * 64 + 64);
            continue;
        }
        let mut x = word;
        while x != 0 {
            let lo = x.trailing_zeros() as usize;
            let n = (x >> lo).trailing_ones() as usize;
            x &= !mask(lo, lo + n);
            push(i * 64 + lo, i * 64 + lo + n);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model: which of 256 bytes are dirty, as runs.
    fn model_runs(dirty: &[bool]) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = Vec::new();
        for (i, &d) in dirty.iter().enumerate() {
            if d {
                match out.last_mut() {
                    Some(last) if last.1 == i => last.1 = i + 1,
                    _ => out.push((i, i + 1)),
                }
            }
        }
        out
    }

    #[test]
    fn every_range_marks_and_clears_exactly_its_bytes() {
        for from in 0..256 {
            for to in from + 1..=256 {
                let d = DirtyBytes::new(256, from, to);
                assert_eq!(d.runs().collect::<Vec<_>>(), vec![(from, to)]);
                let mut bits = vec![u64::MAX; 4];
                clear_bits(&mut bits, from, to);
                let clear: Vec<usize> = (0..256).filter(|&i| bits[i / 64] >> (i % 64) & 1 == 0).collect();
                assert_eq!(clear, (from..to).collect::<Vec<_>>(), "clear [{from}, {to})");
                assert_eq!(runs(&d.bits, 0, 4), vec![(from, to)], "the bits agree with the span");
            }
        }
    }

    #[test]
    fn marks_and_clears_agree_with_a_byte_model() {
        // Pseudo-random sequences of marks and clears against a bool per
        // byte: the runs, one_run's shortcut included, are the model's.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        for _ in 0..2000 {
            let (a, b) = (next(256), next(256));
            let (from, to) = (a.min(b), a.max(b) + 1);
            let mut d = DirtyBytes::new(256, from, to);
            let mut model = vec![false; 256];
            model[from..to].fill(true);
            // (Marks and clears go on after it empties: a cleared one
            // takes marks again.)
            for _ in 0..8 {
                let (a, b) = (next(256), next(256));
                let (from, to) = (a.min(b), a.max(b) + 1);
                if next(2) == 0 {
                    d.mark(from, to);
                    model[from..to].fill(true);
                } else {
                    let nonempty = d.clear(from, to);
                    model[from..to].fill(false);
                    assert_eq!(nonempty, model.contains(&true));
                }
                assert_eq!(d.runs().collect::<Vec<_>>(), model_runs(&model));
            }
        }
    }

    #[test]
    fn split_off_keeps_the_bytes_outside_and_returns_those_inside() {
        let mut d = DirtyBytes::new(256, 10, 200);
        let inside = d.split_off(&[(0, 20), (100, 120)]);
        assert_eq!(d.runs().collect::<Vec<_>>(), vec![(20, 100), (120, 200)]);
        assert_eq!(
            inside.expect("some inside").runs().collect::<Vec<_>>(),
            vec![(10, 20), (100, 120)]
        );
        let mut d = DirtyBytes::new(256, 10, 20);
        let inside = d.split_off(&[(0, 64), (15, 70)]);
        assert_eq!(d.runs().count(), 0, "nothing left: no runs, whatever span it had");
        assert_eq!(inside.expect("all inside").runs().collect::<Vec<_>>(), vec![(10, 20)]);
        let mut d = DirtyBytes::new(256, 10, 20);
        let inside = d.split_off(&[(100, 120)]);
        assert!(inside.is_none());
        assert_eq!(d.runs().collect::<Vec<_>>(), vec![(10, 20)]);
    }

    #[test]
    fn masks_cover_their_bits() {
        assert_eq!(mask(0, 0), 0);
        assert_eq!(mask(3, 2), 0);
        assert_eq!(mask(0, 64), u64::MAX);
        assert_eq!(mask(63, 64), 1 << 63);
        assert_eq!(mask(1, 3), 0b110);
    }
}
