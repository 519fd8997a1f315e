//! `wright rm` and `wright gc`: giving the disk back. A conversation is its directory
//! (log, records), the agent's clone, its branch in the user's repository, and while it
//! runs a private directory with its scratch outputs.
//!
//! What they guarantee: no work nobody took is removed without `--force` — a branch with
//! commits the user's HEAD lacks, or a clone whose run never handed its changes over (see
//! `working_copy::status`); a running conversation is never touched (its lock is held for
//! the whole removal); and nothing is followed out of what is removed (the clone is the
//! agent's: links are removed, never followed).

use crate::history_cmds::conversation_ids;
use crate::history_cmds::resolve_id;
use crate::listing::short_age;
use crate::listing::Summary;
use anyhow::bail;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;
use wright_core::conversations_dir;
use wright_core::workspaces_dir;
use wright_core::RunLock;
use wright_sandbox::remove_tree;
use wright_session::removal::disk_use;
use wright_session::removal::Removal;
use wright_session::working_copy::status::Change;
use wright_session::working_copy::status::Repos;
use wright_session::working_copy::Record;

#[derive(Args)]
pub struct RmArgs {
    /// The conversations (ids, or unique prefixes).
    #[arg(required = true, value_name = "ID")]
    pub ids: Vec<String>,
    /// Remove them even when their changes were never taken (a branch with commits your
    /// HEAD lacks, a clone whose run did not hand its changes over).
    #[arg(long)]
    pub force: bool,
}

#[derive(Args)]
pub struct GcArgs {
    /// Remove conversations last active more than DAYS days ago (0: whatever their age).
    #[arg(long, value_name = "DAYS", default_value_t = 30)]
    pub older_than: u64,
    /// Say what would go and how much it would free, removing nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// What became of its branch, for the line saying it was removed.
fn branch_note(removal: &Removal, change: Change) -> String {
    let Some((_, branch, tip)) = &removal.branch else {
        return String::new();
    };
    if change.holds_work() {
        format!(
            "; its branch {branch} is deleted with changes you had not taken (its last commit {tip}: `git branch {branch} {tip}` brings it back while git keeps it)"
        )
    } else {
        format!("; its branch {branch} is deleted")
    }
}

/// `wright rm ID...`: exit 0 when every one was removed, 1 when some were refused.
pub fn rm(args: RmArgs) -> Result<u8> {
    let mut repos = Repos::default();
    let mut refused = 0;
    for prefix in &args.ids {
        match rm_one(prefix, args.force, &mut repos) {
            Ok(said) => say!("{said}"),
            Err(err) => {
                tell!("wright: {err:#}");
                refused += 1;
            }
        }
    }
    Ok(if refused == 0 { 0 } else { 1 })
}

fn rm_one(prefix: &str, force: bool, repos: &mut Repos) -> Result<String> {
    let id = resolve_id(prefix)?;
    let dir = conversations_dir().join(&id);
    let _lock = RunLock::conversation(&dir, &id)?;
    let summary = Summary::read(&id)?;
    let change = summary.change(repos);
    if change.holds_work() && !force {
        bail!("{}", refusal(&summary, change));
    }
    let removal = Removal::plan(&summary);
    removal.run()?;
    Ok(format!(
        "removed {id} ({} freed{})",
        human(removal.bytes),
        branch_note(&removal, change)
    ))
}

/// Why a conversation holding work is not removed, and what to do instead.
fn refusal(summary: &Summary, change: Change) -> String {
    let id = &summary.id;
    let force = format!("`wright rm --force {id}` removes it all the same");
    match (change, &summary.record) {
        (Change::HasChanges, Some(Record::Clone { branch, .. })) => format!(
            "conversation {id} is not removed: its branch {branch} has changes you have not taken (`wright diff {id}` shows them, `wright apply {id}` takes them); {force}"
        ),
        _ => format!(
            "conversation {id} is not removed: its clone {} holds work its run never handed over (`wright resume {id}` goes on there); {force}",
            workspaces_dir().join(id).display()
        ),
    }
}

/// `wright gc`: removes the private directories dead runs left, clones without a
/// conversation, and the conversations ended over `--older-than` days ago whose changes
/// were taken, dropped or never made.
pub fn gc(args: GcArgs) -> Result<()> {
    let verb = if args.dry_run {
        "would remove"
    } else {
        "removed"
    };
    let mut freed = 0;
    let mut counts = [0usize; 4];
    let (bytes, count) = sweep(
        wright_session::sandbox_setup::dead_private_dirs(),
        "scratch of an ended run",
        args.dry_run,
    );
    freed += bytes;
    counts[0] = count;
    let cutoff = Duration::from_secs(args.older_than.saturating_mul(86400));
    let mut repos = Repos::default();
    let mut kept = Vec::new();
    for id in conversation_ids()? {
        let dir = conversations_dir().join(&id);
        // A running one is left alone; the lock is held while it goes.
        let Ok(_lock) = RunLock::conversation(&dir, &id) else {
            continue;
        };
        let Ok(summary) = Summary::read(&id) else {
            continue;
        };
        if summary.age().is_none_or(|age| age < cutoff) {
            continue;
        }
        let change = summary.change(&mut repos);
        if change.holds_work() {
            kept.push(id);
            continue;
        }
        let removal = Removal::plan(&summary);
        if !args.dry_run {
            if let Err(err) = removal.run() {
                tell!("wright: {id}: {err:#}");
                continue;
            }
        }
        say!(
            "{verb} {id} ({}, {} old, {}{})",
            change.as_str(),
            summary.age().map(short_age).unwrap_or_default(),
            human(removal.bytes),
            branch_note(&removal, change)
        );
        freed += removal.bytes;
        counts[1] += 1;
    }
    for (at, found, what) in [
        (2, orphan_clones(), "a clone whose conversation is gone"),
        (
            3,
            orphan_repositories(),
            "a repository cloned for a conversation that is gone",
        ),
    ] {
        let (bytes, count) = sweep(found, what, args.dry_run);
        freed += bytes;
        counts[at] = count;
    }
    let [private, conversations, clones, repositories] = counts;
    say!(
        "{} {} ({conversations} conversation{}, {clones} clone{} and {repositories} cloned repositor{} without a conversation, {private} private director{} of ended runs)",
        if args.dry_run { "would free" } else { "freed" },
        human(freed),
        plural(conversations, "", "s"),
        plural(clones, "", "s"),
        plural(repositories, "y", "ies"),
        plural(private, "y", "ies"),
    );
    if !kept.is_empty() {
        say!(
            "kept {} conversation{} with changes nobody took: {} (`wright ls` shows them; `wright rm --force ID` removes one)",
            kept.len(),
            plural(kept.len(), "", "s"),
            kept.join(", ")
        );
    }
    Ok(())
}

/// Removes `dirs` (only says so when `dry_run`), each said with `what` it is; the bytes
/// freed and how many.
fn sweep(dirs: Vec<PathBuf>, what: &str, dry_run: bool) -> (u64, usize) {
    let verb = if dry_run { "would remove" } else { "removed" };
    let (mut freed, mut count) = (0, 0);
    for dir in dirs {
        let bytes = disk_use(&dir);
        if !dry_run {
            if let Err(err) = remove_tree(&dir) {
                tell!("wright: cannot remove {}: {err}", dir.display());
                continue;
            }
        }
        say!("{verb} {} ({what}, {})", dir.display(), human(bytes));
        freed += bytes;
        count += 1;
    }
    (freed, count)
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// Clones in the workspaces directory whose conversation is gone (a start makes the
/// conversation's directory before its clone, so none of them is a run starting).
fn orphan_clones() -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(workspaces_dir()) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| {
            entry.file_type().is_ok_and(|t| t.is_dir())
                && !conversations_dir().join(entry.file_name()).exists()
        })
        .map(|entry| entry.path())
        .collect()
}

/// How long a repository without a conversation may be a clone in progress: the server
/// clones a `repository_url` (for at most ten minutes) before it makes the conversation.
const CLONING_AT_MOST: Duration = Duration::from_secs(3600);

/// Repositories the server cloned from a URL whose conversation is gone (removed, or a
/// server killed between the clone and the conversation's start), untouched for longer
/// than a clone may take.
fn orphan_repositories() -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(wright_core::repositories_dir()) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| {
            let old = entry
                .metadata()
                .ok()
                .filter(|meta| meta.is_dir())
                .and_then(|meta| meta.modified().ok())
                .and_then(|modified| modified.elapsed().ok())
                .is_some_and(|age| age > CLONING_AT_MOST);
            old && !conversations_dir().join(entry.file_name()).exists()
        })
        .map(|entry| entry.path())
        .collect()
}

/// `512 B`, `12.3 KiB`, `98.0 MiB`, `1.2 GiB`.
fn human(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_for_people() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(12 * 1024 + 300), "12.3 KiB");
        assert_eq!(human(98 << 20), "98.0 MiB");
        assert_eq!(human(3 << 30), "3.0 GiB");
    }

    #[test]
    fn disk_use_counts_links_without_following_them() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("big"), vec![1u8; 1 << 20]).unwrap();
        std::fs::write(dir.path().join("small"), vec![1u8; 10_000]).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        let used = disk_use(dir.path());
        assert!(used >= 10_000, "{used}");
        assert!(used < 1 << 20, "{used}");
    }
}
