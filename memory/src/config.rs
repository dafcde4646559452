//! Global memory's settings, declared once in the scheduler's
//! [`settings!`](uni_threads::settings!) form (`uni_threads::settings` says
//! what each row yields): the table below is the only place one is
//! written. The runtime reads them once at start (`uat::Runtime::start`:
//! [`Config::from_env`]); the layer hands them to the scheduler, which
//! validates them, checks that every rank has the same values of those that
//! must agree, and describes them with its own (`UAT_VERBOSE`).

use uni_threads::settings::{at_least, fmt_size, ConfigError, SettingValue, BOOL_SYNTAX, SIZE_SYNTAX};

/// A fault injected into the global-memory cache (tests only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheFault {
    /// The cache works as it should.
    #[default]
    None,
    /// Release points write nothing back.
    NoWriteBack,
    /// Acquire points forget nothing.
    NoInvalidate,
}

impl SettingValue for CacheFault {
    fn parse(var: &str, text: &str) -> Result<CacheFault, ConfigError> {
        match text {
            "" | "none" => Ok(CacheFault::None),
            "no-write-back" => Ok(CacheFault::NoWriteBack),
            "no-invalidate" => Ok(CacheFault::NoInvalidate),
            _ => Err(ConfigError(format!(
                "{var}={text}: expected none, no-write-back or no-invalidate (tests only)"
            ))),
        }
    }
    fn show(&self) -> String {
        match self {
            CacheFault::None => "none",
            CacheFault::NoWriteBack => "no-write-back",
            CacheFault::NoInvalidate => "no-invalidate",
        }
        .into()
    }
    fn word(&self) -> u64 {
        *self as u64
    }
}

uni_threads::settings! {
    /// Global memory's configuration: [`Config::from_env`], then the
    /// builder methods; read back with the `get_*` methods. Each setting's
    /// environment variable, values and default are in [`Config::SETTINGS`]
    /// (the README's global memory table).
    pub struct Config;
    docs ["README.md", "docs/design/settings-and-names.md"];

    /// Bytes of each rank's global heap (`uat::global`).
    global_heap: usize = 1 << 30; set usize;
    get get_global_heap; env "UAT_GLOBAL_HEAP", e.g. "256M";
    what "global heap per rank (`uat::global`)"; values SIZE_SYNTAX; default "1G";
    agree true; check |v| at_least(v, 64 << 10);

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
        at_least(v, 4 << 10)?;
        if v.is_power_of_two() { Ok(()) } else { Err("a cache block must be a power of two (4K, 16K, 64K, ...)".into()) }
    };

    /// Bytes the cache may hold per process.
    cache_size: usize = 256 << 20; set usize;
    get get_cache_size; env "UAT_CACHE_SIZE", e.g. "1M";
    what "cache capacity per process"; values SIZE_SYNTAX; default "256M";
    agree false; check |v| at_least(v, 4 << 10);

    /// Tests only: break the cache's coherence on purpose, so that a test
    /// can show it detects the fault.
    cache_fault: CacheFault = CacheFault::None; set CacheFault;
    get get_cache_fault; env "UAT_CACHE_FAULT", e.g. "no-write-back";
    what "tests only: break the cache's coherence on purpose"; values "none|no-write-back|no-invalidate";
    default "none";
    agree false; check |_| Ok(());
}

impl Config {
    /// Rules between settings: the cache holds at least one block.
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
}

#[cfg(test)]
mod tests {
    use super::settings_table::{assert_invalid, assert_refused};
    use super::*;
    use uni_threads::settings::Settings as _;

    #[test]
    fn the_contract_names_and_defaults_stay() {
        let c = Config::default();
        assert_eq!(
            (
                c.get_global_heap(),
                c.get_cache(),
                c.get_cache_block(),
                c.get_cache_size(),
                c.get_cache_fault()
            ),
            (1 << 30, true, 16 << 10, 256 << 20, CacheFault::None)
        );
        let envs: Vec<&str> = Config::SETTINGS.iter().map(|s| s.env).collect();
        assert_eq!(
            envs,
            [
                "UAT_GLOBAL_HEAP",
                "UAT_CACHE",
                "UAT_CACHE_BLOCK",
                "UAT_CACHE_SIZE",
                "UAT_CACHE_FAULT"
            ]
        );
        let agree: Vec<&str> = c.agreement().iter().map(|a| a.0).collect();
        assert_eq!(agree, ["UAT_GLOBAL_HEAP", "UAT_CACHE", "UAT_CACHE_BLOCK"]);
    }

    #[test]
    fn bad_values_are_refused_naming_the_variable() {
        assert_invalid([
            (Config::default().cache_block(5000), "UAT_CACHE_BLOCK"),
            (Config::default().global_heap(4096), "UAT_GLOBAL_HEAP"),
            (Config::default().cache_size(4096).cache_block(8192), "UAT_CACHE_SIZE"),
        ]);
        assert_refused(&[
            ("UAT_CACHE_BLOCK", "5000"),
            ("UAT_CACHE_SIZE", "4K"),
            ("UAT_GLOBAL_HEAP", "1K"),
            ("UAT_CACHE", "maybe"),
            ("UAT_CACHE_FAULT", "sometimes"),
        ]);
    }
}
