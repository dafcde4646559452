//! rayon-style conveniences over spawn: [`join`] and [`join!`](crate::join!)
//! (data-parallel loops over ranges and global memory are the `pattern`
//! layer's, above the scheduler).

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

/// Runs 2 to 6 closures, potentially in parallel, and returns their results
/// as a tuple: all but the last are spawned (child-first, in order), the
/// last runs in the calling thread, then the spawned ones are joined. Every
/// closure is bounded like a spawned task.
///
/// ```no_run
/// # fn work(i: u64) -> u64 { i }
/// let (a, b, c) = uni_threads::join!(move || work(1), move || work(2), move || work(3));
/// ```
#[macro_export]
macro_rules! join {
    ($a:expr, $b:expr $(,)?) => {
        $crate::join($a, $b)
    };
    ($a:expr, $b:expr, $c:expr $(,)?) => {{
        let a = $crate::spawn($a);
        let (b, c) = $crate::join($b, $c);
        (a.join(), b, c)
    }};
    ($a:expr, $b:expr, $c:expr, $d:expr $(,)?) => {{
        let a = $crate::spawn($a);
        let (b, c, d) = $crate::join!($b, $c, $d);
        (a.join(), b, c, d)
    }};
    ($a:expr, $b:expr, $c:expr, $d:expr, $e:expr $(,)?) => {{
        let a = $crate::spawn($a);
        let (b, c, d, e) = $crate::join!($b, $c, $d, $e);
        (a.join(), b, c, d, e)
    }};
    ($a:expr, $b:expr, $c:expr, $d:expr, $e:expr, $f:expr $(,)?) => {{
        let a = $crate::spawn($a);
        let (b, c, d, e, f) = $crate::join!($b, $c, $d, $e, $f);
        (a.join(), b, c, d, e, f)
    }};
}
