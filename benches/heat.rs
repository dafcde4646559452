//! Heat: a 2-D five-point Jacobi stencil (f64) over an R×C grid in global
//! memory, two arrays block-distributed by rows over the ranks (double
//! buffering), K iterations. Each iteration is a parallel loop over row
//! blocks — recursive halving with `join` down to `--grain` rows — whose
//! leaves check out their rows plus one halo row above and below from the
//! source (read) and their rows of the destination (write). The boundary
//! (first and last row and column) is fixed.
//!
//! Verified every run, bit for bit: rank 0 copies the final grid out of
//! global memory after the timed run and compares every f64 with a serial
//! run of the same computation in a local `Vec` (the same row function,
//! hence the same operation order), off the clock.

use std::time::Instant;

use clap::Parser;
use serde_json::json;
use uat::global::GlobalSlice;
use uat_bench::{splitmix, ChildResult, Common, Fork, Harness, Kernel, VsSeq};

/// A 2-D five-point Jacobi stencil over an R×C grid of f64 in global
/// memory, in parallel over row blocks, verified bit for bit.
///
/// The grid lives in two global arrays (source and destination, swapped
/// every iteration), block-distributed by whole rows: rank r holds rows
/// [r·⌈R/P⌉, (r+1)·⌈R/P⌉). Every cell starts pseudo-random in [0, 1)
/// (splitmix of --seed and its index); the first and last row and column
/// keep their values; an interior cell becomes
///     c + 0.1·((up + down) + (left + right) − 4·c).
/// Each iteration splits the rows in halves (uat::join) down to --grain
/// rows; a leaf reads its rows and one halo row on each side of the source
/// and writes its rows of the destination. Over the network (udp
/// --real-udp, mpi without shared memory) other ranks' rows go through the
/// software cache (UAT_CACHE, UAT_CACHE_BLOCK).
///
/// Prints one JSON line: rows, cols, iters, grain, time_s (initialisation,
/// the iterations and a parallel checksum), iters_s (the iterations
/// alone), checksum, fetched_bytes, hit_rate, verified (the final grid
/// equals a serial run in a local Vec, every f64 bit for bit; exit 1
/// otherwise). Memory: 2·R·C·8 bytes of the symmetric half of
/// UAT_GLOBAL_HEAP (1G per rank by default), plus two copies on rank 0
/// for the check.
#[derive(Parser, Debug)]
#[command(name = "heat", version, verbatim_doc_comment)]
struct Options {
    /// Rows of the grid (R).
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u64).range(1..=(1 << 24)))]
    rows: u64,
    /// Columns of the grid (C).
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u64).range(1..=(1 << 24)))]
    cols: u64,
    /// Iterations (K).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    iters: u64,
    /// Rows of a leaf of the parallel loop (a row block).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=(1 << 24)))]
    grain: u64,
    /// Seed of the initial grid.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    vs_seq: VsSeq,
}

/// The grid's shape and the loop's grain.
#[derive(Clone, Copy, Debug)]
struct Grid {
    rows: usize,
    cols: usize,
    grain: usize,
}

/// The initial value of cell `i` (row-major index).
fn initial(seed: u64, i: usize) -> f64 {
    (splitmix(seed, i as u64) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// One interior cell's new value.
#[inline(always)]
fn stencil(up: f64, c: f64, down: f64, left: f64, right: f64) -> f64 {
    c + 0.1 * ((up + down) + (left + right) - 4.0 * c)
}

/// One row's new values (`out`) from the rows above, at and below it;
/// the first and last column are kept. Both the global and the reference
/// computation call this: the same operations in the same order.
#[inline(never)]
fn row(up: &[f64], mid: &[f64], down: &[f64], out: &mut [f64]) {
    let c = mid.len();
    out[0] = mid[0];
    if c == 1 {
        return;
    }
    out[c - 1] = mid[c - 1];
    for j in 1..c - 1 {
        out[j] = stencil(up[j], mid[j], down[j], mid[j - 1], mid[j + 1]);
    }
}

/// Row `r`'s new values from `s` (rows `first..` of the source, `r - 1`
/// to `r + 1` among them where they exist).
#[inline(always)]
fn new_row(g: Grid, s: &[f64], first: usize, r: usize, out: &mut [f64]) {
    let c = g.cols;
    let m = r - first;
    let mid = &s[m * c..(m + 1) * c];
    if r == 0 || r == g.rows - 1 {
        out.copy_from_slice(mid);
    } else {
        row(&s[(m - 1) * c..m * c], mid, &s[(m + 1) * c..(m + 2) * c], out);
    }
}

/// The contribution of cell `i` with value `v` to the checksum.
fn cell_hash(i: usize, v: f64) -> u64 {
    splitmix(v.to_bits(), i as u64)
}

/// What a leaf of the parallel loop does with rows `lo..hi`.
trait Leaf: Copy + Send + 'static {
    type Out: ChildResult;
    fn leaf(self, lo: usize, hi: usize) -> Self::Out;
    fn combine(a: Self::Out, b: Self::Out) -> Self::Out;
}

/// Rows `lo..hi` by halving down to the grain: the parallel loop.
fn rows<F: Fork, L: Leaf>(g: Grid, l: L, lo: usize, hi: usize) -> L::Out {
    if hi - lo <= g.grain {
        return l.leaf(lo, hi);
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = F::join(move || rows::<F, L>(g, l, lo, mid), move || rows::<F, L>(g, l, mid, hi));
    L::combine(a, b)
}

/// Writes the initial grid into both arrays.
#[derive(Clone, Copy)]
struct Init {
    g: Grid,
    a: GlobalSlice<f64>,
    b: GlobalSlice<f64>,
    seed: u64,
}

impl Leaf for Init {
    type Out = ();
    fn leaf(self, lo: usize, hi: usize) {
        let c = self.g.cols;
        for x in [self.a, self.b] {
            x.slice(lo * c..hi * c).write(|d| {
                d.iter_mut()
                    .enumerate()
                    .for_each(|(k, v)| *v = initial(self.seed, lo * c + k))
            });
        }
    }
    fn combine(_: (), _: ()) {}
}

/// One iteration: `dst` from `src`.
#[derive(Clone, Copy)]
struct Step {
    g: Grid,
    src: GlobalSlice<f64>,
    dst: GlobalSlice<f64>,
}

impl Leaf for Step {
    type Out = ();
    fn leaf(self, lo: usize, hi: usize) {
        let Step { g, src, dst } = self;
        let c = g.cols;
        let (first, end) = (lo.saturating_sub(1), (hi + 1).min(g.rows));
        src.slice(first * c..end * c).read(|s| {
            dst.slice(lo * c..hi * c).write(|d| {
                for (r, out) in (lo..hi).zip(d.chunks_exact_mut(c)) {
                    new_row(g, s, first, r, out);
                }
            })
        });
    }
    fn combine(_: (), _: ()) {}
}

/// The checksum of the grid in `a`.
#[derive(Clone, Copy)]
struct Checksum {
    g: Grid,
    a: GlobalSlice<f64>,
}

impl Leaf for Checksum {
    type Out = u64;
    fn leaf(self, lo: usize, hi: usize) -> u64 {
        let c = self.g.cols;
        self.a.slice(lo * c..hi * c).read(|s| {
            s.iter()
                .enumerate()
                .fold(0u64, |acc, (k, &v)| acc.wrapping_add(cell_hash(lo * c + k, v)))
        })
    }
    fn combine(a: u64, b: u64) -> u64 {
        a.wrapping_add(b)
    }
}

/// The benchmark's run: initialise, iterate, checksum.
#[derive(Clone, Copy)]
struct Heat {
    g: Grid,
    a: GlobalSlice<f64>,
    b: GlobalSlice<f64>,
    iters: u64,
    seed: u64,
}

impl Heat {
    /// The array holding the grid after the iterations.
    fn last(&self) -> GlobalSlice<f64> {
        if self.iters.is_multiple_of(2) {
            self.a
        } else {
            self.b
        }
    }
}

/// A run's checksum, and the iterations' time (not compared).
#[derive(Clone, Copy, Debug)]
struct HeatRun {
    checksum: u64,
    iters_s: f64,
}

impl PartialEq for HeatRun {
    fn eq(&self, o: &HeatRun) -> bool {
        self.checksum == o.checksum
    }
}

impl Kernel for Heat {
    type Output = HeatRun;
    /// The iterations are timed inside the root task (its continuation
    /// may move to another rank of this host: the same clock).
    fn run<F: Fork>(self) -> HeatRun {
        let Heat { g, a, b, iters, seed } = self;
        rows::<F, _>(g, Init { g, a, b, seed }, 0, g.rows);
        let start = Instant::now();
        for k in 0..iters {
            let (src, dst) = if k % 2 == 0 { (a, b) } else { (b, a) };
            rows::<F, _>(g, Step { g, src, dst }, 0, g.rows);
        }
        let iters_s = start.elapsed().as_secs_f64();
        let checksum = rows::<F, _>(g, Checksum { g, a: self.last() }, 0, g.rows);
        HeatRun { checksum, iters_s }
    }
}

/// The same computation serially in local memory: the final grid.
fn reference(g: Grid, iters: u64, seed: u64) -> Vec<f64> {
    let n = g.rows * g.cols;
    let mut a: Vec<f64> = (0..n).map(|i| initial(seed, i)).collect();
    let mut b = a.clone();
    for _ in 0..iters {
        for (r, out) in b.chunks_exact_mut(g.cols).enumerate() {
            let first = r.saturating_sub(1);
            new_row(g, &a[first * g.cols..], first, r, out);
        }
        std::mem::swap(&mut a, &mut b);
    }
    a
}

fn micros(s: f64) -> f64 {
    (s * 1e6).round() / 1e6
}

fn main() {
    let (gasnet, o) = uat::cli::start::<Options>("heat");
    let g = Grid {
        rows: o.rows as usize,
        cols: o.cols as usize,
        grain: o.grain as usize,
    };
    let cells = g.rows.checked_mul(g.cols).filter(|&n| n <= 1 << 32);
    let Some(cells) = cells else {
        if gasnet.rank() == 0 {
            eprintln!(
                "error: a grid of {} × {} cells is too large (at most 2^32 cells)",
                o.rows, o.cols
            );
        }
        gasnet.exit(2);
    };
    // SAFETY: the benchmark's tasks keep only plain values (row ranges,
    // global-memory handles) across spawn and join, and `gasnet` serves
    // only for its rank and to end the job from here on.
    let h = unsafe { Harness::start(gasnet, o.common.clone()) };
    let rank0 = h.rank() == 0;
    let ranks = gasnet.size() as usize;
    let array = || {
        if o.common.seq {
            // The serial elision: both arrays on rank 0 (zeroed, so every
            // page is touched).
            GlobalSlice::<f64>::alloc(if rank0 { cells } else { 0 })
        } else {
            // Whole rows per rank: ⌈R/P⌉ rows each (the last rank's may
            // be partly unused).
            let padded = g.rows.div_ceil(ranks) * ranks * g.cols;
            let s = h.runtime.run(move || GlobalSlice::<f64>::alloc_distributed(padded));
            let s = h.runtime.broadcast_value(s);
            s.prefault();
            s.slice(..cells)
        }
    };
    let (a, b) = (array(), array());
    let k = Heat {
        g,
        a,
        b,
        iters: o.iters,
        seed: o.seed,
    };
    let (outcome, mut extra) = h.measure_kernel(o.vs_seq, k);
    let stats = h.runtime.stats();
    let mut expected = None;
    if let Some(out) = &outcome {
        // The check, off the clock: the final grid out of global memory
        // against the serial run in a Vec, every value bit for bit.
        let got = k.last().to_vec();
        let want = reference(g, o.iters, o.seed);
        let local_sum = got
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, &v)| acc.wrapping_add(cell_hash(i, v)));
        let want_sum = want
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, &v)| acc.wrapping_add(cell_hash(i, v)));
        let differ: Vec<usize> = (0..cells).filter(|&i| got[i].to_bits() != want[i].to_bits()).collect();
        expected = Some(want_sum);
        extra.insert("rows".into(), json!(o.rows));
        extra.insert("cols".into(), json!(o.cols));
        extra.insert("iters".into(), json!(o.iters));
        extra.insert("grain".into(), json!(o.grain));
        extra.insert("iters_s".into(), json!(micros(out.value.iters_s)));
        let updates = (g.rows.saturating_sub(2) * g.cols.saturating_sub(2)) as f64 * o.iters as f64;
        extra.insert(
            "updates_per_s".into(),
            json!((updates / out.value.iters_s.max(1e-9)).round()),
        );
        extra.insert("checksum".into(), json!(format!("{:016x}", out.value.checksum)));
        extra.insert("cells_differing".into(), json!(differ.len()));
        extra.extend(uat_bench::memory_fields(&stats));
        if let Some(&i) = differ.first() {
            eprintln!(
                "error: heat: WRONG ANSWER: {} of {cells} cells differ from the serial run; the first at row {} \
                 column {}: {:e}, expected {:e}",
                differ.len(),
                i / g.cols,
                i % g.cols,
                got[i],
                want[i]
            );
            gasnet.exit(1);
        }
        if local_sum != out.value.checksum {
            eprintln!(
                "error: heat: WRONG ANSWER: the parallel checksum {:016x} differs from the final grid's {local_sum:016x}",
                out.value.checksum
            );
            gasnet.exit(1);
        }
    }
    let params = json!({"rows": o.rows, "cols": o.cols, "iters": o.iters, "grain": o.grain, "seed": o.seed});
    h.finish(
        "heat",
        params,
        outcome.map(|x| uat_bench::Outcome {
            value: x.value.checksum,
            time_s: x.time_s,
        }),
        expected,
        extra,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_keeps_the_boundary_and_smooths_the_inside() {
        let g = Grid {
            rows: 5,
            cols: 6,
            grain: 1,
        };
        let a = reference(g, 0, 3);
        let b = reference(g, 7, 3);
        for r in 0..5 {
            for c in 0..6 {
                let i = r * 6 + c;
                if r == 0 || r == 4 || c == 0 || c == 5 {
                    assert_eq!(a[i].to_bits(), b[i].to_bits());
                } else {
                    assert_ne!(a[i].to_bits(), b[i].to_bits());
                }
            }
        }
    }
}
