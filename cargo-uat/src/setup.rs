//! What a machine needs before a uni-address threads program builds: the
//! Debian packages GASNet-EX and bindgen need, and the GASNet-EX source.
//!
//! The source is the `gasnet/` folder of the crates.io package `gex-sys`
//! 0.1.0 (a GASNet-EX 2021.3.0 snapshot): `cargo fetch` of a one-line
//! manifest puts it into cargo's registry cache, where gasnet-sys's build
//! script finds it (build scripts never touch the network). GASNet-EX is
//! then built once per conduit per machine, under [`gasnet_cache`], and
//! shared by every crate and target directory.

use std::path::PathBuf;
use std::process::Command;

/// autoconf, automake: GASNet's ./Bootstrap; libclang-dev: bindgen;
/// libibverbs-dev: ibv-conduit; openmpi: mpi-conduit and ibv's MPI spawner;
/// fonts-dejavu-core: the reproduction report's plots; pkg-config: finding
/// a site's installed GASNet-EX (`gasnet-CONDUIT-par.pc`).
pub const PACKAGES: [&str; 13] = [
    "autoconf",
    "automake",
    "make",
    "gcc",
    "g++",
    "libclang-dev",
    "libibverbs-dev",
    "libopenmpi-dev",
    "openmpi-bin",
    "fonts-dejavu-core",
    "pkg-config",
    // Traces in OTF2 (`cargo uat run --trace`), and `otf2-print`.
    "libopen-trace-format2-dev",
    "otf2-tools",
];

/// The GASNet-EX version gasnet-sys builds, and the package that carries it.
pub const GASNET_VERSION: &str = uat_rules::gasnet::BUNDLED_NAME;
const SOURCE_PACKAGE: &str = "gex-sys-0.1.0";

/// cargo's home (`CARGO_HOME`, or `~/.cargo`).
pub fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo"))
}

/// Where GASNet-EX builds are cached, one per conduit, for every crate on
/// this machine: `GASNET_CACHE_DIR`, or `<cargo home>/uat/gasnet` (the same
/// rule as gasnet-sys's build script).
pub fn gasnet_cache() -> PathBuf {
    std::env::var_os("GASNET_CACHE_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| cargo_home().join("uat").join("gasnet"))
        .join(GASNET_VERSION)
}

/// The GASNet-EX source in cargo's registry cache, if it is there.
pub fn gasnet_source() -> Option<PathBuf> {
    let src = cargo_home().join("registry").join("src");
    std::fs::read_dir(src)
        .ok()?
        .filter_map(Result::ok)
        .map(|index| index.path().join(SOURCE_PACKAGE).join("gasnet"))
        .find(|g| g.join("gasnetex.h").is_file())
}

/// Debian packages of [`PACKAGES`] that are not installed.
pub fn missing_packages() -> Vec<&'static str> {
    PACKAGES
        .iter()
        .copied()
        .filter(|p| {
            !Command::new("dpkg-query")
                .args(["-W", "-f=${Status}", p])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        })
        .collect()
}

/// Installs what is missing: the packages (as root, with apt-get; otherwise
/// the error names the command to run) and the GASNet-EX source.
pub fn setup() -> Result<(), String> {
    let missing = missing_packages();
    if !missing.is_empty() {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        if !root || Command::new("apt-get").arg("--version").output().is_err() {
            return Err(format!(
                "missing system packages: {}; install them with: sudo apt-get install {}",
                missing.join(" "),
                missing.join(" ")
            ));
        }
        eprintln!("cargo-uat: installing {}", missing.join(" "));
        let apt = |args: &[&str]| {
            Command::new("apt-get")
                .args(args)
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status()
                .map_err(|e| format!("apt-get: {e}"))
                .and_then(|s| s.success().then_some(()).ok_or_else(|| "apt-get failed".to_string()))
        };
        apt(&["update", "-qq"])?;
        let mut install = vec!["install", "-y", "-qq", "--no-install-recommends"];
        install.extend(&missing);
        apt(&install)?;
    }
    if gasnet_source().is_none() {
        fetch_gasnet_source()?;
    }
    Ok(())
}

/// `cargo fetch` of a manifest whose only dependency is the package that
/// carries the GASNet-EX source.
fn fetch_gasnet_source() -> Result<(), String> {
    eprintln!("cargo-uat: fetching the GASNet-EX {GASNET_VERSION} source (crate gex-sys 0.1.0) into cargo's registry");
    let dir = std::env::temp_dir().join(format!("uat-gasnet-source-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"uat-gasnet-source\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\ngex-sys = \"=0.1.0\"\n\n[workspace]\n",
    )
    .and_then(|()| std::fs::write(dir.join("src/lib.rs"), ""))
    .map_err(|e| format!("{}: {e}", dir.display()))?;
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .arg("fetch")
        .current_dir(&dir)
        .status()
        .map_err(|e| format!("cannot run cargo fetch: {e}"));
    let _ = std::fs::remove_dir_all(&dir);
    if !status?.success() {
        return Err("cargo fetch of gex-sys 0.1.0 failed (is crates.io reachable?)".into());
    }
    gasnet_source()
        .map(|_| ())
        .ok_or_else(|| "cargo fetch did not unpack gex-sys 0.1.0 into cargo's registry".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Markdown files of the workspace a reader may follow (the README
    /// and docs/, but the results' records of past machines).
    fn docs(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() && path.file_name().is_some_and(|n| n != "results") {
                docs(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }

    #[test]
    fn the_readme_and_docs_list_the_packages_setup_installs() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let line = format!("apt-get install {}", PACKAGES.join(" "));
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        assert!(
            readme.contains(&format!("`{line}`")),
            "README.md does not show setup.rs's package list; it should hold the line\n\n`{line}`"
        );
        // Any other list of several packages is the same list: a line that
        // names one package for one purpose (`apt-get install otf2-tools`)
        // is not a list.
        let mut files = vec![root.join("README.md")];
        docs(&root.join("docs"), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for (at, _) in text.match_indices("apt-get install ") {
                let rest = &text[at + "apt-get install ".len()..];
                let end = rest.find(['`', '\n']).unwrap_or(rest.len());
                let named: Vec<&str> = rest[..end].split_whitespace().collect();
                let known = named.iter().filter(|p| PACKAGES.contains(p)).count();
                assert!(
                    known < 2 || named == PACKAGES,
                    "{} lists packages other than setup.rs's PACKAGES: `apt-get install {}`",
                    file.display(),
                    named.join(" ")
                );
            }
        }
    }
}
