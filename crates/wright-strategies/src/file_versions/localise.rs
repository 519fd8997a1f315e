//! Which files a task with no failing test is about: names and identifiers of the task
//! in the files' names and texts; configuration files (JSON, TOML, YAML, `.env`, config
//! modules) are files like others, and count more when the task speaks of a default, a
//! setting or the environment. Test files are never the change's. What the task names
//! that none of those files has yet (see `words`) is read on the way.

use super::words::NewWords;
use super::MAX_BYTES;
use super::MAX_LINES;
use wright_tools::Workspace;

/// Files asked about at most, likeliest first.
const FILES: usize = 2;
/// The least score a file needs to be asked about (see `localise`).
const MIN_SCORE: u32 = 2;
/// Text files a task may be about, by extension (and `.env` files by name).
const EXTENSIONS: &[&str] = &[
    "py", "rs", "js", "mjs", "cjs", "ts", "go", "rb", "sh", "json", "toml", "yaml", "yml", "ini",
    "cfg", "env", "conf",
];
/// Words of a task that say nothing of where (a few languages).
const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "must", "should", "from", "into", "when", "then",
    "are", "can", "its", "not", "les", "des", "une", "que", "pour", "dans", "der", "die", "das",
    "und", "mit", "con", "para", "por", "una", "per", "che", "del", "add",
];

/// The files a task is about, and what it names that the code lacks.
pub(super) struct Localised {
    /// At most `FILES`, likeliest first, with their texts.
    pub files: Vec<(String, String)>,
    /// The task's words that no source or configuration file has (tests aside).
    pub new_words: NewWords,
}

/// The files the task is likeliest about, with their texts: at most `FILES`, best first.
/// A file scores for its name or stem in the task, for the task's words in its text (more
/// for words that look like identifiers: `--limit`, `PORT`, `max_rows`), and, when the
/// task speaks of a default, a setting or the environment, for being a configuration
/// file. Test files are the check's business, not the change's.
pub(super) fn localise(workspace: &Workspace, task: &str) -> Localised {
    let input = crate::map::from_directory(workspace);
    let lower_task = task.to_lowercase();
    let words = task_words(task);
    let about_settings = [
        "default",
        "environment",
        "env",
        "config",
        "setting",
        "variable",
        "port",
    ]
    .iter()
    .any(|word| lower_task.contains(word));
    let mut scored: Vec<(u32, String, String)> = Vec::new();
    let mut texts: Vec<(String, String)> = Vec::new();
    for path in &input.files {
        if !is_candidate(path) {
            continue;
        }
        let Some(text) = wright_tools::editable_text(workspace, path) else {
            continue;
        };
        texts.push((path.clone(), text.clone()));
        if text.len() > MAX_BYTES || text.lines().count() > MAX_LINES {
            continue;
        }
        let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
        let stem = name.split('.').next().unwrap_or_default();
        let mut score = 0;
        if lower_task.contains(&path.to_lowercase()) || lower_task.contains(&name) {
            score += 20;
        } else if stem.len() >= 3 && words.iter().any(|(word, _)| word == stem) {
            score += 8;
        }
        let lower_text = text.to_lowercase();
        for (word, identifier) in &words {
            if lower_text.contains(word.as_str()) {
                score += if *identifier { 3 } else { 1 };
            }
        }
        if about_settings && is_config(&name) && !is_manifest(&name) {
            score += 3;
        }
        if score >= MIN_SCORE {
            scored.push((score, path.clone(), text));
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.len().cmp(&b.1.len())));
    // A task that spans two files is mostly a value and the code that reads it: after a
    // data file (TOML, JSON, `.env`…), the next is code, since data cannot read the
    // environment or take an option (the 1.5B was asked for config.toml, then
    // Cargo.toml, for a port an environment variable must override).
    let mut files: Vec<(String, String)> = Vec::new();
    let mut rest = scored.into_iter().map(|(_, path, text)| (path, text));
    if let Some(first) = rest.next() {
        let data = is_data(&first.0);
        files.push(first);
        let mut rest = rest.filter(|(path, _)| !data || !is_data(path));
        files.extend(rest.by_ref().take(FILES - 1));
    }
    let texts: Vec<(&str, &str)> = texts
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    Localised {
        files,
        new_words: NewWords::of(task, &texts),
    }
}

/// A file of values, not code: what it says is read by code elsewhere.
pub(super) fn is_data(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
    name.starts_with(".env")
        || [
            ".json", ".toml", ".yaml", ".yml", ".ini", ".cfg", ".conf", ".env",
        ]
        .iter()
        .any(|ext| name.ends_with(ext))
}

/// A package's manifest: its name, version and dependencies, not the program's settings.
fn is_manifest(name: &str) -> bool {
    matches!(
        name,
        "cargo.toml" | "package.json" | "go.mod" | "pyproject.toml" | "setup.cfg" | "tsconfig.json"
    )
}

/// The task's words of three letters or more, lowercased, each once, and whether it looks
/// like an identifier (an option, a constant, a name with `_`).
fn task_words(task: &str) -> Vec<(String, bool)> {
    let mut words: Vec<(String, bool)> = Vec::new();
    for raw in task.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-')) {
        let identifier = raw.starts_with("--")
            || raw.contains('_')
            || (raw.len() >= 3 && raw.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
        let word = raw.trim_matches('-').to_lowercase();
        if word.chars().count() < 3 || STOP_WORDS.contains(&word.as_str()) {
            continue;
        }
        match words.iter_mut().find(|(known, _)| *known == word) {
            Some((_, known)) => *known |= identifier,
            None => words.push((word, identifier)),
        }
    }
    words
}

/// A source or configuration file that is not a test's, nor a lock file.
fn is_candidate(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower = name.to_lowercase();
    let in_tests = path
        .split('/')
        .any(|part| matches!(part, "tests" | "test" | "__tests__" | "testdata"));
    let test_name = lower.starts_with("test_")
        || lower.contains("_test.")
        || lower.contains(".test.")
        || lower.contains(".spec.");
    let lock = lower.ends_with(".lock") || lower == "package-lock.json";
    let text = lower.starts_with(".env")
        || name
            .rsplit_once('.')
            .is_some_and(|(_, ext)| EXTENSIONS.contains(&ext));
    text && !in_tests && !test_name && !lock
}

fn is_config(name: &str) -> bool {
    name.starts_with(".env")
        || name.contains("config")
        || name.contains("settings")
        || [".json", ".toml", ".yaml", ".yml", ".ini", ".cfg"]
            .iter()
            .any(|ext| name.ends_with(ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_a_task_names_or_speaks_of_comes_first_and_tests_never() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("report.py", "import sys\nROWS = 5\nprint(ROWS)\n");
        write("util.py", "def pad(s):\n    return s\n");
        write("test_report.py", "import report\n# limit rows\n");
        write("settings.json", "{\"port\": 8080}\n");
        write("README.md", "port limit rows\n");
        let workspace = Workspace::new(dir.path()).unwrap();
        let found = localise(&workspace, "Add an option --rows N to report.py, default 5").files;
        assert_eq!(found[0].0, "report.py");
        assert!(found.iter().all(|(path, _)| path != "test_report.py"));
        let found = localise(
            &workspace,
            "The default port must be 3000, overridable by PORT",
        )
        .files;
        assert_eq!(found[0].0, "settings.json");
        assert!(localise(&workspace, "zzz qqq").files.is_empty());

        // After a data file, code: the value's reader, not another file of values.
        write("Cargo.toml", "[package]\nname = \"server\"\n");
        write("config.toml", "[server]\nport = 8000\n");
        write(
            "src/main.rs",
            "fn main() { let port = server::read(\"config.toml\"); }\n",
        );
        let found = localise(
            &workspace,
            "The server must listen on port 8443 by default; APP_PORT overrides it",
        )
        .files;
        let paths: Vec<&str> = found.iter().map(|(path, _)| path.as_str()).collect();
        assert_eq!(paths[0], "config.toml", "{paths:?}");
        assert!(
            paths[1].ends_with(".rs") || paths[1].ends_with(".py"),
            "{paths:?}"
        );
    }
}
