//! Paths bound into a sandbox, resolved without following a link: the mount APIs (the
//! Docker Engine's, `mount(2)` by name) take path strings and resolve them again at each
//! start, so a directory the agent swapped for a link would bind something else (another
//! repository's `.git`) where a protected path was. `pin` walks a path one component at
//! a time from `/` (or from a directory already pinned), each opened `O_PATH|O_NOFOLLOW`
//! relative to its parent, and refuses when a component is a link, naming it and where it
//! leads. A `Pinned` holds the descriptor of what was found and its device and inode, so
//! the caller can bind through the descriptor (`/proc/self/fd/N`) or check afterwards
//! that what got mounted is this very file.
//!
//! (A component-by-component walk rather than one `openat2(RESOLVE_NO_SYMLINKS)`: the
//! error must say which component is the link, for the user to put the directory back.)

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use nix::sys::stat::SFlag;
use std::os::fd::AsFd;
use std::os::fd::AsRawFd;
use std::os::fd::BorrowedFd;
use std::os::fd::OwnedFd;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;

/// What identifies a file on this machine while it exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

impl std::fmt::Display for FileId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "device {} inode {}", self.dev, self.ino)
    }
}

/// A path resolved without links, held open.
#[derive(Debug)]
pub struct Pinned {
    path: PathBuf,
    fd: OwnedFd,
    id: FileId,
}

impl Pinned {
    /// The path walked (absolute, no `.`, `..` or link in it).
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn id(&self) -> FileId {
        self.id
    }

    /// The `O_PATH` descriptor of what was found.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// A name that the kernel resolves to this very file, whatever happens to `path`
    /// (for `mount(2)`, with `proc` where procfs is mounted).
    pub fn proc_path(&self, proc: &Path) -> PathBuf {
        proc.join("self/fd").join(self.fd.as_raw_fd().to_string())
    }

    /// `relative` below this directory, no component a link.
    pub fn pin_below(&self, relative: &Path) -> Result<Pinned, PinError> {
        walk(
            self.fd.try_clone().map_err(|e| PinError::Io {
                path: self.path.clone(),
                source: e,
            })?,
            self.path.clone(),
            relative,
        )
    }
}

/// Why a path could not be pinned.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    /// A component is a symbolic link (where a directory, or the file, was expected).
    #[error("{} is a symbolic link{}, not a directory or file", .link.display(), leads_to(.target))]
    Link {
        link: PathBuf,
        target: Option<PathBuf>,
    },
    /// A component does not exist.
    #[error("{} does not exist", .path.display())]
    Missing { path: PathBuf },
    /// A component before the last is not a directory.
    #[error("{} is not a directory", .path.display())]
    NotDirectory { path: PathBuf },
    /// Not a plain absolute path (`..`, or relative).
    #[error("{} is not a plain absolute path", .path.display())]
    NotPlain { path: PathBuf },
    #[error("cannot open {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn leads_to(target: &Option<PathBuf>) -> String {
    target
        .as_ref()
        .map(|t| format!(" (to {})", t.display()))
        .unwrap_or_default()
}

/// Starts the launcher's message when a link was refused (see `link_found`): the caller
/// turns it into `SandboxError::Tampered`, which advises no weaker sandbox.
pub const TAMPERED: &str = "tampered: ";

/// What to tell the user when `link` stands where a directory (or the file) of `wanted`
/// was.
pub fn link_found(wanted: &Path, link: &Path, target: Option<&Path>) -> String {
    let leads = target.map_or_else(String::new, |t| format!(" to {}", t.display()));
    let at = link.parent().unwrap_or(link);
    format!(
        "{link} is a symbolic link{leads} where a directory was (made by the agent?): wright keeps {wanted} read-only in the sandbox and will not follow a link to find it, since that would show the sandbox whatever the link leads to (another repository's .git). Look at what is in {at}, put the directory back in place of the link (for example `rm {link}` and move the original back to {link}), then resume again",
        link = link.display(),
        wanted = wanted.display(),
        at = at.display(),
    )
}

/// `path` (absolute), walked from `/` without following a link.
pub fn pin(path: &Path) -> Result<Pinned, PinError> {
    let root = Path::new("/");
    let relative = path.strip_prefix(root).map_err(|_| PinError::NotPlain {
        path: path.to_path_buf(),
    })?;
    let fd = nix::fcntl::open(root, flags(), Mode::empty()).map_err(|e| PinError::Io {
        path: root.to_path_buf(),
        source: e.into(),
    })?;
    walk(fd, root.to_path_buf(), relative)
}

/// The directory `path` leads to, links followed: the start of walks below it that a
/// link must not leave (`/proc/PID/root`, which is a link by nature, into the mount
/// namespace of another process).
pub fn open_dir(path: &Path) -> Result<Pinned, PinError> {
    let fd = nix::fcntl::open(
        path,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| PinError::Io {
        path: path.to_path_buf(),
        source: e.into(),
    })?;
    walk(fd, path.to_path_buf(), Path::new(""))
}

fn flags() -> OFlag {
    OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

fn walk(start: OwnedFd, start_path: PathBuf, relative: &Path) -> Result<Pinned, PinError> {
    let mut fd = start;
    let mut path = start_path;
    let mut stat = fstat(&fd, &path)?;
    for component in relative.components() {
        let name = match component {
            Component::Normal(name) => name,
            Component::CurDir => continue,
            _ => {
                return Err(PinError::NotPlain {
                    path: path.join(relative),
                })
            }
        };
        if !is(stat.st_mode, SFlag::S_IFDIR) {
            return Err(PinError::NotDirectory { path });
        }
        let child = path.join(name);
        let opened = match nix::fcntl::openat(&fd, name, flags(), Mode::empty()) {
            Ok(opened) => opened,
            Err(nix::errno::Errno::ENOENT) => return Err(PinError::Missing { path: child }),
            Err(e) => {
                return Err(PinError::Io {
                    path: child,
                    source: e.into(),
                })
            }
        };
        stat = fstat(&opened, &child)?;
        if is(stat.st_mode, SFlag::S_IFLNK) {
            let target = nix::fcntl::readlinkat(&fd, name).ok().map(PathBuf::from);
            return Err(PinError::Link {
                link: child,
                target,
            });
        }
        fd = opened;
        path = child;
    }
    Ok(Pinned {
        path,
        fd,
        id: FileId {
            dev: stat.st_dev,
            ino: stat.st_ino,
        },
    })
}

fn is(mode: nix::libc::mode_t, kind: SFlag) -> bool {
    mode & SFlag::S_IFMT.bits() == kind.bits()
}

fn fstat(fd: &OwnedFd, path: &Path) -> Result<nix::sys::stat::FileStat, PinError> {
    nix::sys::stat::fstat(fd).map_err(|e| PinError::Io {
        path: path.to_path_buf(),
        source: e.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_plain_path_is_pinned_with_its_device_and_inode() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().canonicalize().unwrap().join("a/b/.git");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("HEAD"), "ref").unwrap();
        let pinned = pin(&dir).unwrap();
        let meta = std::fs::metadata(&dir).unwrap();
        assert_eq!(pinned.path(), dir);
        assert_eq!(
            pinned.id(),
            FileId {
                dev: meta.dev(),
                ino: meta.ino()
            }
        );
        let file = pinned.pin_below(Path::new("HEAD")).unwrap();
        assert_eq!(
            file.id().ino,
            std::fs::metadata(dir.join("HEAD")).unwrap().ino()
        );
        // The descriptor names the same file through /proc.
        let through = std::fs::metadata(pinned.proc_path(Path::new("/proc"))).unwrap();
        assert_eq!(through.ino(), meta.ino());
    }

    #[test]
    fn a_link_in_any_component_is_refused_and_named() {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("ws/sub/inner/.git")).unwrap();
        std::fs::create_dir_all(root.join("other/inner/.git")).unwrap();
        std::fs::create_dir_all(root.join("other/ws/sub/inner/.git")).unwrap();
        let wanted = root.join("ws/sub/inner/.git");
        assert!(pin(&wanted).is_ok());
        // Each component in turn becomes a link to the same layout elsewhere.
        for swapped in ["ws", "ws/sub", "ws/sub/inner", "ws/sub/inner/.git"] {
            let at = root.join(swapped);
            let aside = root.join("aside");
            std::fs::rename(&at, &aside).unwrap();
            let elsewhere = root.join("other").join(swapped);
            std::os::unix::fs::symlink(&elsewhere, &at).unwrap();
            assert!(wanted.exists(), "the link leads somewhere ({swapped})");
            match pin(&wanted) {
                Err(PinError::Link { link, target }) => {
                    assert_eq!(link, at);
                    assert_eq!(target.as_deref(), Some(elsewhere.as_path()));
                }
                other => panic!("{swapped}: {other:?}"),
            }
            // A relative link too.
            std::fs::remove_file(&at).unwrap();
            std::os::unix::fs::symlink("../whatever", &at).unwrap();
            assert!(matches!(pin(&wanted), Err(PinError::Link { .. })));
            std::fs::remove_file(&at).unwrap();
            std::fs::rename(&aside, &at).unwrap();
            assert!(pin(&wanted).is_ok(), "restored ({swapped})");
        }
        let text = {
            std::fs::rename(root.join("ws/sub"), root.join("ws/sub.old")).unwrap();
            std::os::unix::fs::symlink(root.join("other"), root.join("ws/sub")).unwrap();
            pin(&wanted).unwrap_err().to_string()
        };
        assert_eq!(
            text,
            format!(
                "{} is a symbolic link (to {}), not a directory or file",
                root.join("ws/sub").display(),
                root.join("other").display()
            )
        );
    }

    #[test]
    fn missing_relative_and_dotdot_paths_are_refused() {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().canonicalize().unwrap();
        assert!(matches!(
            pin(&root.join("nope/x")),
            Err(PinError::Missing { path }) if path == root.join("nope")
        ));
        assert!(matches!(
            pin(Path::new("relative")),
            Err(PinError::NotPlain { .. })
        ));
        std::fs::create_dir(root.join("d")).unwrap();
        assert!(matches!(
            pin(&root.join("d/../d")),
            Err(PinError::NotPlain { .. })
        ));
        std::fs::write(root.join("f"), "").unwrap();
        assert!(matches!(
            pin(&root.join("f/x")),
            Err(PinError::NotDirectory { .. })
        ));
    }
}
