//! wright's own check of a task with no failing test, asked of the model apart: either a
//! test file in the style of the repository's own tests, written beside them for each run
//! of the tests and taken out again, or a short shell script run from the root.
//!
//! Why a test file first: asked for a shell script, the 1.5B invented programs and
//! options the repository does not have (`python -m price_fetcher`) in 5 of 5 samples;
//! shown the repository's test file and asked for a new one in its style, it called the
//! code as the tests do, and one sample in three was a right check of a configuration
//! task. A script stays the way for what a test file cannot reach (a program's options).
//!
//! Guarantees: a check file never takes the place of a file that exists; its name is made
//! of plain characters only (it is removed with a shell command in the sandbox); it is
//! never left in the workspace by a run that ends (see `FileVersions`) nor by one killed
//! meanwhile (the record of versions in place holds it, see `version_try`).

use super::blocks::lang;
use wright_tools::Workspace;

/// The longest test file shown as the example of the repository's style.
const EXAMPLE_LINES: usize = 80;

/// A check of the task: it fails before any change, and a version with which it passes
/// (and the repository's tests too) is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Check {
    /// A shell script run from the repository's root: exit 0 when the task is done.
    Script(String),
    /// A test file written at `path` while the repository's tests run, then removed.
    TestFile { path: String, text: String },
}

impl Check {
    /// The check as the candidate event holds it.
    pub(super) fn text(&self) -> &str {
        match self {
            Check::Script(script) => script,
            Check::TestFile { text, .. } => text,
        }
    }

    /// Where a check file goes, for a test file.
    pub(super) fn path(&self) -> Option<&str> {
        match self {
            Check::Script(_) => None,
            Check::TestFile { path, .. } => Some(path),
        }
    }
}

/// The repository's test file that shows best how the code of `about` is used: the one
/// naming `about`'s stem, else the first, short enough to be shown whole.
pub(super) fn test_example(
    workspace: &Workspace,
    files: &[String],
    about: &str,
) -> Option<(String, String)> {
    let name = about.rsplit('/').next().unwrap_or(about);
    let stem = name.split('.').next().unwrap_or_default().to_lowercase();
    let mut found: Option<(String, String)> = None;
    for path in files.iter().filter(|path| wright_tools::is_test_file(path)) {
        if lang(path).is_empty() || check_path(workspace, path).is_none() {
            continue;
        }
        let Some(text) = wright_tools::editable_text(workspace, path) else {
            continue;
        };
        if text.lines().count() > EXAMPLE_LINES {
            continue;
        }
        if stem.len() >= 2 && text.to_lowercase().contains(&stem) {
            return Some((path.clone(), text));
        }
        found.get_or_insert((path.clone(), text));
    }
    found
}

/// A new file beside `test_file` that the same test runner picks up, named for wright's
/// check: `None` when the language has no such name, the name is not plain, or a file of
/// that name exists.
pub(super) fn check_path(workspace: &Workspace, test_file: &str) -> Option<String> {
    let (dir, name) = match test_file.rsplit_once('/') {
        Some((dir, name)) => (format!("{dir}/"), name),
        None => (String::new(), test_file),
    };
    let (_, ext) = name.rsplit_once('.')?;
    let in_tests_dir = dir.split('/').any(|part| part == "tests" || part == "test");
    let new = match ext {
        "py" if name.ends_with("_test.py") => "wright_check_test.py".to_string(),
        "py" => "test_wright_check.py".to_string(),
        "go" => "wright_check_test.go".to_string(),
        "js" | "mjs" | "cjs" | "ts" if name.contains(".spec.") => {
            format!("wright-check.spec.{ext}")
        }
        "js" | "mjs" | "cjs" | "ts" => format!("wright-check.test.{ext}"),
        // An integration test of the crate: a file of its own in `tests/`.
        "rs" if in_tests_dir => "wright_check.rs".to_string(),
        _ => return None,
    };
    let path = format!("{dir}{new}");
    let plain = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && !path.split('/').any(|part| part == "..");
    let exists = wright_tools::editable_text(workspace, &path).is_some()
        || workspace.root().join(&path).symlink_metadata().is_ok();
    (plain && !exists).then_some(path)
}

/// The request for a check as a new test file at `new` in the style of `example`.
pub(super) fn test_file_question(
    task: &str,
    (path, text): (&str, &str),
    (example, example_text): (&str, &str),
    new: &str,
) -> String {
    let (lang, test_lang) = (lang(path), lang(example));
    format!(
        "Task: {task}\n\n{path}:\n```{lang}\n{text}\n```\n\n{example}:\n```{test_lang}\n{example_text}\n```\n\nWrite a new test file, {new}, in the style of {example}, that checks what the task asks: it must fail now and pass once the task is done. Reply with one ```{test_lang} block."
    )
}

/// The request for a check as a shell script; `example`, a test file of the repository,
/// shows how its code is used.
pub(super) fn script_question(
    task: &str,
    (path, text): (&str, &str),
    example: Option<(&str, &str)>,
) -> String {
    let lang = lang(path);
    let shown = match example {
        Some((example, example_text)) => format!(
            "\n\n{example}, how the repository's tests use the code:\n```{}\n{example_text}\n```",
            super::blocks::lang(example)
        ),
        None => String::new(),
    };
    format!(
        "Task: {task}\n\n{path}:\n```{lang}\n{text}\n```{shown}\n\nWrite a short shell script that checks the task is done: from the repository's root, it runs the program (or loads {path}) with what the task names set in the script itself (its options, its environment variables), and exits with a non-zero code unless it behaves as the task asks. It must fail now and pass once the task is done. Reply with one ```sh block."
    )
}

/// A Go check as it is written beside `example`: its test functions that the example
/// declares too renamed (`TestWrap` → `TestWrapCheck`), since both files are one
/// package and a name declared twice does not compile — the 1.5B copied the example's
/// test into its check, which then failed before and after every version. Other
/// languages' test files are modules of their own, as they are.
pub(super) fn without_clashes(path: &str, text: &str, example: &str) -> String {
    if !path.ends_with(".go") {
        return text.to_string();
    }
    let declared = |source: &str| -> Vec<String> {
        source
            .lines()
            .filter_map(|line| line.strip_prefix("func "))
            .filter_map(|rest| {
                rest.split_once('(')
                    .map(|(name, _)| name.trim().to_string())
            })
            .filter(|name| {
                !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')
            })
            .collect()
    };
    let theirs = declared(example);
    let mut text = text.to_string();
    for name in declared(&text) {
        if theirs.contains(&name) {
            text = text.replace(&format!("func {name}("), &format!("func {name}Check("));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_file_is_named_for_the_runner_of_the_test_beside_it_and_never_over_a_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("test_wright_check.py"), "x\n").unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let path = |test: &str| check_path(&workspace, test);
        assert_eq!(
            path("pkg/app_test.py").as_deref(),
            Some("pkg/wright_check_test.py")
        );
        assert_eq!(
            path("wrap_test.go").as_deref(),
            Some("wright_check_test.go")
        );
        assert_eq!(
            path("server.test.js").as_deref(),
            Some("wright-check.test.js")
        );
        assert_eq!(path("a.spec.ts").as_deref(), Some("wright-check.spec.ts"));
        assert_eq!(
            path("tests/parse.rs").as_deref(),
            Some("tests/wright_check.rs")
        );
        // A Rust file's own tests are not a file a new one can sit beside.
        assert_eq!(path("src/lib_test.rs"), None);
        // Taken: never written over.
        assert_eq!(path("test_client.py"), None);
        assert_eq!(path("odd dir/test_x.py"), None);
    }

    #[test]
    fn the_example_is_the_test_file_naming_the_file_the_task_is_about() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("test_a.py"), "import other\n").unwrap();
        std::fs::write(dir.path().join("test_b.py"), "from client import get\n").unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let files = vec!["test_a.py".to_string(), "test_b.py".to_string()];
        let (path, _) = test_example(&workspace, &files, "client.py").unwrap();
        assert_eq!(path, "test_b.py");
        let (path, _) = test_example(&workspace, &files, "nothing.py").unwrap();
        assert_eq!(path, "test_a.py");
    }

    #[test]
    fn a_go_check_renames_the_tests_the_example_declares_too() {
        let example = "package main\n\nfunc TestWrap(t *testing.T) {}\n";
        let check =
            "package main\n\nfunc TestWrap(t *testing.T) {}\n\nfunc TestWidth(t *testing.T) {}\n";
        assert_eq!(
            without_clashes("wright_check_test.go", check, example),
            "package main\n\nfunc TestWrapCheck(t *testing.T) {}\n\nfunc TestWidth(t *testing.T) {}\n"
        );
        assert_eq!(
            without_clashes("test_wright_check.py", check, example),
            check
        );
    }
}
