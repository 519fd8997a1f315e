//! What wright's own writes in the workspace leave alone: the paths the sandbox keeps
//! read-only (`wright_sandbox::Protected`, the very list the sandbox binds read-only),
//! known by device and inode, found once when the workspace is opened.
//!
//! A write goes through a directory descriptor opened beneath the workspace (`Target`);
//! before anything is written, that directory and every one above it up to the
//! workspace's root — reached by `..` from the descriptor, never by name — are compared
//! with the protected ones, and so is the entry written. So no name leads around the
//! check: not a link inside the workspace, not `..`, not a protected directory whose
//! parent the agent renamed. The agent cannot move anything into or out of a protected
//! directory (it is read-only in its sandbox; a hard link across the read-only mount is
//! refused by the kernel), so what the check found stays true while the write goes through
//! the same descriptor.

use crate::ToolError;
use crate::Workspace;
use cap_std::fs::Dir;
use nix::fcntl::AtFlags;
use nix::fcntl::OFlag;
use nix::sys::stat::FileStat;
use nix::sys::stat::Mode;
use std::ffi::OsString;
use std::os::fd::AsFd;
use std::os::fd::AsRawFd;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::path::PathBuf;
use wright_sandbox::Protected;
use wright_sandbox::ProtectedWhy;

/// Directories above a write's directory that are looked at, at most.
const MAX_DEPTH: usize = 4096;
/// Links at the end of a written path that are followed, at most (as the kernel's).
const MAX_LINKS: usize = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
}

impl Identity {
    fn of(stat: &FileStat) -> Self {
        Self {
            dev: stat.st_dev,
            ino: stat.st_ino,
        }
    }
}

#[derive(Debug)]
struct Guarded {
    id: Identity,
    /// As the model is told it, relative to the workspace.
    shown: PathBuf,
    why: ProtectedWhy,
}

/// The protected paths of a workspace, by identity.
#[derive(Debug, Default)]
pub struct Guard {
    root: Option<Identity>,
    guarded: Vec<Guarded>,
}

/// Whether a written path's last component, when it is a link, is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Last {
    /// Written through (an edit of a file reached by a link, as an editor does).
    Follow,
    /// Acted on itself (a removal).
    AsIs,
}

/// Where a write goes: a name in a directory opened beneath the workspace and checked.
pub struct Target {
    pub dir: Dir,
    pub name: OsString,
}

impl Guard {
    /// The identities of `protected`'s paths beneath `root` (the workspace, opened as
    /// `dir`): each path itself, and what it leads to when it is a link (the sandbox's
    /// read-only bind follows it). Paths that do not exist are not there to protect.
    pub fn open(root: &Path, dir: &Dir, protected: &Protected) -> Result<Self, ToolError> {
        let fail = |err: nix::Error| {
            ToolError::Fatal(format!(
                "cannot look at the workspace {}: {err}",
                root.display()
            ))
        };
        let mut guard = Self {
            root: Some(Identity::of(&nix::sys::stat::fstat(dir).map_err(fail)?)),
            guarded: Vec::new(),
        };
        for entry in protected.entries() {
            // Named as the sandbox names it, maybe not as the canonical root is: its
            // parent made canonical (not itself: a link there is the thing protected).
            let canonical = match (entry.path.parent(), entry.path.file_name()) {
                (Some(parent), Some(name)) => parent
                    .canonicalize()
                    .map(|parent| parent.join(name))
                    .unwrap_or_else(|_| entry.path.clone()),
                _ => entry.path.clone(),
            };
            let Ok(relative) = canonical.strip_prefix(root) else {
                continue;
            };
            let (Some(parent), Some(name)) = (relative.parent(), relative.file_name()) else {
                continue;
            };
            let parent = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            let Ok(parent) = dir.open_dir(parent) else {
                continue;
            };
            for flags in [AtFlags::AT_SYMLINK_NOFOLLOW, AtFlags::empty()] {
                if let Ok(stat) = nix::sys::stat::fstatat(&parent, name, flags) {
                    let id = Identity::of(&stat);
                    if !guard.guarded.iter().any(|g| g.id == id) {
                        guard.guarded.push(Guarded {
                            id,
                            shown: relative.to_path_buf(),
                            why: entry.why,
                        });
                    }
                }
            }
        }
        Ok(guard)
    }

    fn find(&self, id: Identity) -> Option<&Guarded> {
        self.guarded.iter().find(|g| g.id == id)
    }

    fn refusal(shown: &str, guarded: &Guarded) -> ToolError {
        ToolError::Model(format!(
            "{shown} is read-only to the agent: {} is {}, which the sandbox keeps read-only; nothing was changed",
            guarded.shown.display(),
            guarded.why.words()
        ))
    }

    /// Refuses when `dir` is a protected directory or beneath one: walks up by `..` from
    /// the descriptor to the workspace's root.
    pub fn check_dir(&self, dir: &impl AsFd, shown: &str) -> Result<(), ToolError> {
        let Some(root) = self.root.filter(|_| !self.guarded.is_empty()) else {
            return Ok(());
        };
        let fail = |err: nix::Error| {
            ToolError::Model(format!(
                "cannot tell where {shown} is, so it is not written: {err}"
            ))
        };
        let up = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let mut current: OwnedFd = nix::fcntl::openat(dir, ".", up, Mode::empty()).map_err(fail)?;
        for _ in 0..MAX_DEPTH {
            let id = Identity::of(&nix::sys::stat::fstat(&current).map_err(fail)?);
            if let Some(guarded) = self.find(id) {
                return Err(Self::refusal(shown, guarded));
            }
            if id == root {
                return Ok(());
            }
            let parent = nix::fcntl::openat(&current, "..", up, Mode::empty()).map_err(fail)?;
            let parent_id = Identity::of(&nix::sys::stat::fstat(&parent).map_err(fail)?);
            if parent_id == id {
                break;
            }
            current = parent;
        }
        // The top of the file system, or too deep, without meeting the workspace.
        Err(ToolError::Model(format!(
            "{shown} is not inside the workspace; only files inside it can be written"
        )))
    }

    /// Refuses when the entry `stat` describes is itself protected (a `.git` file).
    fn check_entry(&self, stat: &FileStat, shown: &str) -> Result<(), ToolError> {
        match self.find(Identity::of(stat)) {
            Some(guarded) => Err(Self::refusal(shown, guarded)),
            None => Ok(()),
        }
    }
}

impl Workspace {
    /// Where a write of `relative` goes: its directory opened beneath the workspace and
    /// checked against the protected paths, and its name there (itself checked when it
    /// exists). With `Last::Follow`, a link at the end is followed as long as it stays in
    /// the workspace, and where it leads is checked the same way.
    pub fn for_writing(&self, relative: &Path, last: Last) -> Result<Target, ToolError> {
        let shown = self.display(relative);
        let mut current = relative.to_path_buf();
        for _ in 0..MAX_LINKS {
            let name = current
                .file_name()
                .ok_or_else(|| ToolError::Model(format!("{shown} is not a file")))?
                .to_os_string();
            let parent = match current.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let dir = self
                .dir()
                .open_dir(&parent)
                .map_err(|err| self.open_error(&parent, err))?;
            self.guard().check_dir(&dir, &shown)?;
            let stat =
                match nix::sys::stat::fstatat(&dir, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW)
                {
                    Ok(stat) => stat,
                    Err(nix::Error::ENOENT) => return Ok(Target { dir, name }),
                    Err(err) => {
                        return Err(ToolError::Model(format!("cannot look at {shown}: {err}")))
                    }
                };
            self.guard().check_entry(&stat, &shown)?;
            let is_link = stat.st_mode & nix::libc::S_IFMT == nix::libc::S_IFLNK;
            if !is_link || last == Last::AsIs {
                return Ok(Target { dir, name });
            }
            current = self.link_target(&dir, &name, &shown)?;
        }
        Err(ToolError::Model(format!(
            "{shown} leads through too many symbolic links"
        )))
    }

    /// Where the link `name` in `dir` leads, relative to the workspace (refused when
    /// outside it): its target taken from the directory's real place, which the kernel
    /// tells (`/proc/self/fd`), so `..` in it means what it means there.
    fn link_target(&self, dir: &Dir, name: &OsString, shown: &str) -> Result<PathBuf, ToolError> {
        let fail = |err: nix::Error| ToolError::Model(format!("cannot follow {shown}: {err}"));
        let target = nix::fcntl::readlinkat(dir, name.as_os_str()).map_err(fail)?;
        let here = nix::fcntl::readlink(&PathBuf::from(format!(
            "/proc/self/fd/{}",
            dir.as_fd().as_raw_fd()
        )))
        .map_err(fail)?;
        let next = PathBuf::from(here).join(target);
        self.relative_path(&next, shown)
    }
}
