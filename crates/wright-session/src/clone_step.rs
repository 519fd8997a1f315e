//! Which step's files a clone on this machine holds, for a replica taking a conversation
//! over (`git_store`): a clone it kept from an earlier run of the conversation may be
//! older than the last step another replica pushed since. Written beside the clone,
//! `workspaces/ID.step` — outside the directory the sandbox writes, so the agent cannot
//! move it — as the last event whose files the clone holds: at each step kept while
//! pushing, and when a clone is made again from the store. A clone without it (made before
//! a git store was set) is taken as it is.

use std::path::Path;
use std::path::PathBuf;

fn marker(clone_root: &Path) -> PathBuf {
    let name = clone_root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    clone_root.with_file_name(format!("{name}.step"))
}

/// Records that the clone at `clone_root` holds the files after event `last` (a record
/// that cannot be written leaves the clone taken as it is).
pub(crate) fn mark(clone_root: &Path, last: u64) {
    let path = marker(clone_root);
    let temporary = path.with_extension(format!("step.{}", std::process::id()));
    if std::fs::write(&temporary, last.to_string()).is_ok() {
        let _ = std::fs::rename(&temporary, &path);
    }
}

/// The last event whose files the clone at `clone_root` holds, when recorded.
pub(crate) fn held(clone_root: &Path) -> Option<u64> {
    std::fs::read_to_string(marker(clone_root))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Forgets the clone at `clone_root` and its record (it is older than the store's).
pub(crate) fn remove(clone_root: &Path) -> std::io::Result<()> {
    std::fs::remove_dir_all(clone_root)?;
    forget(clone_root);
    Ok(())
}

/// Drops the record of the clone at `clone_root` (removed with its conversation).
pub(crate) fn forget(clone_root: &Path) {
    let _ = std::fs::remove_file(marker(clone_root));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_a_clone_holds_reads_back_and_goes_with_it() {
        let root = tempfile::tempdir().unwrap();
        let clone = root.path().join("20261207-000000-abcd");
        std::fs::create_dir(&clone).unwrap();
        assert_eq!(held(&clone), None);
        mark(&clone, 7);
        mark(&clone, 12);
        assert_eq!(held(&clone), Some(12));
        assert!(root.path().join("20261207-000000-abcd.step").is_file());
        remove(&clone).unwrap();
        assert!(!clone.exists());
        assert_eq!(held(&clone), None);
    }
}
