//! rayon-style conveniences over spawn/join.

use crate::spawn::spawn;

/// Runs `a` and `b`, potentially in parallel: `a` is spawned (child-first,
/// so it runs now and the rest of this thread, `b`, is stealable), `b` runs
/// here, then `a` is joined.
///
/// `b` runs in the continuation, which another rank may steal before it
/// starts: it is bounded like a spawned task (plain data, `'static`), so
/// it cannot borrow or own process-local memory either.
///
/// ```compile_fail,E0597
/// let v = vec![1u64, 2, 3];
/// // `b` borrows a heap Vec: it could run on another rank.
/// let _ = uni_threads::join(|| 1u64, || v.iter().sum::<u64>());
/// ```
///
/// ```compile_fail,E0277
/// let v = vec![1u64, 2, 3];
/// // `b` owns a heap Vec: not plain data.
/// let _ = uni_threads::join(|| 1u64, move || v.len() as u64);
/// ```
#[inline]
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send + Copy + 'static,
    B: FnOnce() -> RB + Send + Copy + 'static,
    RA: Send + Copy + 'static,
    RB: Send + Copy + 'static,
{
    let ha = spawn(a);
    let rb = b();
    (ha.join(), rb)
}

/// Maps every `i` in `lo..hi` with `map` and combines the results with
/// `combine` (associative, with `identity`), splitting the range in halves
/// down to `grain` indices per task: every task spawns zero or two subtasks.
#[inline]
pub fn reduce<T, M, C>(lo: u64, hi: u64, grain: u64, identity: T, map: M, combine: C) -> T
where
    T: Send + Copy + 'static,
    M: Fn(u64) -> T + Send + Copy + 'static,
    C: Fn(T, T) -> T + Send + Copy + 'static,
{
    let grain = grain.max(1);
    if hi.saturating_sub(lo) <= grain {
        return (lo..hi).fold(identity, |acc, i| combine(acc, map(i)));
    }
    let mid = lo + (hi - lo) / 2;
    let (left, right) = join(
        move || reduce(lo, mid, grain, identity, map, combine),
        move || reduce(mid, hi, grain, identity, map, combine),
    );
    combine(left, right)
}
