//! The directory as the conversation's runs left it, kept beside its snapshot, so that
//! `wright discard` can tell the agent's changes from the user's.
//!
//! Each run writes it twice: when it begins (`begin`, `ended: false`) and when it ends
//! (`end`, `ended: true`). A path is the agent's to undo only while it still is as that
//! record has it. When a run begins, whatever changed since the last record (the user's
//! work between runs) is folded into the snapshot itself, content kept: from then on it
//! counts as how things were before the agent, and is never undone. A run killed before
//! its end leaves the record of its beginning: what changed during it cannot be told
//! from the user's later work, so it is never undone either; such paths are named
//! (`unsure`) rather than guessed at.

use super::walk;
use super::Entry;
use super::Snapshot;
use super::SnapshotError;
use super::Tree;
use crate::Workspace;
use serde::Deserialize;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The record's file name in the snapshot's directory.
const STATE: &str = "state.json";

/// The directory as a run left it (or found it, if it has not ended).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunState {
    /// Whether the run that wrote it reached its end; `false`: written as it began (it is
    /// going on, or was killed).
    pub ended: bool,
    pub(super) tree: Tree,
    /// Paths that changed while a run had no end recorded: taken as the user's (folded
    /// into the snapshot), since wright cannot tell whose change they are.
    pub unsure: BTreeSet<String>,
    /// Paths that could not be folded in (gone meanwhile, unreadable): the snapshot does
    /// not hold them as the user left them, so `discard` never touches them.
    #[serde(default)]
    pub unfolded: BTreeSet<String>,
}

impl Snapshot {
    /// The record of the last run, if one was written.
    pub fn run_state(&self) -> Result<Option<RunState>, SnapshotError> {
        let path = self.dir.join(STATE);
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => {
                return Err(SnapshotError::Read {
                    path: path.display().to_string(),
                    err,
                })
            }
        };
        serde_json::from_slice(&text)
            .map(Some)
            .map_err(|err| SnapshotError::Damaged {
                path: path.display().to_string(),
                why: err.to_string(),
            })
    }

    /// The first run begins right after the snapshot: the directory is as it holds it.
    pub fn begin_first(&self) -> Result<(), SnapshotError> {
        let tree = Tree {
            entries: self.manifest.entries.clone(),
            ..Tree::default()
        };
        self.write_state(&RunState {
            ended: false,
            tree,
            unsure: BTreeSet::new(),
            unfolded: BTreeSet::new(),
        })
    }

    /// A later run begins: what changed since the last record (the user's, or of a run
    /// killed before its end) is folded into the snapshot, then the directory as it is
    /// now is recorded. Returns the paths folded in as unsure.
    pub fn begin(
        &mut self,
        workspace: &Workspace,
        skip: &[PathBuf],
    ) -> Result<Vec<String>, SnapshotError> {
        let now = self.look(workspace, skip)?;
        let last = self.run_state()?;
        // Without a record (an older wright), nothing since the snapshot is known to be
        // the agent's.
        let (reference, ended, mut unsure, mut unfolded) = match last {
            Some(state) => (state.tree, state.ended, state.unsure, state.unfolded),
            None => (
                Tree {
                    entries: self.manifest.entries.clone(),
                    ..Tree::default()
                },
                false,
                BTreeSet::new(),
                BTreeSet::new(),
            ),
        };
        let paths: BTreeSet<&String> = reference.entries.keys().chain(now.entries.keys()).collect();
        let mut newly_unsure = Vec::new();
        let mut folded = false;
        for path in paths {
            let (was, is) = (reference.entries.get(path), now.entries.get(path));
            if was == is || now.blind_at(path) || reference.blind_at(path) {
                continue;
            }
            // A path that cannot be folded in (gone meanwhile, unreadable): discard
            // leaves it.
            let kept = self.fold(workspace, path, is).is_ok();
            folded |= kept;
            if !kept {
                unfolded.insert(path.clone());
            }
            if (!ended || !kept) && unsure.insert(path.clone()) {
                newly_unsure.push(path.clone());
            }
        }
        if folded {
            self.write_manifest()?;
        }
        self.write_state(&RunState {
            ended: false,
            tree: now,
            unsure,
            unfolded,
        })?;
        Ok(newly_unsure)
    }

    /// A run ended, leaving the directory as `now` (a look taken after its processes
    /// were stopped).
    pub fn end(&self, now: &Tree) -> Result<(), SnapshotError> {
        let (unsure, unfolded) = self
            .run_state()?
            .map(|s| (s.unsure, s.unfolded))
            .unwrap_or_default();
        self.write_state(&RunState {
            ended: true,
            tree: now.clone(),
            unsure,
            unfolded,
        })
    }

    /// Takes what is at `path` now (`is`) into the snapshot as how it was before the
    /// agent: a file's content is kept (its hash as read now).
    fn fold(
        &mut self,
        workspace: &Workspace,
        path: &str,
        is: Option<&Entry>,
    ) -> Result<(), SnapshotError> {
        let entry = match is {
            None => {
                self.manifest.entries.remove(path);
                return Ok(());
            }
            Some(Entry::File { mode, size, .. }) => {
                let blobs = self.dir.join(super::BLOBS);
                let read_err = |err| SnapshotError::Read {
                    path: workspace.root().join(path).display().to_string(),
                    err,
                };
                let (dir, name) = walk::parent_dir(workspace.dir(), path).map_err(read_err)?;
                let (sha256, size) =
                    walk::hash_regular(&dir, &name, *size, Some(&blobs)).map_err(read_err)?;
                Entry::File {
                    mode: *mode,
                    size,
                    sha256,
                }
            }
            Some(other) => other.clone(),
        };
        self.manifest.entries.insert(path.to_string(), entry);
        Ok(())
    }

    fn write_state(&self, state: &RunState) -> Result<(), SnapshotError> {
        super::write_json(&self.dir.join(STATE), state)
    }
}
