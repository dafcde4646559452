//! The scheduler's settings, declared once in the [`settings!`](crate::settings!)
//! form ([`crate::settings`] says what each row yields): the table below is
//! the only place a setting is written. Global memory's settings are in
//! its own table (`uat_memory::Config`); the scheduler knows nothing of
//! them but the bytes of the zone it reserves for the layer.
//!
//! Every limit grows by configuration or fails loudly naming its setting.
//! The defaults run UTS T3 (depth 1,572) and T3L (depth 17,844) on one rank.

mod values;

pub use crate::settings::ConfigError;
use crate::settings::{at_least, BOOL_SYNTAX, COUNT_SYNTAX, SIZE_SYNTAX};
pub use values::{PollerCores, PollerWait, StealProtocol, TraceMode, VictimPolicy};

const SIZE: &str = SIZE_SYNTAX;
const COUNT: &str = COUNT_SYNTAX;

crate::settings! {
    /// The scheduler's configuration: [`Config::from_env`], then the
    /// builder methods; read back with the `get_*` methods. Each setting's
    /// environment variable, values and default are in
    /// [`Config::SETTINGS`] (the README's table).
    pub struct Config;
    docs ["README.md", "docs/design/settings-and-names.md"];

    /// Bytes of the uni-address stack region (the deepest thread's frames).
    stack_size: usize = 64 << 20; set usize;
    get get_stack_size; env "UAT_STACK_SIZE", e.g. "128M";
    what "uni-address stack region"; values SIZE; default "64M";
    agree true; check |v| at_least(v, 256 << 10);

    /// Deque entries (continuations waiting at once on a rank).
    deque_capacity: usize = 1 << 17; set usize;
    get get_deque_capacity; env "UAT_DEQUE_CAPACITY", e.g. "4096";
    what "deque capacity (entries)"; values "a count: 4096, 64K"; default "128K";
    agree true; check |v| {
        at_least(v, 16)?;
        if *v > crate::deque::MAX_CAPACITY {
            return Err(format!("at most {} entries (the split protocol's packed word indexes them)",
                crate::deque::MAX_CAPACITY));
        }
        Ok(())
    };

    /// Future cells per rank (tasks spawned and not yet joined).
    future_cells: usize = 1 << 17; set usize;
    get get_future_cells; env "UAT_FUTURE_CELLS", e.g. "4096";
    what "future cells (tasks spawned, not yet joined)"; values "a count: 4096, 64K"; default "128K";
    agree true; check |v| at_least(v, 16);

    /// Bytes of the RDMA region, where suspended threads' frames wait.
    rdma_region: usize = 64 << 20; set usize;
    get get_rdma_region; env "UAT_RDMA_REGION", e.g. "16M";
    what "RDMA region (suspended threads' frames)"; values SIZE; default "64M";
    agree true; check |v| at_least(v, 64 << 10);

    /// Poll for Active Messages every this many spawns even when the
    /// attention word is not raised (0: only when it is). None: the job's
    /// default (`am_fad::default_poll_interval`).
    poll_interval: Option<u32> = None; set u32;
    get get_poll_interval; env "UAT_POLL_INTERVAL", e.g. "7";
    what "poll every N spawns besides when asked (the attention word)"; values COUNT;
    default "smp: 0; elsewhere 64 (am beyond shared memory: 1); rdma-emulated: 0";
    agree false; check |_| Ok(());

    /// How thieves and owners share a deque (the deque module states both).
    steal_protocol: StealProtocol = StealProtocol::Split; set StealProtocol;
    get get_steal_protocol; env "UAT_STEAL_PROTOCOL", e.g. "paper";
    what "steal protocol: split deque + one fetch-and-add claim, or the paper's THE with a lock";
    values "split|paper"; default "split";
    agree true; check |_| Ok(());

    /// Thieves read a victim's deque (one get) before claiming from it.
    empty_check: bool = true; set bool;
    get get_empty_check; env "UAT_EMPTY_CHECK", e.g. "off";
    what "thieves check a victim's deque with one read before claiming"; values BOOL_SYNTAX; default "on";
    agree false; check |_| Ok(());

    /// Idle ranks quiesce on lifelines and are woken when work appears.
    lifelines: bool = true; set bool;
    get get_lifelines; env "UAT_LIFELINES", e.g. "off";
    what "idle ranks sleep on lifelines (PPoPP'11) and are woken when work appears";
    values BOOL_SYNTAX; default "on";
    agree true; check |_| Ok(());

    /// Failed steal attempts in a row before quiescing (`w`).
    lifeline_attempts: u32 = 8; set u32;
    get get_lifeline_attempts; env "UAT_LIFELINE_W", e.g. "3";
    what "lifelines: failed steal attempts before sleeping (`w`)"; values "1 or more"; default "8";
    agree false; check |v| at_least(v, 1);

    /// Dimensions of the lifeline graph (`z`; None: ⌈log2 ranks⌉, a binary
    /// hypercube).
    lifeline_dimensions: Option<u32> = None; set u32;
    get get_lifeline_dimensions; env "UAT_LIFELINE_Z", e.g. "2";
    what "lifelines: dimensions of the lifeline graph (`z`, lifelines per rank)"; values "1 to 32";
    default "⌈log2 ranks⌉";
    agree true; check |v| match v {
        None => Ok(()),
        Some(z) if (1..=crate::arena::MAX_LIFELINES as u32).contains(z) => Ok(()),
        _ => Err(format!("expected the lifeline graph's dimensions, 1 to {} (lifelines per rank)",
            crate::arena::MAX_LIFELINES)),
    };

    /// How long a rank asleep on its lifelines polls without sleeping when
    /// this rank's gets, puts or atomics on its memory waited for its polls
    /// (`crate::lifeline::keep_polling`; zero: never asked).
    keep_polling: std::time::Duration = std::time::Duration::from_millis(10); set std::time::Duration;
    get get_keep_polling; env "UAT_KEEP_POLLING", e.g. "2ms";
    what "lifelines: how long a sleeping rank polls without sleeping, asked by a rank whose gets, puts or atomics on its memory waited for its polls (renewed while they go on)";
    values "a duration: 0 (off), 500us, 10ms"; default "10ms";
    agree false; check |d| if *d > crate::lifeline::keep_polling::MAX_WINDOW {
        Err("at most 1s".into())
    } else {
        Ok(())
    };

    /// Seed of the per-rank victim choice (None: from the clock).
    seed: Option<u64> = None; set u64;
    get get_seed; env "UAT_SEED", e.g. "42";
    what "victim-choice seed"; values COUNT; default "clock";
    agree false; check |_| Ok(());

    /// How a thief chooses its victims (`crate::victim`).
    victims: VictimPolicy = VictimPolicy::Random; set VictimPolicy;
    get get_victims; env "UAT_VICTIMS", e.g. "host-first";
    what "victim choice: any other rank at random, or this host's ranks first (another host's every p-th failed attempt in a row, p = min(k + 1, max(W, 2)), k: the host's other ranks, W: UAT_LIFELINE_W)";
    values "random|host-first"; default "random";
    agree true; check |_| Ok(());

    /// Experiments: every operation and message to another host (a GASNet
    /// neighbourhood) waits this long before it is issued, spinning on the
    /// issuing thread, so that a loopback job sees a cluster's ratio of
    /// local to remote cost (`gasnet_sys::Hosts`).
    net_delay: std::time::Duration = std::time::Duration::ZERO; set std::time::Duration;
    get get_net_delay; env "UAT_NET_DELAY", e.g. "2us";
    what "experiments: emulated network delay on each request and blocking operation that crosses hosts, and on each waited-for non-blocking batch that does (not on replies)";
    values "a duration: 0, 500ns, 2us, 1ms"; default "0 (off)";
    agree true; check |d| if *d > std::time::Duration::from_secs(1) {
        Err("at most 1s (a delay is per operation)".into())
    } else {
        Ok(())
    };

    /// `rdma-emulated`: how the communication-assisting thread waits (None:
    /// spin when the host has two cores per rank, else yield).
    poller: Option<PollerWait> = None; set PollerWait;
    get get_poller; env "UAT_POLLER", e.g. "yield";
    what "poller (rdma-emulated): spin or yield"; values "spin|yield"; default "spin if ≥ 2 cores per rank";
    agree false; check |_| Ok(());

    /// `rdma-emulated`: pin the i-th rank of a host's poller to core `B + i`,
    /// or to the i-th core listed.
    poller_core: Option<PollerCores> = None; set PollerCores;
    get get_poller_core; env "UAT_POLLER_CORE", e.g. "0";
    what "poller: pin the i-th rank of a host to core B+i, or to the i-th listed";
    values "B, or c0,c1,..."; default "not pinned";
    agree false; check |_| Ok(());

    /// The migration checker: per-rank heaps, pointers into another rank's
    /// heap reported.
    check_migration: bool = false; set bool;
    get get_check_migration; env "UAT_CHECK_MIGRATION", e.g. "on";
    what "migration checker: per-rank heaps, report moved pointers"; values BOOL_SYNTAX; default "off";
    agree false; check |_| Ok(());

    /// Tests: on 2 or more ranks, every run's root first spawns a child that
    /// waits until another rank has stolen the root's continuation, so that
    /// a steal is certain, not likely (one extra spawn).
    force_steal: bool = false; set bool;
    get get_force_steal; env "UAT_FORCE_STEAL", e.g. "on";
    what "tests: make a steal certain in every run"; values BOOL_SYNTAX; default "off";
    agree false; check |_| Ok(());

    /// Re-execute the program once with address randomisation off, so that
    /// code and statics lie at the same address in every rank. Read from
    /// the environment by `uat::addresses` before GASNet starts (before any
    /// `Config` exists): the builder method only records the value.
    fix_addresses: bool = true; set bool;
    get get_fix_addresses; env "UAT_FIX_ADDRESSES", e.g. "off";
    what "re-execute with address randomisation off"; values BOOL_SYNTAX; default "on";
    agree false; check |_| Ok(());

    /// Print the configuration at start (and, with `launch`, the run's
    /// counters at the end).
    verbose: bool = false; set bool;
    get get_verbose; env "UAT_VERBOSE", e.g. "on";
    what "print the configuration at start (and, with `launch`, the run's counters at the end)";
    values BOOL_SYNTAX; default "off";
    agree false; check |_| Ok(());

    /// Measure work and span (Cilkscale's measures) in strands and in time
    /// (`crate::workspan`).
    workspan: bool = false; set bool;
    get get_workspan; env "UAT_WORKSPAN", e.g. "on";
    what "measure work, span and parallelism (in strands and in time)"; values BOOL_SYNTAX; default "off";
    agree true; check |_| Ok(());

    /// Write a trace of the scheduler into this directory at the end of the
    /// job (`crate::trace`); None: no trace.
    trace: Option<std::path::PathBuf> = None; set std::path::PathBuf;
    get get_trace; env "UAT_TRACE", e.g. "target/trace";
    what "write a trace of the scheduler into this directory (trace.json, stats.txt, per-rank files)";
    values "a directory"; default "no trace";
    agree true; check |_| Ok(());

    /// What a trace keeps: every event, or the statistics only.
    trace_mode: TraceMode = TraceMode::Timeline; set TraceMode;
    get get_trace_mode; env "UAT_TRACE_MODE", e.g. "stats";
    what "trace: every event (timeline) or the per-kind statistics only (stats)"; values "timeline|stats";
    default "timeline";
    agree true; check |_| Ok(());

    /// Records a rank keeps at most (32 bytes each, allocated at start when
    /// tracing a timeline); later ones are counted, not kept.
    trace_events: usize = 1 << 20; set usize;
    get get_trace_events; env "UAT_TRACE_EVENTS", e.g. "64K";
    what "trace: records kept per rank (32 bytes each)"; values "a count: 64K, 4M"; default "1M";
    agree false; check |v| at_least(v, 16);

}

impl Config {
    /// Rules between settings (none: each stands alone).
    fn check_together(&self, _env: &impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::settings_table::{assert_invalid, assert_refused, only};
    use super::*;
    use crate::settings::Settings as _;

    #[test]
    fn bad_values_are_refused_naming_the_variable() {
        assert_invalid([
            (Config::default().stack_size(4096), "UAT_STACK_SIZE"),
            (Config::default().deque_capacity(usize::MAX), "UAT_DEQUE_CAPACITY"),
            (Config::default().lifeline_attempts(0), "UAT_LIFELINE_W"),
        ]);
        assert_refused(&[
            ("UAT_STACK_SIZE", "4K"),
            ("UAT_DEQUE_CAPACITY", "many"),
            ("UAT_LIFELINE_W", "0"),
            ("UAT_LIFELINE_Z", "33"),
            ("UAT_STEAL_PROTOCOL", "THE"),
            ("UAT_POLLER_CORE", "-1"),
            ("UAT_VERBOSE", "yes"),
            ("UAT_LIFELINES", "maybe"),
        ]);
    }

    #[test]
    fn booleans_set_their_field() {
        assert!(!only("UAT_VERBOSE", "off").unwrap().get_verbose());
        assert!(only("UAT_FORCE_STEAL", "1").unwrap().get_force_steal());
    }

    #[test]
    fn the_settings_that_shape_the_arena_must_agree() {
        let agree: Vec<&str> = Config::default().agreement().iter().map(|a| a.0).collect();
        for var in [
            "UAT_STACK_SIZE",
            "UAT_DEQUE_CAPACITY",
            "UAT_LIFELINES",
            "UAT_LIFELINE_Z",
            "UAT_STEAL_PROTOCOL",
        ] {
            assert!(agree.contains(&var), "{var}");
        }
        assert!(!agree.contains(&"UAT_SEED"));
    }
}
