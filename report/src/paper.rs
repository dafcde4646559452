//! The paper's own numbers (Akiyama & Taura, IPSJ JIP 2016; TSUBAME2.5:
//! Xeon X5670 at 2.93 GHz, InfiniBand QDR, GASNet 1.24.2 ibv-conduit), as
//! listed in docs/design/README.md, for the report's side-by-side columns.

/// The paper's clock, to turn its cycle counts into times.
pub const GHZ: f64 = 2.93;

/// Table 2: cycles per task creation.
pub fn spawn_cycles(mode: &str) -> Option<f64> {
    match mode {
        "rdma-emulated" => Some(184.0),
        "am" => Some(353.0),
        _ => None,
    }
}
pub const MASSIVETHREADS_SPAWN_CYCLES: f64 = 122.0;

/// Fig. 11: 8-byte latency in cycles: (get, put, get with a polling
/// thread, put with a polling thread).
pub const LATENCY_CYCLES: [f64; 4] = [8_200.0, 5_900.0, 11_600.0, 8_400.0];

/// Fig. 13: one steal of 664 bytes of frames, in cycles.
pub fn steal_cycles(mode: &str) -> Option<f64> {
    match mode {
        "rdma-emulated" => Some(86_000.0),
        "am" => Some(61_000.0),
        _ => None,
    }
}
pub const SUSPEND_CYCLES: f64 = 1_100.0;
pub const RESUME_CYCLES: f64 = 800.0;

/// Table 4 (1,800 cores): (size, max stack bytes, seconds for RDMA-emu EC
/// on, off, AM EC on, off).
pub fn table4(bench: &str) -> Option<(&'static str, u64, [Option<f64>; 4])> {
    match bench {
        "btc" => Some((
            "depth 41, 4,398 G tasks",
            36_144,
            [Some(113.0), Some(113.4), Some(325.1), Some(416.3)],
        )),
        "uts" => Some((
            "-t 1 -r 0 -b 4 -a 3 -d 18, 439 G nodes",
            132_224,
            [Some(108.2), Some(108.6), Some(141.0), Some(150.0)],
        )),
        "nqueens" => Some((
            "N = 18, 59 G nodes",
            79_360,
            [Some(194.0), Some(195.3), Some(272.7), None],
        )),
        _ => None,
    }
}

/// Fig. 16: share of run time handling messages at spawn, AM-based with
/// the empty check, at 1,800 cores.
pub fn msg_share(bench: &str) -> Option<f64> {
    match bench {
        "btc" => Some(63.3),
        "uts" => Some(25.7),
        "nqueens" => Some(41.4),
        _ => None,
    }
}

/// The input sizes of Fig. 12 (overhead against the serial program).
pub const FIG12_SIZES: &str = "BTC depth 28, UTS depth 11, NQueens 13";
