//! Where the functions a failing line calls are defined: a test's assertion names the
//! code under test (`self.assertEqual(export_csv(rows), …)`), and the next thing a person
//! opens is that function. Looked up by its definition's shape in any common language
//! (`def NAME(`, `fn NAME(`, `function NAME(`, `func NAME(`, `class NAME`), in the
//! workspace's own files, beneath its descriptor, bounded in files and bytes.

use super::Place;
use super::NOT_OURS;
use crate::Workspace;
use cap_std::fs::Dir;
use cap_std::fs::OpenOptions;
use cap_std::fs::OpenOptionsExt;
use std::io::Read;

/// The most files, and bytes in all, looked through for one failure.
const MAX_FILES: usize = 400;
const MAX_BYTES: u64 = 4 << 20;
/// Lines above a failing line looked through for the function it is in.
const ENCLOSING_LINES: usize = 200;
/// Files larger than this are not looked into.
const MAX_FILE: u64 = 256 << 10;
/// Calls on a failing line that say nothing about the code under test.
const NOISE: &[&str] = &[
    "assert",
    "assertEqual",
    "assertEquals",
    "assertTrue",
    "assertFalse",
    "assertIn",
    "assertRaises",
    "assertIsNone",
    "assertIsNotNone",
    "assertAlmostEqual",
    "assert_eq",
    "assert_ne",
    "expect",
    "toBe",
    "toEqual",
    "equal",
    "deepEqual",
    "strictEqual",
    "deepStrictEqual",
    "ok",
    "print",
    "println",
    "len",
    "str",
    "int",
    "list",
    "dict",
    "set",
    "range",
    "format",
    "Errorf",
    "Fatalf",
    "Error",
    "Fatal",
    "self",
    "super",
    "require",
    "if",
    "for",
    "while",
    "return",
    "match",
    "unwrap",
    "expect_err",
    "some",
    "Some",
    "Ok",
    "Err",
    "vec",
    "new",
    "to_string",
    "Equal",
];

/// The names on `line`, in order: each with whether a `.` comes before it and the
/// character after it.
fn words(line: &str) -> Vec<(String, bool, Option<char>)> {
    let chars: Vec<char> = line.chars().collect();
    let mut words = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        if chars[at].is_alphabetic() || chars[at] == '_' {
            let start = at;
            while at < chars.len() && (chars[at].is_alphanumeric() || chars[at] == '_') {
                at += 1;
            }
            let member = start > 0 && chars[start - 1] == '.';
            words.push((
                chars[start..at].iter().collect(),
                member,
                chars.get(at).copied(),
            ));
        } else {
            at += 1;
        }
    }
    words
}

/// The names called on `line` (`name(`), in order, without the noise, at most 3 — but
/// the last call of a chain first (`Basket().add("pen", 2).total()`: the value the test
/// compares is `total`'s; the constructor and the calls before it only build its input).
pub fn called(line: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (name, member, after) in words(line) {
        let calls = after == Some('(') || after == Some('!');
        if calls
            && name.len() > 2
            && !NOISE.contains(&name.as_str())
            && !(member && name.starts_with("assert"))
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    names.truncate(3);
    if let Some(last) = chain_end(line) {
        names.retain(|name| *name != last);
        names.insert(0, last);
    }
    names
}

/// The last method called on the value of another call (`).name(`), when it is not noise.
fn chain_end(line: &str) -> Option<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut last = None;
    for (at, pair) in chars.windows(2).enumerate() {
        if pair != [')', '.'] {
            continue;
        }
        let start = at + 2;
        let mut end = start;
        while end < chars.len() && (chars[end].is_alphanumeric() || chars[end] == '_') {
            end += 1;
        }
        let name: String = chars[start..end].iter().collect();
        if chars.get(end) == Some(&'(')
            && name.len() > 2
            && !NOISE.contains(&name.as_str())
            && !name.starts_with("assert")
            // An assertion's own chain (`expect(x).toBe(3)`, `.toEqual(`).
            && !(name.starts_with("to") && name[2..].starts_with(char::is_uppercase))
        {
            last = Some(name);
        }
    }
    last
}

/// Every name on `line` that could be a function passed by name (`rows.map(quote)`,
/// `sorted(xs, key=score)`): not a member (`.name`), not noise, in order, each once.
pub fn named(line: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (name, member, _) in words(line) {
        if !member && name.len() > 2 && !NOISE.contains(&name.as_str()) && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// Where each of `names` is defined in the workspace (the first definition found), in
/// the order of `names`; the file the failure is in (`failing`) is looked at last.
pub fn find(
    workspace: &Workspace,
    names: &[String],
    failing: &str,
) -> Vec<(String, Place, String)> {
    if names.is_empty() {
        return Vec::new();
    }
    let mut files = Vec::new();
    let Ok(root) = workspace.dir().try_clone() else {
        return Vec::new();
    };
    list(&root, "", &mut files, 0);
    files.sort_by_key(|path| path == failing);
    let mut found: Vec<(String, Place, String)> = Vec::new();
    let mut bytes_read = 0u64;
    for path in files {
        if found.len() == names.len() || bytes_read > MAX_BYTES {
            break;
        }
        let Some(text) = read_small(workspace.dir(), &path) else {
            continue;
        };
        bytes_read += text.len() as u64;
        for (n, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            for name in names {
                if found.iter().any(|(known, ..)| known == name) {
                    continue;
                }
                if defines(trimmed, name) {
                    let shown: String = wright_protocol::printable(trimmed)
                        .chars()
                        .take(160)
                        .collect();
                    found.push((
                        name.clone(),
                        Place {
                            path: path.clone(),
                            line: u32::try_from(n + 1).unwrap_or(u32::MAX),
                        },
                        shown,
                    ));
                }
            }
        }
    }
    found.sort_by_key(|(name, ..)| names.iter().position(|n| n == name));
    found
}

/// The function whose body holds line `at` (1-based) of `lines`: the nearest line above
/// it, or it, that defines a function and is indented less (or is `at` itself); its name
/// and line. Looked at most `ENCLOSING_LINES` up.
pub fn enclosing(lines: &[String], at: usize) -> Option<(String, usize)> {
    let depth = |line: &str| line.len() - line.trim_start().len();
    let own = depth(lines.get(at - 1)?);
    (at.saturating_sub(ENCLOSING_LINES).max(1)..=at)
        .rev()
        .find_map(|n| {
            let line = &lines[n - 1];
            if n != at && (line.trim().is_empty() || depth(line) >= own) {
                return None;
            }
            defined_name(line.trim_start()).map(|name| (name, n))
        })
}

/// The name `line` (trimmed at the start) defines a function of, if it does: `def NAME(`,
/// `fn NAME(`, `function NAME(`, `func NAME(` or a Go method `func (r T) NAME(`.
fn defined_name(line: &str) -> Option<String> {
    let line = without_modifiers(line);
    let rest = ["def ", "fn ", "function ", "func "]
        .iter()
        .find_map(|keyword| line.strip_prefix(keyword))?;
    // A Go method's receiver comes before its name.
    let rest = match rest.strip_prefix('(') {
        Some(receiver) => receiver.split_once(')')?.1.trim_start(),
        None => rest,
    };
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let after = rest[name.len()..].chars().next();
    (!name.is_empty() && matches!(after, Some('(' | '<'))).then_some(name)
}

/// `line` (trimmed at the start) without the words that may come before a definition's
/// keyword (`pub`, `export`, `async`, …).
fn without_modifiers(line: &str) -> &str {
    line.trim_start_matches("pub(crate) ")
        .trim_start_matches("pub ")
        .trim_start_matches("export ")
        .trim_start_matches("async ")
        .trim_start_matches("default ")
}

/// Whether `line` (trimmed at the start) defines `name`.
pub(super) fn defines(line: &str, name: &str) -> bool {
    let line = without_modifiers(line);
    ["def ", "fn ", "function ", "func ", "class "]
        .iter()
        .any(|keyword| {
            line.strip_prefix(keyword).is_some_and(|rest| {
                rest.strip_prefix(name).is_some_and(|after| {
                    after.starts_with('(')
                        || after.starts_with('<')
                        || after.starts_with(':')
                        || after.starts_with(' ')
                })
            })
        })
}

/// The workspace's own files (no dependencies, no hidden directories), bounded.
fn list(dir: &Dir, prefix: &str, out: &mut Vec<String>, depth: usize) {
    if depth > 12 || out.len() >= MAX_FILES {
        return;
    }
    let Ok(entries) = dir.entries() else {
        return;
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| {
            !name.starts_with('.') && !NOT_OURS.contains(&name.as_str()) && name != "target"
        })
        .collect();
    names.sort();
    for name in names {
        if out.len() >= MAX_FILES {
            return;
        }
        let Ok(meta) = dir.symlink_metadata(&name) else {
            continue;
        };
        let path = format!("{prefix}{name}");
        if meta.is_dir() {
            let mut options = OpenOptions::new();
            options
                .read(true)
                .custom_flags(nix::libc::O_DIRECTORY | nix::libc::O_NOFOLLOW);
            if let Ok(sub) = dir.open_with(&name, &options) {
                list(
                    &Dir::from_std_file(sub.into_std()),
                    &format!("{path}/"),
                    out,
                    depth + 1,
                );
            }
        } else if meta.is_file() && meta.len() <= MAX_FILE {
            out.push(path);
        }
    }
}

/// A small text file of the workspace, read without following a link at its end or
/// blocking.
fn read_small(dir: &Dir, path: &str) -> Option<String> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY | nix::libc::O_NOFOLLOW);
    let file = dir.open_with(path, &options).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.into_std()
        .take(MAX_FILE)
        .read_to_end(&mut bytes)
        .ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calls_of_a_failing_line_leave_the_assertions_out() {
        assert_eq!(
            called("        self.assertEqual(export_csv([[1, 2, 3]]), \"1,2,3\\n\")"),
            vec!["export_csv".to_string()]
        );
        assert_eq!(
            called("    assert_eq!(parse_row(\"a,b\"), vec![\"a\"]);"),
            vec!["parse_row".to_string()]
        );
        assert_eq!(
            called("  expect(total(items)).toBe(3);"),
            vec!["total".to_string()]
        );
    }

    #[test]
    fn definitions_are_found_in_any_language_and_not_through_links() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join("node_modules/x")).unwrap();
        std::fs::write(
            dir.path().join("node_modules/x/a.js"),
            "function total() {}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("src/lib.rs"),
            "\npub fn parse_row(s: &str) -> Vec<String> {\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("export.py"),
            "\"\"\"x\"\"\"\n\n\ndef export_csv(rows):\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("app.js"),
            "export function total(items) {\n",
        )
        .unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.py"), "def hidden_fn():\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("linked")).unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let names: Vec<String> = ["export_csv", "parse_row", "total", "hidden_fn"]
            .map(String::from)
            .to_vec();
        let found: Vec<(String, String, u32)> = find(&workspace, &names, "test_export.py")
            .into_iter()
            .map(|(name, place, _)| (name, place.path, place.line))
            .collect();
        assert_eq!(
            found,
            vec![
                ("export_csv".to_string(), "export.py".to_string(), 4),
                ("parse_row".to_string(), "src/lib.rs".to_string(), 2),
                ("total".to_string(), "app.js".to_string(), 1),
            ]
        );
    }
}
