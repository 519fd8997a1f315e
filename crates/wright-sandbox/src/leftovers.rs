//! What runs that died without cleaning up (killed with SIGKILL, the machine lost power)
//! left behind: their private directories in the temp directory (`wright-<run>-XXXXXX`)
//! and their cgroups (`wright-<run>`, with whatever still runs in them). The caller says
//! which runs are dead (their conversation's lock is free); only directories of this
//! user are touched, and removal never follows a link out of them.

use std::os::unix::fs::MetadataExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::path::PathBuf;

/// The run a private directory's name belongs to: `wright-<run>-XXXXXX` → `<run>`.
fn run_of_private_dir(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("wright-")?;
    let (run, random) = rest.rsplit_once('-')?;
    (random.len() == 6 && !run.is_empty()).then_some(run)
}

/// Removes a directory tree that may hold what the agent made: links are removed, never
/// followed; directories it made unreadable or unwritable are opened up first.
pub fn remove_tree(path: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.is_dir() {
        return std::fs::remove_file(path);
    }
    if meta.permissions().mode() & 0o700 != 0o700 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
    }
    for entry in std::fs::read_dir(path)? {
        let entry = entry?;
        remove_tree(&entry.path())?;
    }
    std::fs::remove_dir(path)
}

/// The private directories in `temp`, of this user, of the runs `is_dead` names.
pub fn dead_private_dirs(temp: &Path, is_dead: &dyn Fn(&str) -> bool) -> Vec<PathBuf> {
    let me = nix::unistd::geteuid().as_raw();
    let Ok(entries) = std::fs::read_dir(temp) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| {
            let name = entry.file_name();
            let Some(run) = name.to_str().and_then(run_of_private_dir) else {
                return false;
            };
            let mine = entry
                .path()
                .symlink_metadata()
                .is_ok_and(|m| m.is_dir() && m.uid() == me);
            mine && is_dead(run)
        })
        .map(|entry| entry.path())
        .collect()
}

/// Removes the private directories in `temp` of the runs `is_dead` names, and the cgroups
/// of those runs (killing what is left in them). Returns how many were removed.
pub fn reap(temp: &Path, is_dead: &dyn Fn(&str) -> bool) -> usize {
    let removed = dead_private_dirs(temp, is_dead)
        .iter()
        .filter(|dir| remove_tree(dir).is_ok())
        .count();
    removed + crate::confine::Cgroup::reap(is_dead)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_trees() {
        assert_eq!(
            run_of_private_dir("wright-20261202-031500-ab12-Q1w2E3"),
            Some("20261202-031500-ab12")
        );
        assert_eq!(
            run_of_private_dir("wright-20261202-031500-ab12-fork-Q1w2E3"),
            Some("20261202-031500-ab12-fork")
        );
        assert_eq!(run_of_private_dir("wright-x"), None);
        assert_eq!(run_of_private_dir("other-a-123456"), None);

        let temp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), "x").unwrap();
        let dead = temp.path().join("wright-dead-AAAAAA");
        let live = temp.path().join("wright-live-BBBBBB");
        std::fs::create_dir_all(dead.join("home/locked/deep")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dead.join("home/out")).unwrap();
        std::fs::set_permissions(
            dead.join("home/locked"),
            std::fs::Permissions::from_mode(0o0),
        )
        .unwrap();
        std::fs::create_dir_all(&live).unwrap();
        assert_eq!(
            dead_private_dirs(temp.path(), &|run| run == "dead"),
            vec![dead.clone()]
        );
        let removed = reap(temp.path(), &|run| run == "dead");
        assert!(removed >= 1);
        assert!(!dead.exists());
        assert!(live.exists());
        // The link was removed, not followed.
        assert!(outside.path().join("keep").exists());
    }
}
