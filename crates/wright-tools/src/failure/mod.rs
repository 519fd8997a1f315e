//! Reading a failure for the model: the places a traceback, a panic or a compiler error
//! names (`File "x.py", line 3`, `src/lib.rs:10:5`, `at f (app.js:7:2)`, `main.go:12`)
//! that are files of the workspace, so the output can be marked where the model's own
//! code is and the line of the failure quoted. Nothing here is about one language's
//! project or one task: any `path:line` whose path is a regular file beneath the
//! workspace counts, and dependencies (`site-packages`, `node_modules`, …) do not.
//! Files are opened beneath the workspace's descriptor, never blocking, read bounded.

mod definitions;
mod excerpt;
mod imports;
mod question;
mod rewrite;

pub use excerpt::excerpt;
pub use excerpt::last_line;
pub use imports::import_named_by;
pub use imports::missing_imports;
pub use question::question;
pub use question::Question;
pub use rewrite::rewrite;
pub use rewrite::rewritten;
pub use rewrite::Rewrite;
pub use rewrite::Target;
pub use rewrite::Version;

use crate::Workspace;
use cap_std::fs::OpenOptions;
use cap_std::fs::OpenOptionsExt;
use std::io::Read;

/// How the header of a failure read for the model begins (see `read`).
const FAILED_AT: &str = "[It failed at ";
/// The mark put before an output line that names a place in the workspace.
pub const MARK: &str = ">> ";
/// Directories whose files are someone else's code, even inside the workspace.
const NOT_OURS: &[&str] = &[
    "site-packages",
    "dist-packages",
    "node_modules",
    ".venv",
    "venv",
    ".cargo",
    ".rustup",
];
/// The most distinct paths of one output looked up in the workspace.
const MAX_PATHS: usize = 256;
/// A quoted file is read this far at most.
const MAX_READ: u64 = 1 << 20;
/// A file of the code under test this short is shown whole; a longer one, the
/// definition's own lines.
const WHOLE_FILE_LINES: usize = 30;
/// A failing statement's lines read at most, for the names it calls.
const STATEMENT_LINES: usize = 8;
/// A definition's lines shown at most, and their characters.
const DEFINITION_LINES: usize = 15;
const DEFINITION_CHARS: usize = 1500;
/// A definition asked for whole, corrected, is at most this many lines.
const REWRITE_LINES: usize = 80;
/// The file of a function asked for whole is shown whole up to this many lines and
/// characters: a method's type and its fields are in it (shown a 31-line file's `len`
/// alone, the 1.5B wrote `self.elements.len()` for a field named `items`).
const REWRITE_WHOLE_FILE_LINES: usize = 60;
const REWRITE_WHOLE_FILE_CHARS: usize = 3000;

/// A place in the workspace: its path relative to the workspace root, and a line (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub path: String,
    pub line: u32,
}

/// The places in `output` that are files of the workspace, with the index of the output
/// line naming each, in the output's order.
pub fn places(output: &str, workspace: &Workspace) -> Vec<(usize, Place)> {
    let root = workspace.root().to_string_lossy().into_owned();
    // Each path is looked at once, however often the output names it, and no more than
    // `MAX_PATHS` of them: an output of a million `x.py:1` lines costs one open.
    let mut seen: std::collections::HashMap<String, bool> = std::collections::HashMap::new();
    let mut is_ours = |relative: &str| -> bool {
        if let Some(known) = seen.get(relative) {
            return *known;
        }
        if seen.len() >= MAX_PATHS {
            return false;
        }
        let found = is_file(workspace, relative);
        seen.insert(relative.to_string(), found);
        found
    };
    output
        .lines()
        .enumerate()
        .filter_map(|(n, line)| {
            candidates(line)
                .into_iter()
                .filter_map(|(path, line)| {
                    let relative = match path.strip_prefix(&format!("{root}/")) {
                        Some(rest) => rest.to_string(),
                        None if path.starts_with('/') => return None,
                        None => path.trim_start_matches("./").to_string(),
                    };
                    let ours = !relative
                        .split('/')
                        .any(|part| NOT_OURS.contains(&part) || part == "..");
                    (ours && is_ours(&relative)).then_some(Place {
                        path: relative,
                        line,
                    })
                })
                .next()
                .map(|place| (n, place))
        })
        .collect()
}

/// `(path, line)` pairs a line of output may name.
fn candidates(line: &str) -> Vec<(String, u32)> {
    let mut found = Vec::new();
    // Python: File "PATH", line N
    if let Some(at) = line.find("File \"") {
        let rest = &line[at + 6..];
        if let Some((path, after)) = rest.split_once("\", line ") {
            if let Some(n) = leading_number(after) {
                found.push((path.to_string(), n));
            }
        }
    }
    // Everything else: PATH:LINE[:COL], as one token.
    for token in line.split(|c: char| c.is_whitespace() || "()[]<>'\",".contains(c)) {
        let Some((path, rest)) = token.split_once(':') else {
            continue;
        };
        let looks_like_a_file = path.rsplit('/').next().is_some_and(|name| {
            name.contains('.') && !name.starts_with('.') || name.len() > 1 && path.contains('/')
        });
        if let (true, Some(n)) = (looks_like_a_file, leading_number(rest)) {
            found.push((path.to_string(), n));
        }
    }
    found
}

fn leading_number(text: &str) -> Option<u32> {
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|n| *n > 0)
}

fn open(workspace: &Workspace, relative: &str) -> Option<std::fs::File> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY);
    let file = workspace.dir().open_with(relative, &options).ok()?;
    file.metadata().ok()?.is_file().then(|| file.into_std())
}

fn is_file(workspace: &Workspace, relative: &str) -> bool {
    !relative.is_empty() && open(workspace, relative).is_some()
}

/// The file at `place`'s lines, read bounded, and `place`'s line as an index into them
/// (1-based); `None` when the file or the line is not there.
fn file_lines(workspace: &Workspace, place: &Place) -> Option<(Vec<String>, usize)> {
    let mut bytes = Vec::new();
    open(workspace, &place.path)?
        .take(MAX_READ)
        .read_to_end(&mut bytes)
        .ok()?;
    let lines: Vec<String> = String::from_utf8_lossy(&bytes)
        .lines()
        .map(str::to_string)
        .collect();
    let at = usize::try_from(place.line).ok()?;
    (at != 0 && at <= lines.len()).then_some((lines, at))
}

/// The statement that begins on line `at` (1-based): that line, and the next ones while
/// its brackets are open, at most `STATEMENT_LINES` in all.
fn statement_at(lines: &[String], at: usize) -> String {
    let mut depth = 0i32;
    let mut statement = Vec::new();
    for line in lines.iter().skip(at - 1).take(STATEMENT_LINES) {
        statement.push(line.as_str());
        for c in line.chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
        }
        if depth <= 0 {
            break;
        }
    }
    statement.join(" ")
}

/// Lines `first..=last` (1-based) numbered, `at` marked, each made printable and cut at
/// 200 characters.
fn numbered(lines: &[String], first: usize, last: usize, at: usize) -> Vec<String> {
    let width = last.to_string().len();
    (first..=last)
        .map(|n| {
            let mark = if n == at { ">" } else { " " };
            let line: String = wright_protocol::printable(&lines[n - 1])
                .chars()
                .take(200)
                .collect();
            format!("{mark}{n:>width$} | {line}")
        })
        .collect()
}

/// Lines `place.line - around ..= place.line + around` of the file, numbered, the line
/// itself marked; `None` when the file or the line is not there.
pub fn quote(workspace: &Workspace, place: &Place, around: u32) -> Option<String> {
    let (lines, at) = file_lines(workspace, place)?;
    let first = at.saturating_sub(around as usize).max(1);
    let last = (at + around as usize).min(lines.len());
    Some(numbered(&lines, first, last, at).join("\n"))
}

/// The lines (1-based, inclusive) of the definition at `at`: the whole file when it is
/// short, else the definition's own lines (see `own_span`), bounded; and whether that is
/// the whole.
fn definition_span(lines: &[String], at: usize) -> (usize, usize, bool) {
    if lines.len() <= WHOLE_FILE_LINES {
        return (1, lines.len(), true);
    }
    let (first, last) = own_span(lines, at);
    (first, last.min(at + DEFINITION_LINES - 1), false)
}

/// The definition at `at`'s own lines (1-based, inclusive): the line at `at`, then those
/// indented deeper or blank, and the closing line at its own depth; blank lines at its
/// end left out.
fn own_span<S: AsRef<str>>(lines: &[S], at: usize) -> (usize, usize) {
    let depth = |line: &str| line.len() - line.trim_start().len();
    let own = depth(lines[at - 1].as_ref());
    let mut last = at;
    for (n, line) in lines.iter().enumerate().skip(at) {
        let line = line.as_ref();
        if line.trim().is_empty() || depth(line) > own {
            last = n + 1;
            continue;
        }
        // `}` or `end` closing it at its own depth belongs to it.
        if line.trim_start().starts_with('}') || line.trim() == "end" {
            last = n + 1;
        }
        break;
    }
    while last > at && lines[last - 1].as_ref().trim().is_empty() {
        last -= 1;
    }
    (at, last)
}

/// The definition at `place`'s own lines exactly as the file has them (joined by `\n`),
/// when it is at most `REWRITE_LINES` long and every line is printable as it is: the text
/// a `str_replace` of it must match.
fn exact_definition(workspace: &Workspace, place: &Place) -> Option<String> {
    let (lines, at) = file_lines(workspace, place)?;
    let (first, last) = own_span(&lines, at);
    let own = &lines[first - 1..last];
    (own.len() <= REWRITE_LINES
        && own
            .iter()
            .all(|line| wright_protocol::printable(line) == *line))
    .then(|| own.join("\n"))
}

/// `lines` joined after `start`, each on a line of its own, stopped with `…` before
/// `DEFINITION_CHARS`.
fn bounded(start: String, lines: impl IntoIterator<Item = String>) -> String {
    let mut quoted = start;
    for line in lines {
        if quoted.len() + line.len() + 1 > DEFINITION_CHARS {
            quoted.push_str("\n…");
            break;
        }
        quoted.push('\n');
        quoted.push_str(&line);
    }
    quoted
}

/// The code of the definition at `place` (see `definition_span`), numbered, the
/// definition's line marked, bounded.
pub fn quote_definition(workspace: &Workspace, place: &Place) -> Option<String> {
    let (lines, at) = file_lines(workspace, place)?;
    let (first, last, whole) = definition_span(&lines, at);
    let what = if whole {
        format!("{}, whole", place.path)
    } else {
        place.path.clone()
    };
    Some(bounded(
        format!("{what}:"),
        numbered(&lines, first, last, at),
    ))
}

/// The code of the definition at `place` as it is written (see `definition_span`): no
/// numbers, each line made printable and cut at 200 characters, bounded; and whether it
/// is the whole file.
fn plain_definition(workspace: &Workspace, place: &Place) -> Option<(String, bool)> {
    let (lines, at) = file_lines(workspace, place)?;
    let (first, last, whole) = definition_span(&lines, at);
    let code = bounded(
        String::new(),
        lines[first - 1..last]
            .iter()
            .map(|line| wright_protocol::printable(line).chars().take(200).collect()),
    );
    Some((code.trim_start_matches('\n').to_string(), whole))
}

/// The code shown with a request for the definition at `place` written anew: the whole
/// file when it is short (see `REWRITE_WHOLE_FILE_LINES`), else as `plain_definition`.
fn rewrite_context(workspace: &Workspace, place: &Place) -> Option<(String, bool)> {
    let (lines, _) = file_lines(workspace, place)?;
    let chars: usize = lines.iter().map(|line| line.len() + 1).sum();
    if lines.len() <= REWRITE_WHOLE_FILE_LINES && chars <= REWRITE_WHOLE_FILE_CHARS {
        let code: Vec<String> = lines
            .iter()
            .map(|line| wright_protocol::printable(line).into_owned())
            .collect();
        return Some((code.join("\n").trim_matches('\n').to_string(), true));
    }
    plain_definition(workspace, place)
}

/// The function whose body holds the line at `place`, in that file: its name and the
/// place of its definition.
pub(super) fn enclosing_function(workspace: &Workspace, place: &Place) -> Option<(String, Place)> {
    let (lines, at) = file_lines(workspace, place)?;
    let (name, line) = definitions::enclosing(&lines, at)?;
    let line = u32::try_from(line).ok()?;
    Some((
        name,
        Place {
            path: place.path.clone(),
            line,
        },
    ))
}

/// What the statement at `place` calls and where each is defined elsewhere in the
/// workspace (name, place, the defining line): the code to read next when a test's line
/// failed. The statement, not only its line: a traceback names the first line of a call
/// written over several (`self.assertEqual(` with `export_csv(...)` on the next).
pub fn called_definitions(workspace: &Workspace, place: &Place) -> Vec<(String, Place, String)> {
    let Some((lines, at)) = file_lines(workspace, place) else {
        return Vec::new();
    };
    let names = definitions::called(&statement_at(&lines, at));
    definitions::find(workspace, &names, &place.path)
        .into_iter()
        .filter(|(_, at, _)| at != place)
        .collect()
}

/// Where `output` says it failed, of its `places`: the first failure's own place. A
/// Python traceback lists its frames outermost first, so there it is the last place of
/// the first traceback (its innermost frame in the workspace); compilers, panics and the
/// stacks of JavaScript, Go or Rust list the innermost or most important first, so
/// elsewhere it is the first place named. The first failure, because later ones are often
/// its consequences, and it is the one a person reads first.
pub fn failing_place(output: &str, places: &[(usize, Place)]) -> Option<(usize, Place)> {
    let mut tracebacks = output
        .lines()
        .enumerate()
        .filter(|(_, line)| line.trim() == "Traceback (most recent call last):")
        .map(|(n, _)| n);
    if let Some(start) = tracebacks.next() {
        let end = tracebacks.next().unwrap_or(usize::MAX);
        if let Some(found) = places.iter().rfind(|(n, _)| *n > start && *n < end) {
            return Some(found.clone());
        }
    }
    places.first().cloned()
}

/// A failing command's output read for the model: where it failed in the workspace (see
/// `failing_place`) with that line quoted, first; then the output with every line naming
/// a workspace place marked. `None` when the output names no place in the workspace.
pub fn read(output: &str, workspace: &Workspace) -> Option<(String, String)> {
    let places = places(output, workspace);
    let (_, failed) = failing_place(output, &places)?;
    let quoted = quote(workspace, &failed, 0)
        .map(|q| format!(":\n{q}"))
        .unwrap_or_default();
    let mut header = format!(
        "{FAILED_AT}{}:{} (in the workspace){quoted}]",
        failed.path, failed.line
    );
    let definitions = called_definitions(workspace, &failed);
    for (name, place, line) in &definitions {
        header.push_str(&format!(
            "\n[{name} is defined at {}:{}: {line}]",
            place.path, place.line
        ));
    }
    // The code under test, where the bug most often is: a small model that reads the
    // failure then edits the test (or guesses) has it in front of it instead.
    if let Some((name, place, _)) = definitions.iter().find(|(_, p, _)| p.path != failed.path) {
        if let Some(code) = quote_definition(workspace, place) {
            header.push_str(&format!("\n[{name} in {code}]"));
        }
    }
    let marked: std::collections::HashSet<usize> = places.iter().map(|(n, _)| *n).collect();
    let body = output
        .lines()
        .enumerate()
        .map(|(n, line)| {
            if marked.contains(&n) {
                format!("{MARK}{line}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    Some((header, body))
}

#[cfg(test)]
mod chain_tests;
#[cfg(test)]
mod tests;
