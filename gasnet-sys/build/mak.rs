//! A reader for GASNet's `<conduit>-<mode>.mak` fragments.
//!
//! The fragment is the only supported description of how to compile against
//! and link an installed GASNet-EX (flags differ per conduit, compiler and
//! configure options), so we evaluate it instead of hard-coding flags. It uses a
//! small subset of make: `NAME = value` assignments, backslash continuations,
//! `#` comments and `$(NAME)` references (undefined names expand to nothing).

use std::collections::HashMap;
use std::path::Path;

pub(crate) struct Mak {
    vars: HashMap<String, String>,
}

impl Mak {
    pub(crate) fn read(path: &Path) -> Result<Mak, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok(Mak::parse(&text))
    }

    pub(crate) fn parse(text: &str) -> Mak {
        let mut vars = HashMap::new();
        let mut logical = String::new();
        for line in text.lines() {
            if let Some(body) = line.strip_suffix('\\') {
                logical.push_str(body);
                logical.push(' ');
                continue;
            }
            logical.push_str(line);
            let stmt = std::mem::take(&mut logical);
            let stmt = stmt.split('#').next().unwrap_or("");
            if let Some((name, value)) = stmt.split_once('=') {
                let name = name.trim_end_matches([':', '?', '+']).trim();
                if !name.is_empty() && !name.contains(char::is_whitespace) {
                    vars.insert(name.to_string(), value.trim().to_string());
                }
            }
        }
        Mak { vars }
    }

    /// The fully expanded value of `name` ("" when undefined).
    pub(crate) fn get(&self, name: &str) -> String {
        self.expand(self.vars.get(name).map(String::as_str).unwrap_or(""), 0)
    }

    /// The expanded value split into words.
    pub(crate) fn words(&self, name: &str) -> Vec<String> {
        self.get(name).split_whitespace().map(str::to_string).collect()
    }

    fn expand(&self, value: &str, depth: usize) -> String {
        assert!(depth < 32, "recursive make variable in GASNet .mak fragment");
        let mut out = String::new();
        let mut rest = value;
        while let Some(i) = rest.find("$(") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else {
                out.push_str(&rest[i..]);
                return out;
            };
            let inner = self.vars.get(&after[..end]).map(String::as_str).unwrap_or("");
            out.push_str(&self.expand(inner, depth + 1));
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        out
    }
}
