//! Build script of `uat-trace`: with the `otf2` feature, finds the OTF2
//! library, binds the part of its API that `src/otf2/` uses with bindgen and
//! links it; without the feature, nothing.
//!
//! Where OTF2 is found, first that answers:
//! - `OTF2_PREFIX`: `$OTF2_PREFIX/include/otf2/otf2.h` and the library in
//!   `$OTF2_PREFIX/lib` or `lib64` (an installation from source, `libotf2`);
//! - `pkg-config otf2` (Debian's package, `libopen-trace-format2`);
//! - `otf2-config` (an installation from source on the PATH);
//! - `/usr/include` and the system's library directories.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "otf2")]
    otf2::bind();
}

#[cfg(feature = "otf2")]
mod otf2 {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    const MISSING: &str = "the `otf2` feature needs the OTF2 library and its headers (OTF2 3.x, libotf2; \
        Debian/Ubuntu: `apt-get install libopen-trace-format2-dev otf2-tools`; `cargo uat setup` installs it), \
        or OTF2_PREFIX naming where it is installed; build without `--features otf2` to go without the OTF2 archive";

    fn fail(msg: &str) -> ! {
        eprintln!("\nerror: {msg}\n");
        std::process::exit(1);
    }

    /// The words of a command's output, if it ran and succeeded.
    fn words(cmd: &str, args: &[&str]) -> Option<Vec<String>> {
        let out = Command::new(cmd).args(args).output().ok()?;
        out.status.success().then(|| {
            String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .map(str::to_string)
                .collect()
        })
    }

    /// Include directories and linker words (`-L…`, `-l…`).
    fn locate() -> (Vec<PathBuf>, Vec<String>) {
        if let Some(prefix) = std::env::var_os("OTF2_PREFIX")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
        {
            let include = prefix.join("include");
            if !include.join("otf2/otf2.h").exists() {
                fail(&format!(
                    "OTF2_PREFIX={}: no include/otf2/otf2.h there; {MISSING}",
                    prefix.display()
                ));
            }
            let mut link: Vec<String> = ["lib", "lib64"]
                .iter()
                .map(|d| prefix.join(d))
                .filter(|d| d.exists())
                .map(|d| format!("-L{}", d.display()))
                .collect();
            link.push(library_word(&prefix).unwrap_or_else(|| "-lotf2".into()));
            return (vec![include], link);
        }
        if let (Some(cflags), Some(libs)) = (
            words("pkg-config", &["--cflags", "otf2"]),
            words("pkg-config", &["--libs", "otf2"]),
        ) {
            return (includes(&cflags), libs);
        }
        if let (Some(cflags), Some(ldflags), Some(libs)) = (
            words("otf2-config", &["--cflags"]),
            words("otf2-config", &["--ldflags"]),
            words("otf2-config", &["--libs"]),
        ) {
            return (includes(&cflags), ldflags.into_iter().chain(libs).collect());
        }
        if Path::new("/usr/include/otf2/otf2.h").exists() {
            let lib = ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"]
                .iter()
                .find_map(|d| library_word(Path::new(d)))
                .unwrap_or_else(|| fail(&format!("/usr/include/otf2/otf2.h but no libotf2.so; {MISSING}")));
            return (vec![PathBuf::from("/usr/include")], vec![lib]);
        }
        fail(MISSING)
    }

    /// `-lotf2` or Debian's `-lopen-trace-format2`, whichever `dir` (or its
    /// `lib`, `lib64`) holds.
    fn library_word(dir: &Path) -> Option<String> {
        for d in [dir.to_path_buf(), dir.join("lib"), dir.join("lib64")] {
            for name in ["otf2", "open-trace-format2"] {
                if d.join(format!("lib{name}.so")).exists() || d.join(format!("lib{name}.a")).exists() {
                    return Some(format!("-l{name}"));
                }
            }
        }
        None
    }

    fn includes(cflags: &[String]) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = cflags
            .iter()
            .filter_map(|f| f.strip_prefix("-I"))
            .map(PathBuf::from)
            .collect();
        if dirs.is_empty() {
            dirs.push(PathBuf::from("/usr/include"));
        }
        dirs
    }

    pub(super) fn bind() {
        println!("cargo:rerun-if-env-changed=OTF2_PREFIX");
        let (include, link) = locate();
        for w in &link {
            if let Some(dir) = w.strip_prefix("-L") {
                println!("cargo:rustc-link-search=native={dir}");
            } else if let Some(lib) = w.strip_prefix("-l") {
                println!("cargo:rustc-link-lib={lib}");
            }
        }
        let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("otf2.rs");
        let bindings = bindgen::Builder::default()
            .header_contents("uat_otf2.h", "#include <otf2/otf2.h>\n")
            .clang_args(include.iter().map(|d| format!("-I{}", d.display())))
            // Writing an archive ...
            .allowlist_function("OTF2_Archive_(Open|Close|SetFlushCallbacks|SetSerialCollectiveCallbacks|SetCreator|SetDescription)")
            .allowlist_function("OTF2_Archive_(Open|Close)(Evt|Def)Files")
            .allowlist_function("OTF2_Archive_(Get|Close)(Evt|Def)Writer")
            .allowlist_function("OTF2_Archive_GetGlobalDefWriter")
            // ... its events ...
            .allowlist_function("OTF2_EvtWriter_(Enter|Leave|MpiSend|MpiRecv)")
            // ... its definitions ...
            .allowlist_function(
                "OTF2_GlobalDefWriter_Write(ClockProperties|String|Region|SystemTreeNode|SystemTreeNodeDomain|LocationGroup|Location|Group|Comm)",
            )
            // ... and what went wrong.
            .allowlist_function("OTF2_Error_(GetName|GetDescription)")
            .allowlist_type("OTF2_FlushCallbacks")
            .allowlist_type("OTF2_ErrorCode")
            .allowlist_type(
                "OTF2_(FileMode|FileSubstrate|Compression|FlushType|SystemTreeDomain|LocationGroupType|LocationType|RegionRole|Paradigm|RegionFlag|GroupType|GroupFlag|CommFlag)_enum",
            )
            .prepend_enum_name(false)
            .layout_tests(false)
            .generate()
            .unwrap_or_else(|e| {
                fail(&format!(
                    "bindgen failed on OTF2's headers ({}): {e}\n       (bindgen needs libclang: `apt-get install libclang-dev`)",
                    include.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
                ))
            });
        bindings
            .write_to_file(&out)
            .unwrap_or_else(|e| fail(&format!("cannot write {}: {e}", out.display())));
    }
}
