//! Runtime limits and options: defaults, environment variables, builder.
//!
//! Every limit grows by configuration or fails loudly naming its setting:
//!
//! | setting | env var | default |
//! |---|---|---|
//! | uni-address stack region | `UAT_STACK_SIZE` | 64 MiB |
//! | deque capacity (entries) | `UAT_DEQUE_CAPACITY` | 131,072 |
//! | future cells | `UAT_FUTURE_CELLS` | 131,072 |
//! | RDMA region (suspended stacks) | `UAT_RDMA_REGION` | 64 MiB |
//! | poll every N spawns anyway (0: only when asked) | `UAT_POLL_INTERVAL` | smp 0; else 64 (`am` beyond shared memory: 1; `rdma-emulated`: 0) |
//! | steal protocol | `UAT_STEAL_PROTOCOL=split\|paper` | split |
//! | idle ranks quiesce on lifelines | `UAT_LIFELINES=on\|off` | on |
//! | lifelines: failed steals before quiescing (`w`) | `UAT_LIFELINE_W` | 8 |
//! | lifelines: dimensions of the graph (`z`, 1–32) | `UAT_LIFELINE_Z` | ⌈log2 ranks⌉ |
//! | print the configuration at start | `UAT_VERBOSE=1` | off |
//! | victim-choice seed | `UAT_SEED` | from the clock |
//! | poller (rdma-emulated): wait mode | `UAT_POLLER=spin\|yield` | spin if ≥ 2 cores per rank |
//! | poller: pin to cores | `UAT_POLLER_CORE=B` or `=c0,c1,...` | not pinned |
//! | migration checker (off, or on) | `UAT_CHECK_MIGRATION=0\|1` | off |
//! | tests: make a steal certain in every run | `UAT_FORCE_STEAL=1` | off |
//! | global heap per rank (`uat::global`) | `UAT_GLOBAL_HEAP` | 1 GiB |
//! | global memory's software cache (network only) | `UAT_CACHE=on\|off` | on |
//! | cache block | `UAT_CACHE_BLOCK` (power of two, ≥ 4K) | 16 KiB |
//! | cache capacity per process | `UAT_CACHE_SIZE` | 256 MiB |
//!
//! `UAT_POLLER_CORE=B` pins the poller of the i-th rank on a host (in rank
//! order) to core `B + i`; a list pins it to the list's i-th core. A core the
//! process may not run on, or a list shorter than the host's rank count, is
//! refused at start-up.
//!
//! The defaults run UTS T3 (depth 1,572) and T3L (depth 17,844) on one rank.
//! Sizes accept K, M, G suffixes (binary).

use std::fmt;

/// The runtime's configuration. Build one with [`Config::from_env`] and
/// adjust it with the builder methods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub stack_size: usize,
    pub deque_capacity: usize,
    pub future_cells: usize,
    pub rdma_region: usize,
    /// Poll for Active Messages every this many spawns even when the
    /// attention word is not raised (0: only when it is). None: the
    /// default for this job (`am_fad::default_poll_interval`: 0 when every
    /// rank shares memory with every other).
    pub poll_interval: Option<u32>,
    /// How thieves and owners share a deque (`UAT_STEAL_PROTOCOL`).
    pub steal_protocol: StealProtocol,
    /// Idle ranks quiesce on lifelines (`UAT_LIFELINES`).
    pub lifelines: bool,
    /// Failed steal attempts in a row before quiescing (`UAT_LIFELINE_W`).
    pub lifeline_attempts: u32,
    /// Dimensions of the lifeline graph (`UAT_LIFELINE_Z`; None: ⌈log2
    /// ranks⌉, a binary hypercube).
    pub lifeline_dimensions: Option<u32>,
    pub verbose: bool,
    /// Steal only after an empty check (one GET) says the victim has work.
    pub empty_check: bool,
    /// Seed of the per-rank victim choice (None: from the clock).
    pub seed: Option<u64>,
    /// `rdma-emulated`: how the communication-assisting thread waits (None:
    /// spin when the host has two cores per rank, else yield).
    pub poller_yield: Option<bool>,
    /// `rdma-emulated`: pin each rank's poller to a core.
    pub poller_core: Option<PollerCores>,
    /// Report pointers into another rank's heap (`UAT_CHECK_MIGRATION`).
    pub check_migration: bool,
    /// Tests: on 2 or more ranks, every run's root first spawns a child that
    /// waits until another rank has stolen the root's continuation, so that
    /// a steal is certain, not likely (`UAT_FORCE_STEAL`; one extra spawn).
    pub force_steal: bool,
    /// Bytes of each rank's global heap (`UAT_GLOBAL_HEAP`).
    pub global_heap: usize,
    /// Global memory outside shared memory is cached (`UAT_CACHE`).
    pub cache: bool,
    /// Bytes of a cache block (`UAT_CACHE_BLOCK`).
    pub cache_block: usize,
    /// Bytes the cache may hold (`UAT_CACHE_SIZE`).
    pub cache_size: usize,
    /// Tests only: break the cache's coherence on purpose
    /// (`UAT_CACHE_FAULT=no-write-back|no-invalidate`), so that a test can
    /// show it detects the fault.
    #[doc(hidden)]
    pub cache_fault: CacheFault,
}

/// A fault injected into the global-memory cache (tests only).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheFault {
    #[default]
    None,
    /// Release points write nothing back.
    NoWriteBack,
    /// Acquire points forget nothing.
    NoInvalidate,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            stack_size: 64 << 20,
            deque_capacity: 1 << 17,
            future_cells: 1 << 17,
            rdma_region: 64 << 20,
            poll_interval: None,
            steal_protocol: StealProtocol::Split,
            lifelines: true,
            lifeline_attempts: 8,
            lifeline_dimensions: None,
            verbose: false,
            empty_check: true,
            seed: None,
            poller_yield: None,
            poller_core: None,
            check_migration: false,
            force_steal: false,
            global_heap: 1 << 30,
            cache: true,
            cache_block: 16 << 10,
            cache_size: 256 << 20,
            cache_fault: CacheFault::None,
        }
    }
}

/// How thieves and owners share a deque (`UAT_STEAL_PROTOCOL`; the same on
/// every rank). The deque module states both protocols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StealProtocol {
    /// Private/shared split, claims by one fetch-and-add (the default).
    Split,
    /// The IPSJ 2016 paper's THE protocol with a remote lock.
    Paper,
}

impl StealProtocol {
    /// The name in `UAT_STEAL_PROTOCOL`, `--steal-protocol` and the JSON.
    pub const fn name(self) -> &'static str {
        match self {
            StealProtocol::Split => "split",
            StealProtocol::Paper => "paper",
        }
    }

    pub fn parse(text: &str) -> Option<StealProtocol> {
        match text {
            "split" => Some(StealProtocol::Split),
            "paper" => Some(StealProtocol::Paper),
            _ => None,
        }
    }
}

/// Where pollers are pinned (`UAT_POLLER_CORE`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PollerCores {
    /// The i-th rank of a host pins its poller to core `first + i`.
    From(usize),
    /// The i-th rank of a host pins its poller to the i-th core listed.
    List(Vec<usize>),
}

impl PollerCores {
    fn parse(text: &str) -> Option<PollerCores> {
        let t = text.trim();
        if t.contains(',') {
            let cores: Option<Vec<usize>> = t.split(',').map(|c| c.trim().parse().ok()).collect();
            cores.filter(|c| !c.is_empty()).map(PollerCores::List)
        } else {
            t.parse().ok().map(PollerCores::From)
        }
    }

    /// The core of the `index`-th rank of a host of `ranks_on_host`, or why
    /// there is none.
    pub fn core_for(&self, index: usize, ranks_on_host: usize) -> Result<usize, String> {
        match self {
            PollerCores::From(first) => first
                .checked_add(index)
                .ok_or_else(|| format!("UAT_POLLER_CORE={first}: core number overflows")),
            PollerCores::List(cores) => cores.get(index).copied().ok_or_else(|| {
                format!(
                    "UAT_POLLER_CORE lists {} core(s) but this host runs {ranks_on_host} ranks: give one per rank",
                    cores.len()
                )
            }),
        }
    }
}

/// A size as a person wrote it: "256K", "64M", "1G", or bytes — the form
/// the `UAT_*` settings accept, so a suggestion can be pasted back.
pub fn fmt_size(bytes: usize) -> String {
    for (shift, suffix) in [(30, "G"), (20, "M"), (10, "K")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// A bad value in an environment variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses "64M", "1G", "4096", "512K".
pub fn parse_size(text: &str) -> Option<usize> {
    let t = text.trim();
    let (digits, shift) = match t.as_bytes().last()? {
        b'K' | b'k' => (&t[..t.len() - 1], 10),
        b'M' | b'm' => (&t[..t.len() - 1], 20),
        b'G' | b'g' => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    digits.parse::<usize>().ok()?.checked_mul(1usize << shift)
}

impl Config {
    /// Defaults overridden by the `UAT_*` environment variables.
    pub fn from_env() -> Result<Config, ConfigError> {
        Config::from_lookup(|k| std::env::var(k).ok())
    }

    pub(crate) fn from_lookup(env: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let mut c = Config::default();
        let size = |var: &str, min: usize, into: &mut usize| -> Result<(), ConfigError> {
            if let Some(v) = env(var) {
                let n = parse_size(&v)
                    .ok_or_else(|| ConfigError(format!("{var}={v}: expected a size such as 64M, 1G or 65536")))?;
                if n < min {
                    return Err(ConfigError(format!("{var}={v}: must be at least {min}")));
                }
                *into = n;
            }
            Ok(())
        };
        size("UAT_STACK_SIZE", 256 << 10, &mut c.stack_size)?;
        size("UAT_DEQUE_CAPACITY", 16, &mut c.deque_capacity)?;
        size("UAT_FUTURE_CELLS", 16, &mut c.future_cells)?;
        size("UAT_GLOBAL_HEAP", 64 << 10, &mut c.global_heap)?;
        size("UAT_CACHE_BLOCK", 4 << 10, &mut c.cache_block)?;
        if !c.cache_block.is_power_of_two() {
            return Err(ConfigError(format!(
                "UAT_CACHE_BLOCK={}: a cache block must be a power of two (4K, 16K, 64K, ...)",
                env("UAT_CACHE_BLOCK").unwrap_or_default()
            )));
        }
        size("UAT_CACHE_SIZE", 4 << 10, &mut c.cache_size)?;
        if c.cache_size < c.cache_block {
            return Err(ConfigError(format!(
                "UAT_CACHE_SIZE={}: the cache must hold at least one block (UAT_CACHE_BLOCK={})",
                fmt_size(c.cache_size),
                fmt_size(c.cache_block)
            )));
        }
        if let Some(v) = env("UAT_CACHE_FAULT") {
            c.cache_fault = match v.as_str() {
                "" | "none" => CacheFault::None,
                "no-write-back" => CacheFault::NoWriteBack,
                "no-invalidate" => CacheFault::NoInvalidate,
                _ => {
                    return Err(ConfigError(format!(
                        "UAT_CACHE_FAULT={v}: expected no-write-back or no-invalidate (tests only)"
                    )))
                }
            };
        }
        if let Some(v) = env("UAT_CACHE") {
            c.cache = match v.as_str() {
                "on" => true,
                "off" => false,
                _ => {
                    return Err(ConfigError(format!(
                        "UAT_CACHE={v}: expected on (global memory outside shared memory is cached in blocks, \
                         written back at release points) or off (one get per checkout, one put per write)"
                    )))
                }
            };
        }
        size("UAT_RDMA_REGION", 64 << 10, &mut c.rdma_region)?;
        if let Some(v) = env("UAT_POLL_INTERVAL") {
            c.poll_interval = Some(
                v.parse()
                    .map_err(|_| ConfigError(format!("UAT_POLL_INTERVAL={v}: expected a whole number of spawns")))?,
            );
        }
        if let Some(v) = env("UAT_STEAL_PROTOCOL") {
            c.steal_protocol = StealProtocol::parse(&v).ok_or_else(|| {
                ConfigError(format!(
                    "UAT_STEAL_PROTOCOL={v}: expected split (the default: private/shared deque, claims by one \
                     fetch-and-add) or paper (IPSJ 2016: THE with a remote lock)"
                ))
            })?;
        }
        if let Some(v) = env("UAT_LIFELINES") {
            c.lifelines = match v.as_str() {
                "on" | "1" => true,
                "off" | "0" => false,
                _ => {
                    return Err(ConfigError(format!(
                        "UAT_LIFELINES={v}: expected on (idle ranks quiesce and are woken through the lifeline \
                         graph) or off (idle ranks steal at random until the run ends)"
                    )))
                }
            };
        }
        if let Some(v) = env("UAT_LIFELINE_W") {
            c.lifeline_attempts = v.parse().ok().filter(|&n| n >= 1).ok_or_else(|| {
                ConfigError(format!(
                    "UAT_LIFELINE_W={v}: expected the number of failed steal attempts before quiescing (1 or more)"
                ))
            })?;
        }
        if let Some(v) = env("UAT_LIFELINE_Z") {
            let max = crate::lifeline::MAX_LIFELINES as u32;
            c.lifeline_dimensions = Some(v.parse().ok().filter(|&n| (1..=max).contains(&n)).ok_or_else(|| {
                ConfigError(format!(
                    "UAT_LIFELINE_Z={v}: expected the lifeline graph's dimensions, 1 to {max} (lifelines per rank)"
                ))
            })?);
        }
        if let Some(v) = env("UAT_SEED") {
            c.seed = Some(
                v.parse()
                    .map_err(|_| ConfigError(format!("UAT_SEED={v}: expected a whole number")))?,
            );
        }
        if let Some(v) = env("UAT_POLLER") {
            c.poller_yield = Some(match v.as_str() {
                "spin" => false,
                "yield" => true,
                _ => return Err(ConfigError(format!("UAT_POLLER={v}: expected spin or yield"))),
            });
        }
        if let Some(v) = env("UAT_POLLER_CORE") {
            c.poller_core = Some(PollerCores::parse(&v).ok_or_else(|| {
                ConfigError(format!(
                    "UAT_POLLER_CORE={v}: expected a first core B (the i-th rank of a host pins its poller to \
                     core B+i) or a list of cores c0,c1,... (one per rank of a host)"
                ))
            })?);
        }
        if let Some(v) = env("UAT_CHECK_MIGRATION") {
            c.check_migration = match v.as_str() {
                "" | "0" | "off" | "false" | "no" => false,
                "1" | "on" | "true" | "yes" => true,
                _ => {
                    return Err(ConfigError(format!(
                        "UAT_CHECK_MIGRATION={v}: expected 1 (on) or 0 (off)"
                    )))
                }
            };
        }
        if let Some(v) = env("UAT_VERBOSE") {
            c.verbose = !matches!(v.as_str(), "" | "0" | "false" | "no");
        }
        Ok(c)
    }

    pub fn stack_size(mut self, bytes: usize) -> Config {
        self.stack_size = bytes;
        self
    }
    pub fn deque_capacity(mut self, entries: usize) -> Config {
        self.deque_capacity = entries;
        self
    }
    pub fn future_cells(mut self, cells: usize) -> Config {
        self.future_cells = cells;
        self
    }
    pub fn rdma_region(mut self, bytes: usize) -> Config {
        self.rdma_region = bytes;
        self
    }
    pub fn poll_interval(mut self, spawns: u32) -> Config {
        self.poll_interval = Some(spawns);
        self
    }
    pub fn steal_protocol(mut self, protocol: StealProtocol) -> Config {
        self.steal_protocol = protocol;
        self
    }
    pub fn lifelines(mut self, on: bool) -> Config {
        self.lifelines = on;
        self
    }
    pub fn lifeline_attempts(mut self, w: u32) -> Config {
        self.lifeline_attempts = w;
        self
    }
    pub fn lifeline_dimensions(mut self, z: u32) -> Config {
        self.lifeline_dimensions = Some(z);
        self
    }
    pub fn verbose(mut self, on: bool) -> Config {
        self.verbose = on;
        self
    }
    pub fn seed(mut self, seed: u64) -> Config {
        self.seed = Some(seed);
        self
    }
    pub fn empty_check(mut self, on: bool) -> Config {
        self.empty_check = on;
        self
    }
    pub fn check_migration(mut self, on: bool) -> Config {
        self.check_migration = on;
        self
    }
    pub fn force_steal(mut self, on: bool) -> Config {
        self.force_steal = on;
        self
    }
    pub fn global_heap(mut self, bytes: usize) -> Config {
        self.global_heap = bytes;
        self
    }
    pub fn cache(mut self, on: bool) -> Config {
        self.cache = on;
        self
    }
    pub fn cache_block(mut self, bytes: usize) -> Config {
        self.cache_block = bytes;
        self
    }
    pub fn cache_size(mut self, bytes: usize) -> Config {
        self.cache_size = bytes;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("512K"), Some(512 << 10));
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn sizes_print_as_they_are_written() {
        assert_eq!(fmt_size(256 << 10), "256K");
        assert_eq!(fmt_size(64 << 20), "64M");
        assert_eq!(fmt_size(3 << 30), "3G");
        assert_eq!(fmt_size(1000), "1000");
        assert_eq!(parse_size(&fmt_size(1536 << 10)), Some(1536 << 10));
    }

    #[test]
    fn poller_cores_are_per_rank() {
        let from = PollerCores::parse("4").unwrap();
        assert_eq!(from.core_for(0, 2), Ok(4));
        assert_eq!(from.core_for(1, 2), Ok(5));
        let list = PollerCores::parse("1, 3,5").unwrap();
        assert_eq!(list, PollerCores::List(vec![1, 3, 5]));
        assert_eq!(list.core_for(2, 3), Ok(5));
        assert!(list.core_for(3, 4).unwrap_err().contains("lists 3 core(s)"));
        assert_eq!(PollerCores::parse("x"), None);
        assert_eq!(PollerCores::parse("1,,2"), None);
        let e = Config::from_lookup(|k| (k == "UAT_POLLER_CORE").then(|| "-1".to_string())).unwrap_err();
        assert!(e.0.contains("UAT_POLLER_CORE=-1"), "{e}");
    }

    #[test]
    fn the_steal_protocol_is_split_unless_asked() {
        assert_eq!(
            Config::from_lookup(|_| None).unwrap().steal_protocol,
            StealProtocol::Split
        );
        let paper = Config::from_lookup(|k| (k == "UAT_STEAL_PROTOCOL").then(|| "paper".to_string())).unwrap();
        assert_eq!(paper.steal_protocol, StealProtocol::Paper);
        let e = Config::from_lookup(|k| (k == "UAT_STEAL_PROTOCOL").then(|| "THE".to_string())).unwrap_err();
        assert!(e.0.contains("UAT_STEAL_PROTOCOL=THE") && e.0.contains("split"), "{e}");
    }

    #[test]
    fn lifeline_settings_parse_and_bad_values_name_the_variable() {
        let d = Config::from_lookup(|_| None).unwrap();
        assert!(d.lifelines);
        let c = Config::from_lookup(|k| match k {
            "UAT_LIFELINES" => Some("off".into()),
            "UAT_LIFELINE_W" => Some("3".into()),
            "UAT_LIFELINE_Z" => Some("2".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(
            (c.lifelines, c.lifeline_attempts, c.lifeline_dimensions),
            (false, 3, Some(2))
        );
        for (k, v) in [
            ("UAT_LIFELINES", "maybe"),
            ("UAT_LIFELINE_W", "0"),
            ("UAT_LIFELINE_Z", "33"),
        ] {
            let e = Config::from_lookup(|x| (x == k).then(|| v.to_string())).unwrap_err();
            assert!(e.0.contains(&format!("{k}={v}")), "{e}");
        }
    }

    #[test]
    fn global_memory_settings_parse_and_bad_values_name_the_variable() {
        let d = Config::from_lookup(|_| None).unwrap();
        assert_eq!((d.global_heap, d.cache, d.cache_block), (1 << 30, true, 16 << 10));
        let c = Config::from_lookup(|k| match k {
            "UAT_GLOBAL_HEAP" => Some("1G".into()),
            "UAT_CACHE" => Some("off".into()),
            "UAT_CACHE_BLOCK" => Some("64K".into()),
            "UAT_CACHE_SIZE" => Some("1M".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(
            (c.global_heap, c.cache, c.cache_block, c.cache_size),
            (1 << 30, false, 64 << 10, 1 << 20)
        );
        for (k, v) in [
            ("UAT_CACHE", "maybe"),
            ("UAT_CACHE_BLOCK", "5000"),
            ("UAT_CACHE_SIZE", "4K"),
            ("UAT_GLOBAL_HEAP", "lots"),
        ] {
            let e = Config::from_lookup(|x| (x == k).then(|| v.to_string())).unwrap_err();
            assert!(e.0.contains(&format!("{k}={v}")), "{e}");
        }
    }

    #[test]
    fn the_migration_checker_is_off_unless_asked() {
        assert!(!Config::from_lookup(|_| None).unwrap().check_migration);
        let on = Config::from_lookup(|k| (k == "UAT_CHECK_MIGRATION").then(|| "1".to_string())).unwrap();
        assert!(on.check_migration);
        assert!(Config::from_lookup(|k| (k == "UAT_CHECK_MIGRATION").then(|| "maybe".to_string())).is_err());
    }

    #[test]
    fn environment_overrides_defaults_and_bad_values_name_the_variable() {
        let c = Config::from_lookup(|k| (k == "UAT_STACK_SIZE").then(|| "1G".to_string())).unwrap();
        assert_eq!(c.stack_size, 1 << 30);
        assert_eq!(c.deque_capacity, Config::default().deque_capacity);
        let e = Config::from_lookup(|k| (k == "UAT_DEQUE_CAPACITY").then(|| "many".to_string())).unwrap_err();
        assert!(e.0.contains("UAT_DEQUE_CAPACITY=many"), "{e}");
        let e = Config::from_lookup(|k| (k == "UAT_STACK_SIZE").then(|| "4K".to_string())).unwrap_err();
        assert!(e.0.contains("at least"), "{e}");
    }
}
