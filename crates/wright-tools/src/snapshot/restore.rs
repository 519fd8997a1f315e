//! Undoing the agent's changes to a workspace, and only those: a path is put back as the
//! snapshot holds it only while it still is as the last run left it (its `RunState`);
//! a path changed since — by the user, or during a run killed before its end — is left
//! as it is and named, and nothing the agent did not make is removed (a directory goes
//! only once empty). Every step is taken beneath the workspace's descriptor, one
//! directory at a time without following a link, so nothing the agent left (a link
//! where a directory was) leads a write elsewhere. Paths in `skip` are not touched.

use super::compare::Change;
use super::compare::ChangeKind;
use super::walk;
use super::Entry;
use super::RunState;
use super::Snapshot;
use super::SnapshotError;
use super::Tree;
use crate::Workspace;
use cap_std::fs::Dir;
use cap_std::fs::OpenOptions;
use cap_std::fs::Permissions;
use cap_std::fs::PermissionsExt;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

/// What a restore did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// Paths put back as they were (changed or deleted by the agent).
    pub put_back: usize,
    /// Paths the agent added, removed.
    pub removed: usize,
    /// Paths left as they are, on purpose: not provably the agent's change.
    pub kept: Vec<Left>,
    /// What could not be compared or put back, with why.
    pub left: Vec<String>,
}

/// A path left as it is, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Left {
    /// It changed after the run that changed it ended: the user's work.
    ChangedSinceEnd(String),
    /// It changed during a run that was stopped before its end (or since): wright cannot
    /// tell the agent's change from the user's.
    ChangedInUnendedRun(String),
    /// The conversation has no record of how its runs left the directory (an older
    /// wright ran it).
    NoRecord(String),
    /// A directory the agent made that holds a path left as it is (`inner`).
    Holds { path: String, inner: String },
}

impl std::fmt::Display for Left {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Left::ChangedSinceEnd(path) => write!(
                f,
                "{path} (changed since the run ended: yours, so it stays as it is)"
            ),
            Left::ChangedInUnendedRun(path) => write!(
                f,
                "{path} (changed during a run that was stopped before its end, or since: wright cannot tell the agent's change from yours, so that change stays)"
            ),
            Left::NoRecord(path) => write!(
                f,
                "{path} (no record of how the run left it, as an older wright ran it: it stays as it is)"
            ),
            Left::Holds { path, inner } => write!(
                f,
                "{path} (the agent made it, but it holds {inner}, which stays)"
            ),
        }
    }
}

impl Snapshot {
    /// Undoes the agent's changes: puts back what it changed or deleted and removes what
    /// it added, where the directory still is as its last run left it.
    pub fn restore(
        &self,
        workspace: &Workspace,
        skip: &[PathBuf],
    ) -> Result<Restored, SnapshotError> {
        let now = self.look(workspace, skip)?;
        let changes = self.changes_in(&now);
        let state = self.run_state()?;
        let mut restored = Restored {
            left: changes
                .left_out
                .iter()
                .map(|what| format!("{what}: not compared"))
                .collect(),
            ..Restored::default()
        };
        let mut undo = Vec::new();
        for change in &changes.list {
            match agents(change, &now, state.as_ref()) {
                None => undo.push(change),
                Some(left) => restored.kept.push(left),
            }
        }
        // What a run killed before its end changed stays as it left it, even where a
        // later run's change on top is undone: named, once.
        if let Some(state) = &state {
            let named: BTreeSet<String> = restored
                .kept
                .iter()
                .filter_map(|left| match left {
                    Left::ChangedInUnendedRun(p) => Some(p.clone()),
                    _ => None,
                })
                .collect();
            for path in &state.unsure {
                if !named.contains(path) {
                    restored.kept.push(Left::ChangedInUnendedRun(path.clone()));
                }
            }
        }
        let root = workspace.dir();
        // Paths not removed, so their directories stay too (they are not empty): left on
        // purpose, or because they could not be (then the directory is a failure too).
        // Each: the path, whether it is a failure, and the path first left beneath it.
        let mut stays: Vec<(String, bool, String)> = restored
            .kept
            .iter()
            .filter_map(|left| match left {
                Left::ChangedSinceEnd(p) | Left::ChangedInUnendedRun(p) | Left::NoRecord(p) => {
                    Some((p.clone(), false, p.clone()))
                }
                Left::Holds { .. } => None,
            })
            .collect();
        stays.extend(now.unseen.iter().map(|p| (p.clone(), true, p.clone())));
        // First remove what is in the way (children before parents: deepest paths first),
        // then write back (parents before children).
        let mut removals: Vec<&Change> = undo
            .iter()
            .copied()
            .filter(|c| {
                matches!(
                    c.kind,
                    ChangeKind::Added | ChangeKind::Replaced | ChangeKind::Modified
                )
            })
            .filter(|c| {
                !matches!(
                    (&c.before, &c.after),
                    (Some(Entry::File { .. }), Some(Entry::File { .. }))
                )
            })
            .collect();
        removals.sort_by(|a, b| b.path.cmp(&a.path));
        // Directories left because something beneath them stays: named once, at the top.
        let mut held: Vec<(String, String, bool)> = Vec::new();
        let mut blocked: Vec<String> = Vec::new();
        for change in removals {
            let inner = stays
                .iter()
                .find(|(p, _, _)| beneath(p, &change.path))
                .cloned();
            if let Some((_, failed, inner)) = inner {
                held.push((change.path.clone(), inner.clone(), failed));
                blocked.push(change.path.clone());
                stays.push((change.path.clone(), failed, inner));
                continue;
            }
            match remove(root, &change.path) {
                Ok(()) => {
                    if change.kind == ChangeKind::Added {
                        restored.removed += 1;
                    }
                }
                Err(err) => {
                    restored.left.push(format!(
                        "{} (cannot remove it: {err})",
                        walk::shorten(&change.path)
                    ));
                    blocked.push(change.path.clone());
                    stays.push((change.path.clone(), true, change.path.clone()));
                }
            }
        }
        for (path, inner, failed) in &held {
            // Only the topmost of a chain of held directories is worth a line.
            if held
                .iter()
                .any(|(other, _, _)| beneath(path, other) && other != path)
            {
                continue;
            }
            let (path, inner) = (walk::shorten(path), walk::shorten(inner));
            if *failed {
                restored.left.push(format!(
                    "{path} (cannot remove it: it holds {inner}, which could not be)"
                ));
            } else {
                restored.kept.push(Left::Holds { path, inner });
            }
        }
        for change in &undo {
            let Some(before) = &change.before else {
                continue;
            };
            if blocked.contains(&change.path) || blocked.iter().any(|b| beneath(&change.path, b)) {
                continue;
            }
            match self.put_back(root, &change.path, before) {
                Ok(()) => restored.put_back += 1,
                Err(err) => {
                    restored.left.push(format!(
                        "{} (cannot put it back: {err})",
                        walk::shorten(&change.path)
                    ));
                    blocked.push(change.path.clone());
                }
            }
        }
        Ok(restored)
    }

    fn put_back(&self, root: &Dir, path: &str, entry: &Entry) -> std::io::Result<()> {
        let (dir, name) = walk::parent_dir(root, path)?;
        match entry {
            Entry::Dir { mode } => {
                if dir.symlink_metadata(&name).is_err() {
                    dir.create_dir(&name)?;
                }
                set_mode_nofollow(&dir, &name, *mode)
            }
            Entry::Link { target } => {
                if dir.symlink_metadata(&name).is_ok() {
                    return Ok(());
                }
                dir.symlink_contents(target, &name)
            }
            Entry::File { mode, sha256, .. } => {
                let bytes = self
                    .blob(sha256)
                    .map_err(|err| std::io::Error::other(err.to_string()))?;
                // Whatever is there (a file the agent changed, a FIFO) is replaced by a
                // new file, never written through.
                if let Ok(meta) = dir.symlink_metadata(&name) {
                    if meta.is_dir() {
                        dir.remove_dir(&name)?;
                    } else {
                        dir.remove_file(&name)?;
                    }
                }
                let mut options = OpenOptions::new();
                options.write(true).create_new(true);
                let mut file = dir.open_with(&name, &options)?;
                file.write_all(&bytes)?;
                file.set_permissions(Permissions::from_mode(*mode))
            }
        }
    }
}

/// Whether `change` is the agent's to undo: `None` when it is, else why it is left. It is
/// while the path still is as the last run's record has it (then the difference from the
/// snapshot, which holds the user's own changes between runs, is the agent's).
fn agents(change: &Change, now: &Tree, state: Option<&RunState>) -> Option<Left> {
    let path = &change.path;
    let Some(state) = state else {
        return Some(Left::NoRecord(path.clone()));
    };
    if state.unfolded.contains(path) {
        return Some(Left::ChangedInUnendedRun(path.clone()));
    }
    let recorded = state.tree.entries.get(path);
    if recorded == now.entries.get(path) && !state.tree.blind_at(path) {
        return None;
    }
    Some(match state.ended {
        true => Left::ChangedSinceEnd(path.clone()),
        false => Left::ChangedInUnendedRun(path.clone()),
    })
}

/// Whether `path` is `dir` or beneath it.
fn beneath(path: &str, dir: &str) -> bool {
    path == dir || (path.starts_with(dir) && path[dir.len()..].starts_with('/'))
}

/// Removes what is at `path`, never following a link; a directory only once empty (what
/// is in it was removed first, or stays and keeps it).
fn remove(root: &Dir, path: &str) -> std::io::Result<()> {
    let (dir, name) = walk::parent_dir(root, path)?;
    match dir.symlink_metadata(&name) {
        Ok(meta) if meta.is_dir() => dir.remove_dir(&name),
        Ok(_) => dir.remove_file(&name),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(err),
    }
}

/// Sets the mode of the directory `name` in `dir` without following a link.
fn set_mode_nofollow(dir: &Dir, name: &std::ffi::OsStr, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let opened = walk::open_dir_nofollow(dir, name)?.into_std_file();
    opened.set_permissions(std::fs::Permissions::from_mode(mode))
}
