//! Refused Active Messages, counted per handler kind and reported without
//! flooding stderr: a rank under a stream of malformed messages (a fuzzer,
//! a broken peer) prints the first [`Refusals::SHOWN`] of each kind in full,
//! then one line saying the rest are only counted, then a running total at
//! every power of ten.

use std::sync::atomic::{AtomicU64, Ordering};

/// The refusals of one handler kind (a `static` per kind).
pub struct Refusals {
    /// What is refused, for the summary lines ("CELL_FREE messages").
    what: &'static str,
    count: AtomicU64,
}

impl Refusals {
    /// How many refusals of each kind are reported in full.
    pub const SHOWN: u64 = 10;

    /// No refusals yet of messages described as `what`.
    pub const fn new(what: &'static str) -> Refusals {
        Refusals {
            what,
            count: AtomicU64::new(0),
        }
    }

    /// Counts one refusal and reports it as `warning: {line}` while fewer
    /// than [`Refusals::SHOWN`] were reported; afterwards only a running
    /// total at every power of ten (100, 1000, ...). Safe in a handler (no
    /// locks: one `write(2)` per line).
    pub fn refuse(&self, line: std::fmt::Arguments) {
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        if n <= Self::SHOWN {
            gasnet_sys::report(format_args!("warning: {line}"));
        }
        if n == Self::SHOWN {
            // (No "refused" in this line: tests count the lines that say it.)
            gasnet_sys::report(format_args!(
                "warning: further refusals of {} are counted, not printed (totals at 100, 1000, ...)",
                self.what
            ));
        } else if n > Self::SHOWN && is_power_of_ten(n) {
            gasnet_sys::report(format_args!("warning: {n} {} refused so far by this rank", self.what));
        }
    }

    /// Refusals of this kind so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}

fn is_power_of_ten(mut n: u64) -> bool {
    while n >= 10 && n.is_multiple_of(10) {
        n /= 10;
    }
    n == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_ten() {
        let yes: Vec<u64> = (1..=100_000).filter(|&n| is_power_of_ten(n)).collect();
        assert_eq!(yes, [1, 10, 100, 1000, 10_000, 100_000]);
    }
}
