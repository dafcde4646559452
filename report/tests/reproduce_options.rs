//! `scripts/reproduce.sh --help` declares the reproduction's options and
//! experiments; docs/design/settings-and-names.md lists their names. The
//! two lists must name the same things, and the help names no private
//! issue numbers.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn help() -> String {
    let out = Command::new("bash")
        .arg(repo().join("scripts/reproduce.sh"))
        .arg("--help")
        .output()
        .expect("bash runs scripts/reproduce.sh --help");
    assert!(out.status.success(), "reproduce.sh --help exited {}", out.status);
    String::from_utf8(out.stdout).unwrap()
}

/// Every `--name` in `text` (a word that starts with two dashes).
fn flags(text: &str) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    for (i, _) in text.match_indices("--") {
        let name: String = text[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '-')
            .collect();
        let before = text[..i].chars().last();
        if !name.is_empty() && before.is_none_or(|c| !c.is_alphanumeric() && c != '-') {
            set.insert(format!("--{name}"));
        }
    }
    set
}

/// The text of `text` from `start` up to `end`.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).unwrap_or_else(|| panic!("no '{start}'")) + start.len();
    let to = text[from..]
        .find(end)
        .unwrap_or_else(|| panic!("no '{end}' after '{start}'"));
    &text[from..from + to]
}

/// Comma-separated names, whitespace and backquotes ignored.
fn names(list: &str) -> BTreeSet<String> {
    list.split(',')
        .map(|n| n.trim().trim_matches('`').to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

#[test]
fn the_design_doc_names_the_options_and_experiments_that_help_describes() {
    let help = help();
    let doc = std::fs::read_to_string(repo().join("docs/design/settings-and-names.md")).unwrap();
    // The options: each line of the Options section that starts with one.
    let options: BTreeSet<String> = between(&help, "\nOptions:\n", "\nExamples:")
        .lines()
        .filter(|l| l.trim_start().starts_with('-') && l.starts_with("  ") && !l.starts_with("      "))
        .flat_map(flags)
        .filter(|f| f != "--help")
        .collect();
    assert!(options.contains("--quick") && options.len() > 15, "{options:?}");
    let mut listed = flags(between(&doc, "- `scripts/reproduce.sh`", "`--bin-dir` layout"));
    listed.remove("--help");
    assert_eq!(
        options, listed,
        "reproduce.sh --help (left) and settings-and-names.md (right) list different options"
    );
    // The experiments: the help's `--experiments LIST  subset of ...`.
    let in_help = names(&between(&help, "--experiments LIST  subset of", "(default").replace('\n', ""));
    let in_doc = names(between(&doc, "`--experiments`\n  from `", "`"));
    assert!(in_help.contains("scaling") && in_help.len() > 5, "{in_help:?}");
    assert_eq!(in_help, in_doc, "the experiments differ between --help and the doc");
    // The help describes each experiment it accepts.
    for e in &in_help {
        assert!(
            help.contains(&format!("\n  {e} ")),
            "--help does not describe the experiment {e}"
        );
    }
}

#[test]
fn the_help_names_no_private_issue_numbers() {
    let help = help().to_lowercase();
    for (i, _) in help.match_indices("issue") {
        let next: String = help[i + 5..].chars().take(3).collect();
        assert!(
            !next.trim_start().starts_with(|c: char| c.is_ascii_digit()),
            "--help: '{}'",
            &help[i..]
        );
    }
    for (i, _) in help.match_indices('#') {
        assert!(
            !help[i + 1..].starts_with(|c: char| c.is_ascii_digit()),
            "--help: '{}'",
            &help[i..]
        );
    }
}
