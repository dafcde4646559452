//! The documentation stays true to the code: the README's package list is
//! the launcher's, its layout and the design's crate graph are cargo's, its
//! first program comes early in a short README, the code shown in the docs is
//! the examples' code, and no text a user reads names a private issue
//! number or reads like a work diary. Cheap: files and `cargo metadata`
//! only, no GASNet job.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root (this test lives in `rules/`, the crate without
/// dependencies, so that it builds in seconds in every variant).
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The Markdown files a user reads: the README, docs/ and docs/design/
/// (docs/results/ is history, kept as it was written).
fn user_docs() -> Vec<String> {
    let mut files = vec!["README.md".to_string()];
    for dir in ["docs", "docs/design"] {
        let mut here: Vec<String> = std::fs::read_dir(root().join(dir))
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".md"))
            .map(|name| format!("{dir}/{name}"))
            .collect();
        here.sort();
        files.extend(here);
    }
    files
}

/// A workspace crate: its package name, directory (relative to the root,
/// "" for the root package) and the workspace crates it depends on (normal
/// and build dependencies; dev-dependencies are not edges of the graph).
struct Crate {
    name: String,
    dir: String,
    deps: BTreeSet<String>,
}

/// The workspace's crates, report/'s and sim/'s (each its own workspace),
/// from `cargo metadata --no-deps`.
fn crates() -> Vec<Crate> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut packages = Vec::new();
    for manifest in ["Cargo.toml", "report/Cargo.toml", "sim/Cargo.toml"] {
        let out = Command::new(&cargo)
            .args([
                "metadata",
                "--no-deps",
                "--format-version",
                "1",
                "--offline",
                "--manifest-path",
            ])
            .arg(root().join(manifest))
            .output()
            .expect("cargo metadata runs");
        assert!(
            out.status.success(),
            "cargo metadata of {manifest}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
        packages.extend(json["packages"].as_array().expect("packages").iter().cloned());
    }
    let names: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    let root = std::fs::canonicalize(root()).unwrap();
    packages
        .iter()
        .map(|p| {
            let manifest = std::fs::canonicalize(p["manifest_path"].as_str().unwrap()).unwrap();
            let dir = manifest
                .parent()
                .unwrap()
                .strip_prefix(&root)
                .expect("a crate inside the repository");
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].as_str() != Some("dev"))
                .map(|d| d["name"].as_str().unwrap().to_string())
                .filter(|d| names.contains(d))
                .collect();
            Crate {
                name: p["name"].as_str().unwrap().to_string(),
                dir: dir.to_str().unwrap().to_string(),
                deps,
            }
        })
        .collect()
}

/// The lines of the fenced block right after `marker` in `text`.
fn block_after<'a>(text: &'a str, marker: &str, file: &str) -> Vec<&'a str> {
    let after = text
        .split_once(marker)
        .unwrap_or_else(|| panic!("{file} has no {marker} marker"))
        .1;
    let body = after
        .split_once("```")
        .and_then(|(_, b)| b.split_once('\n'))
        .unwrap_or_else(|| panic!("{file}: no block after {marker}"))
        .1;
    body.split_once("\n```")
        .unwrap_or_else(|| panic!("{file}: the block after {marker} ends"))
        .0
        .lines()
        .collect()
}

// The README's package list is checked against setup.rs's PACKAGES by
// cargo-uat's own unit test (the_readme_and_docs_list_the_packages_setup_installs).

#[test]
fn the_readme_layout_names_every_crate_of_the_workspace_and_report() {
    let readme = read("README.md");
    let layout = block_after(&readme, "<!-- layout -->", "README.md");
    let crates = crates();
    assert!(crates.len() >= 10, "{} crates", crates.len());
    assert!(crates.iter().any(|c| c.name == "uat-report"), "report/ is included");
    let mut missing = Vec::new();
    for c in &crates {
        let entry = if c.dir.is_empty() {
            "Cargo.toml".to_string()
        } else {
            format!("{}/", c.dir)
        };
        let line = layout.iter().find(|l| l.starts_with(&entry));
        match line {
            Some(l) if l.contains(&c.name) => {}
            Some(l) => missing.push(format!("{entry}'s line does not name the package {}: {l}", c.name)),
            None => missing.push(format!("no line for {entry} (package {})", c.name)),
        }
    }
    assert!(missing.is_empty(), "README.md's layout:\n{}", missing.join("\n"));
}

#[test]
fn the_design_crate_graph_is_cargos() {
    let crates = crates();
    let want: BTreeMap<&str, &BTreeSet<String>> = crates.iter().map(|c| (c.name.as_str(), &c.deps)).collect();
    let design = read("docs/design/README.md");
    let mut drawn: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in block_after(&design, "<!-- crate graph -->", "docs/design/README.md") {
        let Some((name, deps)) = line.split_once('→') else {
            continue;
        };
        let deps = deps.split_once("  ").map_or(deps, |d| d.0);
        let deps = deps
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty() && *d != "nothing")
            .map(String::from)
            .collect();
        drawn.insert(name.trim().to_string(), deps);
    }
    let mut wrong = Vec::new();
    for (name, deps) in &want {
        match drawn.get(*name) {
            None => wrong.push(format!("{name} is not drawn")),
            Some(d) if d != *deps => wrong.push(format!("{name} → {d:?}, but cargo says {deps:?}")),
            Some(_) => {}
        }
    }
    for name in drawn.keys() {
        if !want.contains_key(name.as_str()) {
            wrong.push(format!("{name} is drawn but is no crate"));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/design/README.md's crate graph:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_launcher_design_lists_crates_in_an_order_cargo_agrees_with() {
    let text = read("docs/design/launcher-and-build.md");
    let line = text
        .split_once("<!-- crate order -->")
        .expect("launcher-and-build.md has a <!-- crate order --> marker")
        .1
        .trim_start()
        .lines()
        .next()
        .unwrap();
    let order: Vec<&str> = line.split('`').skip(1).step_by(2).collect();
    let crates = crates();
    let names: BTreeSet<&str> = crates.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        order.iter().copied().collect::<BTreeSet<_>>(),
        names,
        "the chain names every crate: {line}"
    );
    assert_eq!(order.len(), names.len(), "each once: {line}");
    for c in &crates {
        let at = order.iter().position(|n| *n == c.name).unwrap();
        for d in &c.deps {
            let dep_at = order.iter().position(|n| n == d).unwrap();
            assert!(dep_at < at, "{} depends on {d}, which comes after it: {line}", c.name);
        }
    }
}

#[test]
fn the_readme_is_short_and_shows_the_first_program_early() {
    let readme = read("README.md");
    let lines: Vec<&str> = readme.lines().collect();
    assert!(lines.len() < 300, "README.md has {} lines (under 300)", lines.len());
    let marker = lines
        .iter()
        .position(|l| *l == "<!-- program -->")
        .expect("a <!-- program --> marker");
    let end = (marker + 2..lines.len())
        .find(|&i| lines[i] == "```")
        .expect("the program's block ends");
    assert!(lines[marker + 1] == "```rust", "a rust block after the marker");
    assert!(
        lines[marker..end].iter().any(|l| l.contains("uat::launch")),
        "the program launches"
    );
    assert!(
        end < 80,
        "the first program ends at line {} (within the first 80)",
        end + 1
    );
}

#[test]
fn code_shown_from_an_example_is_in_that_example() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for file in user_docs() {
        let text = read(&file);
        for piece in text.split("<!-- example: ").skip(1) {
            let path = piece.split_once(" -->").expect("the marker ends").0;
            let code = block_after(piece, " -->", &file).join("\n");
            let example = read(path);
            if !example.contains(&code) {
                wrong.push(format!(
                    "{file}: the block after <!-- example: {path} --> is not in {path}"
                ));
            }
            checked += 1;
        }
    }
    assert!(checked >= 1, "no <!-- example: PATH --> block found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every Rust source file of the repository (relative paths), build
/// outputs and the results' history left out.
fn rust_files() -> Vec<String> {
    fn walk(dir: &std::path::Path, rel: &str, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if entry.file_type().unwrap().is_dir() {
                if !matches!(name.as_str(), "target" | ".git" | "results") {
                    walk(&entry.path(), &path, out);
                }
            } else if name.ends_with(".rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), "", &mut out);
    out.sort();
    out
}

/// What a reader cannot look up or should not read: a private issue
/// number ("issue 34", "issues 12 and 13", "#34") or a work-diary word.
fn offence(line: &str) -> Option<&'static str> {
    let lower = line.to_lowercase();
    let bytes = lower.as_bytes();
    for (i, _) in lower.match_indices("issue") {
        let rest = lower[i + 5..].trim_start_matches('s');
        let rest = rest.trim_start_matches([' ', '#']);
        if rest.len() < lower[i + 5..].len() && rest.starts_with(|c: char| c.is_ascii_digit()) {
            return Some("an issue number");
        }
    }
    for (i, _) in lower.match_indices('#') {
        let entity = i > 0 && bytes[i - 1] == b'&';
        if !entity && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            return Some("a #N reference");
        }
    }
    let words = |w: &str| {
        lower.match_indices(w).any(|(i, _)| {
            let before = lower[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
            let after = lower[i + w.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric());
            before && after
        })
    };
    for w in [
        "today",
        "yesterday",
        "we tried",
        "this session",
        "another session",
        "one session",
        "last session",
    ] {
        if words(w) {
            return Some("a work-diary word");
        }
    }
    None
}

/// The lines of a script that `--help` shows or a user reads first: its
/// leading comment block and every here-document.
fn script_help(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut header = true;
    let mut heredoc: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        if header && n > 0 && !line.starts_with('#') {
            header = false;
        }
        if let Some(end) = &heredoc {
            if line.trim() == end {
                heredoc = None;
            } else {
                out.push((n + 1, line));
            }
            continue;
        }
        if header && n > 0 {
            out.push((n + 1, line));
        }
        if let Some((_, tag)) = line.split_once("<<") {
            let tag = tag.trim_start_matches('-').trim().trim_matches(['\'', '"']);
            let tag: String = tag.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !tag.is_empty() {
                heredoc = Some(tag);
            }
        }
    }
    out
}

/// The string literals on a line of Rust (plot titles, labels), not its
/// comments.
fn string_literals(line: &str) -> String {
    let code = line.trim_start();
    if code.starts_with("//") {
        return String::new();
    }
    let mut out = String::new();
    let mut inside = false;
    let mut escaped = false;
    for c in code.chars() {
        if inside {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                inside = false;
                out.push('\n');
                continue;
            }
            out.push(c);
        } else if c == '"' {
            inside = true;
        }
    }
    out
}

#[test]
fn no_issue_numbers_or_diary_words_in_what_users_read() {
    let mut found = Vec::new();
    let mut scanned = 0;
    let mut scan = |file: &str, lines: Vec<(usize, String)>| {
        scanned += 1;
        for (n, line) in lines {
            for piece in line.split('\n') {
                if let Some(what) = offence(piece) {
                    found.push(format!("{file}:{n}: {what}: {}", piece.trim()));
                }
            }
        }
    };
    for file in user_docs() {
        let text = read(&file);
        scan(
            &file,
            text.lines().enumerate().map(|(i, l)| (i + 1, l.to_string())).collect(),
        );
    }
    let listing = |dir: &str, ext: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(ext))
            .map(|n| format!("{dir}/{n}"))
            .collect();
        v.sort();
        v
    };
    for file in listing("scripts", ".sh") {
        let text = read(&file);
        scan(
            &file,
            script_help(&text)
                .into_iter()
                .map(|(n, l)| (n, l.to_string()))
                .collect(),
        );
    }
    for file in listing("report/src", ".rs")
        .into_iter()
        .chain(listing("sim/src", ".rs"))
    {
        let text = read(&file);
        scan(
            &file,
            text.lines()
                .enumerate()
                .map(|(i, l)| (i + 1, string_literals(l)))
                .collect(),
        );
    }
    // Doc comments everywhere: rustdoc, and clap's `--help` (made from the
    // doc comments of the binaries' argument structs). This file's own
    // examples of offences are the one exception.
    for file in rust_files() {
        if file == "rules/tests/docs.rs" {
            continue;
        }
        let text = read(&file);
        scan(
            &file,
            text.lines()
                .enumerate()
                .filter(|(_, l)| l.trim_start().starts_with("///") || l.trim_start().starts_with("//!"))
                .map(|(i, l)| (i + 1, l.to_string()))
                .collect(),
        );
    }
    assert!(scanned > 100, "{scanned} files scanned");
    assert!(
        found.is_empty(),
        "issue numbers or diary words a user would read:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_offence_check_finds_what_it_must() {
    for bad in [
        "see issue 34",
        "Issues 12 and 13",
        "(#35)",
        "issue #7",
        "we tried it today",
        "this session's runs",
    ] {
        assert!(offence(bad).is_some(), "{bad}");
    }
    for good in [
        "the issues a steal raises",
        "#[derive(Parser)]",
        "&#8212;",
        "a session under salloc",
        "todays",
    ] {
        assert!(offence(good).is_none(), "{good}");
    }
    let script = "#!/bin/sh\n# help: issue 3\nset -e\n# later: issue 4\ncat <<'EOF'\nissue 5\nEOF\necho\n";
    let help: Vec<usize> = script_help(script).into_iter().map(|(n, _)| n).collect();
    assert_eq!(help, vec![2, 6]);
    assert_eq!(
        string_literals(r#"let t = "A (issue 35)".into(); // issue 9"#),
        "A (issue 35)\n"
    );
    assert!(Path::new(&root()).join("README.md").exists());
}
