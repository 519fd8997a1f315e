//! The paths inside the agent's writable directory that it must not write: one list,
//! consulted by both enforcers. The sandbox binds each read-only over the writable mount
//! (`Policy::protected`); wright's own in-process tools (`file_editor` and what writes
//! through it) refuse to write at or beneath any of them (`wright_tools::Workspace`).
//! A path is added here once, so the two can never disagree about what is protected.

use std::path::Path;
use std::path::PathBuf;

/// Why a path is kept read-only: said to the model when a write is refused, and to the
/// user in the run's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// A repository's git directory (or its `.git` file), the user's: its hooks and config
    /// run on the user's next git command.
    GitDir,
    /// A file or directory in the work tree that the user's git configuration makes git
    /// run or read as configuration (a hooks directory, an included file, a filter's
    /// script).
    GitConfigured,
}

impl Why {
    pub fn words(self) -> &'static str {
        match self {
            Why::GitDir => "a git directory of your repository",
            Why::GitConfigured => "a file your git configuration runs or reads",
        }
    }
}

/// One protected path (absolute), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedPath {
    pub path: PathBuf,
    pub why: Why,
}

/// The protected paths of a run, without duplicates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protected {
    entries: Vec<ProtectedPath>,
}

impl Protected {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `path` unless it is already there (a path beneath one already there is kept
    /// too: it may be moved out of it by the agent's renames of its parents).
    pub fn add(&mut self, path: PathBuf, why: Why) {
        if !self.entries.iter().any(|entry| entry.path == path) {
            self.entries.push(ProtectedPath { path, why });
        }
    }

    pub fn entries(&self) -> &[ProtectedPath] {
        &self.entries
    }

    /// The paths alone, as the sandbox's policy takes them.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.entries
            .iter()
            .map(|entry| entry.path.clone())
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Only those inside `writable` (the others are not writable anyway, and the sandbox
    /// can bind over nothing else).
    pub fn inside(mut self, writable: &Path) -> Self {
        self.entries
            .retain(|entry| entry.path.starts_with(writable));
        self
    }
}

/// The directories to pin in place for `protected` to stay where it is: those between a
/// writable path and a protected path beneath it. Each is bound onto itself, writable, so
/// it is a mount point the agent cannot rename or remove (`EBUSY`): otherwise it could
/// move `tools` (and the read-only `tools/clean.sh` with it) aside and put its own
/// `tools/clean.sh` where the user's git looks. Parents first.
pub fn pins(protected: &[PathBuf], writable: &[PathBuf]) -> Vec<PathBuf> {
    let mut pins: Vec<PathBuf> = Vec::new();
    for path in protected {
        let Some(root) = writable
            .iter()
            .filter(|w| path.starts_with(w) && path != *w)
            .max_by_key(|w| w.components().count())
        else {
            continue;
        };
        let mut ancestor = path.parent();
        while let Some(dir) = ancestor.filter(|dir| dir != root && dir.starts_with(root)) {
            if !pins.iter().any(|pin| pin == dir) && !protected.iter().any(|p| p == dir) {
                pins.push(dir.to_path_buf());
            }
            ancestor = dir.parent();
        }
    }
    pins.sort_by_key(|pin| pin.components().count());
    pins
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_kept_once_and_only_inside() {
        let mut protected = Protected::new();
        protected.add("/w/.git".into(), Why::GitDir);
        protected.add("/w/.git".into(), Why::GitConfigured);
        protected.add("/w/.husky".into(), Why::GitConfigured);
        protected.add("/elsewhere/.git".into(), Why::GitDir);
        let protected = protected.inside(Path::new("/w"));
        assert_eq!(
            protected.paths(),
            vec![PathBuf::from("/w/.git"), PathBuf::from("/w/.husky")]
        );
        assert_eq!(protected.entries()[0].why, Why::GitDir);
    }

    #[test]
    fn the_directories_between_the_workspace_and_a_protected_path_are_pinned() {
        let protected = [
            PathBuf::from("/w/.git"),
            PathBuf::from("/w/a/b/c.sh"),
            PathBuf::from("/w/a/.husky"),
            PathBuf::from("/w/a/.husky/_"),
            PathBuf::from("/elsewhere/x"),
        ];
        let pins = pins(
            &protected,
            &[PathBuf::from("/dev/null"), PathBuf::from("/w")],
        );
        assert_eq!(pins, vec![PathBuf::from("/w/a"), PathBuf::from("/w/a/b")]);
    }
}
