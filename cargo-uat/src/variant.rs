//! A build variant: one GASNet-EX conduit and one remote fetch-and-add
//! mode, which are cargo features of the `uat` package (exactly one each).

use std::fmt;
use std::str::FromStr;

/// A GASNet-EX conduit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conduit {
    Smp,
    Udp,
    Mpi,
    Ibv,
}

/// A remote fetch-and-add mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fad {
    Native,
    Am,
    RdmaEmulated,
}

impl Conduit {
    pub const ALL: [Conduit; 4] = [Conduit::Smp, Conduit::Udp, Conduit::Mpi, Conduit::Ibv];
    pub fn name(self) -> &'static str {
        match self {
            Conduit::Smp => "smp",
            Conduit::Udp => "udp",
            Conduit::Mpi => "mpi",
            Conduit::Ibv => "ibv",
        }
    }
}

impl Fad {
    pub const ALL: [Fad; 3] = [Fad::Native, Fad::Am, Fad::RdmaEmulated];
    pub fn name(self) -> &'static str {
        match self {
            Fad::Native => "native",
            Fad::Am => "am",
            Fad::RdmaEmulated => "rdma-emulated",
        }
    }
    /// The cargo feature of `uat` that selects it.
    pub fn feature(self) -> String {
        format!("fad-{}", self.name())
    }
}

fn parse<T: Copy>(all: &[T], name: fn(T) -> &'static str, what: &str, s: &str) -> Result<T, String> {
    all.iter().copied().find(|v| name(*v) == s).ok_or_else(|| {
        let names: Vec<_> = all.iter().map(|v| name(*v)).collect();
        format!("unknown {what} '{s}' (one of: {})", names.join(", "))
    })
}

impl FromStr for Conduit {
    type Err = String;
    fn from_str(s: &str) -> Result<Conduit, String> {
        parse(&Conduit::ALL, Conduit::name, "conduit", s)
    }
}

impl FromStr for Fad {
    type Err = String;
    fn from_str(s: &str) -> Result<Fad, String> {
        parse(&Fad::ALL, Fad::name, "fetch-and-add mode", s)
    }
}

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
