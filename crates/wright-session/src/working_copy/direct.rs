//! A directory that is not a git repository, worked in directly: wright keeps a snapshot
//! of it (in the conversation's own directory, out of the agent's reach) before the first
//! step, shows what changed at the end, and puts it back on `wright discard`. The user's
//! own repositories in it are read-only to the agent, so they are neither kept nor
//! touched.
//!
//! Beside the snapshot, each run records the directory as it began and as it ended, so
//! that `wright discard` undoes only what the agent did: a path changed since a run ended
//! (or during a run killed before its end) is left as it is and named.

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
    .and_then(|snapshot| snapshot.begin_first().map(|()| snapshot))
    .map_err(|err| {
        let _ = std::fs::remove_dir_all(&dest);
        anyhow::anyhow!("{err}")
    })
}

/// A resumed run begins: what changed since the last run (the user's work, or a killed
/// run's) is taken into the snapshot as how things were before the agent, so `discard`
/// never undoes it. Without a record of it the run does not start: the agent's changes
/// could not be told from the user's afterwards.
pub fn begin(root: &Path, record_dir: &Path, git_before: &Scan) -> Result<()> {
    let Some(mut snapshot) = kept(record_dir)? else {
        return Ok(());
    };
    let workspace = Workspace::new(root).map_err(|err| anyhow::anyhow!("{err}"))?;
    snapshot
        .begin(&workspace, &skipped(root, git_before))
        .map_err(|err| anyhow::anyhow!("{err}"))
        .with_context(|| {
            format!(
                "cannot record {} as this run finds it (wright needs it to tell the agent's changes from yours)",
                root.display()
            )
        })?;
    Ok(())
}

/// The snapshot taken when the conversation started, if one was.
fn kept(record_dir: &Path) -> Result<Option<Snapshot>> {
    Snapshot::open(&record_dir.join(SNAPSHOT)).map_err(|err| anyhow::anyhow!("{err}"))
}

/// The end of a run: the directory as it left it is recorded (what `discard` may undo),
/// and what changed since the start is returned as a diff; `None` without a snapshot.
pub fn end(root: &Path, record_dir: &Path, git_before: &Scan) -> Option<Result<String>> {
    diff(root, record_dir, git_before, true)
}

/// What changed since the start, as a diff (`wright diff`); `None` without a snapshot.
pub fn changes(root: &Path, record_dir: &Path, git_before: &Scan) -> Option<Result<String>> {
    diff(root, record_dir, git_before, false)
}

fn diff(root: &Path, record_dir: &Path, git_before: &Scan, ending: bool) -> Option<Result<String>> {
    let snapshot = match kept(record_dir) {
        Ok(Some(snapshot)) => snapshot,
        Ok(None) => return None,
        Err(err) => return Some(Err(err)),
    };
    Some((|| {
        let workspace = Workspace::new(root).map_err(|err| anyhow::anyhow!("{err}"))?;
        let now = snapshot
            .look(&workspace, &skipped(root, git_before))
            .map_err(|err| anyhow::anyhow!("{err}"))?;
        if ending {
            snapshot
                .end(&now)
                .map_err(|err| anyhow::anyhow!("{err}"))
                .context("cannot record the directory as the run left it (`wright discard` will leave what changed)")?;
        }
        let changes = snapshot.changes_in(&now);
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
    if restored.put_back == 0
        && restored.removed == 0
        && restored.left.is_empty()
        && restored.kept.is_empty()
    {
        front.notice(Notice::AlreadyAsItWas {
            root: root.to_path_buf(),
        });
        return Ok(());
    }
    front.notice(Notice::PutBack {
        root: root.to_path_buf(),
        restored: restored.put_back as u64,
        removed: restored.removed as u64,
        kept: restored.kept.len() as u64,
    });
    for left in &restored.kept {
        front.notice(Notice::LeftAsItIs {
            what: left.to_string(),
        });
    }
    for what in &restored.left {
        front.notice(Notice::NotPutBack { what: what.clone() });
    }
    if !restored.left.is_empty() {
        anyhow::bail!("some paths could not be put back (listed above)");
    }
    Ok(())
}
