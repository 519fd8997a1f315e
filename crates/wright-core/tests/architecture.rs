//! ARCHITECTURE.md names files and functions to trace the loop through; this keeps it
//! true. Every `crates/…` path in backticks must exist, and every name in backticks that
//! looks like a Rust identifier must be a word of one of the files its paragraph names
//! (or, in a paragraph that names none, of any file the page names).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn has_word(text: &str, word: &str) -> bool {
    let boundary = |c: Option<char>| !c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    text.match_indices(word).any(|(at, _)| {
        boundary(text[..at].chars().next_back()) && boundary(text[at + word.len()..].chars().next())
    })
}

/// The page's paragraphs (a list item counts as one), each as its backticked spans;
/// fenced code is left out.
fn paragraphs(page: &str) -> Vec<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let mut in_code = false;
    for line in page.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            out.push(String::new());
            continue;
        }
        if in_code {
            continue;
        }
        let trimmed = line.trim_start();
        let starts_item = trimmed.starts_with("- ")
            || trimmed
                .split_once(". ")
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok());
        if line.trim().is_empty() || starts_item || out.is_empty() {
            out.push(String::new());
        }
        if let Some(last) = out.last_mut() {
            last.push(' ');
            last.push_str(line);
        }
    }
    out.iter()
        .map(|p| {
            p.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|spans| !spans.is_empty())
        .collect()
}

#[test]
fn every_file_and_name_the_architecture_page_gives_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let page = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let paragraphs = paragraphs(&page);
    let read = |path: &str| -> String {
        let full = root.join(path);
        assert!(
            full.exists(),
            "ARCHITECTURE.md names {path}, which is not there"
        );
        if full.is_dir() {
            String::new()
        } else {
            std::fs::read_to_string(full).unwrap()
        }
    };
    let files_of = |spans: &[String]| -> Vec<String> {
        spans
            .iter()
            .filter(|s| s.starts_with("crates/"))
            .map(|s| read(s))
            .collect()
    };
    let all_files = files_of(&paragraphs.concat());
    let mut missing = Vec::new();
    for spans in &paragraphs {
        let files = files_of(spans);
        let search = if files.is_empty() { &all_files } else { &files };
        for name in spans.iter().filter(|s| is_identifier(s)) {
            if !search.iter().any(|text| has_word(text, name)) {
                missing.push(name.clone());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "names ARCHITECTURE.md gives that its files lack: {missing:?}"
    );
    assert!(all_files.len() >= 10, "the page names the loop's files");
}

#[test]
fn the_check_reads_paragraphs_items_and_words() {
    let spans = paragraphs("1. `crates/x.rs` — `f`\n2. `g`\n\ntext `a b`\n`c`\n```\n`no`\n```\n");
    assert_eq!(
        spans,
        vec![vec!["crates/x.rs", "f"], vec!["g"], vec!["a b", "c"]]
    );
    assert!(has_word("fn step_once(", "step_once"));
    assert!(!has_word("fn step_once_more(", "step_once"));
    assert!(is_identifier("run_kept") && !is_identifier("wright serve"));
}

/// The server and the editor's agent reach the loop only through the session's API: a
/// dependency on `wright-core` would let them name its types again.
#[test]
fn the_front_ends_depend_on_the_session_not_the_loop() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for front in ["wright-server", "wright-acp"] {
        let manifest =
            std::fs::read_to_string(root.join("crates").join(front).join("Cargo.toml")).unwrap();
        let on_core = manifest
            .lines()
            .any(|line| line.trim_start().starts_with("wright-core"));
        assert!(!on_core, "{front} depends on wright-core");
    }
}

/// The loop stays small enough to read: at most eight files under `agent/`, none of them
/// reaching into the loop's fields wholesale with `use super::*` (tests aside), and no
/// file of the loop over 600 lines.
#[test]
fn the_loop_is_eight_files_that_name_what_they_use() {
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/agent");
    let files: Vec<_> = std::fs::read_dir(&agent)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert!(files.len() <= 8, "agent/ has {} files", files.len());
    for file in files.iter().chain([&agent.with_extension("rs")]) {
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        assert!(!code.contains("use super::*"), "{}", file.display());
        let lines = text.lines().count();
        assert!(lines <= 600, "{} has {lines} lines", file.display());
    }
}
