//! Build script of `gasnet-sys`: finds or builds GASNet-EX for the selected
//! conduit (PAR threading mode, PSHM on), compiles the C shim over its macro
//! API, generates bindgen bindings, and emits the link lines.
//!
//! Inputs:
//! - features `smp` | `udp` | `mpi` | `ibv`: exactly one (else src/lib.rs
//!   stops the build with a message naming them);
//! - which GASNet-EX: `UAT_GASNET` (`auto`, `bundled`, `pkg-config`),
//!   `GASNET_PREFIX` (an installed GASNet-EX, configured with `--enable-par`
//!   and the conduit) or pkg-config's `gasnet-<conduit>-par`, else the
//!   vendored build (see vendored.rs, with `GASNET_SRC` and
//!   `GASNET_CACHE_DIR` to override where the source and the build live).
//!   The rule and the checks of an installed one (version at least the
//!   bundled 2021.3.0, the conduit in PAR mode) are `uat_rules::gasnet`'s,
//!   shared with the launcher. Flags come from the installation's
//!   `include/<conduit>-conduit/<conduit>-par.mak`.
//!
//! Outputs for dependents (`links = "gasnet"`): `DEP_GASNET_PREFIX`,
//! `DEP_GASNET_CONDUIT`, `DEP_GASNET_VERSION` (e.g. `2021.3.0`) and
//! `DEP_GASNET_SOURCE` (`prefix`, `pkg-config` or `bundled`). GASNet's
//! libraries and search paths reach every
//! executable that links gasnet-sys (rustc-link-lib/-search propagate);
//! linker arguments that only a final binary could apply are named in a build
//! warning instead (see `emit_link`).

mod mak;
mod vendored;

use std::path::{Path, PathBuf};
use std::process::Command;

use mak::Mak;
use uat_rules::gasnet::{self, Source};

pub use uat_rules::Conduit;

/// Stops the build with `msg`, formatted the way cargo shows build-script errors.
pub fn fail(msg: &str) -> ! {
    eprintln!("\nerror: {msg}\n");
    std::process::exit(1);
}

/// The path in `var`, if set and not empty.
pub fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from)
}

fn main() {
    println!("cargo:rustc-check-cfg=cfg(gasnet_configured)");
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed=shim");
    // Where the vendored build's source and cache are (the variables that
    // choose which GASNet-EX are declared with the choice, below).
    for var in ["GASNET_SRC", "GASNET_CACHE_DIR", "CARGO_HOME"] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    // Wrong platform or wrong feature count: src/lib.rs reports it with a
    // compile_error! naming the fix; building GASNet here would only bury it.
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let selected: Vec<Conduit> = Conduit::ALL
        .into_iter()
        .filter(|c| std::env::var_os(format!("CARGO_FEATURE_{}", c.name().to_uppercase())).is_some())
        .collect();
    let [conduit] = selected[..] else { return };
    if os != "linux" || arch != "x86_64" {
        return;
    }

    // A failed choice needs no rerun lines: cargo reruns a failed build
    // script on the next build anyway.
    let choice = gasnet::choose_from_env(conduit).unwrap_or_else(|e| fail(&e));
    // Every variable the choice read (pkg-config's own when it was asked:
    // its answer changes with them).
    for var in choice.env_read() {
        println!("cargo:rerun-if-env-changed={var}");
    }
    if let Some(note) = &choice.note {
        println!("cargo:warning={note}");
    }
    let prefix = match choice.source.prefix() {
        Some(prefix) => prefix.to_path_buf(),
        None => vendored::ensure_built(conduit),
    };
    if let Source::PkgConfig { pc_file, .. } = &choice.source {
        if pc_file.is_file() {
            println!("cargo:rerun-if-changed={}", pc_file.display());
        }
    }
    let install = gasnet::inspect(&choice.source, &prefix, conduit).unwrap_or_else(|e| fail(&e));
    println!("cargo:rerun-if-changed={}", install.config_header.display());
    if install.newer_than_tested() {
        // Accepted: sites install newer releases for their other clients
        // (UPC++, Chapel, Legion), and a call of the shim's that a release
        // changed fails the shim's compile by name. But CI runs only the
        // bundled release: say so.
        println!(
            "cargo:warning=using GASNet-EX {} from {}: uat is tested with {}; newer releases are accepted untested",
            install.version,
            choice.source.describe(),
            gasnet::BUNDLED
        );
    }
    let mak_path = install.mak;
    println!("cargo:rerun-if-changed={}", mak_path.display());
    let mak = Mak::read(&mak_path).unwrap_or_else(|e| fail(&e));

    // Preprocessor flags (-I, -D) drive both the shim and bindgen.
    let cppflags: Vec<String> = mak.words("GASNET_CPPFLAGS");
    if !cppflags.iter().any(|f| f == "-DGASNET_PAR") {
        fail(&format!(
            "{} is not a PAR-mode fragment (no -DGASNET_PAR)",
            mak_path.display()
        ));
    }

    compile_shim(&mak, &cppflags);
    generate_bindings(&cppflags);
    emit_link(&mak, &prefix);

    println!("cargo:rustc-cfg=gasnet_configured");
    println!("cargo:prefix={}", prefix.display());
    println!("cargo:conduit={}", conduit.name());
    println!("cargo:version={}", install.version);
    println!("cargo:source={}", choice.source.name());
}

fn compile_shim(mak: &Mak, cppflags: &[String]) {
    let mut build = cc::Build::new();
    build.file("shim/uat_shim.c").include("shim").warnings(false);
    for flag in cppflags.iter().chain(mak.words("GASNET_CFLAGS").iter()) {
        build.flag(flag);
    }
    build.compile("uat_gasnet_shim");
}

fn generate_bindings(cppflags: &[String]) {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("bindings.rs");
    let clang_args = cppflags.iter().filter(|f| f.starts_with("-I") || f.starts_with("-D"));
    let bindings = bindgen::Builder::default()
        .header("shim/uat_shim.h")
        .clang_args(clang_args)
        // The shim (macro and inline API, see shim/uat_shim.h) ...
        .allowlist_function("uat_.*")
        // ... and the real GASNet-EX functions we call directly.
        .allowlist_function("gex_System_QueryNbrhdInfo")
        .allowlist_function("gex_System_QueryHostInfo")
        .allowlist_function("gasnet_ErrorName")
        .allowlist_function("gasnet_ErrorDesc")
        .allowlist_type("gex_(Rank|AM_Arg|AM_Index|Token|AD|Event|OP|Flags|AM_Entry|RankInfo)_t")
        .allowlist_var("UAT_.*")
        .layout_tests(false)
        .generate()
        .unwrap_or_else(|e| {
            fail(&format!("bindgen failed on GASNet-EX's headers: {e}\n       (bindgen needs libclang: `apt-get install libclang-dev`)"))
        });
    bindings
        .write_to_file(&out)
        .unwrap_or_else(|e| fail(&format!("cannot write {}: {e}", out.display())));
}

/// Emits GASNet's libraries in the order of its GASNET_LIBS (static archives
/// first, their system dependencies after), after the shim archive that
/// `cc` already emitted.
fn emit_link(mak: &Mak, prefix: &Path) {
    let mut words = mak.words("GASNET_LDFLAGS");
    words.extend(mak.words("GASNET_LIBS"));
    let ld = mak.get("GASNET_LD");
    let ld_name = Path::new(ld.split_whitespace().next().unwrap_or(""))
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_string();
    // GASNET_LD may be an MPI compiler wrapper (mpi and ibv conduits) that adds
    // the MPI libraries silently: ask it for them.
    if ld_name.starts_with("mpi") {
        words.extend(mpi_link_words(&ld));
    }
    // A C++ linker (udp's amudp is C++) links libstdc++ silently.
    if ld_name.contains("++") || ld_name.contains("cxx") {
        words.push("-lstdc++".into());
    }

    let lib_dir = prefix.join("lib");
    let mut link_args = Vec::new();
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        if word == "--param" {
            words.next();
            continue;
        }
        if let Some(dir) = word.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = word.strip_prefix("-l") {
            if lib_dir.join(format!("lib{lib}.a")).exists() {
                println!("cargo:rustc-link-lib=static={lib}");
            } else {
                println!("cargo:rustc-link-lib={lib}");
            }
        } else if word == "-pthread" {
            println!("cargo:rustc-link-lib=pthread");
        } else if let Some(dirs) = rpath_dirs(&word) {
            // A run-time search path (MPI outside the loader's default
            // path): a library's build script cannot give a dependent's
            // executable an rpath, so the directory becomes a link-time
            // search path (which does reach it), and the loader must find it
            // at run time as for any MPI program (LD_LIBRARY_PATH, modules).
            for dir in dirs {
                println!("cargo:rustc-link-search=native={dir}");
                println!(
                    "cargo:warning=GASNet links against libraries in {dir}: make sure the loader finds them at run time (LD_LIBRARY_PATH)"
                );
            }
        } else if word.starts_with("-Wl,") || word.ends_with(".a") || word.ends_with(".so") {
            link_args.push(word);
        }
        // Everything else in these variables is compiler flags (-O3, --param
        // NAME=VALUE, -W...), irrelevant to linking.
    }
    // Other linker arguments cannot reach a dependent's executable from a
    // library's build script: name them, so that a program that needs them
    // can pass them itself (RUSTFLAGS="-C link-arg=...").
    if !link_args.is_empty() {
        println!(
            "cargo:warning=GASNet's link line also has {}: pass them to your program's link if it fails (RUSTFLAGS=\"-C link-arg=...\")",
            link_args.join(" ")
        );
    }
}

/// The directories of `-Wl,-rpath,DIR` or `-Wl,-rpath=DIR` (several may be
/// joined with ':').
fn rpath_dirs(word: &str) -> Option<Vec<String>> {
    let rest = word.strip_prefix("-Wl,")?;
    let dirs = rest
        .strip_prefix("-rpath,")
        .or_else(|| rest.strip_prefix("-rpath="))
        .or_else(|| rest.strip_prefix("-R,"))?;
    Some(
        dirs.split([':', ','])
            .filter(|d| !d.is_empty())
            .map(String::from)
            .collect(),
    )
}

fn mpi_link_words(ld: &str) -> Vec<String> {
    let wrapper = ld.split_whitespace().next().unwrap_or("mpicc");
    for flag in ["--showme:link", "-link_info"] {
        if let Ok(out) = Command::new(wrapper).arg(flag).output() {
            if out.status.success() {
                let text = String::from_utf8_lossy(&out.stdout);
                // MPICH's -link_info prints the compiler first.
                return text
                    .split_whitespace()
                    .filter(|w| w.starts_with('-'))
                    .map(str::to_string)
                    .collect();
            }
        }
    }
    fail(&format!("cannot ask the MPI wrapper `{wrapper}` for its link flags (tried --showme:link and -link_info); install `libopenmpi-dev openmpi-bin`"));
}
