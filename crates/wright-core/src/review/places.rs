//! Where a task points: the files and directories its words name (a path, a file's name,
//! a directory), so the review says which changed files lie outside every one of them.
//! A task that names no place says nothing about where the work belongs: then no file is
//! "outside" it, and the review says nothing about them.

use super::FileChange;
use wright_tools::is_test_file;

/// The places named in a text: the words of the user's messages and of the failing tests'
/// output.
pub(super) struct Places {
    text: String,
    words: Vec<String>,
    /// Directories of the paths written in it ("src/parser/lib.rs" names "src/parser").
    dirs: Vec<String>,
}

impl Places {
    pub(super) fn of(text: &str) -> Self {
        let text = text.to_lowercase();
        let words = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect();
        let dirs = text
            .split(|c: char| c.is_whitespace() || "'\"`()[]{},;:<>".contains(c))
            .map(|token| token.trim_start_matches("./").trim_end_matches(['.', '/']))
            .filter_map(|token| token.rsplit_once('/').map(|(dir, _)| dir.to_string()))
            .filter(|dir| !dir.is_empty() && !dir.contains("//"))
            .collect();
        Self { text, words, dirs }
    }

    /// The changed files worth a note: those outside every place named, when one is.
    pub(super) fn outside(&self, changes: &[FileChange]) -> Vec<String> {
        let named: Vec<&FileChange> = changes
            .iter()
            .filter(|c| self.names_file(&c.path))
            .collect();
        let dir_of = |path: &str| {
            path.rsplit_once('/')
                .map_or(String::new(), |(d, _)| d.to_lowercase())
        };
        // A module: the directory of a file the task names.
        let modules: Vec<String> = named.iter().map(|c| dir_of(&c.path)).collect();
        let names_any = !named.is_empty()
            || !self.dirs.is_empty()
            || changes.iter().any(|c| self.names_dir_of(&c.path));
        if !names_any {
            return Vec::new();
        }
        changes
            .iter()
            .filter(|c| {
                !self.names_file(&c.path)
                    && !self.names_dir_of(&c.path)
                    && !modules.contains(&dir_of(&c.path))
                    && !serves_tests(&c.path)
            })
            .map(|c| c.path.clone())
            .collect()
    }

    /// The file's name, or its stem when longer than three letters, is in the text.
    fn names_file(&self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
        let stem = name.split('.').next().unwrap_or(&name);
        self.text.contains(&name) || (stem.len() > 3 && self.text.contains(stem))
    }

    /// One of the file's directories is written as a path in the text, or named as a word
    /// ("the parser module").
    fn names_dir_of(&self, path: &str) -> bool {
        let lower = path.to_lowercase();
        let in_dir = self.dirs.iter().any(|dir| {
            lower.starts_with(&format!("{dir}/")) || lower.contains(&format!("/{dir}/"))
        });
        let parts: Vec<&str> = lower.split('/').collect();
        let named_dir = parts[..parts.len().saturating_sub(1)]
            .iter()
            .any(|part| part.len() > 3 && self.words.iter().any(|w| w == part));
        in_dir || named_dir
    }
}

/// A test, or what tests need (their configuration, fixtures, a package's `__init__`):
/// the review says test files apart; the files they need are no news.
fn serves_tests(path: &str) -> bool {
    let lower = path.to_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    is_test_file(path)
        || matches!(
            name,
            "conftest.py" | "__init__.py" | "pytest.ini" | "setup.cfg"
        )
        || lower
            .split('/')
            .any(|part| matches!(part, "fixtures" | "testdata" | "test_data"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changed(paths: &[&str]) -> Vec<FileChange> {
        paths
            .iter()
            .map(|p| FileChange {
                path: p.to_string(),
                ..FileChange::default()
            })
            .collect()
    }

    #[test]
    fn only_files_outside_every_named_place_are_noted() {
        // Naming no place: nothing is outside it.
        let places = Places::of("fix the addition");
        assert!(places.outside(&changed(&["src/lib.rs"])).is_empty());
        // A named file's module, a named directory, what the tests need: not news.
        let places = Places::of("parse_date in src/dates/parse.py fails on leap years");
        let changes = changed(&[
            "src/dates/parse.py",
            "src/dates/calendar.py",
            "tests/conftest.py",
            "src/dates/__init__.py",
            "setup.py",
            "src/billing/invoice.py",
        ]);
        assert_eq!(
            places.outside(&changes),
            vec!["setup.py", "src/billing/invoice.py"]
        );
        // A directory named as a word.
        let places = Places::of("the parser module mishandles tabs");
        assert_eq!(
            places.outside(&changed(&["src/parser/lexer.rs", "src/main.rs"])),
            vec!["src/main.rs"]
        );
    }
}
