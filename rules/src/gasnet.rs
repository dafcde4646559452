//! Which GASNet-EX a build uses, stated once: gasnet-sys's build script
//! compiles and links against it, and the launcher needs the same prefix
//! (`gasnetrun_ibv`, and whether the bundled source must be on the machine).
//!
//! The rule, first match wins:
//!
//! 1. `UAT_GASNET=bundled`: the bundled GASNet-EX 2021.3.0, built from
//!    source once per conduit into the machine's cache, whatever else is
//!    set (the way out when a machine has a GASNet-EX that does not fit);
//! 2. `UAT_GASNET=pkg-config`: the GASNet-EX that pkg-config finds as
//!    `gasnet-CONDUIT-par`, or an error if it finds none;
//! 3. `GASNET_PREFIX=/path`: the GASNet-EX installed there;
//! 4. pkg-config finds `gasnet-CONDUIT-par` (a site's module usually puts its
//!    `lib/pkgconfig` on `PKG_CONFIG_PATH`): that one;
//! 5. the bundled GASNet-EX.
//!
//! `UAT_GASNET` unset, empty or `auto` means 3 to 5. That is the usual
//! order of a `-sys` crate (explicit path, then the system's, then the
//! vendored copy), so loading a site's GASNet-EX module is enough; and a
//! system GASNet-EX that does not fit (too old, without the conduit) stops
//! the build with a message naming `UAT_GASNET=bundled` instead of being
//! skipped silently, because a build that quietly switches GASNet-EX is
//! harder to diagnose than one that asks.
//!
//! An installed GASNet-EX must be 2021.3.0 (the bundled version) or newer,
//! read from its `include/gasnet_config.h`, and have the conduit in PAR mode
//! (`include/<conduit>-conduit/<conduit>-par.mak`).
//!
//! pkg-config is run as a program (`PKG_CONFIG`, else `pkg-config`) rather
//! than through the `pkg-config` crate: the crate's value is turning a
//! `.pc` file's `Libs:` into cargo's link lines, which gasnet-sys does not
//! want (it reads GASNet's `.mak` fragment, the documented description,
//! for both flags and libraries); what is left is two `--variable`
//! queries, and this crate has no dependencies by design (the launcher
//! uses it too).

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Conduit;

/// An installed GASNet-EX's prefix (configured with `--enable-par` and the
/// conduit).
pub const PREFIX_VAR: &str = "GASNET_PREFIX";
/// Which GASNet-EX to use: `auto` (default), `bundled`, `pkg-config`.
pub const SOURCE_VAR: &str = "UAT_GASNET";
/// The pkg-config program (the name autoconf and the `pkg-config` crate use).
pub const PKG_CONFIG_VAR: &str = "PKG_CONFIG";
/// Where pkg-config looks for `.pc` files besides its default path.
pub const PKG_CONFIG_PATH_VAR: &str = "PKG_CONFIG_PATH";
/// pkg-config's default path, replaced.
pub const PKG_CONFIG_LIBDIR_VAR: &str = "PKG_CONFIG_LIBDIR";

/// Every variable [`choose_from_env`] reads, directly or through
/// pkg-config: a build script must rerun when any of them changes, and the
/// launcher must hand them to cargo unchanged.
pub const ENV: [&str; 5] = [
    SOURCE_VAR,
    PREFIX_VAR,
    // pkg-config's, last (see `Choice::env_read`).
    PKG_CONFIG_VAR,
    PKG_CONFIG_PATH_VAR,
    PKG_CONFIG_LIBDIR_VAR,
];

/// The bundled GASNet-EX (the `gex-sys` 0.1.0 package's snapshot), the one
/// uat is tested with and the oldest it accepts.
pub const BUNDLED: Version = Version {
    major: 2021,
    minor: 3,
    patch: 0,
};

/// [`BUNDLED`] as text, for constants (`BUNDLED.to_string()` is the same).
pub const BUNDLED_NAME: &str = "2021.3.0";

/// A GASNet-EX release number: year, month, patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// The year (`GASNET_RELEASE_VERSION_MAJOR`).
    pub major: u32,
    /// The month (`GASNET_RELEASE_VERSION_MINOR`).
    pub minor: u32,
    /// `GASNET_RELEASE_VERSION_PATCH`.
    pub patch: u32,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl Version {
    /// The version an installed `gasnet_config.h` declares (its
    /// `#define GASNET_RELEASE_VERSION_{MAJOR,MINOR,PATCH} N` lines; GASNet-1
    /// releases have them too, as 1.x.y).
    pub fn from_config_header(text: &str) -> Result<Version, String> {
        let find = |name: &str| -> Result<u32, String> {
            let value = text.lines().find_map(|line| {
                let rest = line.trim_start().strip_prefix('#')?.trim_start();
                let mut words = rest.strip_prefix("define")?.split_whitespace();
                (words.next()? == name).then(|| words.next().unwrap_or(""))
            });
            match value {
                None => Err(format!("no `#define {name}`")),
                Some(v) => v
                    .parse()
                    .map_err(|_| format!("`#define {name} {v}`: not a whole number")),
            }
        };
        Ok(Version {
            major: find("GASNET_RELEASE_VERSION_MAJOR")?,
            minor: find("GASNET_RELEASE_VERSION_MINOR")?,
            patch: find("GASNET_RELEASE_VERSION_PATCH")?,
        })
    }
}

/// Where the GASNet-EX of a build comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// `GASNET_PREFIX`.
    Prefix(PathBuf),
    /// Found by pkg-config as `gasnet-CONDUIT-par`.
    PkgConfig {
        /// The installation's prefix.
        prefix: PathBuf,
        /// The `.pc` file pkg-config found.
        pc_file: PathBuf,
    },
    /// The bundled GASNet-EX 2021.3.0, built from source into the cache.
    Bundled,
}

impl Source {
    /// The installed prefix (`None`: the bundled build, whose prefix is in
    /// the cache).
    pub fn prefix(&self) -> Option<&Path> {
        match self {
            Source::Prefix(p) | Source::PkgConfig { prefix: p, .. } => Some(p),
            Source::Bundled => None,
        }
    }

    /// `prefix`, `pkg-config` or `bundled` (gasnet-sys's `DEP_GASNET_SOURCE`).
    pub fn name(&self) -> &'static str {
        match self {
            Source::Prefix(_) => "prefix",
            Source::PkgConfig { .. } => "pkg-config",
            Source::Bundled => "bundled",
        }
    }

    /// How the user chose it, for messages.
    pub fn describe(&self) -> String {
        match self {
            Source::Prefix(p) => format!("{PREFIX_VAR}={}", p.display()),
            Source::PkgConfig { pc_file, .. } => format!("pkg-config's {}", pc_file.display()),
            Source::Bundled => format!("the bundled GASNet-EX {BUNDLED}"),
        }
    }
}

/// The source of a build, and a note for the user (a setting it ignored).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// Where GASNet-EX comes from.
    pub source: Source,
    /// Something to warn about, if anything.
    pub note: Option<String>,
    /// Whether pkg-config was asked (its variables then decided too).
    pub asked_pkg_config: bool,
}

impl Choice {
    /// The variables this choice depended on: a build script reruns when
    /// one of them changes, and only then (a bundled build does not rebuild
    /// whenever a module changes `PKG_CONFIG_PATH`).
    pub fn env_read(&self) -> &'static [&'static str] {
        if self.asked_pkg_config {
            &ENV
        } else {
            &ENV[..2]
        }
    }
}

/// What pkg-config says about `gasnet-CONDUIT-par`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Found, with the installation's prefix and the `.pc` file.
    Found {
        /// The prefix: the `.pc` file's `<prefix>/lib/pkgconfig`, or the
        /// parent of an include directory it names.
        prefix: PathBuf,
        /// The `.pc` file.
        pc_file: PathBuf,
    },
    /// pkg-config runs and does not know the package.
    NotFound,
    /// The pkg-config program could not be started (named).
    NoProgram(String),
}

/// The pkg-config package of a conduit's PAR-mode library.
pub fn package(conduit: Conduit) -> String {
    format!("gasnet-{}-par", conduit.name())
}

/// The rule of this module's documentation, given `UAT_GASNET`'s value,
/// `GASNET_PREFIX`'s, and a pkg-config lookup (run only when the rule gets
/// to it).
pub fn choose(
    conduit: Conduit,
    request: Option<&str>,
    prefix: Option<PathBuf>,
    lookup: impl FnOnce() -> Result<Lookup, String>,
) -> Result<Choice, String> {
    let ignored = |by: &str| {
        prefix
            .as_ref()
            .map(|p| format!("{PREFIX_VAR}={} is ignored: {SOURCE_VAR}={by}", p.display()))
    };
    match request.map(str::trim).unwrap_or("") {
        "bundled" => Ok(Choice {
            source: Source::Bundled,
            note: ignored("bundled"),
            asked_pkg_config: false,
        }),
        "pkg-config" => match lookup()? {
            Lookup::Found { prefix: p, pc_file } => Ok(Choice {
                source: Source::PkgConfig { prefix: p, pc_file },
                note: ignored("pkg-config"),
                asked_pkg_config: true,
            }),
            missing => Err(format!(
                "{SOURCE_VAR}=pkg-config, but {}: add the directory that holds {}.pc (<prefix>/lib/pkgconfig) to {PKG_CONFIG_PATH_VAR}, or set {PREFIX_VAR} instead",
                not_found_reason(conduit, &missing),
                package(conduit)
            )),
        },
        "" | "auto" => {
            if let Some(p) = prefix {
                if !p.is_absolute() {
                    return Err(format!(
                        "{PREFIX_VAR}={} is not an absolute path (cargo runs build scripts in their package's directory): give the full path",
                        p.display()
                    ));
                }
                return Ok(Choice {
                    source: Source::Prefix(p),
                    note: None,
                    asked_pkg_config: false,
                });
            }
            let source = match lookup()? {
                Lookup::Found { prefix: p, pc_file } => Source::PkgConfig { prefix: p, pc_file },
                Lookup::NotFound | Lookup::NoProgram(_) => Source::Bundled,
            };
            Ok(Choice {
                source,
                note: None,
                asked_pkg_config: true,
            })
        }
        other => Err(format!(
            "{SOURCE_VAR}={other}: unknown GASNet-EX source (one of: auto, bundled, pkg-config)"
        )),
    }
}

fn not_found_reason(conduit: Conduit, lookup: &Lookup) -> String {
    match lookup {
        Lookup::NoProgram(program) => format!("the pkg-config program `{program}` cannot be run"),
        _ => {
            let path = std::env::var(PKG_CONFIG_PATH_VAR).unwrap_or_default();
            format!(
                "pkg-config finds no {} ({PKG_CONFIG_PATH_VAR}={path})",
                package(conduit)
            )
        }
    }
}

/// [`choose`] with this process's environment and pkg-config.
pub fn choose_from_env(conduit: Conduit) -> Result<Choice, String> {
    let request = std::env::var(SOURCE_VAR).ok();
    let prefix = std::env::var_os(PREFIX_VAR)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    choose(conduit, request.as_deref(), prefix, || pkg_config(conduit))
}

/// Asks pkg-config (`PKG_CONFIG`, else `pkg-config`) for `gasnet-CONDUIT-par`.
pub fn pkg_config(conduit: Conduit) -> Result<Lookup, String> {
    let program = std::env::var(PKG_CONFIG_VAR)
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "pkg-config".into());
    let pkg = package(conduit);
    match Command::new(&program).args(["--exists", &pkg]).status() {
        Err(_) => return Ok(Lookup::NoProgram(program)),
        Ok(status) if !status.success() => return Ok(Lookup::NotFound),
        Ok(_) => {}
    }
    let variable = |name: &str| -> Result<String, String> {
        let out = Command::new(&program)
            .arg(format!("--variable={name}"))
            .arg(&pkg)
            .output()
            .map_err(|e| format!("cannot run {program}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "`{program} --variable={name} {pkg}` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let pc_dir = PathBuf::from(variable("pcfiledir")?);
    let includes = variable("GASNET_INCLUDES")?;
    let pc_file = pc_dir.join(format!("{pkg}.pc"));
    match prefix_from_pc(conduit, &pc_dir, &includes, |p| p.is_file()) {
        Some(prefix) => Ok(Lookup::Found { prefix, pc_file }),
        None => Err(format!(
            "pkg-config finds {} but no {} beside it: neither {} nor the include directories it names ({}) lead to one. Set {PREFIX_VAR} to that GASNet-EX's install prefix, or {SOURCE_VAR}=bundled to build the bundled GASNet-EX {BUNDLED} instead",
            pc_file.display(),
            mak_relative(conduit).display(),
            pc_dir.display(),
            if includes.is_empty() { "none" } else { &includes }
        )),
    }
}

/// `include/<conduit>-conduit/<conduit>-par.mak`, below a prefix.
pub fn mak_relative(conduit: Conduit) -> PathBuf {
    let c = conduit.name();
    Path::new("include")
        .join(format!("{c}-conduit"))
        .join(format!("{c}-par.mak"))
}

/// The prefix of the installation a `.pc` file describes: GASNet installs
/// it in `<prefix>/lib/pkgconfig`, so that is tried first; where the file
/// lives elsewhere (a symbolic link, another libdir) the include
/// directories it names (`GASNET_INCLUDES`: `-I<prefix>/include
/// -I<prefix>/include/<conduit>-conduit ...`) lead to the prefix. The first
/// candidate that has the conduit's `.mak` fragment wins.
pub fn prefix_from_pc(
    conduit: Conduit,
    pc_dir: &Path,
    includes: &str,
    is_file: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    candidates.extend(pc_dir.parent().and_then(Path::parent).map(Path::to_path_buf));
    for dir in includes
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("-I"))
        .map(Path::new)
    {
        candidates.extend(dir.parent().map(Path::to_path_buf));
        candidates.extend(dir.parent().and_then(Path::parent).map(Path::to_path_buf));
    }
    let mak = mak_relative(conduit);
    candidates
        .into_iter()
        .find(|prefix| !prefix.as_os_str().is_empty() && is_file(&prefix.join(&mak)))
}

/// An installed GASNet-EX that passed [`inspect`]'s checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Install {
    /// Its prefix.
    pub prefix: PathBuf,
    /// The conduit's PAR-mode `.mak` fragment.
    pub mak: PathBuf,
    /// `include/gasnet_config.h`, where the version was read.
    pub config_header: PathBuf,
    /// Its version (at least [`BUNDLED`]).
    pub version: Version,
}

impl Install {
    /// A release newer than the one uat is tested with (accepted, with a
    /// warning).
    pub fn newer_than_tested(&self) -> bool {
        self.version > BUNDLED
    }
}

/// Checks that `prefix` (from `source`) holds a GASNet-EX uat can use for
/// `conduit`: version at least [`BUNDLED`], the conduit in PAR mode. Each
/// refusal says what was found, what is needed and how to fall back to
/// the bundled build.
pub fn inspect(source: &Source, prefix: &Path, conduit: Conduit) -> Result<Install, String> {
    let how = source.describe();
    let fallback = match source {
        Source::Bundled => String::new(),
        _ => format!(" or set {SOURCE_VAR}=bundled to build the bundled GASNet-EX {BUNDLED} instead"),
    };
    if !prefix.is_dir() {
        return Err(format!(
            "{how}: {} is not a directory: point it at an installed GASNet-EX's prefix,{fallback}",
            prefix.display()
        ));
    }
    let config_header = prefix.join("include").join("gasnet_config.h");
    let text = std::fs::read_to_string(&config_header).map_err(|e| {
        format!(
            "{how}: cannot read {} ({e}): {} is not a GASNet-EX installation; point it at one,{fallback}",
            config_header.display(),
            prefix.display()
        )
    })?;
    let version = Version::from_config_header(&text).map_err(|e| {
        format!(
            "{how}: {}: {e}: cannot tell the GASNet-EX version; point it at another installation,{fallback}",
            config_header.display()
        )
    })?;
    if version < BUNDLED {
        return Err(format!(
            "{how}: the GASNet-EX at {} is version {version} (its include/gasnet_config.h); uat needs {BUNDLED} or newer. Install a newer GASNet-EX and point the build at it,{fallback}",
            prefix.display()
        ));
    }
    let mak = prefix.join(mak_relative(conduit));
    if !mak.is_file() {
        let c = conduit.name();
        let present = installed_conduits(prefix);
        let present = if present.is_empty() {
            "none (no include/*-conduit directory)".to_string()
        } else {
            present
                .iter()
                .map(|(name, modes)| format!("{name} ({})", modes.join(", ")))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(format!(
            "{how}: the GASNet-EX {version} at {} has no {c}-conduit in PAR mode (no {}); its conduits (threading modes): {present}. Build for one of those (--conduit), configure GASNet-EX with --enable-{c} --enable-par,{fallback}",
            prefix.display(),
            mak_relative(conduit).display()
        ));
    }
    Ok(Install {
        prefix: prefix.to_path_buf(),
        mak,
        config_header,
        version,
    })
}

/// The conduits installed under `prefix` (`include/<name>-conduit/`), each
/// with its threading modes (`<name>-<mode>.mak`), sorted.
pub fn installed_conduits(prefix: &Path) -> Vec<(String, Vec<String>)> {
    let Ok(entries) = std::fs::read_dir(prefix.join("include")) else {
        return Vec::new();
    };
    let mut conduits: Vec<(String, Vec<String>)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .filter_map(|e| {
            let dir = e.file_name().to_string_lossy().into_owned();
            let name = dir.strip_suffix("-conduit")?.to_string();
            let mut modes: Vec<String> = std::fs::read_dir(e.path())
                .into_iter()
                .flatten()
                .filter_map(Result::ok)
                .filter_map(|f| {
                    let file = f.file_name().to_string_lossy().into_owned();
                    let mode = file.strip_prefix(&format!("{name}-"))?.strip_suffix(".mak")?;
                    Some(mode.to_string())
                })
                .collect();
            modes.sort();
            Some((name, modes))
        })
        .collect();
    conduits.sort();
    conduits
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The lines of a real 2021.3.0 `gasnet_config.h` around the version.
    const HEADER_2021_3_0: &str = "/* version identifiers */\n\
        #define GASNET_RELEASE_VERSION_MAJOR 2021\n\
        #define GASNET_RELEASE_VERSION_MINOR 3\n\
        #define GASNET_RELEASE_VERSION_PATCH 0\n\
        #define GASNETI_RELEASE_VERSION 2021.3.0\n\
        #define GASNETI_SPEC_VERSION_MAJOR 1\n";

    #[test]
    fn the_version_comes_from_the_config_header() {
        assert_eq!(Version::from_config_header(HEADER_2021_3_0), Ok(BUNDLED));
        assert_eq!(BUNDLED.to_string(), BUNDLED_NAME);
        // Spacing inside the directive, other defines first, a comment after.
        let newer = "#define GASNET_RELEASE_VERSION_MAJOR_X 9\n\
            #  define GASNET_RELEASE_VERSION_MAJOR   2024\n\
            #define GASNET_RELEASE_VERSION_MINOR 5 /* May */\n\
            #define\tGASNET_RELEASE_VERSION_PATCH\t0\n";
        let v = Version::from_config_header(newer).unwrap();
        assert_eq!(v.to_string(), "2024.5.0");
        assert!(v > BUNDLED);
        // GASNet-1 headers have the same names, and compare as older.
        let old = "#define GASNET_RELEASE_VERSION_MAJOR 1\n#define GASNET_RELEASE_VERSION_MINOR 32\n#define GASNET_RELEASE_VERSION_PATCH 0\n";
        assert!(Version::from_config_header(old).unwrap() < BUNDLED);
        // Ordering is by year, then month, then patch.
        let v = |major, minor, patch| Version { major, minor, patch };
        assert!(v(2020, 12, 9) < v(2021, 3, 0) && v(2021, 3, 0) < v(2021, 3, 1) && v(2021, 3, 1) < v(2021, 9, 0));
    }

    #[test]
    fn a_header_without_a_version_is_refused_naming_what_is_missing() {
        let e = Version::from_config_header("#define GASNET_RELEASE_VERSION_MAJOR 2021\n").unwrap_err();
        assert_eq!(e, "no `#define GASNET_RELEASE_VERSION_MINOR`");
        let e = Version::from_config_header("#define GASNET_RELEASE_VERSION_MAJOR twenty\n").unwrap_err();
        assert!(
            e.contains("GASNET_RELEASE_VERSION_MAJOR twenty") && e.contains("whole number"),
            "{e}"
        );
        // A commented-out or undefined name is not a definition.
        let e = Version::from_config_header(
            "/* #undef GASNET_RELEASE_VERSION_MAJOR */\n// define GASNET_RELEASE_VERSION_MAJOR 2021\n",
        )
        .unwrap_err();
        assert!(e.contains("MAJOR"), "{e}");
    }

    fn found(prefix: &str) -> impl FnOnce() -> Result<Lookup, String> {
        let prefix = PathBuf::from(prefix);
        move || {
            Ok(Lookup::Found {
                pc_file: prefix.join("lib/pkgconfig/gasnet-udp-par.pc"),
                prefix,
            })
        }
    }

    fn not_asked() -> Result<Lookup, String> {
        panic!("pkg-config was asked although the rule had decided")
    }

    #[test]
    fn the_source_rule_in_order() {
        let c = Conduit::Udp;
        let site = Some(PathBuf::from("/opt/gasnet"));
        // GASNET_PREFIX first, pkg-config not even asked.
        let got = choose(c, None, site.clone(), not_asked).unwrap();
        assert_eq!(got.source, Source::Prefix("/opt/gasnet".into()));
        assert_eq!(got.note, None);
        assert_eq!(got.env_read(), ["UAT_GASNET", "GASNET_PREFIX"]);
        assert_eq!(choose(c, Some("auto"), site.clone(), not_asked).unwrap(), got);
        assert_eq!(choose(c, Some(""), site.clone(), not_asked).unwrap(), got);
        // Then pkg-config.
        let got = choose(c, None, None, found("/site/gasnet")).unwrap();
        assert_eq!(got.source.name(), "pkg-config");
        assert_eq!(got.source.prefix(), Some(Path::new("/site/gasnet")));
        // Then the bundled build, whether pkg-config lacks the package or is missing itself.
        for lookup in [Lookup::NotFound, Lookup::NoProgram("pkg-config".into())] {
            let got = choose(c, None, None, || Ok(lookup)).unwrap();
            assert_eq!(got.source, Source::Bundled);
            // pkg-config's answer decided: its variables must rerun the build.
            assert!(got.env_read().contains(&"PKG_CONFIG_PATH"));
        }
        // A pkg-config answer that cannot be used stops the build (the message names the way out).
        let e = choose(c, None, None, || Err("broken".into())).unwrap_err();
        assert_eq!(e, "broken");
    }

    #[test]
    fn uat_gasnet_overrides_and_says_what_it_ignores() {
        let c = Conduit::Smp;
        let site = Some(PathBuf::from("/opt/gasnet"));
        // bundled: neither GASNET_PREFIX nor pkg-config counts.
        let got = choose(c, Some("bundled"), site.clone(), not_asked).unwrap();
        assert_eq!(got.source, Source::Bundled);
        assert_eq!(
            got.note.as_deref(),
            Some("GASNET_PREFIX=/opt/gasnet is ignored: UAT_GASNET=bundled")
        );
        assert!(!got.env_read().contains(&"PKG_CONFIG_PATH"));
        assert_eq!(choose(c, Some(" bundled "), None, not_asked).unwrap().note, None);
        // pkg-config: required.
        let got = choose(c, Some("pkg-config"), site, found("/site")).unwrap();
        assert_eq!(got.source.name(), "pkg-config");
        assert!(got.note.unwrap().contains("UAT_GASNET=pkg-config"));
        let e = choose(c, Some("pkg-config"), None, || Ok(Lookup::NotFound)).unwrap_err();
        assert!(
            e.contains("pkg-config finds no gasnet-smp-par") && e.contains("PKG_CONFIG_PATH"),
            "{e}"
        );
        let e = choose(c, Some("pkg-config"), None, || {
            Ok(Lookup::NoProgram("pkgconf-x".into()))
        })
        .unwrap_err();
        assert!(e.contains("`pkgconf-x` cannot be run"), "{e}");
        // Anything else is refused, naming the values.
        let e = choose(c, Some("system"), None, not_asked).unwrap_err();
        assert_eq!(
            e,
            "UAT_GASNET=system: unknown GASNet-EX source (one of: auto, bundled, pkg-config)"
        );
        // A relative GASNET_PREFIX would be read from gasnet-sys's directory.
        let e = choose(c, None, Some("gasnet".into()), not_asked).unwrap_err();
        assert!(e.contains("not an absolute path"), "{e}");
    }

    #[test]
    fn the_prefix_of_a_pc_file() {
        let c = Conduit::Udp;
        let exists = |files: &'static [&'static str]| move |p: &Path| files.iter().any(|f| Path::new(f) == p);
        let includes = "-I/opt/g/include -I/opt/g/include/udp-conduit";
        // Where GASNet installs it: <prefix>/lib/pkgconfig.
        let mak = &["/opt/g/include/udp-conduit/udp-par.mak"];
        let got = prefix_from_pc(c, Path::new("/opt/g/lib/pkgconfig"), includes, exists(mak));
        assert_eq!(got, Some(PathBuf::from("/opt/g")));
        // A .pc linked into the system's directory: the include directories lead home.
        let got = prefix_from_pc(
            c,
            Path::new("/usr/lib/x86_64-linux-gnu/pkgconfig"),
            includes,
            exists(mak),
        );
        assert_eq!(got, Some(PathBuf::from("/opt/g")));
        // The .pc's own prefix wins over what its includes name (a copied prefix is its own).
        let both = &[
            "/opt/g/include/udp-conduit/udp-par.mak",
            "/copy/include/udp-conduit/udp-par.mak",
        ];
        let got = prefix_from_pc(c, Path::new("/copy/lib/pkgconfig"), includes, exists(both));
        assert_eq!(got, Some(PathBuf::from("/copy")));
        // Nothing with the conduit's fragment: no prefix.
        assert_eq!(
            prefix_from_pc(c, Path::new("/opt/g/lib/pkgconfig"), "", exists(&[])),
            None
        );
        assert_eq!(prefix_from_pc(c, Path::new("pkgconfig"), "-I", exists(&[])), None);
    }

    /// A directory of its own under the system's temporary directory.
    fn scratch(name: &str) -> PathBuf {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "uat-rules-{}-{}-{name}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A fake installed prefix: gasnet_config.h with `version`, and a `.mak`
    /// file for each "conduit-mode".
    fn fake_prefix(name: &str, version: &str, fragments: &[&str]) -> PathBuf {
        let prefix = scratch(name);
        let include = prefix.join("include");
        std::fs::create_dir_all(&include).unwrap();
        let v: Vec<&str> = version.split('.').collect();
        std::fs::write(
            include.join("gasnet_config.h"),
            format!(
                "#define GASNET_RELEASE_VERSION_MAJOR {}\n#define GASNET_RELEASE_VERSION_MINOR {}\n#define GASNET_RELEASE_VERSION_PATCH {}\n",
                v[0], v[1], v[2]
            ),
        )
        .unwrap();
        for fragment in fragments {
            let (conduit, _) = fragment.split_once('-').unwrap();
            let dir = include.join(format!("{conduit}-conduit"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(format!("{fragment}.mak")), "").unwrap();
        }
        prefix
    }

    #[test]
    fn an_install_with_the_conduit_and_a_recent_version_passes() {
        let prefix = fake_prefix("ok", "2024.5.0", &["smp-par", "smp-seq", "udp-par"]);
        let source = Source::Prefix(prefix.clone());
        let got = inspect(&source, &prefix, Conduit::Udp).unwrap();
        assert_eq!(got.version.to_string(), "2024.5.0");
        assert!(got.newer_than_tested());
        assert_eq!(got.mak, prefix.join("include/udp-conduit/udp-par.mak"));
        let same = fake_prefix("same", "2021.3.0", &["smp-par"]);
        assert!(!inspect(&Source::Bundled, &same, Conduit::Smp)
            .unwrap()
            .newer_than_tested());
        let _ = std::fs::remove_dir_all(prefix);
        let _ = std::fs::remove_dir_all(same);
    }

    #[test]
    fn a_missing_conduit_is_refused_naming_the_conduits_there() {
        let prefix = fake_prefix("conduits", "2023.9.0", &["udp-par", "udp-seq", "mpi-seq"]);
        let source = Source::Prefix(prefix.clone());
        let e = inspect(&source, &prefix, Conduit::Smp).unwrap_err();
        assert!(e.starts_with(&format!("GASNET_PREFIX={}: ", prefix.display())), "{e}");
        assert!(e.contains("has no smp-conduit in PAR mode"), "{e}");
        assert!(e.contains("mpi (seq), udp (par, seq)"), "{e}");
        assert!(e.contains("UAT_GASNET=bundled"), "{e}");
        // mpi is there, but not in PAR mode.
        let e = inspect(&source, &prefix, Conduit::Mpi).unwrap_err();
        assert!(
            e.contains("no mpi-conduit in PAR mode") && e.contains("--enable-mpi --enable-par"),
            "{e}"
        );
        let empty = fake_prefix("empty", "2021.3.0", &[]);
        let e = inspect(&Source::Prefix(empty.clone()), &empty, Conduit::Udp).unwrap_err();
        assert!(e.contains("none (no include/*-conduit directory)"), "{e}");
        let _ = std::fs::remove_dir_all(prefix);
        let _ = std::fs::remove_dir_all(empty);
    }

    #[test]
    fn an_older_gasnet_is_refused_naming_both_versions_and_the_way_out() {
        let prefix = fake_prefix("old", "2020.10.0", &["udp-par"]);
        let source = Source::PkgConfig {
            prefix: prefix.clone(),
            pc_file: prefix.join("lib/pkgconfig/gasnet-udp-par.pc"),
        };
        let e = inspect(&source, &prefix, Conduit::Udp).unwrap_err();
        assert!(e.starts_with("pkg-config's "), "{e}");
        assert!(e.contains("is version 2020.10.0"), "{e}");
        assert!(e.contains("needs 2021.3.0 or newer"), "{e}");
        assert!(e.contains("UAT_GASNET=bundled"), "{e}");
        let _ = std::fs::remove_dir_all(prefix);
    }

    #[test]
    fn not_an_installation_is_said_so() {
        let dir = scratch("bare");
        let e = inspect(&Source::Prefix(dir.clone()), &dir, Conduit::Smp).unwrap_err();
        assert!(
            e.contains("gasnet_config.h") && e.contains("not a GASNet-EX installation"),
            "{e}"
        );
        let missing = dir.join("nowhere");
        let e = inspect(&Source::Prefix(missing.clone()), &missing, Conduit::Smp).unwrap_err();
        assert!(e.contains("is not a directory"), "{e}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
