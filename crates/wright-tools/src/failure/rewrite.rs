//! A fix asked for as code (`--candidates`): a small model that edits badly through a
//! tool call still often writes a short function right when asked for it whole, in plain
//! words, with the task, the code and the failure in front of it — not every time, so
//! wright asks more than once and lets the failing command judge each version. This
//! module builds the request and reads a version out of an answer; nothing here runs
//! anything. The functions offered are the one the first failure's line calls, defined in
//! another file of the workspace (see `question`), and those it calls in turn from other
//! files that are not tests (a report's wrong average is most often in the `mean` it
//! calls) — and, when its file is shown whole, those it calls from that file (a CSV
//! line's wrong separator is in the `line` the export calls); `None` whenever there is
//! no such function, it is long, or its text is not printable as it is (then no edit
//! could match it exactly).

use super::definitions;
use super::definitions::defines;
use super::enclosing_function;
use super::exact_definition;
use super::imports::is_import;
use super::own_span;
use super::plain_definition;
use super::question::failing;
use super::question::failure_block;
use super::question::fence_language;
use super::question::under_test;
use super::rewrite_context;
use super::Place;
use crate::Workspace;

/// The task's characters put in the request at most.
const TASK_CHARS: usize = 1500;
/// Functions the one under test calls, shown beside it, at most.
const CALLED: usize = 2;

/// A function a version may replace: where it is, and its text as the file has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The file, relative to the workspace.
    pub path: String,
    pub name: String,
    /// The function's own lines as the file has them.
    pub old: String,
}

/// What to ask for, and what a version may replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The function under test first, then those it calls from other files, then (its
    /// file shown whole) those it calls from its own file.
    pub targets: Vec<Target>,
    /// The request, as the model is sent it.
    pub text: String,
    /// Where in `text` the ask at its end begins (after the code and the failure).
    pub ask_at: usize,
}

/// The request for `task`'s function under test (or one it calls), written corrected,
/// whole, when the failure `shown` (a failing `command`'s output as the model read it)
/// points at one.
pub fn rewrite(shown: &str, workspace: &Workspace, command: &str, task: &str) -> Option<Rewrite> {
    // Failing inside the code (a stub that raises, an error in the function itself): the
    // function it failed in; failing in a test: the function that test line calls.
    let (at, failed) = failing(shown, workspace)?;
    let inside = (!crate::is_test_file(&failed.path))
        .then(|| enclosing_function(workspace, &failed))
        .flatten();
    let (at, name, defined) = match inside {
        Some((name, defined)) => (at, name, defined),
        None => {
            let under_test = under_test(shown, workspace)?;
            (under_test.at, under_test.name, under_test.defined)
        }
    };
    if crate::is_test_file(&defined.path) {
        return None;
    }
    let old = exact_definition(workspace, &defined)?;
    let (code, whole) = rewrite_context(workspace, &defined)?;
    let lines: Vec<&str> = shown.lines().collect();
    let block = failure_block(&lines, at, workspace);
    let path = defined.path.clone();
    let what = if whole {
        format!("{path}:")
    } else {
        format!("{path}, from line {}:", defined.line)
    };
    let fence = fence_language(&path);
    let mut shown_code = format!("{what}\n```{fence}\n{code}\n```");
    let mut targets = vec![Target {
        path: path.clone(),
        name: name.clone(),
        old: old.clone(),
    }];
    for (callee, place, callee_old) in called_elsewhere(workspace, &old, &name, &path) {
        let Some((code, _)) = plain_definition(workspace, &place) else {
            continue;
        };
        let fence = fence_language(&place.path);
        shown_code.push_str(&format!(
            "\n\n{}, where `{callee}` is defined:\n```{fence}\n{code}\n```",
            place.path
        ));
        targets.push(Target {
            path: place.path,
            name: callee,
            old: callee_old,
        });
    }
    if whole {
        for (callee, callee_old) in called_here(workspace, &code, &old, &name, &path) {
            targets.push(Target {
                path: path.clone(),
                name: callee,
                old: callee_old,
            });
        }
    }
    // Told that the code is wrong, the 1.5B wrote a passing version in 4 of 8 samples,
    // against 2 of 8 asked why the command fails (it wrote the code unchanged, or none).
    let ask = match &targets[..] {
        [only] => format!(
            "The code of `{name}` above is wrong: the test shows what it returns and what it should return. First say in one sentence what `{name}` does wrong. Then write the function `{name}` fixed, whole, in one ```{fence} block.",
            name = only.name
        ),
        several => {
            let names: Vec<String> = several.iter().map(|t| format!("`{}`", t.name)).collect();
            let names = names.join(" or ");
            format!(
                "The code above is wrong: the test shows what it returns and what it should return. First say in one sentence which function is wrong ({names}) and what it does wrong. Then write that function fixed, whole, in one ```{fence} block."
            )
        }
    };
    let task = clipped_task(task);
    let shown =
        format!("Task: {task}\n\n{shown_code}\n\n`{command}` failed:\n```\n{block}\n```\n\n");
    let ask_at = shown.len();
    let text = format!("{shown}{ask}");
    Some(Rewrite {
        targets,
        text,
        ask_at,
    })
}

impl Rewrite {
    /// The request again, for the next version once versions of the functions
    /// `ruled_out` (indices of `targets`) were tried and the command still failed: it
    /// points at the others, so the tries do not all go to the function the test calls
    /// when the cause is in a helper it imports. `None` when no other function is left.
    /// Its ask replaced: the 1.5B, told after the first ask that the function it had
    /// rewritten was not the cause, followed the first ask and rewrote it again.
    pub fn narrowed(&self, ruled_out: &[usize], command: &str) -> Option<String> {
        let (tried, left) = self.split(ruled_out)?;
        let fence = fence_language(&self.targets[0].path);
        Some(format!(
            "{}A version of {tried} was tried and `{command}` still failed, so the cause is not there: it is in {left}. First say in one sentence which of them is wrong and what it does wrong. Then write that function fixed, whole, in one ```{fence} block.",
            self.text.get(..self.ask_at).unwrap_or(&self.text)
        ))
    }

    /// The functions `ruled_out` and the others, each list quoted and joined; `None` when
    /// either is empty.
    fn split(&self, ruled_out: &[usize]) -> Option<(String, String)> {
        let quote = |t: &Target| format!("`{}`", t.name);
        let tried: Vec<String> = ruled_out
            .iter()
            .filter_map(|i| self.targets.get(*i))
            .map(quote)
            .collect();
        let left: Vec<String> = (0..self.targets.len())
            .filter(|i| !ruled_out.contains(i))
            .map(|i| quote(&self.targets[i]))
            .collect();
        (!left.is_empty() && !tried.is_empty()).then(|| (tried.join(" and "), left.join(" or ")))
    }

    /// What is asked, after the request and its answer, when the answer said what is
    /// wrong but wrote no code: the 0.5B stopped after its sentence in most of its tries.
    pub fn follow_up(&self, ruled_out: &[usize]) -> String {
        let fence = fence_language(&self.targets[0].path);
        if let Some((_, left)) = self.split(ruled_out) {
            return format!(
                "You wrote no code. Now write the one of {left} that is wrong fixed, whole, in one ```{fence} block."
            );
        }
        match &self.targets[..] {
            [only] => format!(
                "You wrote no code. Now write the function `{}` fixed, whole, in one ```{fence} block.",
                only.name
            ),
            _ => format!(
                "You wrote no code. Now write the function that is wrong fixed, whole, in one ```{fence} block."
            ),
        }
    }
}

/// The functions `code` (the function `name` in `path`) calls that are defined in
/// another file of the workspace, not a test, each short and printable as it is: name,
/// place, text.
fn called_elsewhere(
    workspace: &Workspace,
    code: &str,
    name: &str,
    path: &str,
) -> Vec<(String, Place, String)> {
    let body: String = code.lines().skip(1).collect::<Vec<_>>().join(" ");
    let names: Vec<String> = definitions::called(&body)
        .into_iter()
        .filter(|called| called != name)
        .collect();
    definitions::find(workspace, &names, path)
        .into_iter()
        .filter(|(_, place, _)| place.path != path && !crate::is_test_file(&place.path))
        .filter_map(|(called, place, _)| {
            let old = exact_definition(workspace, &place)?;
            Some((called, place, old))
        })
        .take(CALLED)
        .collect()
}

/// The functions `old` (the function `name`) calls, or passes by name, that `file` (the
/// text of `path`, shown whole) defines, each printable as it is: name and text, at most
/// `CALLED`. Those it calls come first.
fn called_here(
    workspace: &Workspace,
    file: &str,
    old: &str,
    name: &str,
    path: &str,
) -> Vec<(String, String)> {
    let body: String = old.lines().skip(1).collect::<Vec<_>>().join(" ");
    let mut found = Vec::new();
    let mut names = definitions::called(&body);
    for passed in definitions::named(&body) {
        if !names.contains(&passed) {
            names.push(passed);
        }
    }
    for called in names {
        if called == name || found.iter().any(|(known, _)| *known == called) {
            continue;
        }
        let Some(at) = file
            .lines()
            .position(|line| defines(line.trim_start(), &called))
        else {
            continue;
        };
        let place = Place {
            path: path.to_string(),
            line: u32::try_from(at + 1).unwrap_or(u32::MAX),
        };
        if let Some(text) = exact_definition(workspace, &place) {
            found.push((called, text));
        }
        if found.len() == CALLED {
            break;
        }
    }
    found
}

/// A version of one of the targets, as an answer wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// Which target it replaces (an index into the targets).
    pub which: usize,
    /// The function, indented as the file has the target.
    pub code: String,
    /// The one-line imports written above it in its block (see `imports`).
    pub imports: Vec<String>,
}

/// The version an answer writes of one of `targets`: the first fenced block that defines
/// one, that definition's own lines, indented as the file has the target, and the imports
/// above it. A block that defines several (a whole file written back) gives the first it
/// changes, or the first when it changes none. `None` when no block defines any.
pub fn rewritten(answer: &str, targets: &[Target]) -> Option<Version> {
    fenced_blocks(answer).into_iter().find_map(|block| {
        let defined: Vec<Version> = block
            .iter()
            .enumerate()
            .filter_map(|(at, line)| {
                let which = targets
                    .iter()
                    .position(|target| defines(line.trim_start(), &target.name))?;
                Some(version_at(&block, at, which, targets))
            })
            .collect();
        let changed = defined
            .iter()
            .position(|version| version.code != targets[version.which].old);
        let first = changed.unwrap_or(0);
        defined.into_iter().nth(first)
    })
}

/// The definition of `targets[which]` starting at `block[at]`, with the imports above it.
fn version_at(block: &[&str], at: usize, which: usize, targets: &[Target]) -> Version {
    let (first, last) = own_span(block, at + 1);
    let imports = block[..at]
        .iter()
        .filter(|line| is_import(line))
        .map(|line| line.trim().to_string())
        .collect();
    Version {
        which,
        code: reindented(&block[first - 1..last], &targets[which].old),
        imports,
    }
}

/// The lines of each fenced block of `text`, in order; an unclosed block runs to the end
/// (an answer cut by its token cap).
fn fenced_blocks(text: &str) -> Vec<Vec<&str>> {
    let mut blocks = Vec::new();
    let mut open: Option<Vec<&str>> = None;
    for line in text.lines() {
        let fence = line.trim_start().starts_with("```");
        match (&mut open, fence) {
            (None, true) => open = Some(Vec::new()),
            (Some(_), true) => blocks.extend(open.take()),
            (Some(lines), false) => lines.push(line),
            (None, false) => {}
        }
    }
    blocks.extend(open);
    blocks
}

/// `lines` shifted so that their first line is indented as `old`'s first line is (a
/// method answered at the margin goes back into its class); blank lines emptied.
fn reindented(lines: &[&str], old: &str) -> String {
    let indent = |line: &str| line.len() - line.trim_start().len();
    let first = old.lines().next().unwrap_or_default();
    let prefix = &first[..indent(first)];
    let have = lines.first().map(|line| indent(line)).unwrap_or(0);
    lines
        .iter()
        .map(|line| {
            if line.trim().is_empty() {
                return String::new();
            }
            // Only the block's common margin is taken off, never a line's own text.
            let margin = indent(line).min(have);
            format!("{prefix}{}", &line[margin..])
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The task, on its first `TASK_CHARS` characters.
fn clipped_task(task: &str) -> String {
    let task = task.trim();
    if task.chars().count() <= TASK_CHARS {
        return task.to_string();
    }
    let cut: String = task.chars().take(TASK_CHARS).collect();
    format!("{cut} …")
}
