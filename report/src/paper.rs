//! The paper's own numbers (Akiyama & Taura, IPSJ JIP 2016; TSUBAME2.5:
//! Xeon X5670 at 2.93 GHz, InfiniBand QDR, GASNet 1.24.2 ibv-conduit),
//! declared once: the report's side-by-side columns and its text use them,
//! and the list in docs/design/README.md is generated from them
//! ([`markdown`], checked by a test).

/// The paper's clock, to turn its cycle counts into times.
pub const GHZ: f64 = 2.93;

/// The paper's machine, as the docs name it.
pub const MACHINE: &str = "IPSJ JIP 2016; TSUBAME2.5: Xeon X5670 2.93 GHz, IB QDR, GASNet 1.24.2 ibv";

/// The benchmarks the paper measures: (name in this project, as the paper
/// names it).
pub const BENCHES: [(&str, &str); 3] = [("btc", "BTC"), ("uts", "UTS"), ("nqueens", "NQueens")];

/// Table 2: cycles per task creation.
pub fn spawn_cycles(mode: &str) -> Option<f64> {
    match mode {
        "rdma-emulated" => Some(184.0),
        "am" => Some(353.0),
        _ => None,
    }
}
/// Table 2: cycles per task creation in MassiveThreads.
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
/// Fig. 13: the frames of one steal, in bytes.
pub const STEAL_FRAME_BYTES: u64 = 664;
/// Fig. 13: the suspend part of a steal, in cycles.
pub const SUSPEND_CYCLES: f64 = 1_100.0;
/// Fig. 13: the resume part of a steal, in cycles.
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

/// Fig. 14: efficiency at 1,800 cores against 225, in percent:
/// (RDMA-emulated, AM-based without the empty check).
pub fn efficiency(bench: &str) -> (Option<f64>, Option<f64>) {
    match bench {
        "btc" => (Some(99.0), Some(47.0)),
        "uts" => (Some(98.0), Some(77.0)),
        "nqueens" => (Some(99.0), None),
        _ => (None, None),
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

/// Fig. 16 without the empty check (percent; where the paper gives it).
pub fn msg_share_without_empty_check(bench: &str) -> Option<f64> {
    match bench {
        "btc" => Some(70.0),
        "uts" => Some(29.8),
        _ => None,
    }
}

/// The input sizes of Fig. 12 (overhead against the serial program).
pub const FIG12_SIZES: &str = "BTC depth 28, UTS depth 11, NQueens 13";

/// Fig. 12: RDMA-emulated's overhead over serial is within this factor of
/// MassiveThreads'.
pub const FIG12_WITHIN_MASSIVETHREADS: f64 = 1.16;

/// Cycles in thousands, as the docs write them: `5.9 K`, `86 K`.
pub fn kilo(cycles: f64) -> String {
    let k = cycles / 1000.0;
    if k.fract() == 0.0 {
        format!("{k:.0} K")
    } else {
        format!("{k:.1} K")
    }
}

/// The paper's numbers as docs/design/README.md lists them ("What we
/// measure against").
pub fn markdown() -> String {
    let c = |x: Option<f64>| x.map_or("–".to_string(), |v| format!("{v:.0}"));
    let one = |x: Option<f64>| x.map_or("–".to_string(), |v| format!("{v:.1}"));
    let mut t = format!("The paper ({MACHINE}):\n\n");
    t += &format!(
        "- Table 2, task creation: {} cycles RDMA-emulated, {} AM-based, MassiveThreads {}.\n",
        c(spawn_cycles("rdma-emulated")),
        c(spawn_cycles("am")),
        MASSIVETHREADS_SPAWN_CYCLES
    );
    let [get, put, get_polled, put_polled] = LATENCY_CYCLES.map(kilo);
    t += &format!(
        "- Fig. 11, 8-byte latency: put {put} / get {get} cycles; with a polling thread present \
         {put_polled} / {get_polled}.\n"
    );
    t += &format!(
        "- Fig. 12, overhead over serial ({FIG12_SIZES}): RDMA-emulated within \
         {FIG12_WITHIN_MASSIVETHREADS}× of MassiveThreads.\n"
    );
    t += &format!(
        "- Fig. 13, one steal ({STEAL_FRAME_BYTES}-byte frames): {} cycles RDMA-emulated, {} AM-based; \
         suspend {} and resume {} of that.\n",
        kilo(steal_cycles("rdma-emulated").unwrap_or(f64::NAN)),
        kilo(steal_cycles("am").unwrap_or(f64::NAN)),
        kilo(SUSPEND_CYCLES),
        kilo(RESUME_CYCLES)
    );
    t += "- Table 4, 1,800 cores (s; RDMA-emulated EC on / off, AM EC on / off):\n\n";
    t += "  | benchmark | size | max stack | RDMA-emu on | off | AM on | off |\n";
    t += "  |---|---|---|---|---|---|---|\n";
    for (bench, name) in BENCHES {
        if let Some((size, stack, secs)) = table4(bench) {
            let (input, count) = size.rsplit_once(", ").unwrap_or((size, ""));
            let input = if input.starts_with('-') {
                format!("`{input}`")
            } else {
                input.to_string()
            };
            let secs: Vec<String> = secs.iter().map(|&s| one(s)).collect();
            t += &format!(
                "  | {name} {input} | {count} | {} B | {} |\n",
                crate::table::thousands(stack),
                secs.join(" | ")
            );
        }
    }
    let percent = |x: Option<f64>| x.map_or("–".to_string(), |v| format!("{v}%"));
    let names = BENCHES.map(|(_, name)| name).join(", ");
    let rdma: Vec<String> = BENCHES.iter().map(|(b, _)| percent(efficiency(b).0)).collect();
    let am: Vec<String> = BENCHES
        .iter()
        .filter_map(|(b, name)| efficiency(b).1.map(|v| format!("{v}% ({name})")))
        .collect();
    t += &format!(
        "\n- Fig. 14, efficiency 1,800 vs 225 cores: RDMA-emulated {} ({names}); AM-based without empty check {}.\n",
        rdma.join(" / "),
        am.join(", ")
    );
    let share: Vec<String> = BENCHES
        .iter()
        .map(|(b, name)| format!("{name} {}", percent(msg_share(b))))
        .collect();
    t += &format!(
        "- Fig. 16, share of run time handling messages, AM-based with empty check: {}.\n",
        share.join(", ")
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_design_lists_the_papers_numbers_from_here() {
        let list = markdown();
        let doc = "docs/design/README.md";
        let text = std::fs::read_to_string(format!("{}/../{doc}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        assert!(
            text.contains(&list),
            "{doc}'s list of the paper's numbers differs from report/src/paper.rs; replace it with:\n\n{list}"
        );
    }

    #[test]
    fn numbers_print_as_the_docs_write_them() {
        assert_eq!(kilo(86_000.0), "86 K");
        assert_eq!(kilo(5_900.0), "5.9 K");
    }
}
