//! What changed in a workspace since its snapshot, and the changes as a diff a person can
//! read (unified for text, named for the rest), read beneath the workspace's descriptor
//! and bounded.

use super::walk;
use super::Entry;
use super::Snapshot;
use super::SnapshotError;
use super::Tree;
use crate::Workspace;
use std::path::PathBuf;

/// The largest file shown as a text diff.
const MAX_DIFFED_FILE: u64 = 8 << 20;
/// The longest diff text.
const MAX_DIFF: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Deleted,
    /// Content (or a link's target) changed.
    Modified,
    /// Only the permissions changed.
    Mode,
    /// A file became a directory, a link became a file…
    Replaced,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub kind: ChangeKind,
    pub(super) before: Option<Entry>,
    pub(super) after: Option<Entry>,
}

/// The changes since a snapshot.
#[derive(Debug, Default)]
pub struct Changes {
    pub list: Vec<Change>,
    /// What the walk could not look at (the workspace grew past its bounds, a name that
    /// is not UTF-8…): the list says nothing of it.
    pub left_out: Vec<String>,
}

impl Snapshot {
    /// The workspace as it is now against the snapshot (`skip` as when it was taken).
    pub fn changes(
        &self,
        workspace: &Workspace,
        skip: &[PathBuf],
    ) -> Result<Changes, SnapshotError> {
        Ok(self.changes_in(&self.look(workspace, skip)?))
    }

    /// `now` (a look at the workspace) against the snapshot. A path the look may have
    /// missed (beneath a directory it did not enter, past its bounds) is not called
    /// deleted.
    pub fn changes_in(&self, now: &Tree) -> Changes {
        let mut list = Vec::new();
        for (path, after) in &now.entries {
            let before = self.manifest.entries.get(path);
            let kind = match before {
                None => Some(ChangeKind::Added),
                Some(before) => differs(before, after),
            };
            if let Some(kind) = kind {
                list.push(Change {
                    path: path.clone(),
                    kind,
                    before: before.cloned(),
                    after: Some(after.clone()),
                });
            }
        }
        for (path, before) in &self.manifest.entries {
            if !now.entries.contains_key(path) && !now.blind_at(path) {
                list.push(Change {
                    path: path.clone(),
                    kind: ChangeKind::Deleted,
                    before: Some(before.clone()),
                    after: None,
                });
            }
        }
        list.sort_by(|a, b| a.path.cmp(&b.path));
        Changes {
            list,
            left_out: now.left_out.clone(),
        }
    }

    /// The changes as text: a unified diff for each text file, a line for the rest.
    pub fn diff(&self, workspace: &Workspace, changes: &Changes) -> String {
        let mut out = String::new();
        for change in &changes.list {
            if out.len() > MAX_DIFF {
                out.push_str("\n[the diff goes on; it was cut here]\n");
                break;
            }
            out.push_str(&self.describe(workspace, change));
        }
        for what in &changes.left_out {
            out.push_str(&format!("not compared: {what}\n"));
        }
        out
    }

    fn describe(&self, workspace: &Workspace, change: &Change) -> String {
        let path = &change.path;
        let large = [&change.before, &change.after].into_iter().any(
            |entry| matches!(entry, Some(Entry::File { size, .. }) if *size > MAX_DIFFED_FILE),
        );
        if large && change.kind != ChangeKind::Mode {
            return format!(
                "{path}: {} -> {} (too large to show)\n",
                entry_words(change.before.as_ref()),
                entry_words(change.after.as_ref())
            );
        }
        match (&change.before, &change.after) {
            (Some(Entry::File { sha256, .. }), Some(Entry::File { .. }))
                if change.kind == ChangeKind::Modified =>
            {
                self.text_diff(path, Some(sha256), Some(workspace))
            }
            (None, Some(Entry::File { .. })) => self.text_diff(path, None, Some(workspace)),
            (Some(Entry::File { sha256, .. }), None) => self.text_diff(path, Some(sha256), None),
            (Some(Entry::File { mode: a, .. }), Some(Entry::File { mode: b, .. }))
            | (Some(Entry::Dir { mode: a }), Some(Entry::Dir { mode: b })) => {
                format!("mode of {path}: {a:o} -> {b:o}\n")
            }
            (before, after) => format!(
                "{path}: {} -> {}\n",
                entry_words(before.as_ref()),
                entry_words(after.as_ref())
            ),
        }
    }

    /// A unified diff of one file: the kept content against the workspace's.
    fn text_diff(&self, path: &str, before: Option<&String>, now: Option<&Workspace>) -> String {
        let old = match before {
            Some(sha) => match self.blob(sha) {
                Ok(bytes) => Some(bytes),
                Err(err) => return format!("{path}: changed ({err})\n"),
            },
            None => None,
        };
        let new = match now {
            Some(workspace) => match read_now(workspace, path) {
                Ok(bytes) => Some(bytes),
                Err(err) => return format!("{path}: changed (cannot read it now: {err})\n"),
            },
            None => None,
        };
        let as_text = |bytes: &Option<Vec<u8>>| match bytes {
            None => Some(String::new()),
            Some(bytes) => String::from_utf8(bytes.clone()).ok(),
        };
        let (Some(old_text), Some(new_text)) = (as_text(&old), as_text(&new)) else {
            return format!("Binary file {path} changed\n");
        };
        let (old_name, new_name) = (
            if old.is_some() {
                format!("a/{path}")
            } else {
                "/dev/null".into()
            },
            if new.is_some() {
                format!("b/{path}")
            } else {
                "/dev/null".into()
            },
        );
        let diff = similar::TextDiff::from_lines(&old_text, &new_text);
        format!(
            "{}",
            diff.unified_diff()
                .context_radius(3)
                .header(&old_name, &new_name)
        )
    }
}

/// What `before` and `after` (at one path) differ in, if anything.
pub(super) fn differs(before: &Entry, after: &Entry) -> Option<ChangeKind> {
    match (before, after) {
        (Entry::Dir { mode: a }, Entry::Dir { mode: b }) => (a != b).then_some(ChangeKind::Mode),
        (
            Entry::File {
                mode: a, sha256: x, ..
            },
            Entry::File {
                mode: b, sha256: y, ..
            },
        ) => {
            if x != y {
                Some(ChangeKind::Modified)
            } else {
                (a != b).then_some(ChangeKind::Mode)
            }
        }
        (Entry::Link { target: a }, Entry::Link { target: b }) => {
            (a != b).then_some(ChangeKind::Modified)
        }
        _ => Some(ChangeKind::Replaced),
    }
}

fn entry_words(entry: Option<&Entry>) -> String {
    match entry {
        None => "nothing".into(),
        Some(Entry::Dir { .. }) => "a directory".into(),
        Some(Entry::File { size, .. }) => format!("a file of {size} bytes"),
        Some(Entry::Link { target }) => format!("a link to {target}"),
    }
}

/// A file of the workspace as it is now, read beneath its descriptor (no link followed).
fn read_now(workspace: &Workspace, path: &str) -> std::io::Result<Vec<u8>> {
    let (dir, name) = walk::parent_dir(workspace.dir(), path)?;
    walk::read_regular(&dir, &name, MAX_DIFFED_FILE)
}
