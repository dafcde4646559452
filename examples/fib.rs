//! Naive parallel Fibonacci: the smallest uni-address threads program.
//!
//!     cargo uat run -n 4 --example fib -- 30

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = uat::join(move || fib(n - 1), move || fib(n - 2));
    a + b
}

fn main() {
    // SAFETY: fib's tasks keep only numbers across spawn and join.
    unsafe { uat::launch(|n: u64| fib(n)) }
}
