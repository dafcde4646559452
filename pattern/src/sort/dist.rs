//! The distribution sort: what [`super`]'s sorts run on parts longer than
//! `2 · 32 · cut` keys (65536 keys per bucket with the default cut-off of
//! 2048, so from 131073 keys on).
//!
//! One level, over `a` with `tmp` as scratch:
//!
//! 1. **A plan**: the buckets. Primitive integers in their own order
//!    (radix): the keys' least and greatest (a parallel reduction) fix the
//!    highest bits in which keys differ; the bucket is those bits
//!    (`(key − least) >> shift`, at most 2048 buckets). Any other type or
//!    order (samples): `16 · k` keys read at spread positions, sorted, every
//!    16th of them a splitter, equal splitters merged — and when some were
//!    equal, each remaining splitter gets an equality bucket of its own
//!    (keys equal to it: nothing left to sort there, so few distinct keys
//!    cost one pass). When every sample is a copy, bit for bit, of a
//!    splitter (integers by any comparison of their values), a counting
//!    pass checks that every key is: then blocks only count and step 4
//!    fills each equality bucket with its splitter (no key moves); at the
//!    first key that is not, the level distributes as below.
//! 2. **Blocks** (at most 64, in parallel): each block of `a` is checked
//!    out in bounded chunks (twice), its keys
//!    classified (samples: a branch-free binary search over the splitters,
//!    eight keys at a time), counted and moved into bucket order in a
//!    buffer of this thread's, which is written to the same place in `tmp`; the block's
//!    bucket offsets go to a table in global memory. Where every bucket
//!    holds one key (radix keys that differ in no more bits than the bucket
//!    number has), a block only counts.
//! 3. **Offsets** (serial, `blocks × buckets` numbers): each bucket's place
//!    in `a`, and where each block's part of each bucket lies in `tmp`.
//! 4. **Buckets** (in parallel, groups of buckets of at most `32 · cut`
//!    keys): a bucket's parts are gathered from `tmp` into a buffer of this
//!    thread's, sorted there (radix: one more radix pass per 8 bits the keys
//!    still differ in, down to 256 keys, then the leaf kernel; samples: the
//!    leaf kernel, `slice::sort_unstable_by`), and written to its place in
//!    `a`. A bucket of equal keys is copied (radix: filled with its key,
//!    nothing read); a bucket longer than `4 · 32 · cut` (skewed keys) is
//!    copied to its place and sorted there by another level.
//!
//! Every checkout is within the policy's bound (buffers are filled and
//! emptied chunk by chunk), and no buffer is held across a spawn or a
//! join. A level only ever recurses on a bucket strictly smaller than its
//! input; after four levels a part is left to the merge sort.

use std::cell::Cell;
use std::hint::select_unpredictable;
use std::mem::{align_of, size_of};

use super::order::Order;
use crate::policy::{chunks, fork, mid, Policy, DEFAULT_GRAIN};
use crate::reduce::Op;
use crate::source::slice_part_end;
use crate::{GlobalSlice, Pod};

/// The most buckets of one level.
const MAX_BUCKETS: usize = 2048;
/// The most blocks of one level (each block's part of each bucket is one
/// checkout when the buckets are gathered).
const MAX_BLOCKS: usize = 64;
/// Samples per bucket.
const OVERSAMPLE: usize = 16;
/// Levels after which a part is left to the merge sort.
const MAX_DEPTH: u32 = 4;
/// Keys a local radix pass leaves to the leaf kernel (its buckets aim at
/// half as many).
const LOCAL_LEAF: usize = 512;

/// A bucket's target size for the cut-off `cut`: 32 merge leaves.
const fn target(cut: usize) -> usize {
    32 * cut
}

/// Whether parts of `n` keys go to the distribution sort (`cut`: the merge
/// sort's cut-off).
pub(super) fn applies<T>(cut: usize, n: usize) -> bool {
    size_of::<T>() > 0 && n > 2 * target(cut)
}

// ---------------------------------------------------------------------
// Buffers of this thread's.

thread_local! {
    /// Two key buffers and a bucket-number buffer, grown to the longest
    /// use. Taken out while used (so a nested use, were there one, would
    /// only allocate), put back after.
    static BUF_X: Cell<Vec<u128>> = const { Cell::new(Vec::new()) };
    static BUF_Y: Cell<Vec<u128>> = const { Cell::new(Vec::new()) };
    static BUF_IDS: Cell<Vec<u16>> = const { Cell::new(Vec::new()) };
}

/// `buf`'s first `n` `T`s (grown if shorter).
fn as_keys<T: Pod>(buf: &mut Vec<u128>, n: usize) -> &mut [T] {
    let bytes = n * size_of::<T>();
    let words = bytes.div_ceil(16);
    if buf.len() < words {
        buf.resize(words, 0);
    }
    bytemuck::cast_slice_mut(&mut bytemuck::cast_slice_mut::<u128, u8>(&mut buf[..words])[..bytes])
}

/// Runs `f` on two buffers of `n` keys and one of `n` bucket numbers (their
/// contents unspecified). `f` must neither spawn nor join.
fn with_buffers<T: Pod, R>(n: usize, f: impl FnOnce(&mut [T], &mut [T], &mut [u16]) -> R) -> R {
    let mut ids = BUF_IDS.take();
    if ids.len() < n {
        ids.resize(n, 0);
    }
    let r = if align_of::<T>() <= 16 {
        let (mut bx, mut by) = (BUF_X.take(), BUF_Y.take());
        let r = f(as_keys(&mut bx, n), as_keys(&mut by, n), &mut ids[..n]);
        BUF_X.set(bx);
        BUF_Y.set(by);
        r
    } else {
        let (mut x, mut y) = (vec![T::zeroed(); n], vec![T::zeroed(); n]);
        f(&mut x, &mut y, &mut ids[..n])
    };
    BUF_IDS.set(ids);
    r
}

// ---------------------------------------------------------------------
// Moving keys between global memory and buffers, in bounded checkouts.

/// Copies `src` into `dst` (as long).
fn fetch<T: Pod>(p: Policy, src: GlobalSlice<T>, dst: &mut [T]) {
    debug_assert_eq!(src.len(), dst.len());
    let max = p.chunk_items(size_of::<T>());
    chunks(
        0,
        src.len(),
        max,
        |a, b| slice_part_end(&src, a, b),
        |a, b| src.slice(a..b).read(|c| dst[a..b].copy_from_slice(c)),
    )
}

/// Copies `src` into `dst` (as long).
fn store<T: Pod>(p: Policy, src: &[T], dst: GlobalSlice<T>) {
    debug_assert_eq!(src.len(), dst.len());
    let max = p.chunk_items(size_of::<T>());
    chunks(
        0,
        dst.len(),
        max,
        |a, b| slice_part_end(&dst, a, b),
        |a, b| dst.slice(a..b).write(|d| d.copy_from_slice(&src[a..b])),
    )
}

/// `src`'s elements in a vector of this process.
fn fetch_vec<T: Pod>(p: Policy, src: GlobalSlice<T>) -> Vec<T> {
    let mut v = vec![T::zeroed(); src.len()];
    fetch(p, src, &mut v);
    v
}

/// Copies global `src` into global `dst` (as long): both checked out at
/// once, so each chunk is half the bound.
fn copy_global<T: Pod>(p: Policy, src: GlobalSlice<T>, dst: GlobalSlice<T>) {
    debug_assert_eq!(src.len(), dst.len());
    let max = (p.chunk_items(size_of::<T>()) / 2).max(1);
    chunks(
        0,
        src.len(),
        max,
        |a, b| slice_part_end(&dst, a, slice_part_end(&src, a, b)),
        |a, b| {
            src.slice(a..b)
                .read(|c| dst.slice(a..b).write(|d| d.copy_from_slice(c)))
        },
    )
}

/// Fills `dst` with `v`.
fn fill<T: Pod>(p: Policy, dst: GlobalSlice<T>, v: T) {
    let max = p.chunk_items(size_of::<T>());
    chunks(
        0,
        dst.len(),
        max,
        |a, b| slice_part_end(&dst, a, b),
        |a, b| dst.slice(a..b).write(|d| d.fill(v)),
    )
}

/// Runs `f(i)` for every `i` in `[lo, hi)`, in parallel by halving.
fn each<F: Fn(usize) + Copy + Send + 'static>(p: Policy, lo: usize, hi: usize, f: F) {
    if hi - lo <= 1 {
        if hi > lo {
            f(lo)
        }
        return;
    }
    let m = mid(lo, hi);
    fork(p, move || each(p, lo, m, f), move || each(p, m, hi, f));
}

// ---------------------------------------------------------------------
// Plans.

/// How one level buckets its keys.
#[derive(Clone, Copy)]
enum Plan<T: Pod> {
    /// Bucket `(key − least) >> shift` of the radix key; `buckets` of them.
    Radix { least: u64, shift: u32, buckets: usize },
    /// Sorted distinct splitters (in global memory); with equality buckets
    /// when `equal`. `copies`: every key is a copy, bit for bit, of a
    /// splitter (suggested by the samples, then confirmed by a counting
    /// pass over the keys, or dropped): blocks only count, and pass 4
    /// fills each equality bucket with its splitter — a copy is
    /// indistinguishable from the key it copies, so the sort holds the
    /// same elements.
    Samples {
        splitters: GlobalSlice<T>,
        equal: bool,
        copies: bool,
    },
}

impl<T: Pod> Plan<T> {
    fn buckets(&self) -> usize {
        match *self {
            Plan::Radix { buckets, .. } => buckets,
            Plan::Samples { splitters, equal, .. } => {
                let m = splitters.len();
                if equal {
                    2 * m + 1
                } else {
                    m + 1
                }
            }
        }
    }

    /// Whether every key of bucket `b` is equal to every other.
    fn settled(&self, b: usize) -> bool {
        match *self {
            Plan::Radix { shift, .. } => shift == 0,
            Plan::Samples { equal, .. } => equal && b % 2 == 1,
        }
    }

    /// Whether blocks only count (every bucket one radix key, or every
    /// key a copy of a splitter: pass 4 fills).
    fn counting(&self) -> bool {
        matches!(*self, Plan::Radix { shift: 0, .. } | Plan::Samples { copies: true, .. })
    }
}

/// Buckets for `n` keys: a power of two near `n / target`.
fn bucket_count(n: usize, target: usize) -> usize {
    n.div_ceil(target).next_power_of_two().clamp(2, MAX_BUCKETS)
}

/// A spread, deterministic position in `[0, span)` for sample `i`.
fn spread(i: usize, span: usize) -> usize {
    let mut z = (i as u64).wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    ((z ^ (z >> 29)) % span as u64) as usize
}

/// The plan for `a` (`None`: every key is equal, nothing to do).
fn plan<T: Pod, O: Order<T>>(p: Policy, a: GlobalSlice<T>, o: O, target: usize) -> Option<Plan<T>> {
    let n = a.len();
    let k = bucket_count(n, target);
    if o.radix() {
        let (least, most) = p.with_grain(DEFAULT_GRAIN).map_reduce(
            a,
            move |x: T| {
                let k = o.radix_key(&x);
                (k, k)
            },
            Op::new((u64::MAX, 0u64), |(a, b): (u64, u64), (c, d): (u64, u64)| {
                (a.min(c), b.max(d))
            }),
        );
        if least >= most {
            return None;
        }
        let range = most - least;
        let bits = 64 - range.leading_zeros();
        let shift = bits.saturating_sub(k.trailing_zeros());
        let buckets = (range >> shift) as usize + 1;
        return Some(Plan::Radix { least, shift, buckets });
    }
    let s = (OVERSAMPLE * k).min(n);
    let span = n / s;
    let mut samples: Vec<T> = (0..s).map(|i| a.get(i * span + spread(i, span))).collect();
    o.sort_leaf(&mut samples);
    let mut splitters: Vec<T> = Vec::with_capacity(k);
    for i in 1..k {
        let x = samples[i * s / k];
        if splitters.last().is_none_or(|l| o.less(l, &x)) {
            splitters.push(x)
        }
    }
    let equal = splitters.len() < k - 1;
    // Few distinct keys whose equals are copies (integers by any
    // comparison of their values): the samples say whether to try.
    let copies = equal
        && samples.iter().all(|x| {
            let j = splitters.partition_point(|s| o.less(s, x));
            j < splitters.len() && bytemuck::bytes_of(&splitters[j]) == bytemuck::bytes_of(x)
        });
    let g = GlobalSlice::<T>::alloc(splitters.len());
    store(p, &splitters, g);
    Some(Plan::Samples {
        splitters: g,
        equal,
        copies,
    })
}

/// A plan as a block uses it (the splitters in this process).
enum Local<T> {
    Radix { least: u64, shift: u32 },
    Samples { splitters: Vec<T>, equal: bool },
}

impl<T: Pod> Local<T> {
    fn of(p: Policy, plan: Plan<T>) -> Local<T> {
        match plan {
            Plan::Radix { least, shift, .. } => Local::Radix { least, shift },
            Plan::Samples { splitters, equal, .. } => Local::Samples {
                splitters: fetch_vec(p, splitters),
                equal,
            },
        }
    }

    /// Each key's bucket into `ids`, counted into `counts`.
    fn classify<O: Order<T>>(&self, o: O, xs: &[T], ids: &mut [u16], counts: &mut [u32]) {
        match self {
            Local::Radix { least, shift } => {
                for (x, id) in xs.iter().zip(ids.iter_mut()) {
                    let b = ((o.radix_key(x) - least) >> shift) as usize;
                    *id = b as u16;
                    counts[b] += 1;
                }
            }
            Local::Samples { splitters, equal } => {
                classify_tree(o, splitters, *equal, xs, ids);
                for &id in ids.iter() {
                    counts[id as usize] += 1;
                }
            }
        }
    }
}

/// The buckets of `xs` by the sorted distinct `s` (at least one): `j`
/// splitters at most `x`; with equality buckets `2j − 1` when `x` equals
/// splitter `j − 1`, else `2j`. A branch-free binary search, eight keys
/// in step (their loads overlap).
fn classify_tree<T: Pod, O: Order<T>>(o: O, s: &[T], equal: bool, xs: &[T], ids: &mut [u16]) {
    let m = s.len();
    debug_assert!(m >= 1);
    // The search leaves `x ≥ s[base]` unless `base` is 0 (it moves only
    // to a probe `x` is not less than): one three-way comparison with
    // `s[base]` then says both `j` and whether `x` equals `s[j − 1]`
    // (Less: `j = 0`; Equal: `x = s[base]`, `j = base + 1`; Greater:
    // `j = base + 1`, `x` above `s[j − 1]`).
    let last = |x: &T, base: usize| -> u16 {
        let b = if equal {
            match o.cmp(x, &s[base]) {
                // (0 by the search's invariant; `2 · base` keeps an
                // inconsistent comparison's key near its place.)
                std::cmp::Ordering::Less => 2 * base,
                std::cmp::Ordering::Equal => 2 * base + 1,
                std::cmp::Ordering::Greater => 2 * base + 2,
            }
        } else {
            base + usize::from(!o.less(x, &s[base]))
        };
        b as u16
    };
    const W: usize = 8;
    let mut xc = xs.chunks_exact(W);
    let mut ic = ids.chunks_exact_mut(W);
    for (xk, ik) in (&mut xc).zip(&mut ic) {
        let mut base = [0usize; W];
        let mut size = m;
        while size > 1 {
            let half = size / 2;
            for k in 0..W {
                let probe = base[k] + half;
                base[k] = select_unpredictable(o.less(&xk[k], &s[probe]), base[k], probe);
            }
            size -= half;
        }
        for k in 0..W {
            ik[k] = last(&xk[k], base[k]);
        }
    }
    for (x, id) in xc.remainder().iter().zip(ic.into_remainder()) {
        let (mut base, mut size) = (0usize, m);
        while size > 1 {
            let half = size / 2;
            let probe = base + half;
            base = select_unpredictable(o.less(x, &s[probe]), base, probe);
            size -= half;
        }
        *id = last(x, base);
    }
}

// ---------------------------------------------------------------------
// The level.

/// Sorts `a` with `tmp` (as long) as scratch: one level (see the module's
/// docs), `depth` levels above; `cut` is the merge sort's cut-off.
pub(super) fn sort<T: Pod, O: Order<T>>(
    p: Policy,
    cut: usize,
    a: GlobalSlice<T>,
    tmp: GlobalSlice<T>,
    o: O,
    depth: u32,
) {
    let n = a.len();
    if !applies::<T>(cut, n) || depth >= MAX_DEPTH {
        return super::cilk::sort(p, cut, a, tmp, o);
    }
    let target = target(cut);
    let Some(plan) = plan(p, a, o, target) else {
        return;
    };
    let kb = plan.buckets();
    let block = n.div_ceil(MAX_BLOCKS).max(target);
    let blocks = n.div_ceil(block);
    // 2. Blocks: row `l` of `rows` is block l's bucket offsets (kb + 1).
    let rows = GlobalSlice::<u32>::alloc(blocks * (kb + 1));
    let row = move |l: usize| rows.slice(l * (kb + 1)..(l + 1) * (kb + 1));
    let part = move |l: usize| (l * block)..((l + 1) * block).min(n);
    let mut plan = plan;
    if let Plan::Samples {
        splitters,
        equal,
        copies: true,
    } = plan
    {
        // Only count, checking that every key is a copy of a splitter
        // (a block stops at its first key that is not).
        let copied = GlobalSlice::<u64>::alloc(blocks);
        each(p, 0, blocks, move |l| {
            let all = count_copies(p, plan, a.slice(part(l)), row(l));
            copied.set(l, u64::from(all));
        });
        if !fetch_vec(p, copied).iter().all(|&c| c == 1) {
            plan = Plan::Samples {
                splitters,
                equal,
                copies: false,
            };
        }
        copied.free();
    }
    if !matches!(plan, Plan::Samples { copies: true, .. }) {
        each(p, 0, blocks, move |l| {
            distribute(p, o, plan, a.slice(part(l)), tmp.slice(part(l)), row(l));
        });
    }
    // 3. Offsets: `starts[b]` where bucket b begins in `a`; `cols[b * blocks
    // + l]` where block l's part of bucket b begins in the block (b ≤ kb).
    let table = fetch_vec(p, rows);
    rows.free();
    let mut starts = vec![0u64; kb + 1];
    let mut cols = vec![0u32; (kb + 1) * blocks];
    for l in 0..blocks {
        let row = &table[l * (kb + 1)..(l + 1) * (kb + 1)];
        for b in 0..kb {
            starts[b + 1] += u64::from(row[b + 1] - row[b]);
        }
        for (b, &r) in row.iter().enumerate() {
            cols[b * blocks + l] = r;
        }
    }
    for b in 0..kb {
        starts[b + 1] += starts[b];
    }
    debug_assert_eq!(starts[kb], n as u64);
    let g_starts = GlobalSlice::<u64>::alloc(kb + 1);
    store(p, &starts, g_starts);
    let g_cols = GlobalSlice::<u32>::alloc(cols.len());
    store(p, &cols, g_cols);
    // 4. Buckets.
    let level = Level {
        p,
        cut,
        a,
        tmp,
        o,
        plan,
        block,
        blocks,
        starts: g_starts,
        cols: g_cols,
    };
    let deeper = (0..kb).any(|b| level.deeper(b, (starts[b + 1] - starts[b]) as usize));
    // (No vector of this process lives across a join: the task may go on
    // on another rank.)
    drop((table, starts, cols));
    level.groups(0, kb);
    // The long buckets, copied to their places, by another level each —
    // only now, when no bucket's parts in `tmp` are still to be gathered
    // (their places there are the scratch of the next level).
    if deeper {
        each(p, 0, kb, move |b| {
            let (s0, s1) = (level.starts.get(b) as usize, level.starts.get(b + 1) as usize);
            if level.deeper(b, s1 - s0) {
                sort(p, cut, a.slice(s0..s1), tmp.slice(s0..s1), o, depth + 1);
            }
        });
    }
    g_starts.free();
    g_cols.free();
    if let Plan::Samples { splitters, .. } = plan {
        splitters.free();
    }
}

/// Step 2 for a plan whose samples were all copies of splitters: counts
/// `src`'s keys into `row` (as [`distribute`] does), and returns whether
/// every key is a copy, bit for bit, of a splitter — false at the first
/// that is not (then nothing is stored: the caller distributes).
fn count_copies<T: Pod>(p: Policy, plan: Plan<T>, src: GlobalSlice<T>, row: GlobalSlice<u32>) -> bool {
    let Local::Samples { splitters, .. } = Local::of(p, plan) else {
        unreachable!("copies of splitters in a radix plan")
    };
    // A copy is found by its bytes (no comparison called): bytes equal to
    // splitter j's mean equal to it in any order, so bucket 2j + 1.
    let table = CopyTable::new(&splitters);
    let kb = plan.buckets();
    let mut counts = vec![0u32; kb + 1];
    let mut all = true;
    chunks(
        0,
        src.len(),
        p.chunk_items(size_of::<T>()),
        |a, b| slice_part_end(&src, a, b),
        |a, b| {
            if all {
                src.slice(a..b).read(|c| {
                    for x in c {
                        let Some(j) = table.find(x) else {
                            all = false;
                            return;
                        };
                        counts[2 * j + 2] += 1;
                    }
                })
            }
        },
    );
    if !all {
        return false;
    }
    for b in 0..kb {
        counts[b + 1] += counts[b];
    }
    store(p, &counts, row);
    true
}

/// Keys found by their bytes: an open-addressing table of the indices of
/// `keys` (distinct), at most a quarter full.
struct CopyTable<'a, T> {
    keys: &'a [T],
    /// Index + 1 of the key in each slot (0: empty).
    slots: Vec<u32>,
    mask: usize,
}

impl<'a, T: Pod> CopyTable<'a, T> {
    fn new(keys: &'a [T]) -> Self {
        let size = (4 * keys.len()).next_power_of_two().max(16);
        let mut t = CopyTable {
            keys,
            slots: vec![0; size],
            mask: size - 1,
        };
        for (j, k) in keys.iter().enumerate() {
            let mut i = Self::hash(k) & t.mask;
            while t.slots[i] != 0 {
                i = (i + 1) & t.mask;
            }
            t.slots[i] = j as u32 + 1;
        }
        t
    }

    /// A hash of `x`'s bytes, eight at a time.
    #[inline]
    fn hash(x: &T) -> usize {
        let mut h = 0u64;
        for c in bytemuck::bytes_of(x).chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            h = (h ^ u64::from_le_bytes(w))
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .rotate_left(26);
        }
        h as usize
    }

    /// The index of the key whose bytes are `x`'s.
    #[inline]
    fn find(&self, x: &T) -> Option<usize> {
        let mut i = Self::hash(x) & self.mask;
        loop {
            let s = self.slots[i] as usize;
            if s == 0 {
                return None;
            }
            if bytemuck::bytes_of(&self.keys[s - 1]) == bytemuck::bytes_of(x) {
                return Some(s - 1);
            }
            i = (i + 1) & self.mask;
        }
    }
}

/// Step 2 for one block: `src` classified into `dst` (the same place in
/// `tmp`) in bucket order, its bucket offsets into `row`.
fn distribute<T: Pod, O: Order<T>>(
    p: Policy,
    o: O,
    plan: Plan<T>,
    src: GlobalSlice<T>,
    dst: GlobalSlice<T>,
    row: GlobalSlice<u32>,
) {
    let local = Local::of(p, plan);
    let kb = plan.buckets();
    let mut counts = vec![0u32; kb + 1];
    let max = p.chunk_items(size_of::<T>());
    let each_chunk = |f: &mut dyn FnMut(usize, usize, &[T])| {
        chunks(
            0,
            src.len(),
            max,
            |a, b| slice_part_end(&src, a, b),
            |a, b| src.slice(a..b).read(|c| f(a, b, c)),
        )
    };
    // Classified and moved straight from the checkouts (read twice: where
    // the memory is mapped that costs less than a copy).
    with_buffers::<T, _>(src.len(), |_, y, ids| {
        each_chunk(&mut |a, b, c| local.classify(o, c, &mut ids[a..b], &mut counts[1..]));
        for b in 0..kb {
            counts[b + 1] += counts[b];
        }
        if plan.counting() {
            return;
        }
        let mut at: Vec<u32> = counts[..kb].to_vec();
        each_chunk(&mut |a, b, c| {
            for (v, &id) in c.iter().zip(&ids[a..b]) {
                let slot = &mut at[id as usize];
                y[*slot as usize] = *v;
                *slot += 1;
            }
        });
        store(p, y, dst);
    });
    store(p, &counts, row);
}

/// One level's step 4: what a group of buckets needs.
#[derive(Clone, Copy)]
struct Level<T: Pod, O> {
    p: Policy,
    cut: usize,
    a: GlobalSlice<T>,
    tmp: GlobalSlice<T>,
    o: O,
    plan: Plan<T>,
    block: usize,
    blocks: usize,
    starts: GlobalSlice<u64>,
    cols: GlobalSlice<u32>,
}

impl<T: Pod, O: Order<T>> Level<T, O> {
    /// Buckets `[b0, b1)`: split in parallel down to groups of at most a
    /// target's keys (or one bucket).
    fn groups(self, b0: usize, b1: usize) {
        let keys = (self.starts.get(b1) - self.starts.get(b0)) as usize;
        if b1 - b0 == 1 || keys <= target(self.cut) {
            return self.group(b0, b1);
        }
        let m = mid(b0, b1);
        fork(self.p, move || self.groups(b0, m), move || self.groups(m, b1));
    }

    /// Sorts buckets `[b0, b1)` into their places in `a`.
    fn group(self, b0: usize, b1: usize) {
        let Level { p, a, tmp, o, plan, .. } = self;
        let starts = fetch_vec(p, self.starts.slice(b0..=b1));
        let cols = fetch_vec(p, self.cols.slice(b0 * self.blocks..(b1 + 1) * self.blocks));
        for b in b0..b1 {
            let (s0, s1) = (starts[b - b0] as usize, starts[b + 1 - b0] as usize);
            let len = s1 - s0;
            if len == 0 {
                continue;
            }
            let out = a.slice(s0..s1);
            // Block l's part of bucket b in `tmp`.
            let part = |l: usize| {
                let (c0, c1) = (
                    cols[(b - b0) * self.blocks + l] as usize,
                    cols[(b + 1 - b0) * self.blocks + l] as usize,
                );
                tmp.slice(l * self.block + c0..l * self.block + c1)
            };
            match plan {
                Plan::Radix { least, shift: 0, .. } => {
                    fill(p, out, o.radix_value(least + b as u64));
                }
                Plan::Samples {
                    splitters,
                    copies: true,
                    ..
                } => {
                    // Every key of the level is a copy of a splitter: only
                    // equality buckets (odd) hold keys.
                    debug_assert!(b % 2 == 1);
                    fill(p, out, splitters.get((b - 1) / 2));
                }
                _ if len == 1 || plan.settled(b) || self.deeper(b, len) => {
                    let mut at = s0;
                    for l in 0..self.blocks {
                        let src = part(l);
                        copy_global(p, src, a.slice(at..at + src.len()));
                        at += src.len();
                    }
                }
                _ => with_buffers::<T, _>(len, |x, y, _| {
                    let mut at = 0;
                    for l in 0..self.blocks {
                        let src = part(l);
                        fetch(p, src, &mut x[at..at + src.len()]);
                        at += src.len();
                    }
                    if o.radix() {
                        local_radix(o, x, y);
                    } else {
                        o.sort_leaf(x);
                    }
                    store(p, x, out);
                }),
            }
        }
        drop((starts, cols));
    }

    /// Whether bucket `b` of `len` keys is sorted by another level.
    fn deeper(&self, b: usize, len: usize) -> bool {
        len > 4 * target(self.cut) && !self.plan.settled(b)
    }
}

/// Sorts `x` (radix keys) with `y` (as long) as scratch: an MSD radix
/// pass on the highest bits in which its keys differ (at most 8, as many
/// as make buckets of about `LOCAL_LEAF / 2` keys), then each bucket the
/// same way, down to [`LOCAL_LEAF`] keys (the leaf kernel).
fn local_radix<T: Pod, O: Order<T>>(o: O, x: &mut [T], y: &mut [T]) {
    if x.len() <= LOCAL_LEAF {
        return o.sort_leaf(x);
    }
    let (mut least, mut most) = (u64::MAX, 0u64);
    for v in x.iter() {
        let k = o.radix_key(v);
        least = least.min(k);
        most = most.max(k);
    }
    if least == most {
        return;
    }
    let range = most - least;
    let digit = (x.len() / (LOCAL_LEAF / 2))
        .next_power_of_two()
        .trailing_zeros()
        .clamp(1, 8);
    let shift = (64 - range.leading_zeros()).saturating_sub(digit);
    let nb = (range >> shift) as usize + 1;
    let mut start = [0usize; 257];
    for v in x.iter() {
        start[((o.radix_key(v) - least) >> shift) as usize + 1] += 1;
    }
    for b in 0..nb {
        start[b + 1] += start[b];
    }
    let mut at = start;
    for v in x.iter() {
        let slot = &mut at[((o.radix_key(v) - least) >> shift) as usize];
        y[*slot] = *v;
        *slot += 1;
    }
    x.copy_from_slice(y);
    for b in 0..nb {
        let (s, e) = (start[b], start[b + 1]);
        if e - s > 1 {
            local_radix(o, &mut x[s..e], &mut y[s..e]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{bucket_count, classify_tree, local_radix, CopyTable, Plan};
    use crate::sort::order::{int_from_key, int_key, By, Natural, Order};

    #[test]
    fn int_keys_keep_the_order_and_round_trip() {
        let xs: [i32; 6] = [i32::MIN, -7, -1, 0, 5, i32::MAX];
        for w in xs.windows(2) {
            assert!(int_key(&w[0]) < int_key(&w[1]));
        }
        for x in xs {
            assert_eq!(int_from_key::<i32>(int_key(&x)), x);
        }
        for x in [0u16, 1, 300, u16::MAX] {
            assert_eq!(int_from_key::<u16>(int_key(&x)), x);
        }
        assert!(int_key(&-1i8) < int_key(&0i8) && int_key(&u64::MAX) == u64::MAX);
    }

    #[test]
    fn the_tree_finds_each_keys_bucket() {
        // Every count of splitters from 1 to 17 (the search's depths and
        // the eight-key and remainder paths), keys below, between, equal
        // to and above them.
        for m in 1..=17u64 {
            let s: Vec<u64> = (1..=m).map(|i| 10 * i).collect();
            let xs: Vec<u64> = (0..10 * m + 20).collect();
            check_tree(&s, &xs);
        }
    }

    fn check_tree(s: &[u64], xs: &[u64]) {
        for equal in [false, true] {
            let mut ids = vec![0u16; xs.len()];
            classify_tree(By(|a: &u64, b: &u64| a.cmp(b)), s, equal, xs, &mut ids);
            for (x, id) in xs.iter().zip(&ids) {
                let j = s.iter().filter(|v| *v <= x).count();
                let want = if !equal {
                    j
                } else if j > 0 && s[j - 1] == *x {
                    2 * j - 1
                } else {
                    2 * j
                };
                assert_eq!(*id as usize, want, "x={x} equal={equal}");
            }
        }
    }

    #[test]
    fn the_copy_table_finds_exactly_its_keys() {
        for m in [1usize, 2, 15, 16, 17, 100] {
            let keys: Vec<u64> = (0..m as u64).map(|i| i * 0x1_0000_0001 + 7).collect();
            let t = CopyTable::new(&keys);
            for (j, k) in keys.iter().enumerate() {
                assert_eq!(t.find(k), Some(j));
            }
            for x in [0u64, 8, u64::MAX, 0x1_0000_0001 * m as u64 + 7] {
                assert_eq!(t.find(&x), None, "m={m} x={x}");
            }
        }
        // Keys longer than eight bytes, equal in their first eight.
        let keys = [[1u64, 2], [1, 3]];
        let t = CopyTable::new(&keys);
        assert_eq!(
            (t.find(&[1, 2]), t.find(&[1, 3]), t.find(&[1, 4])),
            (Some(0), Some(1), None)
        );
    }

    #[test]
    fn the_local_radix_sorts() {
        let mut seed = 9u64;
        for (n, m) in [(1000usize, u64::MAX), (5000, 16), (3000, 1 << 40), (600, 1)] {
            let mut x: Vec<u64> = (0..n)
                .map(|_| {
                    seed = uni_threads::testing::splitmix(seed, 1);
                    seed % m
                })
                .collect();
            let mut want = x.clone();
            want.sort_unstable();
            let mut y = vec![0; n];
            local_radix(Natural, &mut x, &mut y);
            assert_eq!(x, want);
        }
        let mut z: Vec<i16> = (0..2000).map(|i| ((i * 7919) % 4001 - 2000) as i16).collect();
        let mut want = z.clone();
        want.sort_unstable();
        local_radix(Natural, &mut z, &mut vec![0; 2000]);
        assert_eq!(z, want);
        assert!(Order::<u64>::radix(&Natural) && Order::<i8>::radix(&Natural));
        assert!(!Order::<[u8; 2]>::radix(&Natural) && !Order::<u64>::radix(&By(|a: &u64, b: &u64| a.cmp(b))));
    }

    #[test]
    fn buckets_and_settled_ones() {
        assert_eq!(bucket_count(1 << 24, 1 << 16), 256);
        assert_eq!(bucket_count(10, 1 << 16), 2);
        assert_eq!(bucket_count(1 << 40, 1), 2048);
        let p: Plan<u64> = Plan::Radix {
            least: 0,
            shift: 0,
            buckets: 16,
        };
        assert!(p.settled(3) && p.counting() && p.buckets() == 16);
    }
}
