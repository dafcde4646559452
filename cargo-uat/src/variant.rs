//! A build variant: one GASNet-EX conduit and one remote fetch-and-add
//! mode, which are cargo features of the `uat` package (exactly one each).

use std::fmt;

pub use uat_rules::{Conduit, FadMode as Fad};

/// One conduit and one fetch-and-add mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    pub conduit: Conduit,
    pub fad: Fad,
}

impl Variant {
    /// The cargo features that select it: `<prefix>smp,<prefix>fad-native,...`
    /// where `prefix` is `uat/` for a crate that depends on uat, empty for
    /// uat's own workspace. The migration checker's allocator (a default
    /// feature of uat) is named too, so that `--no-default-features` builds
    /// are the same.
    pub fn features(self, prefix: &str) -> String {
        [
            self.conduit.name().to_string(),
            self.fad.feature(),
            "migration-checker".into(),
        ]
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
    fn names_parse_back_and_bad_ones_list_the_choices() {
        for c in Conduit::ALL {
            assert_eq!(c.name().parse::<Conduit>(), Ok(c));
        }
        for m in Fad::ALL {
            assert_eq!(m.name().parse::<Fad>(), Ok(m));
        }
        let e = "tcp".parse::<Conduit>().unwrap_err();
        assert!(e.contains("smp, udp, mpi, ibv"), "{e}");
    }

    #[test]
    fn features_for_a_dependent_and_for_the_workspace() {
        let v = Variant {
            conduit: Conduit::Udp,
            fad: Fad::Am,
        };
        assert_eq!(v.features("uat/"), "uat/udp,uat/fad-am,uat/migration-checker");
        assert_eq!(v.features(""), "udp,fad-am,migration-checker");
        assert_eq!(v.to_string(), "udp-am");
    }
}
