//! Putting a workspace back as its snapshot holds it: what the agent added is removed,
//! what it changed or deleted is written back (contents, modes, links), beneath the
//! workspace's descriptor so nothing the agent left (a link where a directory was) leads a
//! write elsewhere. Paths in `skip` are not touched.

use super::compare::Change;
use super::compare::ChangeKind;
use super::Entry;
use super::Snapshot;
use super::SnapshotError;
use crate::Workspace;
use cap_std::fs::Dir;
use cap_std::fs::OpenOptions;
use cap_std::fs::Permissions;
use cap_std::fs::PermissionsExt;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

/// What a restore did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// Paths put back as they were (changed or deleted by the agent).
    pub put_back: usize,
    /// Paths the agent added, removed.
    pub removed: usize,
    /// What could not be compared or put back, with why.
    pub left: Vec<String>,
}

impl Snapshot {
    /// Puts the workspace back as it was when the snapshot was taken.
    pub fn restore(
        &self,
        workspace: &Workspace,
        skip: &[PathBuf],
    ) -> Result<Restored, SnapshotError> {
        let changes = self.changes(workspace, skip)?;
        let mut restored = Restored {
            left: changes.left_out.clone(),
            ..Restored::default()
        };
        let root = workspace.dir();
        // First remove what is in the way (children before parents: deepest paths first),
        // then write back (parents before children).
        let mut removals: Vec<&Change> = changes
            .list
            .iter()
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
        for change in removals {
            if change.kind == ChangeKind::Added && under_removed(&change.path, &changes.list) {
                continue;
            }
            match remove(root, Path::new(&change.path)) {
                Ok(()) => {
                    if change.kind == ChangeKind::Added {
                        restored.removed += 1;
                    }
                }
                Err(err) => restored
                    .left
                    .push(format!("{} (cannot remove it: {err})", change.path)),
            }
        }
        for change in &changes.list {
            let Some(before) = &change.before else {
                continue;
            };
            match self.put_back(root, &change.path, before) {
                Ok(()) => restored.put_back += 1,
                Err(err) => restored
                    .left
                    .push(format!("{} (cannot put it back: {err})", change.path)),
            }
        }
        Ok(restored)
    }

    fn put_back(&self, root: &Dir, path: &str, entry: &Entry) -> std::io::Result<()> {
        let relative = Path::new(path);
        match entry {
            Entry::Dir { mode } => {
                if root.symlink_metadata(relative).is_err() {
                    root.create_dir(relative)?;
                }
                root.set_permissions(relative, Permissions::from_mode(*mode))
            }
            Entry::Link { target } => {
                if root.symlink_metadata(relative).is_ok() {
                    return Ok(());
                }
                root.symlink_contents(target, relative)
            }
            Entry::File { mode, sha256, .. } => {
                let bytes = self
                    .blob(sha256)
                    .map_err(|err| std::io::Error::other(err.to_string()))?;
                // Whatever is there (a file the agent changed, a FIFO) is replaced by a
                // new file, never written through.
                if let Ok(meta) = root.symlink_metadata(relative) {
                    if meta.is_dir() {
                        root.remove_dir_all(relative)?;
                    } else {
                        root.remove_file(relative)?;
                    }
                }
                let mut options = OpenOptions::new();
                options.write(true).create_new(true);
                let mut file = root.open_with(relative, &options)?;
                file.write_all(&bytes)?;
                root.set_permissions(relative, Permissions::from_mode(*mode))
            }
        }
    }
}

/// Whether a directory holding `path` is itself removed (then `path` goes with it).
fn under_removed(path: &str, changes: &[Change]) -> bool {
    changes.iter().any(|c| {
        c.kind == ChangeKind::Added
            && matches!(c.after, Some(Entry::Dir { .. }))
            && path.starts_with(&format!("{}/", c.path))
    })
}

/// Removes what is at `path`, never following a link (a directory's content included).
fn remove(root: &Dir, path: &Path) -> std::io::Result<()> {
    match root.symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => root.remove_dir_all(path),
        Ok(_) => root.remove_file(path),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(err),
    }
}
