//! Repositories the agent makes. Outside git, or in place, the agent writes a directory
//! where a `.git` (a repository's, or a linked one's file) would be taken for the user's
//! own by the next run there, and by `wright apply`, whose git runs that repository's
//! hooks and config on the host. So the `.git` entries present when a run starts are
//! noted, and at its end (after the agent's processes are gone) any new one is renamed
//! out of git's sight, and the user is told.
//!
//! The walk follows no link and stops after `LIMIT` entries, saying so.

use std::path::Path;
use std::path::PathBuf;

const LIMIT: usize = 1_000_000;
const QUARANTINED: &str = ".git.wright-quarantined";

/// The `.git` entries under `root` (not inside one), and whether the walk saw everything.
pub fn git_entries(root: &Path) -> (Vec<PathBuf>, bool) {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > LIMIT {
                return (found, false);
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if entry.file_name() == ".git" {
                found.push(path);
            } else if kind.is_dir() {
                pending.push(path);
            }
        }
    }
    (found, true)
}

/// What the end of a run did with repositories the agent made.
pub struct Quarantine {
    /// The repositories found, each with where its `.git` now is.
    pub moved: Vec<(PathBuf, PathBuf)>,
    /// The walk stopped early: some were perhaps not seen.
    pub incomplete: bool,
}

/// Renames every `.git` under `root` that is not in `before` to `.git.wright-quarantined`
/// (or `…-N` when taken).
pub fn quarantine_new(root: &Path, before: &[PathBuf]) -> Quarantine {
    let (now, complete) = git_entries(root);
    let mut moved = Vec::new();
    for entry in now.into_iter().filter(|e| !before.contains(e)) {
        let Some(parent) = entry.parent() else {
            continue;
        };
        let target = (0..100)
            .map(|n| match n {
                0 => parent.join(QUARANTINED),
                n => parent.join(format!("{QUARANTINED}-{n}")),
            })
            .find(|candidate| std::fs::symlink_metadata(candidate).is_err());
        if let Some(target) = target {
            if std::fs::rename(&entry, &target).is_ok() {
                moved.push((parent.to_path_buf(), target));
            }
        }
    }
    Quarantine {
        moved,
        incomplete: !complete,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_repositories_are_moved_aside_and_links_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("old/.git")).unwrap();
        std::fs::create_dir_all(outside.path().join("repo/.git")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("repo"), dir.path().join("link")).unwrap();
        let (before, complete) = git_entries(dir.path());
        assert!(complete);
        assert_eq!(before, vec![dir.path().join("old/.git")]);
        std::fs::create_dir_all(dir.path().join("new/deep/.git/hooks")).unwrap();
        std::fs::write(dir.path().join(".git"), "gitdir: /elsewhere").unwrap();
        let done = quarantine_new(dir.path(), &before);
        assert_eq!(done.moved.len(), 2);
        assert!(dir.path().join("old/.git").is_dir());
        assert!(!dir.path().join("new/deep/.git").exists());
        assert!(dir
            .path()
            .join("new/deep/.git.wright-quarantined/hooks")
            .is_dir());
        assert!(dir.path().join(".git.wright-quarantined").is_file());
        assert!(outside.path().join("repo/.git").is_dir());
    }
}
