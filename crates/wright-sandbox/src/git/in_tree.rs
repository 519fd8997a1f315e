//! The files of a work tree that the user's own git configuration makes git run or read as
//! configuration: a hooks directory (`core.hooksPath`, husky's `.husky/_` whose shims run
//! the tracked `.husky/<hook>`), included config files (`include.path`, `includeIf`), and
//! any file a configured value names (a filter's `sh tools/smudge.sh`, a textconv, a
//! merge driver, an alias). With `--in-place` the agent writes that work tree, and the
//! user's next `git status` or `git commit` would run what it wrote there: these must be
//! read-only to it, as `.git` is.
//!
//! Read only from the user's files, before the agent runs: `git config --list
//! --show-origin` by the hardened host git (the system's, the user's global and the
//! repository's `.git/config`, with what they include). A value that names a file in the
//! work tree that is not there, or is reached through a symbolic link there, cannot be
//! kept read-only (the agent could make it, or re-point the link): it is reported so the
//! run can be refused.

use super::GitError;
use super::UserRepo;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;

/// What git does with a work-tree path the configuration names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// `core.hooksPath`: git runs the hooks in it.
    Hooks,
    /// The directory of husky's hooks, which the shims in `core.hooksPath` run.
    HuskyHooks,
    /// A config file git reads (an origin of the listing, or an include's target).
    Included,
    /// Named by a configured command (a filter, driver, textconv, alias…).
    Run,
}

impl Use {
    pub fn words(self) -> &'static str {
        match self {
            Use::Hooks => "the hooks directory (core.hooksPath)",
            Use::HuskyHooks => "husky's hooks, which the shims in core.hooksPath run",
            Use::Included => "a config file git includes",
            Use::Run => "a file a configured command runs",
        }
    }
}

/// A work-tree path the configuration points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointed {
    /// Absolute, inside the work tree.
    pub path: PathBuf,
    pub used: Use,
    /// The configuration key that names it.
    pub key: String,
}

/// What the configuration points at in the work tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InTree {
    /// There, and to be kept read-only.
    pub pointed: Vec<Pointed>,
    /// Named but impossible to keep read-only (missing, or reached through a link), with
    /// why.
    pub unprotectable: Vec<String>,
}

/// Keys whose values git runs as commands: a word there naming a work-tree file that is
/// not there yet (`sh tools/smudge.sh`) is one the agent could make.
fn runs_commands(key: &str) -> bool {
    const SUFFIXES: &[&str] = &[
        ".clean",
        ".smudge",
        ".process",
        ".textconv",
        ".command",
        ".driver",
        ".cmd",
        ".helper",
        ".program",
        ".editor",
        ".pager",
        ".sshcommand",
        ".askpass",
        ".fsmonitor",
        ".difffilter",
        ".external",
    ];
    key.starts_with("alias.")
        || key.starts_with("pager.")
        || SUFFIXES.iter().any(|s| key.ends_with(s))
}

/// The words of a configured value that could be paths: split where a shell would split
/// words or commands, and at `=` (`--file=tools/x`).
fn words(value: &str) -> impl Iterator<Item = &str> {
    value
        .split(|c: char| c.is_whitespace() || ";|&<>()'\"`=${}!".contains(c))
        .filter(|word| !word.is_empty() && !word.starts_with('-') && !word.starts_with('%'))
}

/// `path` with `.` and `..` taken away lexically (never above the root).
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// What a configured path means: `~/` is the home, a relative path is relative to `base`.
fn expand(value: &str, base: &Path) -> Option<PathBuf> {
    let path = if let Some(rest) = value.strip_prefix("~/") {
        PathBuf::from(std::env::var_os("HOME")?).join(rest)
    } else if value.starts_with('~') || value.starts_with("%(") {
        return None;
    } else {
        base.join(value)
    };
    Some(normal(&path))
}

impl InTree {
    /// Notes `path` (absolute, normal) when it is in the work tree `top`: kept when it is
    /// there as named, refused when it is missing (and `must_exist`) or reached through a
    /// link.
    fn note(&mut self, top: &Path, path: PathBuf, used: Use, key: &str, must_exist: bool) {
        if !path.starts_with(top) || path == top {
            return;
        }
        match std::fs::canonicalize(&path) {
            Ok(real) if real == path => {
                if !self.pointed.iter().any(|p| p.path == path) {
                    self.pointed.push(Pointed {
                        path,
                        used,
                        key: key.to_string(),
                    });
                }
            }
            Ok(_) => self.unprotectable.push(format!(
                "{key} names {}, reached through a symbolic link in the work tree (the agent could re-point it)",
                path.display()
            )),
            Err(_) if must_exist => self.unprotectable.push(format!(
                "{key} names {}, which is not there (the agent could make it)",
                path.display()
            )),
            Err(_) => {}
        }
    }
}

/// Reads `git config --list --show-origin -z`'s output.
fn parse(top: &Path, printed: &str) -> InTree {
    let mut found = InTree::default();
    let mut fields = printed.split('\0');
    while let (Some(origin), Some(entry)) = (fields.next(), fields.next()) {
        // The command line is wright's own hardening; blobs and stdin are not files.
        let Some(file) = origin.strip_prefix("file:") else {
            continue;
        };
        let file = normal(&top.join(file));
        let (key, value) = match entry.split_once('\n') {
            Some((key, value)) => (key.to_lowercase(), Some(value)),
            None => (entry.to_lowercase(), None),
        };
        found.note(top, file.clone(), Use::Included, &key, false);
        let Some(value) = value else {
            continue;
        };
        let included_from = file.parent().unwrap_or(top);
        if key == "core.hookspath" {
            if let Some(hooks) = expand(value, top) {
                // husky (9): `.husky/_` holds shims that run the tracked `.husky/<hook>`.
                if hooks.file_name().is_some_and(|name| name == "_") {
                    if let Some(parent) = hooks.parent() {
                        found.note(top, parent.to_path_buf(), Use::HuskyHooks, &key, true);
                    }
                }
                found.note(top, hooks, Use::Hooks, &key, true);
            }
        } else if key == "include.path" || key.starts_with("includeif.") && key.ends_with(".path") {
            if let Some(included) = expand(value, included_from) {
                found.note(top, included, Use::Included, &key, true);
            }
        } else {
            let command = runs_commands(&key);
            for word in words(value) {
                if let Some(path) = expand(word, top) {
                    // Only what is a file (not the directories a value may name), or, for
                    // a command, what names a path that is not there yet.
                    let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
                    let exists = std::fs::symlink_metadata(&path).is_ok();
                    if !is_dir && (exists || command && word.contains('/')) {
                        found.note(top, path, Use::Run, &key, command);
                    }
                }
            }
        }
    }
    found
}

impl UserRepo {
    /// What the user's git configuration (read by the hardened host git, before the
    /// agent runs) makes git run or read in this repository's work tree.
    pub fn configured_in_tree(&self) -> Result<InTree, GitError> {
        let printed = self.run(&["config", "--list", "--show-origin", "-z"])?;
        Ok(parse(self.top(), &printed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn hooks_includes_filters_and_husky_are_found_and_missing_ones_said() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        git(&top, &["init", "-q"]);
        for file in [
            ".husky/_/pre-commit",
            ".husky/pre-commit",
            "tools/smudge.sh",
            "tools/extra.gitconfig",
        ] {
            let path = top.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "#").unwrap();
        }
        std::fs::create_dir(top.join("src")).unwrap();
        git(&top, &["config", "core.hooksPath", ".husky/_"]);
        git(
            &top,
            &["config", "filter.x.smudge", "sh tools/smudge.sh %f"],
        );
        git(&top, &["config", "filter.x.clean", "cat src"]);
        git(
            &top,
            &["config", "include.path", "../tools/extra.gitconfig"],
        );
        let repo = UserRepo::at(&top);
        let found = repo.configured_in_tree().unwrap();
        let mut paths: Vec<String> = found
            .pointed
            .iter()
            .filter(|p| !p.path.starts_with(top.join(".git")))
            .map(|p| p.path.strip_prefix(&top).unwrap().display().to_string())
            .collect();
        paths.sort();
        assert_eq!(
            paths,
            vec![
                ".husky",
                ".husky/_",
                "tools/extra.gitconfig",
                "tools/smudge.sh"
            ]
        );
        assert!(found.unprotectable.is_empty(), "{:?}", found.unprotectable);
        // A filter script that is not there, and a link, cannot be kept read-only.
        git(&top, &["config", "filter.y.process", "./tools/missing.sh"]);
        std::os::unix::fs::symlink("smudge.sh", top.join("tools/link.sh")).unwrap();
        git(&top, &["config", "diff.z.textconv", "tools/link.sh"]);
        let found = repo.configured_in_tree().unwrap();
        assert_eq!(found.unprotectable.len(), 2, "{:?}", found.unprotectable);
        assert!(found.unprotectable[0].contains("missing.sh"));
        assert!(found.unprotectable[1].contains("symbolic link"));
    }
}
