//! The question a small model answers better than it acts: asked apart, in plain words,
//! with only the code under test and the first failure in front of it, "which line of
//! this file causes this failure?". Built from a failing command's output as the model
//! was shown it (the header `read` wrote, then the output with the workspace's lines
//! marked): the first failure's place, the code it calls in another file of the
//! workspace, and the output's lines around that place. Nothing here is about one
//! language or one task; `None` whenever the output does not point at such code.

use super::called_definitions;
use super::failing_place;
use super::places;
use super::plain_definition;
use super::Place;
use super::MARK;
use crate::Workspace;

/// Output lines shown before the failing place's line (the failure's name, the start of
/// its traceback), and after it (the failing line, the error, a diff).
const BEFORE: usize = 6;
const AFTER: usize = 14;
/// Lines above a failing line looked at for the call it checks, when it calls none.
const LOOK_BACK: u32 = 3;
/// The failure's lines are cut to this many characters in all.
const BLOCK_CHARS: usize = 1500;

/// What to ask, and about which file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The file of the code under test, relative to the workspace.
    pub path: String,
    /// The whole question, as the model is sent it.
    pub text: String,
}

/// The question about the failure `shown` (a failing `command`'s output as the model read
/// it), when its first failure's line calls code defined in another file of the
/// workspace. `last_change`, what the start commit changed as the model is shown it,
/// goes before the question: a regression's line is most often in it.
pub fn question(
    shown: &str,
    workspace: &Workspace,
    command: &str,
    last_change: Option<&str>,
) -> Option<Question> {
    let lines: Vec<&str> = shown.lines().collect();
    let under_test = under_test(shown, workspace)?;
    let defined = under_test.defined;
    let (code, whole) = plain_definition(workspace, &defined)?;
    let block = failure_block(&lines, under_test.at, workspace);
    let path = defined.path.clone();
    let what = if whole {
        format!("{path}:")
    } else {
        format!("{path}, from line {}:", defined.line)
    };
    let fence = fence_language(&path);
    let change = last_change
        .map(|change| format!("{change}\n\n"))
        .unwrap_or_default();
    let text = format!(
        "{what}\n```{fence}\n{code}\n```\n\n`{command}` failed:\n```\n{block}\n```\n\n{change}Which line of {path} causes this failure? Quote that line, then say in one sentence what is wrong with it."
    );
    Some(Question { path, text })
}

/// The code a failure points at: a function called by the first failure's line and
/// defined in another file of the workspace.
pub(super) struct UnderTest {
    /// The output line naming the first failure's place.
    pub at: usize,
    /// The function's name, and where it is defined.
    pub name: String,
    pub defined: Place,
}

/// The code under test the failing output `shown` points at, if any.
pub(super) fn under_test(shown: &str, workspace: &Workspace) -> Option<UnderTest> {
    let (at, failed) = failing(shown, workspace)?;
    // A test that reports a failure itself names the report's line (Go's `t.Errorf`, a
    // `raise` after a check): the call it checks is on a line just above.
    let (name, defined, _) = (0..=LOOK_BACK).find_map(|back| {
        let line = failed.line.checked_sub(back).filter(|line| *line > 0)?;
        let place = Place {
            path: failed.path.clone(),
            line,
        };
        called_definitions(workspace, &place)
            .into_iter()
            .find(|(_, place, _)| place.path != failed.path)
    })?;
    Some(UnderTest { at, name, defined })
}

/// The first failure's place in the failing output `shown`, and the index of the output
/// line naming it.
pub(super) fn failing(shown: &str, workspace: &Workspace) -> Option<(usize, Place)> {
    let lines: Vec<&str> = shown.lines().collect();
    // Only the output's own lines: the header above them quotes code, not the output.
    let marked: Vec<_> = places(shown, workspace)
        .into_iter()
        .filter(|(n, _)| lines[*n].starts_with(MARK))
        .collect();
    // A long output is shown end first, so its first place shown is not its first
    // failure's (node's last test before its first): the header, read from the whole
    // output, names that one.
    let named = lines.first().and_then(|line| header_place(line));
    if let Some(found) = named.and_then(|named| marked.iter().find(|(_, place)| *place == named)) {
        return Some(found.clone());
    }
    failing_place(shown, &marked)
}

/// The place the header `read` puts first names (`[It failed at PATH:LINE (in the
/// workspace)…`), when `line` is that header.
fn header_place(line: &str) -> Option<Place> {
    let rest = line.strip_prefix(super::FAILED_AT)?;
    let (place, _) = rest.split_once(" (in the workspace)")?;
    let (path, number) = place.rsplit_once(':')?;
    Some(Place {
        path: path.to_string(),
        line: number.parse().ok()?,
    })
}

/// The output's lines around line `at`: back to the start of its failure, on to its end,
/// each unmarked, the workspace's path taken off, bounded.
pub(super) fn failure_block(lines: &[&str], at: usize, workspace: &Workspace) -> String {
    let boundary = |line: &str| {
        let line = line.trim_start_matches(MARK).trim_start();
        line.starts_with("=====") || line.starts_with("_____")
    };
    let mut first = at;
    while first > 0 && at - first < BEFORE && !boundary(lines[first - 1]) {
        first -= 1;
    }
    let mut last = at;
    while last + 1 < lines.len() && last - at < AFTER && !boundary(lines[last + 1]) {
        // Two blank lines end it too: what follows is another part of the output.
        if lines[last + 1].trim().is_empty()
            && lines.get(last + 2).is_some_and(|l| l.trim().is_empty())
        {
            break;
        }
        last += 1;
    }
    let root = format!("{}/", workspace.root().display());
    let mut block = String::new();
    for line in &lines[first..=last] {
        let line = line.strip_prefix(MARK).unwrap_or(line).replace(&root, "");
        if block.len() + line.len() + 1 > BLOCK_CHARS {
            block.push_str("\n…");
            break;
        }
        if !block.is_empty() {
            block.push('\n');
        }
        block.push_str(&line);
    }
    block.trim_end().to_string()
}

/// The fence's language for a file, by its extension (empty when unknown).
pub(super) fn fence_language(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("py") => "python",
        Some("rs") => "rust",
        Some("js" | "mjs" | "cjs") => "javascript",
        Some("ts") => "typescript",
        Some("go") => "go",
        Some("rb") => "ruby",
        Some("java") => "java",
        Some("c" | "h") => "c",
        Some("cc" | "cpp" | "hpp") => "cpp",
        _ => "",
    }
}
