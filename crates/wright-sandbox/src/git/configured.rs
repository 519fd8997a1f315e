//! The files of a work tree that the user's own git configuration makes git run or read as
//! configuration: a hooks directory (`core.hooksPath`, husky's `.husky/_` whose shims run
//! the tracked `.husky/<hook>`), included config files (`include.path`, `includeIf`), and
//! any file a configured value names (a filter's `sh tools/smudge.sh`, a textconv, a
//! merge driver, an alias). With `--in-place` the agent writes that work tree, and the
//! user's next `git status` or `git commit` would run what it wrote there: these must be
//! read-only to it, as `.git` is.
//!
//! The same reading serves `wright apply`'s guard (`configured_paths`): a branch that
//! changes any of these paths changes what the user's git runs, and is taken only when
//! the user says so.
//!
//! Read only from the user's files: `git config --list --show-origin` by the hardened
//! host git (the system's, the user's global and the repository's `.git/config`, with
//! what they include); values are split into words here, never run. In place, a value
//! that names a file in the work tree that is not there, or is reached through a symbolic
//! link there, cannot be kept read-only (the agent could make it, or re-point the link):
//! it is reported so the run can be refused. For apply, over-counting is the safe side:
//! every word of a configured command counts, there or not, so a branch that adds the
//! script a filter names asks first.

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
        ".gitproxy",
        ".alternaterefscommand",
        ".packobjectshook",
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

/// A work-tree path one configuration entry names, before anything is checked.
#[derive(Debug, Clone)]
struct Named {
    /// Absolute and normal; may be outside the work tree.
    path: PathBuf,
    used: Use,
    key: String,
    /// How sure it is that git uses it.
    weight: Weight,
}

/// How a named path counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Weight {
    /// Git uses it whether it is there or not (a hooks directory, an include, a script a
    /// command names by a path): in place, one that is missing is refused.
    Named,
    /// A file that is there, named by a value git reads or runs: kept when present.
    Present,
    /// A bare word of a command that is not a file now (`git-lfs filter-process`): most
    /// are not paths, so only apply's guard counts it.
    Maybe,
}

/// Reads `git config --list --show-origin -z`'s output into the paths its entries name.
fn named(top: &Path, printed: &str) -> Vec<Named> {
    let mut found = Vec::new();
    let mut name = |path: PathBuf, used: Use, key: &str, weight: Weight| {
        found.push(Named {
            path,
            used,
            key: key.to_string(),
            weight,
        });
    };
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
        name(file.clone(), Use::Included, &key, Weight::Present);
        let Some(value) = value else {
            continue;
        };
        let included_from = file.parent().unwrap_or(top);
        if key == "core.hookspath" {
            if let Some(hooks) = expand(value, top) {
                // husky (9): `.husky/_` holds shims that run the tracked `.husky/<hook>`.
                if hooks.file_name().is_some_and(|name| name == "_") {
                    if let Some(parent) = hooks.parent() {
                        name(parent.to_path_buf(), Use::HuskyHooks, &key, Weight::Named);
                    }
                }
                name(hooks, Use::Hooks, &key, Weight::Named);
            }
        } else if key == "include.path" || key.starts_with("includeif.") && key.ends_with(".path") {
            if let Some(included) = expand(value, included_from) {
                name(included, Use::Included, &key, Weight::Named);
            }
        } else if matches!(key.as_str(), "core.attributesfile" | "core.excludesfile") {
            // Read when there; the agent could write the same rules into the tracked
            // `.gitattributes` anyway, so a missing one does not refuse a run.
            if let Some(path) = expand(value, top) {
                name(path, Use::Included, &key, Weight::Present);
            }
        } else {
            let command = runs_commands(&key);
            for word in words(value) {
                let Some(path) = expand(word, top) else {
                    continue;
                };
                // Only what is a file (not the directories a value may name), or, for a
                // command, what names a path that is not there yet.
                let metadata = std::fs::symlink_metadata(&path);
                let is_dir = metadata.as_ref().is_ok_and(|m| m.is_dir());
                let weight = match (metadata.is_ok(), command) {
                    (true, _) if is_dir => continue,
                    (true, true) => Weight::Named,
                    (true, false) => Weight::Present,
                    (false, true) if word.contains('/') => Weight::Named,
                    (false, true) => Weight::Maybe,
                    (false, false) => continue,
                };
                name(path, Use::Run, &key, weight);
            }
        }
    }
    found
}

impl InTree {
    /// Notes `path` (absolute, normal) when it is in the work tree `top`: kept when it is
    /// there as named, refused when it is missing (and git uses it anyway) or reached
    /// through a link.
    fn note(&mut self, top: &Path, named: Named) {
        let Named {
            path,
            used,
            key,
            weight,
        } = named;
        if !path.starts_with(top) || path == top || weight == Weight::Maybe {
            return;
        }
        match std::fs::canonicalize(&path) {
            Ok(real) if real == path => {
                if !self.pointed.iter().any(|p| p.path == path) {
                    self.pointed.push(Pointed { path, used, key });
                }
            }
            Ok(_) => self.unprotectable.push(format!(
                "{key} names {}, reached through a symbolic link in the work tree (the agent could re-point it)",
                path.display()
            )),
            Err(_) if weight == Weight::Named => self.unprotectable.push(format!(
                "{key} names {}, which is not there (the agent could make it)",
                path.display()
            )),
            Err(_) => {}
        }
    }
}

impl UserRepo {
    fn configured(&self) -> Result<Vec<Named>, GitError> {
        let printed = self.run(&["config", "--list", "--show-origin", "-z"])?;
        Ok(named(self.top(), &printed))
    }

    /// What the user's git configuration (read by the hardened host git, before the
    /// agent runs) makes git run or read in this repository's work tree.
    pub fn configured_in_tree(&self) -> Result<InTree, GitError> {
        let mut found = InTree::default();
        for named in self.configured()? {
            found.note(self.top(), named);
        }
        Ok(found)
    }

    /// Every path in the work tree the configuration names, there or not, relative to
    /// the top (a directory stands for all it holds): for `wright apply`'s guard. When
    /// the configuration cannot be read, nothing is named, and the guard's other checks
    /// stand alone.
    pub fn configured_paths(&self) -> Vec<String> {
        let top = self.top();
        let mut inside: Vec<String> = self
            .configured()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|named| {
                let relative = named.path.strip_prefix(top).ok()?.display().to_string();
                (!relative.is_empty()).then_some(relative)
            })
            .collect();
        inside.sort();
        inside.dedup();
        inside
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

    #[test]
    fn apply_counts_what_the_configuration_names_there_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        git(&top, &["init", "-q"]);
        std::fs::create_dir_all(top.join("conf")).unwrap();
        std::fs::write(
            top.join("conf/extra.gitconfig"),
            "[alias]\n\tx = !sh run.sh\n",
        )
        .unwrap();
        git(&top, &["config", "core.hooksPath", ".husky/_"]);
        git(
            &top,
            &["config", "filter.x.smudge", "sh tools/smudge.sh %f"],
        );
        git(
            &top,
            &["config", "filter.lfs.process", "git-lfs filter-process"],
        );
        git(&top, &["config", "merge.y.driver", "/usr/bin/true %O"]);
        // Relative to the file that includes it: `.git/../conf/extra.gitconfig`.
        git(&top, &["config", "include.path", "../conf/extra.gitconfig"]);
        let paths = UserRepo::at(&top).configured_paths();
        for expected in [
            ".husky",
            ".husky/_",
            "tools/smudge.sh",
            "conf/extra.gitconfig",
            "run.sh",
            "filter-process",
            ".git/config",
        ] {
            assert!(
                paths.contains(&expected.to_string()),
                "{expected} not in {paths:?}"
            );
        }
        assert!(
            paths
                .iter()
                .all(|p| !p.starts_with("..") && !p.starts_with('/')),
            "{paths:?}"
        );
        // In place, the bare word of a command is not a path to keep read-only.
        let found = UserRepo::at(&top).configured_in_tree().unwrap();
        assert!(
            found
                .unprotectable
                .iter()
                .all(|u| !u.contains("filter-process")),
            "{:?}",
            found.unprotectable
        );
    }
}
