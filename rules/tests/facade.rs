//! The facade stays small: `uat`'s top level (what `cargo doc` lists on
//! the crate's page) holds at most 30 items, and the knobs live in
//! submodules.
//!
//! How it counts: `src/lib.rs` must hold declarations only (`pub use`,
//! `pub mod`, `mod`, `use`, `pub const`/`static`/`type`, attributes and
//! comments; a body in braces is refused, so nothing is defined there out
//! of the count's sight). Every name a `pub use` brings in counts once
//! (braces expanded, `as` renames counted by their new name, `self`
//! counted as the module), every `pub mod`/`pub const`/`pub static`/
//! `pub type` once, and a re-exported name that is also an exported macro
//! of the workspace (`join` brings `join!` too) once more: what rustdoc
//! shows, items of every kind, under `#[cfg(feature = "testing")]` or not.

use std::path::Path;

const LIMIT: usize = 30;

/// Removes `//` comments (doc comments included) and `#[...]` attributes.
fn strip(src: &str) -> String {
    let mut out = String::new();
    for line in src.lines() {
        let line = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        let t = line.trim();
        if t.starts_with("#[") && t.ends_with(']') {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The names a use tree (`a::b::{c, d as e, f::{g}}`) brings in.
fn use_leaves(tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let inner = &tree[open + 1..tree.rfind('}').expect("a closing brace")];
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    use_leaves(&inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        use_leaves(&inner[start..], out);
        return;
    }
    if tree.is_empty() {
        return;
    }
    let name = match tree.split_once(" as ") {
        Some((_, alias)) => alias.trim(),
        None => tree.rsplit("::").next().unwrap().trim(),
    };
    assert_ne!(name, "*", "a glob re-export at the top level cannot be counted");
    out.push(name.to_string());
}

/// The `#[macro_export]` macros of the workspace's library crates.
fn exported_macros(root: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for krate in [
        "src",
        "uni-threads/src",
        "memory/src",
        "pattern/src",
        "gasnet-sys/src",
        "am-fad/src",
    ] {
        let mut stack = vec![root.join(krate)];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    let lines: Vec<&str> = text.lines().collect();
                    for (i, l) in lines.iter().enumerate() {
                        if let Some(rest) = l.trim().strip_prefix("macro_rules!") {
                            if i > 0 && lines[i - 1].trim() == "#[macro_export]" {
                                names.push(rest.trim().trim_end_matches('{').trim().to_string());
                            }
                        }
                    }
                }
            }
        }
    }
    names
}

/// Whether `pub use krate::{.., name, ..}` (a name taken from a workspace
/// crate's root) brings in a module as well as a function or type of that
/// name: `pub use uat_pattern::reduce` re-exports both `pattern::reduce`,
/// the module, and `pattern::reduce()`, the function, and rustdoc lists
/// both.
fn both_module_and_item(root: &Path, tree: &str, name: &str) -> bool {
    let krate = tree.split("::").next().unwrap().trim();
    let dir = match krate {
        "uni_threads" => "uni-threads",
        "uat_memory" => "memory",
        "uat_pattern" => "pattern",
        "gasnet_sys" => "gasnet-sys",
        "am_fad" => "am-fad",
        _ => return false,
    };
    // Only names taken from the crate's root: `krate::name` or
    // `krate::{.., name, ..}` (not `krate::module::name`).
    let rest = tree.trim()[krate.len()..].trim_start_matches("::");
    let from_root = rest == name || (rest.starts_with('{') && use_tree_has_top(rest, name));
    if !from_root {
        return false;
    }
    let Ok(lib) = std::fs::read_to_string(root.join(dir).join("src/lib.rs")) else {
        return false;
    };
    let lib = strip(&lib);
    let module = lib.contains(&format!("pub mod {name};")) || lib.contains(&format!("pub mod {name} {{"));
    let mut exported = Vec::new();
    for stmt in lib.split(';') {
        let stmt = stmt.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(t) = stmt.strip_prefix("pub use ") {
            use_leaves(t, &mut exported);
        }
    }
    let item = exported.iter().any(|e| e == name)
        || ["fn", "struct", "enum", "trait", "const", "static", "type"]
            .iter()
            .any(|k| lib.contains(&format!("pub {k} {name}")));
    module && item
}

/// Whether the braces `{a, b::c, d}` name `name` directly at their top.
fn use_tree_has_top(braces: &str, name: &str) -> bool {
    let inner = &braces[1..braces.rfind('}').unwrap_or(braces.len())];
    let mut depth = 0;
    let mut start = 0;
    let mut parts = Vec::new();
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts.iter().any(|p| p.trim() == name)
}

/// The top-level items of `src/lib.rs`, one entry per rustdoc item.
fn top_level_items(root: &Path) -> Vec<String> {
    let src = strip(&std::fs::read_to_string(root.join("src/lib.rs")).unwrap());
    let macros = exported_macros(root);
    let mut items = Vec::new();
    for stmt in src.split(';') {
        let s = stmt.split_whitespace().collect::<Vec<_>>().join(" ");
        if s.is_empty() {
            continue;
        }
        if let Some(tree) = s.strip_prefix("pub use ") {
            let mut leaves = Vec::new();
            use_leaves(tree, &mut leaves);
            for name in leaves {
                if macros.contains(&name) {
                    items.push(format!("{name}!"));
                }
                if both_module_and_item(root, tree, &name) {
                    items.push(format!("mod {name}"));
                }
                items.push(name);
            }
            continue;
        }
        assert!(
            !s.contains('{') || s.starts_with("use "),
            "src/lib.rs holds a body (`{s}`): define items in a module, so that this count sees them"
        );
        let words: Vec<&str> = s.split(' ').collect();
        match words.as_slice() {
            ["pub", "mod" | "const" | "static" | "type", name, ..] => {
                items.push(name.trim_end_matches(':').to_string())
            }
            ["mod" | "use", ..] => {}
            _ => panic!("src/lib.rs: `{s}` is not a declaration this count knows"),
        }
    }
    items
}

#[test]
fn the_facade_has_at_most_30_top_level_items() {
    // The repository's root: this test lives in `rules/`.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let items = top_level_items(root);
    // What a program needs is there.
    for name in [
        "launch",
        "spawn",
        "join",
        "join!",
        "JoinHandle",
        "reduce",
        "for_each",
        "global",
        "pattern",
    ] {
        assert!(items.iter().any(|i| i == name), "{name} is missing from {items:?}");
    }
    // Knobs are not.
    for name in [
        "MODE",
        "tsc_hz",
        "fad_poller",
        "CacheFault",
        "Field",
        "Unit",
        "rules",
        "PollerWait",
    ] {
        assert!(
            !items.iter().any(|i| i == name),
            "{name} is at the top level: {items:?}"
        );
    }
    assert!(
        items.len() <= LIMIT,
        "{} top-level items (at most {LIMIT}): {items:?}",
        items.len()
    );
}

#[test]
fn the_count_sees_every_kind_of_item() {
    let dir = std::env::temp_dir().join(format!("uat-facade-count-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("uni-threads/src")).unwrap();
    std::fs::write(
        dir.join("uni-threads/src/par.rs"),
        "#[macro_export]\nmacro_rules! join {\n() => {};\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "//! Docs; with a semicolon.\n/// A re-export.\npub use a::{b, c::{d as e, join}, f};\npub use g as h;\n\
         #[cfg(feature = \"x\")]\npub mod m;\nmod private;\npub const K: u32 = 1;\n",
    )
    .unwrap();
    for krate in ["memory/src", "pattern/src", "gasnet-sys/src", "am-fad/src"] {
        std::fs::create_dir_all(dir.join(krate)).unwrap();
    }
    let items = top_level_items(&dir);
    assert_eq!(items, ["b", "e", "join!", "join", "f", "h", "m", "K"]);
    // A crate-root name that is a module and a function is two items;
    // the function alone, by its module's path, is one.
    std::fs::write(
        dir.join("pattern/src/lib.rs"),
        "pub mod reduce;\npub mod sort;\npub use reduce::{reduce, Sum};\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "pub use uat_pattern::{reduce, sort};\npub use uat_pattern::reduce::Sum;\n",
    )
    .unwrap();
    let items = top_level_items(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(items, ["mod reduce", "reduce", "sort", "Sum"]);
}
