//! Reading a suite of tasks for `wright eval`: a JSONL file of `{repo, task, check}` (or a
//! directory holding `suite.jsonl`), or a directory of exercises in the Exercism /
//! Aider-polyglot layout. Only reads the suite's own files (the user's, never an agent's);
//! every task comes out with a unique name, its files, its prompt and its check command.

use anyhow::bail;
use anyhow::Context;
use anyhow::Result;
use serde::Deserialize;
use std::path::Path;
use std::path::PathBuf;

/// The suite file looked for in a directory.
pub const SUITE_FILE: &str = "suite.jsonl";

/// One task: a repository's files, what the agent is asked, and the command that judges.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Unique within the suite; the key of its results.
    pub name: String,
    /// The directory holding the repository's files (copied, never worked in).
    pub files: PathBuf,
    pub prompt: String,
    /// A shell command, run in the result's directory: exit 0 is a pass.
    pub check: String,
    /// Programs the check needs on PATH; a task without them is skipped.
    pub needs: Vec<String>,
    /// Paths (relative) put back from the suite before the check: the tests the agent
    /// must not change to pass.
    pub protect: Vec<String>,
    /// Top-level names not copied into the agent's repository (an exercise's `.meta`,
    /// which holds its example solution).
    pub exclude: Vec<String>,
    /// The kind of task (`add-option`, `config`, `stub` …), as the suite labels it; the
    /// report counts passes per shape. None for a task the suite does not label.
    pub shape: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// For the results directory's name.
    pub name: String,
    pub tasks: Vec<Task>,
}

/// One line of a JSONL suite.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    repo: PathBuf,
    task: String,
    check: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    needs: Option<Vec<String>>,
    #[serde(default)]
    protect: Vec<String>,
    #[serde(default)]
    shape: Option<String>,
}

/// Reads the suite at `path`: a `.jsonl` file, a directory with `suite.jsonl`, or a
/// directory of exercises.
pub fn read(path: &Path) -> Result<Suite> {
    // Absolute, so the tasks' files are found from anywhere: the check's sandbox mounts
    // them at the same path (a relative one named nothing there).
    let path = &std::path::absolute(path)
        .with_context(|| format!("cannot find the suite {}", path.display()))?;
    let name = path
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .filter(|stem| stem != "suite")
        .or_else(|| {
            path.parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "suite".into());
    let tasks = if path.is_dir() && path.join(SUITE_FILE).is_file() {
        read_jsonl(&path.join(SUITE_FILE))?
    } else if path.is_dir() {
        read_exercises(path)?
    } else {
        read_jsonl(path)?
    };
    if tasks.is_empty() {
        bail!("the suite {} has no tasks", path.display());
    }
    let mut seen = std::collections::BTreeSet::new();
    for task in &tasks {
        if !seen.insert(task.name.as_str()) {
            bail!(
                "the suite {} has two tasks named {}: give one a \"name\"",
                path.display(),
                task.name
            );
        }
    }
    Ok(Suite { name, tasks })
}

/// A JSONL suite: one `{repo, task, check}` per line, `repo` relative to the file.
fn read_jsonl(path: &Path) -> Result<Vec<Task>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the suite {}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse_jsonl(&text, base).with_context(|| format!("in the suite {}", path.display()))
}

/// The tasks of a JSONL suite's text; `base` is the directory `repo` is relative to.
pub fn parse_jsonl(text: &str, base: &Path) -> Result<Vec<Task>> {
    let mut tasks = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parsed: Line = serde_json::from_str(line).with_context(|| {
            format!(
                "line {} is not {{\"repo\": DIR, \"task\": TEXT, \"check\": COMMAND}}",
                index + 1
            )
        })?;
        if parsed.task.trim().is_empty() || parsed.check.trim().is_empty() {
            bail!(
                "line {}: the task and the check must not be empty",
                index + 1
            );
        }
        let files = base.join(&parsed.repo);
        if !files.is_dir() {
            bail!(
                "line {}: the repository {} is not a directory",
                index + 1,
                files.display()
            );
        }
        let name = parsed.name.clone().unwrap_or_else(|| {
            parsed
                .repo
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| format!("task-{}", index + 1))
        });
        let shape = match parsed.shape.as_deref().map(str::trim) {
            None => None,
            Some(shape) if is_shape_word(shape) => Some(shape.to_string()),
            Some(shape) => bail!(
                "line {}: the shape {shape:?} is not one word (letters, digits, - or _)",
                index + 1
            ),
        };
        let needs = parsed
            .needs
            .unwrap_or_else(|| first_program(&parsed.check).into_iter().collect());
        tasks.push(Task {
            name,
            files,
            prompt: parsed.task,
            check: parsed.check,
            needs,
            protect: parsed.protect,
            exclude: Vec::new(),
            shape,
        });
    }
    Ok(tasks)
}

/// A shape is a label printed in a column: one word, so a table stays readable.
fn is_shape_word(shape: &str) -> bool {
    !shape.is_empty()
        && shape
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
}

/// The program a shell command starts with (after `VAR=value` assignments), if plain.
pub fn first_program(command: &str) -> Option<String> {
    command
        .split_whitespace()
        .find(|word| !word.contains('='))
        .filter(|word| {
            word.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./+".contains(c))
        })
        .map(str::to_string)
}

/// How an exercise's language is tested, told by its files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Python,
    Rust,
    JavaScript,
    Go,
}

impl Language {
    /// The test command, and the programs it needs.
    pub fn check(self) -> (&'static str, &'static [&'static str]) {
        match self {
            // Exercism's Python tests are unittest cases in *_test.py: no pytest needed.
            Language::Python => ("python3 -m unittest discover -p '*_test.py'", &["python3"]),
            // Exercism marks all but the first test #[ignore].
            Language::Rust => ("cargo test --offline -- --include-ignored", &["cargo"]),
            Language::JavaScript => ("npm test", &["npm"]),
            Language::Go => ("go test ./...", &["go"]),
        }
    }

    /// Told by the files at the exercise's top level.
    pub fn of(names: &[String]) -> Option<Self> {
        let has = |name: &str| names.iter().any(|n| n == name);
        if has("Cargo.toml") {
            Some(Language::Rust)
        } else if has("go.mod") {
            Some(Language::Go)
        } else if has("package.json") {
            Some(Language::JavaScript)
        } else if names.iter().any(|n| n.ends_with(".py")) {
            Some(Language::Python)
        } else {
            None
        }
    }
}

/// Directories holding `.docs/instructions.md` under `root` (a few levels deep: the
/// polyglot benchmark is `LANGUAGE/exercises/practice/NAME`), in name order.
fn read_exercises(root: &Path) -> Result<Vec<Task>> {
    let mut found = Vec::new();
    collect_exercises(root, 0, &mut found)?;
    found.sort();
    if found.is_empty() {
        bail!(
            "{} holds no {SUITE_FILE} and no exercises (directories with .docs/instructions.md)",
            root.display()
        );
    }
    found.iter().map(|dir| exercise(root, dir)).collect()
}

fn collect_exercises(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) -> Result<()> {
    if dir.join(".docs/instructions.md").is_file() {
        found.push(dir.to_path_buf());
        return Ok(());
    }
    if depth >= 4 {
        return Ok(());
    }
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    for entry in entries.flatten() {
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        // Not through links: a suite is a tree of plain directories.
        if !hidden && entry.file_type().is_ok_and(|t| t.is_dir()) {
            collect_exercises(&entry.path(), depth + 1, found)?;
        }
    }
    Ok(())
}

/// The `files` of an exercise's `.meta/config.json`.
#[derive(Deserialize, Default)]
struct MetaFiles {
    #[serde(default)]
    solution: Vec<String>,
    #[serde(default)]
    test: Vec<String>,
}

#[derive(Deserialize, Default)]
struct Meta {
    #[serde(default)]
    files: MetaFiles,
}

fn exercise(root: &Path, dir: &Path) -> Result<Task> {
    let relative = dir.strip_prefix(root).unwrap_or(dir);
    let name = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .filter(|part| part != "exercises" && part != "practice")
        .collect::<Vec<_>>()
        .join("/");
    let name = if name.is_empty() {
        dir.file_name()
            .map_or("exercise".into(), |n| n.to_string_lossy().into_owned())
    } else {
        name
    };
    let names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let Some(language) = Language::of(&names) else {
        bail!(
            "cannot tell the language of the exercise {} (no Cargo.toml, go.mod, package.json or .py file)",
            dir.display()
        );
    };
    let docs = dir.join(".docs");
    let mut instructions = std::fs::read_to_string(docs.join("instructions.md"))
        .with_context(|| format!("cannot read {}", docs.join("instructions.md").display()))?;
    if let Ok(append) = std::fs::read_to_string(docs.join("instructions.append.md")) {
        instructions.push_str("\n\n");
        instructions.push_str(&append);
    }
    let meta: Meta = std::fs::read_to_string(dir.join(".meta/config.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let (check, needs) = language.check();
    Ok(Task {
        name,
        files: dir.to_path_buf(),
        prompt: exercise_prompt(&instructions, &meta.files, check),
        check: check.to_string(),
        needs: needs.iter().map(|n| n.to_string()).collect(),
        protect: meta.files.test,
        exclude: vec![".meta".into()],
        shape: None,
    })
}

/// What the agent is asked for an exercise: the instructions, where to write, the tests.
fn exercise_prompt(instructions: &str, files: &MetaFiles, check: &str) -> String {
    let mut prompt = instructions.trim().to_string();
    prompt.push_str("\n\n");
    if !files.solution.is_empty() {
        prompt.push_str(&format!(
            "Solve this exercise by editing {}. ",
            files.solution.join(", ")
        ));
    }
    if !files.test.is_empty() {
        prompt.push_str(&format!(
            "The tests are in {}; do not change them. ",
            files.test.join(", ")
        ));
    }
    prompt.push_str(&format!("`{check}` must pass."));
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_jsonl_suite_reads_its_tasks_relative_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tasks/a")).unwrap();
        std::fs::create_dir_all(dir.path().join("tasks/b")).unwrap();
        let text = "# a comment\n\
            {\"repo\": \"tasks/a\", \"task\": \"fix it\", \"check\": \"python3 -m unittest\", \"protect\": [\"test_a.py\"]}\n\
            \n\
            {\"repo\": \"tasks/b\", \"task\": \"add it\", \"check\": \"CI=1 cargo test\", \"name\": \"bee\", \"shape\": \"add-option\"}\n";
        let tasks = parse_jsonl(text, dir.path()).unwrap();
        assert_eq!(tasks.len(), 2);
        assert_eq!(tasks[0].name, "a");
        assert_eq!(tasks[0].files, dir.path().join("tasks/a"));
        assert_eq!(tasks[0].needs, vec!["python3".to_string()]);
        assert_eq!(tasks[0].protect, vec!["test_a.py".to_string()]);
        assert_eq!(tasks[1].name, "bee");
        assert_eq!(tasks[1].needs, vec!["cargo".to_string()]);
        // An older line without a shape is read as unlabelled.
        assert_eq!(tasks[0].shape, None);
        assert_eq!(tasks[1].shape.as_deref(), Some("add-option"));
    }

    #[test]
    fn a_shape_must_be_one_word() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a")).unwrap();
        for bad in ["", "add option", "a|b"] {
            let line = serde_json::json!({"repo": "a", "task": "t", "check": "true", "shape": bad});
            let err = parse_jsonl(&line.to_string(), dir.path()).unwrap_err();
            assert!(
                format!("{err:#}").contains("not one word"),
                "{bad}: {err:#}"
            );
        }
    }

    #[test]
    fn a_bad_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = parse_jsonl("{\"repo\": \"x\"}\n", dir.path()).unwrap_err();
        assert!(format!("{err:#}").contains("line 1"), "{err:#}");
        let err = parse_jsonl(
            "{\"repo\": \"missing\", \"task\": \"t\", \"check\": \"true\"}",
            dir.path(),
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("not a directory"), "{err:#}");
    }

    #[test]
    fn the_first_program_skips_assignments() {
        assert_eq!(first_program("go test ./..."), Some("go".into()));
        assert_eq!(first_program("A=1 B=2 node --test"), Some("node".into()));
        assert_eq!(first_program("$(evil)"), None);
    }

    #[test]
    fn an_exercise_directory_becomes_tasks_by_language() {
        let root = tempfile::tempdir().unwrap();
        let ex = root.path().join("rust/exercises/practice/leap");
        std::fs::create_dir_all(ex.join(".docs")).unwrap();
        std::fs::create_dir_all(ex.join(".meta")).unwrap();
        std::fs::write(ex.join(".docs/instructions.md"), "Leap years.").unwrap();
        std::fs::write(ex.join(".docs/instructions.append.md"), "Mind 1900.").unwrap();
        std::fs::write(
            ex.join(".meta/config.json"),
            r#"{"files": {"solution": ["src/lib.rs"], "test": ["tests/leap.rs"]}}"#,
        )
        .unwrap();
        std::fs::write(ex.join("Cargo.toml"), "").unwrap();
        let py = root.path().join("python/exercises/practice/bob");
        std::fs::create_dir_all(py.join(".docs")).unwrap();
        std::fs::write(py.join(".docs/instructions.md"), "Bob.").unwrap();
        std::fs::write(py.join("bob.py"), "").unwrap();
        let suite = read(root.path()).unwrap();
        let names: Vec<&str> = suite.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, vec!["python/bob", "rust/leap"]);
        let leap = &suite.tasks[1];
        assert!(
            leap.prompt.starts_with("Leap years.\n\nMind 1900."),
            "{}",
            leap.prompt
        );
        assert!(
            leap.prompt.contains("editing src/lib.rs"),
            "{}",
            leap.prompt
        );
        assert_eq!(leap.protect, vec!["tests/leap.rs".to_string()]);
        assert_eq!(leap.exclude, vec![".meta".to_string()]);
        assert_eq!(leap.needs, vec!["cargo".to_string()]);
        assert_eq!(
            suite.tasks[0].check,
            "python3 -m unittest discover -p '*_test.py'"
        );
    }

    #[test]
    fn two_tasks_of_one_name_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a")).unwrap();
        let line = "{\"repo\": \"a\", \"task\": \"t\", \"check\": \"true\"}\n";
        std::fs::write(dir.path().join("s.jsonl"), line.repeat(2)).unwrap();
        let err = read(&dir.path().join("s.jsonl")).unwrap_err();
        assert!(err.to_string().contains("two tasks named a"), "{err}");
    }
}
