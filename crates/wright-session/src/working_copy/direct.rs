//! A directory that is not a git repository, worked in directly: wright keeps a snapshot
//! of it (in the conversation's own directory, out of the agent's reach) before the first
//! step, shows what changed at the end, and puts it back on `wright discard`. The user's
//! own repositories in it are read-only to the agent, so they are neither kept nor
//! touched.

use super::git_entries::Scan;
use crate::front::Front;
use anyhow::Context;
use anyhow::Result;
use std::path::Path;
use std::path::PathBuf;
use wright_protocol::Notice;
use wright_tools::Snapshot;
use wright_tools::Workspace;

/// The snapshot's directory in the conversation's directory.
const SNAPSHOT: &str = "before";

/// What the snapshot leaves alone: the user's repositories, relative to the workspace.
fn skipped(root: &Path, git_before: &Scan) -> Vec<PathBuf> {
    super::guarded(git_before)
        .into_iter()
        .filter_map(|path| path.strip_prefix(root).ok().map(Path::to_path_buf))
        .collect()
}

/// Keeps a copy of `root` before the agent changes it.
pub fn take(root: &Path, record_dir: &Path, git_before: &Scan) -> Result<Snapshot> {
    let workspace = Workspace::new(root).map_err(|err| anyhow::anyhow!("{err}"))?;
    let dest = record_dir.join(SNAPSHOT);
    Snapshot::take(
        &workspace,
        &dest,
        &skipped(root, git_before),
        wright_tools::SnapshotBounds::default(),
    )
    .map_err(|err| {
        let _ = std::fs::remove_dir_all(&dest);
        anyhow::anyhow!("{err}")
    })
}

/// The snapshot taken when the conversation started, if one was.
fn kept(record_dir: &Path) -> Result<Option<Snapshot>> {
    Snapshot::open(&record_dir.join(SNAPSHOT)).map_err(|err| anyhow::anyhow!("{err}"))
}

/// What changed since the start, as a diff; `None` without a snapshot.
pub fn changes(root: &Path, record_dir: &Path, git_before: &Scan) -> Option<Result<String>> {
    let snapshot = match kept(record_dir) {
        Ok(Some(snapshot)) => snapshot,
        Ok(None) => return None,
        Err(err) => return Some(Err(err)),
    };
    Some((|| {
        let workspace = Workspace::new(root).map_err(|err| anyhow::anyhow!("{err}"))?;
        let changes = snapshot
            .changes(&workspace, &skipped(root, git_before))
            .map_err(|err| anyhow::anyhow!("{err}"))?;
        Ok(snapshot.diff(&workspace, &changes))
    })())
}

/// `wright discard` of a conversation that worked directly: the directory as it was.
pub fn restore(root: &Path, record_dir: &Path, git_before: &Scan, front: &dyn Front) -> Result<()> {
    let Some(snapshot) = kept(record_dir)? else {
        anyhow::bail!(
            "this conversation worked directly in {} and kept no snapshot of it (started with --no-snapshot, or by an older wright): there is nothing to put back",
            root.display()
        );
    };
    let workspace = Workspace::new(root)
        .map_err(|err| anyhow::anyhow!("{err}"))
        .with_context(|| format!("cannot open {}", root.display()))?;
    let restored = snapshot
        .restore(&workspace, &skipped(root, git_before))
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    if restored.put_back == 0 && restored.removed == 0 && restored.left.is_empty() {
        front.notice(Notice::AlreadyAsItWas {
            root: root.to_path_buf(),
        });
        return Ok(());
    }
    front.notice(Notice::PutBack {
        root: root.to_path_buf(),
        restored: restored.put_back as u64,
        removed: restored.removed as u64,
    });
    for what in &restored.left {
        front.notice(Notice::NotPutBack { what: what.clone() });
    }
    if !restored.left.is_empty() {
        anyhow::bail!("some paths could not be put back (listed above)");
    }
    Ok(())
}
