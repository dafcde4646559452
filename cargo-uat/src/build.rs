//! Building a program's crate for a variant: one `cargo build` line, into
//! the variant's own target directory (`<target>/<conduit>-<mode>/`), so
//! that switching variants never rebuilds another.
//!
//! The features that select the variant are named from the crate's side: a
//! crate that depends on `uat` (under whatever key) gets `KEY/smp,...`;
//! uat's own workspace, whose packages carry the variant features
//! themselves, gets them plainly and is built whole (every benchmark and
//! example). `cargo build --features uat/smp,uat/fad-native` by hand gives
//! the same build.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::variant::Variant;

/// What to run: a binary or an example of the crate, or a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Program {
    /// The crate's only binary (or its default-run one).
    Default,
    /// A binary of the crate (`--bin`).
    Bin(String),
    /// An example of the crate (`--example`).
    Example(String),
    /// A program given by its path (not built).
    Path(PathBuf),
}

/// The crate in the current directory, as cargo sees it.
pub struct Crate {
    /// `cargo metadata`'s target directory.
    pub target_dir: PathBuf,
    /// How the variant features are named: "" (uat's workspace) or "KEY/".
    pub feature_prefix: String,
    /// uat's own workspace: build every package.
    pub is_uat_workspace: bool,
    /// The package's binaries (for `Program::Default`).
    pub bins: Vec<String>,
    /// The package's `default-run` binary, if it names one.
    pub default_run: Option<String>,
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

impl Crate {
    /// Reads the crate of the current directory (`cargo metadata`).
    pub fn here() -> Result<Crate, String> {
        let out = cargo()
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "no Cargo.toml here (cargo metadata: {})",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let meta: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
        let located = cargo()
            .args(["locate-project", "--message-format", "plain"])
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        let manifest = PathBuf::from(String::from_utf8_lossy(&located.stdout).trim());
        let packages = meta["packages"].as_array().cloned().unwrap_or_default();
        let package = packages
            .iter()
            .find(|p| p["manifest_path"].as_str().map(Path::new) == Some(manifest.as_path()))
            .or_else(|| packages.first())
            .ok_or("cargo metadata lists no package")?;
        let is_uat_workspace = packages.iter().any(|p| p["name"] == "uat");
        let feature_prefix = if is_uat_workspace {
            String::new()
        } else {
            let dep = package["dependencies"]
                .as_array()
                .and_then(|deps| deps.iter().find(|d| d["name"] == "uat" && d["kind"].is_null()))
                .ok_or_else(|| {
                    format!(
                        "{} does not depend on uat: add it under [dependencies] (uat = {{ path = \"...\" }})",
                        manifest.display()
                    )
                })?;
            format!("{}/", dep["rename"].as_str().unwrap_or("uat"))
        };
        let bins = package["targets"]
            .as_array()
            .map(|ts| {
                ts.iter()
                    .filter(|t| t["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "bin")))
                    .filter_map(|t| t["name"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Crate {
            target_dir: PathBuf::from(meta["target_directory"].as_str().unwrap_or("target")),
            feature_prefix,
            is_uat_workspace,
            bins,
            default_run: package["default_run"].as_str().map(String::from),
        })
    }

    /// Where `variant`'s build goes.
    pub fn variant_dir(&self, variant: Variant) -> PathBuf {
        self.target_dir.join(variant.to_string())
    }

    /// The one build command of a variant.
    pub fn build_command(&self, variant: Variant, release: bool, program: &Program) -> Command {
        let mut cmd = cargo();
        cmd.args(["build", "--message-format=json-render-diagnostics"]);
        if release {
            cmd.arg("--release");
        }
        cmd.arg("--features")
            .arg(variant.features(&self.feature_prefix))
            .arg("--target-dir")
            .arg(self.variant_dir(variant));
        match program {
            _ if self.is_uat_workspace => {
                cmd.args(["--workspace", "--bins", "--examples"]);
            }
            Program::Bin(b) => {
                cmd.args(["--bin", b]);
            }
            Program::Example(e) => {
                cmd.args(["--example", e]);
            }
            Program::Default | Program::Path(_) => {}
        }
        cmd
    }

    /// Builds `variant` and returns the executable to run.
    pub fn build(&self, variant: Variant, release: bool, program: &Program) -> Result<PathBuf, String> {
        let mut cmd = self.build_command(variant, release, program);
        let out = cmd
            .stderr(std::process::Stdio::inherit())
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if !out.status.success() {
            return Err(format!("building the {variant} variant failed (see above)"));
        }
        let artifacts: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|m| m["reason"] == "compiler-artifact" && m["executable"].is_string())
            .collect();
        let find = |name: &str, kind: &str| {
            artifacts
                .iter()
                .find(|a| {
                    a["target"]["name"] == name
                        && a["target"]["kind"]
                            .as_array()
                            .is_some_and(|k| k.iter().any(|k| k == kind))
                })
                .and_then(|a| a["executable"].as_str().map(PathBuf::from))
                .ok_or_else(|| format!("the build made no {kind} named {name}"))
        };
        match program {
            Program::Path(p) => Ok(p.clone()),
            Program::Bin(b) => find(b, "bin"),
            Program::Example(e) => find(e, "example"),
            Program::Default => find(&self.default_bin()?, "bin"),
        }
    }

    /// The built executable, without building (`--no-build`).
    pub fn built(&self, variant: Variant, release: bool, program: &Program) -> Result<PathBuf, String> {
        let dir = self
            .variant_dir(variant)
            .join(if release { "release" } else { "debug" });
        let exe = match program {
            Program::Path(p) => return Ok(p.clone()),
            Program::Bin(b) => dir.join(b),
            Program::Example(e) => dir.join("examples").join(e),
            Program::Default => dir.join(self.default_bin()?),
        };
        if exe.is_file() {
            Ok(exe)
        } else if !dir.is_dir() {
            Err(format!(
                "the {variant} variant is not built (no {}); run without --no-build",
                dir.display()
            ))
        } else {
            Err(format!("no program {} (built: {})", exe.display(), listing(&dir)))
        }
    }

    fn default_bin(&self) -> Result<String, String> {
        if let Some(d) = &self.default_run {
            return Ok(d.clone());
        }
        match self.bins.as_slice() {
            [only] => Ok(only.clone()),
            [] => Err("this crate has no binary: name one with --bin, --example or a path".into()),
            many => Err(format!(
                "this crate has several binaries ({}): choose one with --bin",
                many.join(", ")
            )),
        }
    }
}

fn listing(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.ends_with(".d"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::{Conduit, Fad};

    #[test]
    fn the_build_inherits_the_variables_that_choose_gasnet() {
        let krate = Crate {
            target_dir: "/t".into(),
            feature_prefix: "uat/".into(),
            is_uat_workspace: false,
            bins: vec!["app".into()],
            default_run: None,
        };
        let v = Variant {
            conduit: Conduit::Ibv,
            fad: Fad::Native,
        };
        let cmd = krate.build_command(v, true, &Program::Default);
        // Neither set nor removed: cargo, and gasnet-sys's build script
        // under it, see the user's GASNET_PREFIX, UAT_GASNET and pkg-config
        // variables as they are.
        for (name, _) in cmd.get_envs() {
            assert!(
                !uat_rules::gasnet::ENV.iter().any(|v| name == *v),
                "the build command changes {name:?}"
            );
        }
        let args: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert!(
            args.windows(2).any(|w| w == ["--target-dir", "/t/ibv-native"]),
            "{args:?}"
        );
    }
}
