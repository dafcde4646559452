//! The README's pattern example: two distributed arrays filled in parallel,
//! then their dot product. Prints n * (n - 1) for the argument n.

use uat::global::GlobalSlice;
use uat::pattern::{self, Sum};

fn dot(n: usize) -> u64 {
    let a = GlobalSlice::<u64>::alloc_distributed(n); // block-distributed over the ranks
    let b = GlobalSlice::<u64>::alloc_distributed(n);
    pattern::for_each_chunk_mut(a, |start, xs: &mut [u64]| {
        for (j, x) in xs.iter_mut().enumerate() {
            *x = (start + j) as u64; // a[i] = i
        }
    });
    pattern::fill(b, 2); // b[i] = 2
    let sum = pattern::map_reduce((a, b), |(x, y)| x * y, Sum::new());
    a.free();
    b.free();
    sum
}

fn main() {
    // SAFETY: the tasks keep only numbers and global slices across spawn and
    // join; the leaves write disjoint elements and free nothing in use.
    unsafe { uat::launch(|n: u64| dot(n as usize)) }
}
