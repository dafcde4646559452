//! No two modules of a crate import each other in a circle.
//!
//! Every crate of the repository (the workspace's members, the root `uat`,
//! and the excluded report tool) is read from its roots (`src/lib.rs`,
//! `src/main.rs`, the `path`s its `Cargo.toml` names, `build.rs`) along its
//! `mod` declarations. Each module's paths are collected: `use` trees
//! (`crate::a::B`, `use crate::{a, b::C}`, `super::`, `self::`, a child
//! module's name) and paths in code (`crate::a::f()`, `super::X`). A path is
//! followed through the imports of the modules it passes (`crate::Config`
//! re-exported from `config` is `config`'s) to the module that defines the
//! item. A reference from module F to an item of module T is an edge of the
//! graph of their nearest common module L, between L's children on each
//! side (or L's own file when F or T is L): so the graph of the crate root
//! holds the top-level modules and the root file's own items, and the graph
//! of a directory module holds its children and its `mod.rs`. An inline
//! `mod` (a sealed trait, an architecture's kernels) is part of the module
//! of its file.
//!
//! A re-export (`pub use`) is a reference like any import, except where a
//! module is the facade of what lies below it: the crate root's, and one of
//! the module's own children (`pub use self::a::B`, `pub use a::B`); those
//! are followed for resolution only.
//!
//! Left out, because they are no dependency of a module's code: test code
//! (items under `#[cfg(test)]`, files only a test module declares),
//! facade re-exports, doc comments,
//! `$crate::` paths in macros, and `pub(in path)` visibilities.
//!
//! The test fails with every strongly connected set of modules, each edge
//! with the file, line and path that makes it. `UAT_MODULE_GRAPH=1` prints
//! every graph (with `-- --nocapture`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

#[test]
fn no_crate_has_a_module_circle() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let crates = crates(repo);
    assert!(
        crates.len() >= 12,
        "found only {} crate roots under {}: {:?}",
        crates.len(),
        repo.display(),
        crates
    );
    let report = circles(repo, &crates);
    assert!(report.is_empty(), "module circles:\n{report}");
}

/// The checker itself: a circle through a re-export, a `super::` path and a
/// path in code is found and named with its lines; a facade `pub use`,
/// test code and a child using its parent's item alone make none.
#[test]
fn the_checker_finds_a_planted_circle() {
    let dir = std::env::temp_dir().join(format!("uat-module-circles-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    };
    write("Cargo.toml", "[workspace]\nmembers = [\"a\", \"b\", \"c\"]\n");
    write("a/Cargo.toml", "[package]\nname = \"a\"\n");
    write(
        "a/src/lib.rs",
        "mod x;\nmod y;\nmod z;\npub use y::Limit;\n#[cfg(test)]\nmod tests { use crate::z::Z; }\n",
    );
    // x -> y through the root's re-export; y -> z in code; z -> x by super.
    write("a/src/x.rs", "use crate::Limit;\npub struct X;\n");
    write(
        "a/src/y.rs",
        "/// [`crate::x::X`] in a doc comment is no edge.\npub struct Limit;\nfn f() {\n    let _ = \"crate::x::X\";\n    crate::z::g();\n}\n",
    );
    write("a/src/z/mod.rs", "mod inner;\npub use inner::g;\n");
    write("a/src/z/inner.rs", "pub fn g() {\n    let _ = super::super::x::X;\n}\n");
    // A crate without a circle: a facade, a child using its parent's item,
    // a test module using everything, a sealed trait.
    write("b/Cargo.toml", "[package]\nname = \"b\"\n");
    write("b/src/lib.rs", "pub mod p;\npub use p::Q;\n");
    write(
        "b/src/p/mod.rs",
        "mod q;\npub use q::Q;\npub const MAX: u32 = 4;\n#[cfg(test)]\nmod tests;\n",
    );
    write(
        "b/src/p/q.rs",
        "pub struct Q([u8; super::MAX as usize]);\nmod sealed {\n    pub trait S {}\n    impl S for super::Q {}\n}\nfn f(_: &dyn sealed::S) {}\n",
    );
    write("b/src/p/tests.rs", "use super::*;\nuse crate::Q;\n");
    // A circle made by a sibling's re-export: form re-exports table's
    // error type while table calls into form.
    write("c/Cargo.toml", "[package]\nname = \"c\"\n");
    write("c/src/lib.rs", "mod form;\nmod table;\npub use form::g;\n");
    write(
        "c/src/form.rs",
        "pub use crate::table::Error;\npub(crate) use crate::table::Limit;\npub fn g() {}\n",
    );
    write(
        "c/src/table.rs",
        "pub struct Error;\npub struct Limit;\nfn f() {\n    crate::form::g();\n}\n",
    );

    let crates = crates(&dir);
    assert_eq!(crates.len(), 3, "{crates:?}");
    let report = circles(&dir, &crates);
    let _ = fs::remove_dir_all(&dir);
    assert!(
        report.contains("circle in the crate root of a/src/lib.rs: x, y, z"),
        "{report}"
    );
    assert!(report.contains("x -> y at a/src/x.rs:1 `crate::Limit`"), "{report}");
    assert!(report.contains("y -> z at a/src/y.rs:5 `crate::z::g`"), "{report}");
    assert!(
        report.contains("z -> x at a/src/z/inner.rs:2 `super::super::x::X`"),
        "{report}"
    );
    assert!(
        report.contains("circle in the crate root of c/src/lib.rs: form, table"),
        "{report}"
    );
    assert!(
        report.contains("form -> table at c/src/form.rs:1 `crate::table::Error`"),
        "{report}"
    );
    assert!(
        report.contains("form -> table at c/src/form.rs:2 `crate::table::Limit`"),
        "{report}"
    );
    assert_eq!(report.matches("circle").count(), 2, "{report}");
}

// ---------------------------------------------------------------- crates

/// A crate: its package directory and its root file.
#[derive(Debug)]
struct Crate {
    root: PathBuf,
}

/// The crate roots of the repository at `repo`: the workspace's members and
/// excluded packages, and the root package.
fn crates(repo: &Path) -> Vec<Crate> {
    let manifest = fs::read_to_string(repo.join("Cargo.toml")).unwrap();
    let mut packages = vec![PathBuf::from(".")];
    for key in ["members", "exclude"] {
        packages.extend(string_list(&manifest, key).into_iter().map(PathBuf::from));
    }
    let mut out = Vec::new();
    for package in packages {
        let dir = repo.join(&package);
        let Ok(manifest) = fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let mut roots = BTreeSet::new();
        for default in ["src/lib.rs", "src/main.rs", "build.rs"] {
            if dir.join(default).is_file() {
                roots.insert(dir.join(default));
            }
        }
        if let Ok(bins) = fs::read_dir(dir.join("src/bin")) {
            for bin in bins.flatten() {
                roots.insert(bin.path());
            }
        }
        for line in manifest.lines() {
            let line = line.trim();
            if let Some(value) = line
                .strip_prefix("path")
                .map(str::trim)
                .and_then(|l| l.strip_prefix('='))
            {
                let value = value.trim().trim_matches('"');
                if value.ends_with(".rs") && dir.join(value).is_file() {
                    roots.insert(dir.join(value));
                }
            }
        }
        out.extend(roots.into_iter().map(|root| Crate { root }));
    }
    out
}

/// The quoted strings of `key = [...]` in a manifest.
fn string_list(manifest: &str, key: &str) -> Vec<String> {
    let Some(start) = manifest.find(&format!("{key} = [")) else {
        return Vec::new();
    };
    let rest = &manifest[start..];
    let list = &rest[rest.find('[').unwrap() + 1..rest.find(']').unwrap()];
    list.split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

// ---------------------------------------------------------------- tokens

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Punct(char),
    PathSep,
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    line: usize,
}

impl Token {
    fn ident(&self) -> Option<&str> {
        match &self.tok {
            Tok::Ident(s) => Some(s),
            _ => None,
        }
    }
    fn is(&self, c: char) -> bool {
        self.tok == Tok::Punct(c)
    }
}

/// Rust source as identifiers, strings, `::` and punctuation; comments
/// (doc comments too), character literals and lifetimes are dropped.
fn tokenize(src: &str) -> Vec<Token> {
    let c: Vec<char> = src.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    let mut push = |tok, line| out.push(Token { tok, line });
    while i < c.len() {
        let ch = c[i];
        let start_line = line;
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += (c[i] == '\n') as usize;
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_start(&c, i) {
            // r"..", r#".."#, br"..": up to the quote and as many hashes.
            i += c[i..].iter().position(|&x| x == '"').unwrap() + 1;
            let begin = i;
            loop {
                if i >= c.len() {
                    break;
                }
                if c[i] == '"' && (0..hashes).all(|k| at(i + 1 + k) == '#') {
                    break;
                }
                line += (c[i] == '\n') as usize;
                i += 1;
            }
            push(Tok::Str(c[begin..i.min(c.len())].iter().collect()), start_line);
            i += 1 + hashes;
        } else if ch == '"' || ((ch == 'b' || ch == 'c') && at(i + 1) == '"') {
            i += if ch == '"' { 1 } else { 2 };
            let mut s = String::new();
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    i += 1;
                }
                line += (at(i) == '\n') as usize;
                s.push(at(i));
                i += 1;
            }
            push(Tok::Str(s), start_line);
            i += 1;
        } else if ch == '\'' || (ch == 'b' && at(i + 1) == '\'') {
            let q = if ch == 'b' { i + 1 } else { i };
            if at(q + 1) == '\\' {
                // An escaped character: up to the closing quote.
                i = q + 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(q + 2) == '\'' {
                i = q + 3;
            } else {
                // A lifetime or label: its name follows as an identifier.
                i = q + 1;
            }
        } else if ch == '$' && c[i + 1..].starts_with(&['c', 'r', 'a', 't', 'e']) {
            push(Tok::Ident("$crate".into()), line);
            i += 6;
        } else if ch.is_alphanumeric() || ch == '_' {
            let begin = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let mut word: String = c[begin..i].iter().collect();
            if let Some(raw) = word.strip_prefix("r").filter(|_| at(i) != '#' && at(begin + 1) == '#') {
                word = raw.to_string();
            }
            push(Tok::Ident(word), line);
        } else if ch == ':' && at(i + 1) == ':' {
            push(Tok::PathSep, line);
            i += 2;
        } else {
            push(Tok::Punct(ch), line);
            i += 1;
        }
    }
    out
}

/// At `r"`, `r#"`, `br"`, `br#"`: the number of hashes.
fn raw_string_start(c: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if c.get(j) == Some(&'b') || c.get(j) == Some(&'c') {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    if i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_') {
        return None;
    }
    j += 1;
    let hashes = c[j..].iter().take_while(|&&x| x == '#').count();
    (c.get(j + hashes) == Some(&'"')).then_some(hashes)
}

/// The tokens without test code: an item under `#[cfg(test)]` (or a
/// `cfg` with `test` and no `not`), and the whole file after `#![cfg(test)]`.
fn without_tests(tokens: Vec<Token>) -> Vec<Token> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if let Some((end, inner)) = test_cfg(&tokens, i) {
            if inner {
                return out;
            }
            i = item_end(&tokens, end);
        } else {
            out.push(tokens[i].clone());
            i += 1;
        }
    }
    out
}

/// At `#[cfg(..test..)]` or `#![cfg(..test..)]`: the index after it and
/// whether it is an inner attribute.
fn test_cfg(t: &[Token], i: usize) -> Option<(usize, bool)> {
    if !t[i].is('#') {
        return None;
    }
    let inner = t.get(i + 1)?.is('!');
    let open = i + 1 + inner as usize;
    if !t.get(open)?.is('[') || t.get(open + 1)?.ident() != Some("cfg") {
        return None;
    }
    let close = matching(t, open)?;
    let words: Vec<&str> = t[open..close].iter().filter_map(Token::ident).collect();
    (words.contains(&"test") && !words.contains(&"not")).then_some((close + 1, inner))
}

/// The index after the item that starts at `i` (after further attributes):
/// its `;` or the `}` that closes its first block.
fn item_end(t: &[Token], mut i: usize) -> usize {
    while i < t.len() && t[i].is('#') {
        i = t.get(i + 1).and_then(|_| matching(t, i + 1)).map_or(t.len(), |c| c + 1);
    }
    let mut depth = 0i32;
    while i < t.len() {
        match &t[i].tok {
            Tok::Punct('(' | '[') => depth += 1,
            Tok::Punct(')' | ']') => depth -= 1,
            Tok::Punct(';') if depth == 0 => return i + 1,
            Tok::Punct('{') if depth == 0 => return matching(t, i).map_or(t.len(), |c| c + 1),
            _ => {}
        }
        i += 1;
    }
    t.len()
}

/// The index of the bracket that closes the one at `open`.
fn matching(t: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, tok) in t.iter().enumerate().skip(open) {
        match tok.tok {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

// ---------------------------------------------------------------- modules

/// A `use` leaf: the path, the name it brings in (none for a glob), its line.
#[derive(Debug, Clone)]
struct Import {
    segs: Vec<String>,
    name: Option<String>,
    public: bool,
    line: usize,
}

/// A path in code or in a non-public `use`, to resolve into an edge.
#[derive(Debug)]
struct Ref {
    segs: Vec<String>,
    line: usize,
}

#[derive(Debug)]
struct Module {
    path: Vec<String>,
    file: PathBuf,
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
    imports: Vec<Import>,
    refs: Vec<Ref>,
    defined: BTreeSet<String>,
}

/// One crate's module tree.
struct Tree {
    modules: Vec<Module>,
}

impl Tree {
    fn load(root: &Path) -> Tree {
        let mut tree = Tree { modules: Vec::new() };
        tree.load_file(root, Vec::new(), None, true);
        tree
    }

    /// Reads `file` as the module `path`; `owns_dir`: its children's files
    /// are in its own directory (a crate root or `mod.rs`).
    fn load_file(&mut self, file: &Path, path: Vec<String>, parent: Option<usize>, owns_dir: bool) {
        let Ok(src) = fs::read_to_string(file) else { return };
        let tokens = without_tests(tokenize(&src));
        let dir = if owns_dir {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        self.load_tokens(&tokens, file, &dir, path, parent);
    }

    fn load_tokens(&mut self, t: &[Token], file: &Path, dir: &Path, path: Vec<String>, parent: Option<usize>) {
        let me = self.modules.len();
        self.modules.push(Module {
            path: path.clone(),
            file: file.to_path_buf(),
            parent,
            children: BTreeMap::new(),
            imports: Vec::new(),
            refs: Vec::new(),
            defined: BTreeSet::new(),
        });
        if let Some(p) = parent {
            self.modules[p].children.insert(path.last().unwrap().clone(), me);
        }
        // Pass 1: child modules (files and inline blocks), `use` trees and
        // defined names; the ranges that pass 2 must not read as code.
        let mut skip = vec![false; t.len()];
        let mut attr_path: Option<String> = None;
        let mut i = 0;
        while i < t.len() {
            let word = t[i].ident();
            if t[i].is('#') {
                // #[path = "x.rs"] for the next `mod`.
                let open = i + 1 + t.get(i + 1).is_some_and(|x| x.is('!')) as usize;
                if let Some(close) = t.get(open).filter(|x| x.is('[')).and_then(|_| matching(t, open)) {
                    if t.get(open + 1).and_then(Token::ident) == Some("path") {
                        if let Some(Tok::Str(s)) = t.get(open + 3).map(|x| &x.tok) {
                            attr_path = Some(s.clone());
                        }
                    }
                    skip[i..=close].iter_mut().for_each(|s| *s = true);
                    i = close + 1;
                    continue;
                }
            }
            if word == Some("pub") && t.get(i + 1).is_some_and(|x| x.is('(')) {
                // pub(crate), pub(super), pub(in path): no reference.
                if let Some(close) = matching(t, i + 1) {
                    skip[i..=close].iter_mut().for_each(|s| *s = true);
                    i = close + 1;
                    continue;
                }
            }
            if word == Some("mod") {
                if let Some(name) = t.get(i + 1).and_then(Token::ident) {
                    let name = name.to_string();
                    let mut child = path.clone();
                    child.push(name.clone());
                    if t.get(i + 2).is_some_and(|x| x.is(';')) {
                        let (f, owns) = match attr_path.take() {
                            Some(p) => (dir_of(file).join(p), true),
                            None if dir.join(format!("{name}.rs")).is_file() => (dir.join(format!("{name}.rs")), false),
                            None => (dir.join(&name).join("mod.rs"), true),
                        };
                        self.load_file(&f, child, Some(me), owns);
                        i += 3;
                        continue;
                    }
                    if t.get(i + 2).is_some_and(|x| x.is('{')) {
                        let close = matching(t, i + 2).unwrap_or(t.len() - 1);
                        self.load_tokens(&t[i + 3..close], file, &dir.join(&name), child, Some(me));
                        skip[i..=close].iter_mut().for_each(|s| *s = true);
                        i = close + 1;
                        continue;
                    }
                }
            }
            if word == Some("use") {
                let public = i > 0 && (t[i - 1].ident() == Some("pub") || t[i - 1].is(')'));
                let end = (i..t.len()).find(|&k| t[k].is(';')).unwrap_or(t.len());
                let mut leaves = Vec::new();
                let mut k = i + 1;
                use_tree(&t[..end], &mut k, Vec::new(), &mut leaves);
                for (segs, name) in leaves {
                    self.modules[me].imports.push(Import {
                        segs,
                        name,
                        public,
                        line: t[i].line,
                    });
                }
                skip[i..end.min(t.len())].iter_mut().for_each(|s| *s = true);
                i = end;
                continue;
            }
            if let Some(w) = word {
                if matches!(
                    w,
                    "fn" | "struct" | "enum" | "const" | "static" | "type" | "trait" | "union"
                ) {
                    if let Some(name) = t.get(i + 1).and_then(Token::ident) {
                        self.modules[me].defined.insert(name.to_string());
                    }
                } else if w == "macro_rules" {
                    if let Some(name) = t.get(i + 2).and_then(Token::ident) {
                        self.modules[me].defined.insert(name.to_string());
                    }
                }
            }
            i += 1;
        }
        // Pass 2: paths in code that start at `crate`, `super`, `self` or a
        // child module.
        let children: BTreeSet<String> = self.modules[me].children.keys().cloned().collect();
        let mut i = 0;
        while i < t.len() {
            let starts = !skip[i]
                && t[i]
                    .ident()
                    .is_some_and(|w| matches!(w, "crate" | "super" | "self") || children.contains(w))
                && t.get(i + 1).is_some_and(|x| x.tok == Tok::PathSep)
                && (i == 0 || t[i - 1].tok != Tok::PathSep);
            if !starts {
                i += 1;
                continue;
            }
            let mut segs = vec![t[i].ident().unwrap().to_string()];
            let mut k = i + 1;
            while t.get(k).is_some_and(|x| x.tok == Tok::PathSep) {
                match t.get(k + 1).and_then(Token::ident) {
                    Some(w) => segs.push(w.to_string()),
                    None => break,
                }
                k += 2;
            }
            self.modules[me].refs.push(Ref { segs, line: t[i].line });
            i = k;
        }
        // Imports are references too, re-exports included, except where a
        // module is the facade of what lies below it: a crate root's `pub
        // use`, and a `pub use` of the module's own children (`self::a`,
        // `a::B`). `pub use crate::x::Y` from a sibling of `x` is a
        // dependency on `x` like any other import.
        let root = self.modules[me].parent.is_none();
        let children = &self.modules[me].children;
        let private: Vec<Ref> = self.modules[me]
            .imports
            .iter()
            .filter(|u| {
                !u.public || (!root && !u.segs.first().is_some_and(|s| s == "self" || children.contains_key(s)))
            })
            .map(|u| Ref {
                segs: u.segs.clone(),
                line: u.line,
            })
            .collect();
        self.modules[me].refs.extend(private);
    }

    /// The module `segs` (seen from `from`) leads to: the module it names,
    /// or the one that defines the item it names; none outside the crate.
    fn resolve(&self, from: usize, segs: &[String], depth: usize) -> Option<usize> {
        if depth > 16 || segs.is_empty() {
            return None;
        }
        let (mut cur, mut rest) = match segs[0].as_str() {
            "crate" => (0, &segs[1..]),
            "self" => (from, &segs[1..]),
            "super" => {
                let mut cur = from;
                let mut n = 0;
                while segs.get(n).is_some_and(|s| s == "super") {
                    cur = self.modules[cur].parent?;
                    n += 1;
                }
                (cur, &segs[n..])
            }
            first => (*self.modules[from].children.get(first)?, &segs[1..]),
        };
        while let Some((s, tail)) = rest.split_first() {
            if s == "self" {
                break;
            }
            if let Some(&child) = self.modules[cur].children.get(s) {
                cur = child;
                rest = tail;
                continue;
            }
            // An item: imported here (follow), defined here, or brought in
            // by a glob whose module defines it.
            let m = &self.modules[cur];
            if let Some(import) = m.imports.iter().find(|u| u.name.as_deref() == Some(s)) {
                let target = self.resolve(cur, &import.segs, depth + 1)?;
                if tail.is_empty() || !self.is_named_module(cur, &import.segs) {
                    return Some(target);
                }
                cur = target;
                rest = tail;
                continue;
            }
            if m.defined.contains(s) {
                return Some(cur);
            }
            for glob in m.imports.iter().filter(|u| u.name.is_none()) {
                if let Some(g) = self.resolve(cur, &glob.segs, depth + 1) {
                    if self.modules[g].defined.contains(s) || self.modules[g].children.contains_key(s) {
                        let mut segs = glob.segs.clone();
                        segs.extend(rest.iter().cloned());
                        return self.resolve(cur, &segs, depth + 1);
                    }
                }
            }
            return Some(cur);
        }
        Some(cur)
    }

    /// Whether `segs` (seen from `from`) names a module, not an item.
    fn is_named_module(&self, from: usize, segs: &[String]) -> bool {
        let Some(target) = self.resolve(from, segs, 0) else {
            return false;
        };
        segs.last()
            .is_some_and(|l| l == "self" || self.modules[target].path.last() == Some(l))
            || (segs.len() == 1 && segs[0] == "crate")
    }

    /// The module whose file holds `m`: `m`, or the file module around an
    /// inline `mod`.
    fn file_module(&self, mut m: usize) -> usize {
        while let Some(p) = self.modules[m]
            .parent
            .filter(|&p| self.modules[p].file == self.modules[m].file)
        {
            m = p;
        }
        m
    }

    /// The chain of module indices from the root to `m`.
    fn chain(&self, mut m: usize) -> Vec<usize> {
        let mut chain = vec![m];
        while let Some(p) = self.modules[m].parent {
            chain.push(p);
            m = p;
        }
        chain.reverse();
        chain
    }
}

fn dir_of(file: &Path) -> PathBuf {
    file.parent().unwrap().to_path_buf()
}

/// Reads a use tree at `*i` into its leaves: (path, name brought in).
fn use_tree(t: &[Token], i: &mut usize, prefix: Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
    let mut segs = prefix;
    while *i < t.len() {
        match &t[*i].tok {
            Tok::PathSep => *i += 1,
            Tok::Ident(s) => {
                segs.push(s.clone());
                *i += 1;
                if t.get(*i).is_some_and(|x| x.tok == Tok::PathSep) {
                    *i += 1;
                    continue;
                }
                let mut name = if s == "self" {
                    segs.iter().rev().nth(1).cloned()
                } else {
                    Some(s.clone())
                };
                if t.get(*i).and_then(Token::ident) == Some("as") {
                    name = t
                        .get(*i + 1)
                        .and_then(Token::ident)
                        .map(str::to_string)
                        .filter(|n| n != "_");
                    *i += 2;
                }
                if segs.last().is_some_and(|l| l == "self") {
                    segs.pop();
                }
                out.push((segs, name));
                return;
            }
            Tok::Punct('{') => {
                *i += 1;
                while *i < t.len() && !t[*i].is('}') {
                    use_tree(t, i, segs.clone(), out);
                    if t.get(*i).is_some_and(|x| x.is(',')) {
                        *i += 1;
                    }
                }
                *i += 1;
                return;
            }
            Tok::Punct('*') => {
                *i += 1;
                out.push((segs, None));
                return;
            }
            _ => {
                *i += 1;
                return;
            }
        }
    }
}

// ---------------------------------------------------------------- circles

/// Every circle of every crate, as text; empty when there is none.
fn circles(repo: &Path, crates: &[Crate]) -> String {
    let mut report = String::new();
    for krate in crates {
        let tree = Tree::load(&krate.root);
        // (graph's module, from node, to node) -> the references.
        // A node is a child's name, or "" for the graph module's own file.
        let mut edges: BTreeMap<(usize, String, String), Vec<String>> = BTreeMap::new();
        for (from, m) in tree.modules.iter().enumerate() {
            for r in &m.refs {
                let Some(to) = tree.resolve(from, &r.segs, 0) else {
                    continue;
                };
                if to == from {
                    continue;
                }
                // An inline `mod` is part of its file's module.
                let (from_file, to) = (tree.file_module(from), tree.file_module(to));
                if to == from_file {
                    continue;
                }
                let (a, b) = (tree.chain(from_file), tree.chain(to));
                let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
                let graph = a[common - 1];
                let node = |chain: &[usize]| {
                    chain
                        .get(common)
                        .map_or(String::new(), |&c| tree.modules[c].path.last().unwrap().clone())
                };
                let file = m.file.strip_prefix(repo).unwrap_or(&m.file).display().to_string();
                edges.entry((graph, node(&a), node(&b))).or_default().push(format!(
                    "{file}:{} `{}`",
                    r.line,
                    r.segs.join("::")
                ));
            }
        }
        if std::env::var_os("UAT_MODULE_GRAPH").is_some() {
            // The graphs themselves, to read (UAT_MODULE_GRAPH=1 cargo test
            // -p uat-rules --test modules -- --nocapture).
            for ((graph, a, b), refs) in &edges {
                let m = &tree.modules[*graph];
                println!(
                    "{} {}: {a} -> {b} ({} refs)",
                    krate.root.display(),
                    name_of(m),
                    refs.len()
                );
            }
        }
        let graphs: BTreeSet<usize> = edges.keys().map(|k| k.0).collect();
        for graph in graphs {
            let g: BTreeMap<(String, String), &Vec<String>> = edges
                .iter()
                .filter(|(k, _)| k.0 == graph)
                .map(|(k, v)| ((k.1.clone(), k.2.clone()), v))
                .collect();
            for scc in strongly_connected(&g) {
                let m = &tree.modules[graph];
                let file = m.file.strip_prefix(repo).unwrap_or(&m.file).display();
                let label = |n: &str| {
                    if n.is_empty() {
                        format!("{}'s own items", name_of(m))
                    } else {
                        n.to_string()
                    }
                };
                let names: Vec<String> = scc.iter().map(|n| label(n)).collect();
                let _ = writeln!(report, "circle in {} of {file}: {}", name_of(m), names.join(", "));
                for ((x, y), refs) in &g {
                    if scc.contains(x) && scc.contains(y) {
                        for r in refs.iter() {
                            let _ = writeln!(report, "  {} -> {} at {r}", label(x), label(y));
                        }
                    }
                }
            }
        }
    }
    report
}

fn name_of(m: &Module) -> String {
    if m.path.is_empty() {
        "the crate root".into()
    } else {
        m.path.join("::")
    }
}

/// The strongly connected sets of two or more nodes (Tarjan).
fn strongly_connected(g: &BTreeMap<(String, String), &Vec<String>>) -> Vec<BTreeSet<String>> {
    let nodes: BTreeSet<&String> = g.keys().flat_map(|(a, b)| [a, b]).collect();
    let nodes: Vec<&String> = nodes.into_iter().collect();
    let index_of = |n: &String| nodes.iter().position(|x| *x == n).unwrap();
    let mut adj = vec![Vec::new(); nodes.len()];
    for (a, b) in g.keys() {
        adj[index_of(a)].push(index_of(b));
    }
    struct State {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(v: usize, adj: &[Vec<usize>], s: &mut State) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &adj[v] {
            match s.index[w] {
                None => {
                    visit(w, adj, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                scc.push(w);
                if w == v {
                    break;
                }
            }
            s.out.push(scc);
        }
    }
    let n = nodes.len();
    let mut s = State {
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(v, &adj, &mut s);
        }
    }
    s.out
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| c.into_iter().map(|v| nodes[v].clone()).collect())
        .collect()
}
