//! Builds GASNet-EX from the source tree shipped in the crates.io package
//! `gex-sys` 0.1.0 (a GASNet-EX 2021.3.0 git snapshot), once per conduit.
//!
//! Layout of the cache (one per machine, shared by every crate, target dir
//! and variant, so neither a new crate nor a switch of variant rebuilds
//! GASNet): `GASNET_CACHE_DIR`, or `<cargo home>/uat/gasnet`:
//!
//! ```text
//! <cache>/2021.3.0/src/                 bootstrapped copy of the source tree
//! <cache>/2021.3.0/<conduit>/build/     configure + make (logs live here)
//! <cache>/2021.3.0/<conduit>/install/   the prefix we compile and link against
//! <cache>/lock                          serialises concurrent cargo builds
//! ```
//!
//! This script never touches the network: `cargo uat setup` (a `cargo
//! fetch` of a one-dependency manifest) puts the source into cargo's cache,
//! and we only read it from there. We never run cargo ourselves, so we cannot
//! deadlock on cargo's package lock.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{env_path, fail, Conduit};

const VERSION: &str = uat_rules::gasnet::BUNDLED_NAME;
const FETCH_HINT: &str = "run `cargo uat setup` (the launcher: `cargo install --path cargo-uat` from a checkout of uat; in the checkout, scripts/setup.sh), or set GASNET_SRC to a GASNet-EX 2021.3.0 tree, or point the build at an installed GASNet-EX (GASNET_PREFIX, or its lib/pkgconfig on PKG_CONFIG_PATH)";
/// Written into the install prefix last: its presence means a complete build.
const STAMP: &str = ".uat-build-complete";

/// Returns the install prefix of a complete build for `conduit`, building it
/// first if needed.
pub(crate) fn ensure_built(conduit: Conduit) -> PathBuf {
    let root = cache_dir().join(VERSION);
    let dir = root.join(conduit.name());
    let prefix = dir.join("install");
    let args = configure_args(conduit, &prefix);
    let wanted = args.join(" ");
    println!("cargo:rerun-if-changed={}", prefix.join(STAMP).display());
    if stamp_matches(&prefix, &wanted) {
        return prefix;
    }

    fs::create_dir_all(&root).unwrap_or_else(|e| fail(&format!("cannot create {}: {e}", root.display())));
    let lock_path = root.join("lock");
    let lock =
        File::create(&lock_path).unwrap_or_else(|e| fail(&format!("cannot create {}: {e}", lock_path.display())));
    // Another cargo (another variant's target dir) may be building the same
    // conduit: wait for it, then re-check.
    lock.lock()
        .unwrap_or_else(|e| fail(&format!("cannot lock {}: {e}", lock_path.display())));
    if stamp_matches(&prefix, &wanted) {
        return prefix;
    }

    check_tools(conduit);
    let src = bootstrapped_source(&root);
    let build = dir.join("build");
    let _ = fs::remove_dir_all(&build);
    let _ = fs::remove_dir_all(&prefix);
    fs::create_dir_all(&build).unwrap_or_else(|e| fail(&format!("cannot create {}: {e}", build.display())));

    let jobs = std::env::var("NUM_JOBS").unwrap_or_else(|_| "2".into());
    run_logged(
        Command::new(src.join("configure")).args(&args).current_dir(&build),
        &build.join("configure.log"),
        "configure",
    );
    run_logged(
        Command::new("make").arg(format!("-j{jobs}")).current_dir(&build),
        &build.join("make.log"),
        "make",
    );
    run_logged(
        Command::new("make").arg("install").current_dir(&build),
        &build.join("install.log"),
        "make install",
    );
    fs::write(prefix.join(STAMP), &wanted).unwrap_or_else(|e| fail(&format!("cannot write build stamp: {e}")));
    prefix
}

/// `GASNET_CACHE_DIR`, else `<cargo home>/uat/gasnet` (`$CARGO_HOME`, else
/// `~/.cargo`): one cache for every crate of the machine.
fn cache_dir() -> PathBuf {
    if let Some(dir) = env_path("GASNET_CACHE_DIR") {
        return dir;
    }
    // The same rule as the launcher's (cargo-uat/src/setup.rs).
    let cargo_home =
        env_path("CARGO_HOME").unwrap_or_else(|| env_path("HOME").unwrap_or_else(|| PathBuf::from("/")).join(".cargo"));
    cargo_home.join("uat").join("gasnet")
}

fn configure_args(conduit: Conduit, prefix: &Path) -> Vec<String> {
    let mut args = vec![
        format!("--prefix={}", prefix.display()),
        // PAR: the communication-assisting thread polls while the worker
        // communicates. PSHM stays on (the default): the arena aliases the
        // PSHM-backed segment.
        "--enable-par".into(),
        "--disable-seq".into(),
        "--disable-parsync".into(),
        "--enable-pshm".into(),
    ];
    for other in Conduit::ALL {
        let verb = if other == conduit { "enable" } else { "disable" };
        args.push(format!("--{verb}-{}", other.name()));
    }
    args.extend(["--disable-ofi", "--disable-ucx", "--disable-aries"].map(String::from));
    args
}

fn stamp_matches(prefix: &Path, wanted: &str) -> bool {
    fs::read_to_string(prefix.join(STAMP)).is_ok_and(|s| s == wanted)
}

/// Copies the registry's source tree into the cache and runs `./Bootstrap`
/// there once (the registry copy is cargo's and must stay pristine).
fn bootstrapped_source(root: &Path) -> PathBuf {
    let dst = root.join("src");
    let stamp = dst.join(".uat-bootstrapped");
    if stamp.exists() {
        return dst;
    }
    let src = find_source();
    let _ = fs::remove_dir_all(&dst);
    let status = Command::new("cp").arg("-R").arg(&src).arg(&dst).status();
    if !status.is_ok_and(|s| s.success()) {
        fail(&format!(
            "cannot copy the GASNet-EX source from {} to {}",
            src.display(),
            dst.display()
        ));
    }
    run_logged(
        Command::new("./Bootstrap").current_dir(&dst),
        &root.join("bootstrap.log"),
        "Bootstrap",
    );
    File::create(&stamp).unwrap_or_else(|e| fail(&format!("cannot write {}: {e}", stamp.display())));
    dst
}

fn find_source() -> PathBuf {
    if let Some(src) = env_path("GASNET_SRC") {
        if !src.join("gasnetex.h").exists() {
            fail(&format!(
                "GASNET_SRC={} is not a GASNet-EX source tree (no gasnetex.h)",
                src.display()
            ));
        }
        return src;
    }
    let cargo_home = env_path("CARGO_HOME")
        .or_else(|| env_path("HOME").map(|h| h.join(".cargo")))
        .unwrap_or_else(|| fail("neither CARGO_HOME nor HOME is set"));
    let registry = cargo_home.join("registry").join("src");
    let found = fs::read_dir(&registry)
        .into_iter()
        .flatten()
        .flatten()
        .find_map(|index| {
            let tree = index.path().join("gex-sys-0.1.0").join("gasnet");
            tree.join("gasnetex.h").exists().then_some(tree)
        });
    found.unwrap_or_else(|| {
        fail(&format!(
            "the GASNet-EX {VERSION} source (crate gex-sys 0.1.0) is not in {}: {FETCH_HINT}",
            registry.display()
        ))
    })
}

fn check_tools(conduit: Conduit) {
    let mut missing: Vec<&str> = Vec::new();
    for (tool, package) in [
        ("autoconf", "autoconf"),
        ("automake", "automake"),
        ("make", "make"),
        ("gcc", "gcc"),
        ("g++", "g++"),
    ] {
        if !on_path(tool) {
            missing.push(package);
        }
    }
    if matches!(conduit, Conduit::Mpi | Conduit::Ibv) && !on_path("mpicc") {
        missing.extend(["libopenmpi-dev", "openmpi-bin"]);
    }
    if conduit == Conduit::Ibv && !Path::new("/usr/include/infiniband/verbs.h").exists() {
        missing.push("libibverbs-dev");
    }
    if !missing.is_empty() {
        fail(&format!(
            "building GASNet-EX ({} conduit) needs these Debian packages: {}\n       install them with `apt-get install {}` (or run scripts/setup.sh as root)",
            conduit.name(),
            missing.join(" "),
            missing.join(" ")
        ));
    }
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

/// Runs a build step with its output in `log`; on failure, stops the build
/// with the step, the log's path and its last lines.
fn run_logged(cmd: &mut Command, log: &Path, what: &str) {
    let out = File::create(log).unwrap_or_else(|e| fail(&format!("cannot create {}: {e}", log.display())));
    let err = out.try_clone().unwrap();
    // cargo's jobserver flags are meant for cargo's children, not GASNet's
    // recursive make; `-jN` is given explicitly.
    for var in ["MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CARGO_MAKEFLAGS"] {
        cmd.env_remove(var);
    }
    let status = cmd.stdout(out).stderr(err).status();
    if !status.as_ref().is_ok_and(|s| s.success()) {
        let text = fs::read_to_string(log).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(25).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        fail(&format!(
            "GASNet-EX {what} failed ({status:?}); full log: {}\n--- last lines ---\n{}",
            log.display(),
            tail.join("\n")
        ));
    }
}
