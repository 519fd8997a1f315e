//! A snapshot of a directory that is not a git repository, taken before the agent changes
//! it, so that wright can show what changed and put it back (`wright discard`).
//!
//! Everything is read and written beneath the workspace's descriptor (cap-std): no link is
//! followed, only regular files are read (without blocking), and what is kept goes to a
//! directory of wright's own that the agent cannot reach: a manifest (each path's kind,
//! mode, size and content hash) and the contents, stored once per hash. Bounded in files
//! and bytes: above the bounds the snapshot is refused with what was found, never taken
//! in part. Paths listed as `skip` (the user's own repositories, read-only to the agent)
//! are neither kept nor touched.
//!
//! Beside it, the tree as each run of the conversation left it (`state`): `wright
//! discard` undoes a change only where the directory still is as the agent left it, so
//! what the user did after a run (or between runs) is never undone.

mod compare;
mod restore;
mod stamp;
mod state;
pub(crate) mod walk;

pub use compare::Changes;
pub use restore::Left;
pub use restore::Restored;
pub use stamp::ChangedFile;
pub use stamp::Delta;
pub use stamp::StampError;
pub use stamp::TreeStamp;
pub use state::RunState;

use crate::Workspace;
use serde::Deserialize;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

/// Writes `value` as JSON to `path`: aside first, then renamed over it.
fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), SnapshotError> {
    let damaged = |why: String| SnapshotError::Damaged {
        path: path.display().to_string(),
        why,
    };
    let text = serde_json::to_vec(value).map_err(|err| damaged(err.to_string()))?;
    let aside = path.with_extension("json.new");
    let write_err = |err| SnapshotError::Write {
        path: path.display().to_string(),
        err,
    };
    std::fs::write(&aside, text).map_err(write_err)?;
    std::fs::rename(&aside, path).map_err(write_err)
}

/// The manifest's file name in the snapshot's directory.
const MANIFEST: &str = "manifest.json";
/// Where contents go, by hash.
const BLOBS: &str = "blobs";

#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("{dir} holds more than {limit}; wright keeps a copy of a directory that is not a git repository before the agent changes it, so it can show the diff and undo it. Make it a repository (git init && git add -A && git commit -m start: the agent then works in a clone), or run with --no-snapshot to go without the undo")]
    TooBig { dir: String, limit: String },
    #[error("cannot read {path} for the snapshot: {err}")]
    Read { path: String, err: std::io::Error },
    #[error("cannot write the snapshot in {path}: {err}")]
    Write { path: String, err: std::io::Error },
    #[error("the snapshot in {path} is damaged: {why}")]
    Damaged { path: String, why: String },
}

/// How much a snapshot may hold.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub max_entries: usize,
    pub max_bytes: u64,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            max_entries: 50_000,
            max_bytes: 256 << 20,
        }
    }
}

/// One path of the directory, as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    Dir {
        mode: u32,
    },
    File {
        mode: u32,
        size: u64,
        sha256: String,
    },
    Link {
        target: String,
    },
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    version: u32,
    /// Relative paths (`/`-separated, UTF-8) and what was there.
    entries: BTreeMap<String, Entry>,
    /// Paths that could not be kept (a FIFO, a name that is not UTF-8), with why.
    left_out: Vec<String>,
}

/// A directory as it is (or was): each path and what is there, and what the walk did not
/// look at.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Tree {
    entries: BTreeMap<String, Entry>,
    /// What the walk could not look at, with why.
    left_out: Vec<String>,
    /// Directories it did not enter (too deep).
    unseen: Vec<String>,
    /// It stopped at its bounds: anything may be missing.
    stopped: bool,
}

impl Tree {
    fn from_walk(found: walk::Found) -> Self {
        Self {
            entries: found
                .items
                .into_iter()
                .map(|(path, item)| (path, Entry::from(item)))
                .collect(),
            left_out: found.left_out,
            unseen: found.unseen,
            stopped: found.stopped,
        }
    }

    /// Whether the walk may have missed what is (or was) at `path`.
    fn blind_at(&self, path: &str) -> bool {
        !self.entries.contains_key(path)
            && (self.stopped
                || self.unseen.iter().any(|dir| {
                    path.starts_with(dir.as_str()) && path[dir.len()..].starts_with('/')
                }))
    }
}

impl From<walk::Item> for Entry {
    fn from(item: walk::Item) -> Self {
        match item {
            walk::Item::Dir { mode } => Entry::Dir { mode },
            walk::Item::Link { target } => Entry::Link { target },
            walk::Item::File { mode, size, sha256 } => Entry::File { mode, size, sha256 },
        }
    }
}

/// A snapshot on disk.
pub struct Snapshot {
    dir: PathBuf,
    manifest: Manifest,
}

impl Snapshot {
    /// Takes a snapshot of `workspace` into `dest` (a new directory), leaving out `skip`
    /// (paths relative to the workspace, with everything beneath them).
    pub fn take(
        workspace: &Workspace,
        dest: &Path,
        skip: &[PathBuf],
        bounds: Bounds,
    ) -> Result<Self, SnapshotError> {
        let write_err = |err| SnapshotError::Write {
            path: dest.display().to_string(),
            err,
        };
        std::fs::create_dir_all(dest.join(BLOBS)).map_err(write_err)?;
        let found = walk::walk(workspace, skip, bounds, true, Some(&dest.join(BLOBS)))?;
        let mut manifest = Manifest {
            version: 1,
            entries: BTreeMap::new(),
            left_out: found.left_out,
        };
        for (path, item) in found.items {
            manifest.entries.insert(path, Entry::from(item));
        }
        let snapshot = Self {
            dir: dest.to_path_buf(),
            manifest,
        };
        snapshot.write_manifest()?;
        Ok(snapshot)
    }

    /// Writes the manifest aside, then renames it over the old one: never half of one.
    fn write_manifest(&self) -> Result<(), SnapshotError> {
        write_json(&self.dir.join(MANIFEST), &self.manifest)
    }

    /// The workspace as it is now (`skip` as when the snapshot was taken), walked with
    /// bounds above the snapshot's and not strictly: what it cannot look at is named.
    pub fn look(&self, workspace: &Workspace, skip: &[PathBuf]) -> Result<Tree, SnapshotError> {
        let bounds = Bounds {
            max_entries: Bounds::default().max_entries * 4,
            max_bytes: Bounds::default().max_bytes * 4,
        };
        let found = walk::walk(workspace, skip, bounds, false, None)?;
        Ok(Tree::from_walk(found))
    }

    /// The snapshot kept in `dir`, if one was taken there.
    pub fn open(dir: &Path) -> Result<Option<Self>, SnapshotError> {
        let path = dir.join(MANIFEST);
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
        let manifest: Manifest =
            serde_json::from_slice(&text).map_err(|err| SnapshotError::Damaged {
                path: path.display().to_string(),
                why: err.to_string(),
            })?;
        Ok(Some(Self {
            dir: dir.to_path_buf(),
            manifest,
        }))
    }

    /// How many paths it holds.
    pub fn len(&self) -> usize {
        self.manifest.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.manifest.entries.is_empty()
    }

    /// What could not be kept, with why.
    pub fn left_out(&self) -> &[String] {
        &self.manifest.left_out
    }

    /// The kept content of a file, by its hash.
    fn blob(&self, sha256: &str) -> Result<Vec<u8>, SnapshotError> {
        if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(SnapshotError::Damaged {
                path: self.dir.display().to_string(),
                why: format!("{sha256} is not a content hash"),
            });
        }
        let path = self.dir.join(BLOBS).join(sha256);
        std::fs::read(&path).map_err(|err| SnapshotError::Read {
            path: path.display().to_string(),
            err,
        })
    }
}

#[cfg(test)]
mod tests;
