//! The runtime's settings, declared once: the table below is the only place
//! a setting is written. From each row come the [`Config`] field and its
//! default, the environment variable's parser (one syntax per value type,
//! [`values`]), the builder method and the getter, the README's settings
//! table ([`Config::settings_markdown`], checked by a test), the start-up
//! description (`UAT_VERBOSE=on`) and, for the settings every rank must
//! share, the start-up agreement check (`Runtime::start`: a mismatch ends
//! the job naming the variable and both values).
//!
//! Every limit grows by configuration or fails loudly naming its setting.
//! The defaults run UTS T3 (depth 1,572) and T3L (depth 17,844) on one rank.

mod values;

use crate::fatal::fmt_size;
pub use values::{CacheFault, ConfigError, PollerCores, PollerWait, StealProtocol, TraceMode, VictimPolicy};
pub(crate) use values::{SettingValue, BOOL_SYNTAX};

/// One row of the settings table.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    /// The environment variable.
    pub env: &'static str,
    /// The [`Config`] field (and builder method).
    pub field: &'static str,
    /// What it sets.
    pub what: &'static str,
    /// The values it takes.
    pub values: &'static str,
    /// Its default, as the README says it.
    pub default: &'static str,
    /// Whether every rank must have the same value (checked at start-up).
    pub agree: bool,
    /// A valid value other than the default (the tests set each).
    pub example: &'static str,
}

/// Declares the settings (see the module docs for what each row yields).
macro_rules! settings {
    ($(
        $(#[doc = $doc:literal])+
        $field:ident: $ty:ty = $default:expr; set $arg:ty;
        get $getter:ident; env $var:literal, e.g. $example:literal;
        what $what:literal; values $values:expr; default $default_text:literal;
        agree $agree:literal; check $check:expr;
    )*) => {
        /// The runtime's configuration: [`Config::from_env`], then the
        /// builder methods; read back with the `get_*` methods. Each
        /// setting's environment variable, values and default are in
        /// [`Config::SETTINGS`] (the README's table).
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct Config {
            $( $(#[doc = $doc])+ pub(crate) $field: $ty, )*
        }

        impl Default for Config {
            fn default() -> Config {
                Config { $( $field: $default, )* }
            }
        }

        impl Config {
            /// Every setting, in the table's order.
            pub const SETTINGS: &'static [Setting] = &[
                $( Setting {
                    env: $var,
                    field: stringify!($field),
                    what: $what,
                    values: $values,
                    default: $default_text,
                    agree: $agree,
                    example: $example,
                }, )*
            ];

            /// Defaults overridden by the lookup's values of the variables.
            pub(crate) fn from_lookup(env: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
                let mut c = Config::default();
                $(
                    if let Some(text) = env($var) {
                        let value = <$ty as SettingValue>::parse($var, &text)?;
                        let check: fn(&$ty) -> Result<(), String> = $check;
                        check(&value).map_err(|why| ConfigError(format!("{}={text}: {why}", $var)))?;
                        c.$field = value;
                    }
                )*
                c.check_together(&env)?;
                Ok(c)
            }

            $(
                $(#[doc = $doc])+
                #[doc = concat!("\n\nEnvironment: `", $var, "`.")]
                pub fn $field(mut self, value: $arg) -> Config {
                    self.$field = value.into();
                    self
                }

                #[doc = concat!("The value of `", stringify!($field), "` (`", $var, "`).")]
                #[allow(clippy::clone_on_copy)]
                pub fn $getter(&self) -> $ty {
                    self.$field.clone()
                }
            )*

            /// Every setting's own check and the rules between them, on
            /// values however they were set (the builder methods take any):
            /// `Runtime::start` refuses a configuration that fails one,
            /// naming the variable and the value.
            pub(crate) fn validate(&self) -> Result<(), ConfigError> {
                $(
                    let check: fn(&$ty) -> Result<(), String> = $check;
                    check(&self.$field)
                        .map_err(|why| ConfigError(format!("{}={}: {why}", $var, self.$field.show())))?;
                )*
                self.check_together(&|_: &str| None)
            }

            /// Every setting as `UAT_X=value` (the start-up description).
            pub fn describe_settings(&self) -> String {
                [$( format!("{}={}", $var, self.$field.show()) ),*].join(" ")
            }

            /// The settings every rank must share: variable, value as set.
            pub(crate) fn agreement(&self) -> Vec<(&'static str, String)> {
                let mut v = Vec::new();
                $( if $agree { v.push(($var, self.$field.show())); } )*
                v
            }

            /// Each setting's word, in the table's order (tests).
            #[cfg(test)]
            fn words(&self) -> Vec<u64> {
                vec![$( self.$field.word() ),*]
            }
        }
    };
}

/// The syntax of a size.
const SIZE: &str = "a size: 65536, 512K, 64M, 1G";
/// The syntax of a count.
const COUNT: &str = "a whole number";

settings! {
    /// Bytes of the uni-address stack region (the deepest thread's frames).
    stack_size: usize = 64 << 20; set usize;
    get get_stack_size; env "UAT_STACK_SIZE", e.g. "128M";
    what "uni-address stack region"; values SIZE; default "64M";
    agree true; check |v| values::at_least(v, 256 << 10);

    /// Deque entries (continuations waiting at once on a rank).
    deque_capacity: usize = 1 << 17; set usize;
    get get_deque_capacity; env "UAT_DEQUE_CAPACITY", e.g. "4096";
    what "deque capacity (entries)"; values "a count: 4096, 64K"; default "128K";
    agree true; check |v| {
        values::at_least(v, 16)?;
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
    agree true; check |v| values::at_least(v, 16);

    /// Bytes of the RDMA region, where suspended threads' frames wait.
    rdma_region: usize = 64 << 20; set usize;
    get get_rdma_region; env "UAT_RDMA_REGION", e.g. "16M";
    what "RDMA region (suspended threads' frames)"; values SIZE; default "64M";
    agree true; check |v| values::at_least(v, 64 << 10);

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
    agree false; check |v| values::at_least(v, 1);

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

    /// Bytes of each rank's global heap (`uat::global`).
    global_heap: usize = 1 << 30; set usize;
    get get_global_heap; env "UAT_GLOBAL_HEAP", e.g. "256M";
    what "global heap per rank (`uat::global`)"; values SIZE; default "1G";
    agree true; check |v| values::at_least(v, 64 << 10);

    /// Global memory outside shared memory is cached in blocks, written
    /// back at release points (off: one get per checkout, one put per
    /// write).
    cache: bool = true; set bool;
    get get_cache; env "UAT_CACHE", e.g. "off";
    what "cache other hosts' global memory (off: one get per checkout, one put per write)";
    values BOOL_SYNTAX; default "on";
    agree true; check |_| Ok(());

    /// Bytes of a cache block (a power of two).
    cache_block: usize = 16 << 10; set usize;
    get get_cache_block; env "UAT_CACHE_BLOCK", e.g. "64K";
    what "cache block"; values "a power of two ≥ 4K"; default "16K";
    agree true; check |v| {
        values::at_least(v, 4 << 10)?;
        if v.is_power_of_two() { Ok(()) } else { Err("a cache block must be a power of two (4K, 16K, 64K, ...)".into()) }
    };

    /// Bytes the cache may hold per process.
    cache_size: usize = 256 << 20; set usize;
    get get_cache_size; env "UAT_CACHE_SIZE", e.g. "1M";
    what "cache capacity per process"; values SIZE; default "256M";
    agree false; check |v| values::at_least(v, 4 << 10);

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
    agree false; check |v| values::at_least(v, 16);

    /// Tests only: break the cache's coherence on purpose, so that a test
    /// can show it detects the fault.
    cache_fault: CacheFault = CacheFault::None; set CacheFault;
    get get_cache_fault; env "UAT_CACHE_FAULT", e.g. "no-write-back";
    what "tests only: break the cache's coherence on purpose"; values "none|no-write-back|no-invalidate";
    default "none";
    agree false; check |_| Ok(());
}

impl Config {
    /// Defaults overridden by the `UAT_*` environment variables.
    pub fn from_env() -> Result<Config, ConfigError> {
        Config::from_lookup(|k| std::env::var(k).ok())
    }

    /// Rules between settings.
    fn check_together(&self, env: &impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        if self.cache_size < self.cache_block {
            return Err(ConfigError(format!(
                "UAT_CACHE_SIZE={}: the cache must hold at least one block (UAT_CACHE_BLOCK={})",
                env("UAT_CACHE_SIZE").unwrap_or_else(|| fmt_size(self.cache_size)),
                fmt_size(self.cache_block)
            )));
        }
        Ok(())
    }

    /// The README's settings table, generated from [`Config::SETTINGS`].
    pub fn settings_markdown() -> String {
        let mut t =
            String::from("| setting | env var | values | default | same on every rank |\n|---|---|---|---|---|\n");
        for s in Config::SETTINGS {
            let cell = |x: &str| x.replace('|', "\\|");
            t.push_str(&format!(
                "| {} | `{}` | {} | {} | {} |\n",
                s.what,
                s.env,
                cell(s.values),
                cell(s.default),
                if s.agree { "yes" } else { "" }
            ));
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn only(var: &str, value: &str) -> Result<Config, ConfigError> {
        Config::from_lookup(|k| (k == var).then(|| value.to_string()))
    }

    #[test]
    fn every_setting_takes_its_example_and_nothing_else_changes() {
        let default = Config::default().words();
        assert_eq!(Config::from_lookup(|_| None).unwrap(), Config::default());
        for (i, s) in Config::SETTINGS.iter().enumerate() {
            let c = only(s.env, s.example).unwrap_or_else(|e| panic!("{}={}: {e}", s.env, s.example));
            let words = c.words();
            for (j, (&got, &was)) in words.iter().zip(&default).enumerate() {
                if i == j {
                    assert_ne!(got, was, "{}={} did not change `{}`", s.env, s.example, s.field);
                } else {
                    assert_eq!(got, was, "{}={} changed {}", s.env, s.example, Config::SETTINGS[j].env);
                }
            }
            assert!(c.describe_settings().contains(&format!("{}=", s.env)));
        }
    }

    #[test]
    fn values_set_by_the_builder_meet_the_same_checks() {
        assert!(Config::default().validate().is_ok());
        for (c, var) in [
            (Config::default().cache_block(5000), "UAT_CACHE_BLOCK"),
            (Config::default().stack_size(4096), "UAT_STACK_SIZE"),
            (Config::default().deque_capacity(usize::MAX), "UAT_DEQUE_CAPACITY"),
            (Config::default().lifeline_attempts(0), "UAT_LIFELINE_W"),
            (Config::default().cache_size(4096).cache_block(8192), "UAT_CACHE_SIZE"),
        ] {
            let e = c.validate().unwrap_err();
            assert!(e.0.starts_with(var), "{e}");
        }
    }

    #[test]
    fn every_refusal_names_the_variable() {
        for s in Config::SETTINGS {
            for bad in ["maybe", "-1", "", "1,,2", "99999999999999999999999"] {
                if let Err(e) = only(s.env, bad) {
                    assert!(e.0.starts_with(&format!("{}={bad}", s.env)), "{e}");
                }
            }
        }
        for (var, bad) in [
            ("UAT_STACK_SIZE", "4K"),
            ("UAT_DEQUE_CAPACITY", "many"),
            ("UAT_LIFELINE_W", "0"),
            ("UAT_LIFELINE_Z", "33"),
            ("UAT_CACHE_BLOCK", "5000"),
            ("UAT_CACHE_SIZE", "4K"),
            ("UAT_STEAL_PROTOCOL", "THE"),
            ("UAT_POLLER_CORE", "-1"),
            ("UAT_VERBOSE", "yes"),
            ("UAT_LIFELINES", "maybe"),
        ] {
            let e = only(var, bad).unwrap_err();
            assert!(e.0.contains(&format!("{var}={bad}")), "{e}");
        }
    }

    #[test]
    fn booleans_off_mean_off() {
        for s in Config::SETTINGS.iter().filter(|s| s.values == BOOL_SYNTAX) {
            for (text, on) in [
                ("on", true),
                ("off", false),
                ("1", true),
                ("0", false),
                ("true", true),
                ("false", false),
            ] {
                let c = only(s.env, text).unwrap();
                let d = only(s.env, if on { "off" } else { "on" }).unwrap();
                assert_ne!(c, d, "{}={text}", s.env);
            }
        }
        assert!(!only("UAT_VERBOSE", "off").unwrap().get_verbose());
        assert!(only("UAT_FORCE_STEAL", "1").unwrap().get_force_steal());
    }

    #[test]
    fn random_text_never_panics() {
        // A property test of the parser: random bytes as every variable's
        // value are taken or refused, naming the variable.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let alphabet: Vec<char> = "0123456789KMGkmg,-+. onfftrueyieldspinpaper\u{e9}\u{1F600}"
            .chars()
            .collect();
        for _ in 0..4000 {
            let len = (next() % 12) as usize;
            let text: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            let s = &Config::SETTINGS[(next() % Config::SETTINGS.len() as u64) as usize];
            if let Err(e) = only(s.env, &text) {
                assert!(e.0.contains(s.env), "{e}");
            }
        }
    }

    #[test]
    fn the_readme_and_the_design_show_the_generated_table() {
        let table = Config::settings_markdown();
        for doc in ["README.md", "docs/design/settings-and-names.md"] {
            let text = std::fs::read_to_string(format!("{}/../{doc}", env!("CARGO_MANIFEST_DIR"))).unwrap();
            assert!(
                text.contains(&table),
                "{doc}'s settings table differs from the one the settings declare; replace it with:\n\n{table}"
            );
        }
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
