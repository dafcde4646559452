//! The types of the settings' values, their parsers and how each prints
//! (the table in [`super`] names which setting takes which).

use crate::settings::{ConfigError, SettingValue};

// The values of settings whose modules own them (the limits and types are
// the configured module's; this module reads the settings).
pub use crate::trace::TraceMode;
pub use crate::victim::VictimPolicy;
pub use uat_protocol::deque::StealProtocol;

/// Where pollers are pinned (`UAT_POLLER_CORE`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PollerCores {
    /// The i-th rank of a host pins its poller to core `first + i`.
    From(usize),
    /// The i-th rank of a host pins its poller to the i-th core listed.
    List(Vec<usize>),
}

impl PollerCores {
    pub(crate) fn parse(text: &str) -> Option<PollerCores> {
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

impl SettingValue for StealProtocol {
    fn parse(var: &str, text: &str) -> Result<StealProtocol, ConfigError> {
        StealProtocol::parse(text).ok_or_else(|| {
            ConfigError(format!(
                "{var}={text}: expected split (the default: private/shared deque, claims by one \
                 fetch-and-add) or paper (IPSJ 2016: THE with a remote lock)"
            ))
        })
    }
    fn show(&self) -> String {
        self.name().into()
    }
    fn word(&self) -> u64 {
        *self as u64
    }
}

impl SettingValue for VictimPolicy {
    fn parse(var: &str, text: &str) -> Result<VictimPolicy, ConfigError> {
        VictimPolicy::parse(text).ok_or_else(|| {
            ConfigError(format!(
                "{var}={text}: expected random (any other rank) or host-first (this host's ranks first, \
                 another host's after as many failures as this host has other ranks)"
            ))
        })
    }
    fn show(&self) -> String {
        self.name().into()
    }
    fn word(&self) -> u64 {
        *self as u64
    }
}

impl SettingValue for TraceMode {
    fn parse(var: &str, text: &str) -> Result<TraceMode, ConfigError> {
        match text {
            "timeline" => Ok(TraceMode::Timeline),
            "stats" => Ok(TraceMode::Stats),
            _ => Err(ConfigError(format!(
                "{var}={text}: expected timeline (every event, and the statistics) or stats (the statistics only)"
            ))),
        }
    }
    fn show(&self) -> String {
        match self {
            TraceMode::Timeline => "timeline",
            TraceMode::Stats => "stats",
        }
        .into()
    }
    fn word(&self) -> u64 {
        *self as u64
    }
}

/// `UAT_POLLER=spin|yield`: whether the poller yields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollerWait {
    /// Spin (a core of its own).
    Spin,
    /// Yield between polls (sharing a core).
    Yield,
}

impl SettingValue for PollerWait {
    fn parse(var: &str, text: &str) -> Result<PollerWait, ConfigError> {
        match text {
            "spin" => Ok(PollerWait::Spin),
            "yield" => Ok(PollerWait::Yield),
            _ => Err(ConfigError(format!("{var}={text}: expected spin or yield"))),
        }
    }
    fn show(&self) -> String {
        match self {
            PollerWait::Spin => "spin",
            PollerWait::Yield => "yield",
        }
        .into()
    }
    fn word(&self) -> u64 {
        *self as u64
    }
}

impl SettingValue for PollerCores {
    fn parse(var: &str, text: &str) -> Result<PollerCores, ConfigError> {
        PollerCores::parse(text).ok_or_else(|| {
            ConfigError(format!(
                "{var}={text}: expected a first core B (the i-th rank of a host pins its poller to \
                 core B+i) or a list of cores c0,c1,... (one per rank of a host)"
            ))
        })
    }
    fn show(&self) -> String {
        match self {
            PollerCores::From(b) => b.to_string(),
            PollerCores::List(l) => l.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","),
        }
    }
    fn word(&self) -> u64 {
        match self {
            PollerCores::From(b) => *b as u64,
            PollerCores::List(l) => l
                .iter()
                .fold(1u64, |h, &c| h.wrapping_mul(1_000_003).wrapping_add(c as u64)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(PollerCores::parse(&list.show()), Some(list));
    }
}
