//! Repositories the agent makes. Outside git, or in place, the agent writes a directory
//! where a repository — a `.git` (a directory, or a linked one's file), or a bare layout
//! (`HEAD`, `objects`, `refs`) that git takes for one — would be taken for the user's
//! own by the user's next git command there, the next run, and `wright apply`, whose git
//! runs that repository's hooks and config on the host. So the repositories present when
//! a run starts are noted (and kept read-only to the agent), and at its end, once the
//! agent's processes are gone, any other is set aside out of git's sight and the user is
//! told; what could not be looked at or set aside is said too.
//!
//! The walk follows no link and is bounded (entries and bytes of paths held).

use serde::Deserialize;
use serde::Serialize;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::path::PathBuf;

const MAX_ENTRIES: usize = 1_000_000;
const MAX_PATH_BYTES: usize = 64 << 20;
const QUARANTINED: &str = ".git.wright-quarantined";
const QUARANTINED_HEAD: &str = "HEAD.wright-quarantined";

/// A repository found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "path", rename_all = "snake_case")]
pub enum Repository {
    /// A `.git` entry (its path).
    DotGit(PathBuf),
    /// A directory git takes for a bare repository (its path).
    Bare(PathBuf),
}

impl Repository {
    /// What must stay read-only to the agent for the repository to stay the user's.
    pub fn guarded_path(&self) -> &Path {
        match self {
            Repository::DotGit(path) | Repository::Bare(path) => path,
        }
    }
}

/// What a walk found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Scan {
    pub repositories: Vec<Repository>,
    /// Directories that could not be listed.
    pub unreadable: Vec<PathBuf>,
    /// The walk stopped at its bounds.
    pub truncated: bool,
}

/// Whether git would take `dir` for a repository (its `is_git_directory`), or more: a
/// `HEAD` that is a file or a symbolic link (git takes a link to `refs/…`, a file
/// `ref: refs/…` or a detached id), and either `objects` and `refs` of any kind (git only
/// checks it may enter them, so links count) or a `commondir` naming where they are.
/// Nothing is followed or read: taking more than git would is safe, less is not.
fn is_repository_layout(dir: &Path) -> bool {
    let kind = |name: &str| std::fs::symlink_metadata(dir.join(name)).ok();
    let head = kind("HEAD").is_some_and(|head| head.is_file() || head.is_symlink());
    head && (kind("commondir").is_some() || kind("objects").is_some() && kind("refs").is_some())
}

/// The repositories under `root`. With `open_up`, a directory that cannot be listed and
/// was not unreadable before (`known_unreadable`) is given its owner's read and search
/// rights first: it is the agent's, made unreadable to hide what is in it.
pub fn scan(root: &Path, open_up: bool, known_unreadable: &[PathBuf]) -> Scan {
    let mut found = Scan::default();
    let mut pending = vec![root.to_path_buf()];
    let (mut entries_seen, mut bytes_held) = (0usize, 0usize);
    while let Some(dir) = pending.pop() {
        // Paths waiting and paths found together stay under the bound.
        bytes_held = bytes_held.saturating_sub(dir.as_os_str().len());
        if is_repository_layout(&dir) {
            bytes_held += dir.as_os_str().len();
            found.repositories.push(Repository::Bare(dir.clone()));
        }
        let listed = match std::fs::read_dir(&dir) {
            Ok(listed) => Ok(listed),
            Err(_) if open_up && !known_unreadable.contains(&dir) => {
                let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
                std::fs::read_dir(&dir)
            }
            Err(err) => Err(err),
        };
        let Ok(listed) = listed else {
            bytes_held += dir.as_os_str().len();
            found.unreadable.push(dir);
            continue;
        };
        for entry in listed.flatten() {
            entries_seen += 1;
            if entries_seen > MAX_ENTRIES || bytes_held > MAX_PATH_BYTES {
                found.truncated = true;
                return found;
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if entry.file_name() == ".git" {
                bytes_held += path.as_os_str().len();
                found.repositories.push(Repository::DotGit(path));
            } else if kind.is_dir() {
                bytes_held += path.as_os_str().len();
                pending.push(path);
            }
        }
    }
    found
}

/// What the end of a run did with repositories the agent made.
#[derive(Debug, Default)]
pub struct Quarantine {
    /// Each set aside: the repository, and where what made it one now is.
    pub moved: Vec<(PathBuf, PathBuf)>,
    /// Found but not set aside (with why).
    pub failed: Vec<(PathBuf, String)>,
    /// Directories that could not be looked at.
    pub unreadable: Vec<PathBuf>,
    /// The walk stopped at its bounds: some were perhaps not seen.
    pub truncated: bool,
}

impl Quarantine {
    /// Both passes' findings together.
    pub fn and(mut self, later: Quarantine) -> Quarantine {
        self.moved.extend(later.moved);
        self.failed = later.failed;
        self.unreadable = later.unreadable;
        self.truncated |= later.truncated;
        self
    }
}

/// Sets aside every repository under `root` that `before` did not have: a `.git` is
/// renamed `.git.wright-quarantined`, a bare layout's `HEAD` `HEAD.wright-quarantined`.
pub fn quarantine_new(root: &Path, before: &Scan) -> Quarantine {
    let now = scan(root, true, &before.unreadable);
    let mut done = Quarantine {
        unreadable: now.unreadable,
        truncated: now.truncated,
        ..Quarantine::default()
    };
    for repository in now
        .repositories
        .into_iter()
        .filter(|r| !before.repositories.contains(r))
    {
        let (dir, from, name) = match &repository {
            Repository::DotGit(path) => (path.parent().unwrap_or(root), path.clone(), QUARANTINED),
            Repository::Bare(dir) => (dir.as_path(), dir.join("HEAD"), QUARANTINED_HEAD),
        };
        let target = (0..100)
            .map(|n| match n {
                0 => dir.join(name),
                n => dir.join(format!("{name}-{n}")),
            })
            .find(|candidate| std::fs::symlink_metadata(candidate).is_err());
        let Some(target) = target else {
            done.failed
                .push((dir.to_path_buf(), "no free name to move it to".into()));
            continue;
        };
        let mut renamed = std::fs::rename(&from, &target);
        if renamed.is_err() {
            // The agent's directory, made unwritable to keep its repository: writable again.
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
            renamed = std::fs::rename(&from, &target);
        }
        match renamed {
            Ok(()) => {
                // A `.git` directory set aside is still a bare layout git would take for a
                // repository: its HEAD goes too (never through a `.git` that is a link).
                if std::fs::symlink_metadata(&target).is_ok_and(|m| m.is_dir()) {
                    let _ = std::fs::rename(target.join("HEAD"), target.join(QUARANTINED_HEAD));
                }
                done.moved.push((dir.to_path_buf(), target));
            }
            Err(err) => done.failed.push((dir.to_path_buf(), err.to_string())),
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_repositories_are_set_aside_and_links_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("old/.git")).unwrap();
        std::fs::create_dir_all(outside.path().join("repo/.git")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("repo"), dir.path().join("link")).unwrap();
        let before = scan(dir.path(), false, &[]);
        assert_eq!(
            before.repositories,
            vec![Repository::DotGit(dir.path().join("old/.git"))]
        );
        std::fs::create_dir_all(dir.path().join("new/deep/.git/hooks")).unwrap();
        std::fs::write(dir.path().join(".git"), "gitdir: /elsewhere").unwrap();
        // A bare layout with no `.git` at all.
        let bare = dir.path().join("bare");
        std::fs::create_dir_all(bare.join("objects")).unwrap();
        std::fs::create_dir_all(bare.join("refs")).unwrap();
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        // A HEAD that is a symbolic link to refs/… (git takes it), with `objects` a link.
        let linked = dir.path().join("linked");
        std::fs::create_dir_all(linked.join("refs/heads")).unwrap();
        std::os::unix::fs::symlink("refs/heads/main", linked.join("HEAD")).unwrap();
        std::os::unix::fs::symlink(bare.join("objects"), linked.join("objects")).unwrap();
        // A worktree-like layout: HEAD and a `commondir` naming where objects and refs are.
        let common = dir.path().join("common");
        std::fs::create_dir_all(&common).unwrap();
        std::fs::write(
            common.join("HEAD"),
            "0123456789abcdef0123456789abcdef01234567\n",
        )
        .unwrap();
        std::fs::write(common.join("commondir"), "../bare\n").unwrap();
        // A `.git` that is a link to a repository outside: set aside, what it leads to not
        // touched.
        std::fs::create_dir_all(dir.path().join("via")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("repo/.git"),
            dir.path().join("via/.git"),
        )
        .unwrap();
        std::fs::write(
            outside.path().join("repo/.git/HEAD"),
            "ref: refs/heads/main\n",
        )
        .unwrap();
        let done = quarantine_new(dir.path(), &before);
        assert_eq!(done.moved.len(), 6, "{:?}", done.moved);
        assert!(
            std::fs::symlink_metadata(linked.join("HEAD.wright-quarantined"))
                .unwrap()
                .is_symlink()
        );
        assert!(common.join("HEAD.wright-quarantined").is_file());
        assert!(outside.path().join("repo/.git/HEAD").is_file());
        assert!(done.failed.is_empty() && done.unreadable.is_empty());
        assert!(dir.path().join("old/.git").is_dir());
        assert!(dir
            .path()
            .join("new/deep/.git.wright-quarantined/hooks")
            .is_dir());
        assert!(dir.path().join(".git.wright-quarantined").is_file());
        assert!(bare.join("HEAD.wright-quarantined").is_file() && !bare.join("HEAD").exists());
        assert!(outside.path().join("repo/.git").is_dir());
    }
}
