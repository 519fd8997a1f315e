//! What of a branch the user's git would read as configuration or run, for `wright
//! apply`'s guard and the note at the end of a run: every path the branch changes —
//! merges included, whose changes `git log --name-only` does not list — and every path
//! of the work tree the repository's configuration points at: a hooks directory (and,
//! for husky's `DIR/_` shims, the `DIR` whose scripts they call), attributes, excludes
//! and included config files, and each file a configured program names (a filter,
//! textconv, diff or merge driver, an editor, an alias run by the shell…), since git runs
//! those from the top of the work tree.
//!
//! Reading the configuration runs nothing: `git config` prints values, which are split
//! into words here, never run. Over-counting is the safe side: a word that only looks
//! like a path makes a branch that changes such a file ask first.

use super::GitError;
use super::Oid;
use super::UserRepo;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;

/// Settings whose value is a path git reads (or a directory of programs it runs).
const PATH_KEYS: &[&str] = &[
    "core.hooksPath",
    "core.attributesFile",
    "core.excludesFile",
    "include.path",
];

/// Settings whose value is a command git runs (through the shell, from the top of the
/// work tree), as `git config --get-regexp` matches their names (git lowercases the
/// section and the key, not a subsection).
const PROGRAM_KEYS: &str = r"^(filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|merge\..+\.driver|diff\.external|alias\..+|core\.(editor|pager|sshcommand|askpass|fsmonitor|gitproxy|alternaterefscommand)|sequence\.editor|gpg(\..+)?\.program|credential(\..+)?\.helper|uploadpack\.packobjectshook)$";

impl UserRepo {
    /// Every path the branch `tip` changes since `base`: what any of its commits touches
    /// (a cherry-pick checks out each one), what a merge commit changes against any of its
    /// parents (an "evil merge" hides its own changes from a plain `log`), and the
    /// difference of the two ends.
    pub fn paths_touched(&self, base: &Oid, tip: &str) -> Result<Vec<String>, GitError> {
        let range = format!("{base}..{tip}");
        let logged = self.run(&[
            "log",
            "-m",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            "--name-only",
            "-z",
            "--format=",
            &range,
            "--",
        ])?;
        let ends = self.run(&[
            "diff",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            "--name-only",
            "-z",
            base.as_str(),
            tip,
            "--",
        ])?;
        let mut paths: Vec<String> = logged
            .split(['\0', '\n'])
            .chain(ends.split(['\0', '\n']))
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// Paths in the work tree that the repository's configuration makes git read or run
    /// (see the module), relative to the top: files, or directories standing for all
    /// they hold.
    pub fn configured_paths(&self) -> Vec<String> {
        let mut paths = Vec::new();
        for key in PATH_KEYS {
            if let Ok(printed) = self.run(&["config", "--get-all", "--path", key]) {
                let values = printed.lines().map(str::to_string);
                if *key == "core.hooksPath" {
                    for value in values {
                        // husky 9: the shims in `.husky/_` run the scripts in `.husky`.
                        if Path::new(&value).file_name().is_some_and(|n| n == "_") {
                            if let Some(parent) = Path::new(&value).parent() {
                                paths.push(parent.display().to_string());
                            }
                        }
                        paths.push(value);
                    }
                } else {
                    paths.extend(values);
                }
            }
        }
        if let Ok(printed) =
            self.run(&["config", "--get-regexp", "--path", r"^includeif\..*\.path$"])
        {
            paths.extend(
                printed
                    .lines()
                    .filter_map(|l| l.split_once(' '))
                    .map(|(_, p)| p.to_string()),
            );
        }
        if let Ok(printed) = self.run(&["config", "-z", "--get-regexp", PROGRAM_KEYS]) {
            for record in printed.split('\0') {
                // `KEY\nVALUE`; a key without a value names nothing.
                if let Some((_, value)) = record.split_once('\n') {
                    paths.extend(command_paths(value));
                }
            }
        }
        let mut inside: Vec<String> = paths
            .iter()
            .filter_map(|path| within(self.top(), path))
            .collect();
        inside.sort();
        inside.dedup();
        inside
    }
}

/// The words of a configured command that may be files it runs or reads: any word with a
/// `/` in it, and any argument (not the command itself, which the shell looks up in PATH
/// unless it has a `/`) that is not an option or a placeholder.
fn command_paths(command: &str) -> Vec<String> {
    let command = command.trim_start().trim_start_matches('!');
    let mut found = Vec::new();
    // Each command of a line starts afresh: `a; sh b` runs `b` as much as `sh b` does.
    for part in command.split([';', '|', '&', '\n', '(', ')', '{', '}', '`']) {
        let words = part
            .split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '<' | '>'))
            .filter(|w| !w.is_empty());
        for (at, word) in words.enumerate() {
            let word = word.rsplit_once('=').map_or(word, |(_, value)| value);
            let skipped = word.is_empty() || word.starts_with(['-', '%', '$']);
            if !skipped && (at > 0 || word.contains('/')) {
                found.push(word.to_string());
            }
        }
    }
    found
}

/// `path` (absolute, or relative to the top) relative to the top when it is inside the
/// work tree, `..` resolved by name; `None` for the top itself or anything outside.
fn within(top: &Path, path: &str) -> Option<String> {
    let path = Path::new(path);
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        top.join(path)
    };
    let mut normal = PathBuf::new();
    for part in full.components() {
        match part {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    let relative = normal.strip_prefix(top).ok()?.display().to_string();
    (!relative.is_empty()).then_some(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_a_configured_command_names() {
        assert_eq!(
            command_paths("sh tools/smudge.sh %f"),
            vec!["tools/smudge.sh"]
        );
        assert_eq!(command_paths("./bin/clean"), vec!["./bin/clean"]);
        assert_eq!(
            command_paths("git-lfs filter-process"),
            vec!["filter-process"]
        );
        assert_eq!(command_paths("cat"), Vec::<String>::new());
        assert_eq!(
            command_paths("!f() { python3 \"scripts/x.py\" --flag; }; f"),
            vec!["scripts/x.py"]
        );
        assert_eq!(command_paths("env X=a/b run"), vec!["a/b", "run"]);
    }

    #[test]
    fn paths_inside_the_work_tree_only() {
        let top = Path::new("/r/top");
        assert_eq!(within(top, "a/../b"), Some("b".to_string()));
        assert_eq!(within(top, "/r/top/.husky/_"), Some(".husky/_".to_string()));
        assert_eq!(within(top, "../other"), None);
        assert_eq!(within(top, "/dev/null"), None);
        assert_eq!(within(top, "."), None);
    }
}
