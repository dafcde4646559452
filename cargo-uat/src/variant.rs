//! A build variant: one GASNet-EX conduit and one remote fetch-and-add
//! mode, which are cargo features of the `uat` package (exactly one each).

use std::fmt;

pub use uat_rules::{Conduit, FadMode as Fad};

/// One conduit and one fetch-and-add mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The GASNet-EX conduit.
    pub conduit: Conduit,
    /// The remote fetch-and-add mode.
    pub fad: Fad,
}

impl Variant {
    /// The cargo features that select it: `<prefix>smp,<prefix>fad-native,...`
    /// where `prefix` is `uat/` for a crate that depends on uat, empty for
    /// uat's own workspace. The migration checker's allocator (a default
    /// feature of uat) is named too, so that `--no-default-features` builds
    /// are the same.
    /// uat's own workspace (`prefix` empty) also gets `testing` (its tests,
    /// examples and benchmarks use `uat::testing`); a user's crate does not.
    pub fn features(self, prefix: &str) -> String {
        let mut features = vec![
            self.conduit.name().to_string(),
            self.fad.feature(),
            "migration-checker".into(),
        ];
        if prefix.is_empty() {
            features.push("testing".into());
        }
        features
            .iter()
            .map(|f| format!("{prefix}{f}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl fmt::Display for Variant {
    /// `smp-native`: the name of the variant's target directory.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.conduit.name(), self.fad.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_for_a_dependent_and_for_the_workspace() {
        let v = Variant {
            conduit: Conduit::Udp,
            fad: Fad::Am,
        };
        assert_eq!(v.features("uat/"), "uat/udp,uat/fad-am,uat/migration-checker");
        assert_eq!(v.features(""), "udp,fad-am,migration-checker,testing");
        assert_eq!(v.to_string(), "udp-am");
    }
}
