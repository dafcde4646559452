//! The time-stamp counter: cheap timestamps for hot paths (a poll at every
//! spawn cannot afford a clock_gettime on each side).

use std::sync::OnceLock;

/// The current TSC value.
#[inline(always)]
pub(crate) fn now() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86-64.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// TSC ticks per second, measured once against the monotonic clock (20 ms).
pub fn hz() -> f64 {
    static HZ: OnceLock<f64> = OnceLock::new();
    *HZ.get_or_init(|| {
        let (t0, c0) = (std::time::Instant::now(), now());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (dt, dc) = (t0.elapsed().as_secs_f64(), now().wrapping_sub(c0));
        dc as f64 / dt
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_tsc_ticks_at_a_plausible_rate() {
        let hz = super::hz();
        assert!(hz > 1e8 && hz < 1e11, "{hz}");
    }
}
