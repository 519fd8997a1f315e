//! Walking a workspace beneath its descriptor: directories entered without following a
//! link, files read only when regular (opened without blocking), bounded in entries,
//! bytes and depth. The walk is a loop over an explicit stack (never recursion: a chain
//! of directories the agent made as deep as it likes costs wright no stack), holding one
//! descriptor per level it is in, and a directory deeper than `MAX_DEPTH` is not entered
//! but named as not looked at (paths that deep exceed `PATH_MAX` anyway).

use super::Bounds;
use super::SnapshotError;
use crate::Workspace;
use cap_std::fs::Dir;
use cap_std::fs::OpenOptions;
use cap_std::fs::OpenOptionsExt;
use cap_std::fs::PermissionsExt;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::path::PathBuf;

/// How many directories deep a walk goes: deeper ones are named, not entered. Far past
/// any project's tree, and few enough descriptors to hold at once.
pub const MAX_DEPTH: usize = 256;

/// What is at a path.
pub(super) enum Item {
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

pub(super) struct Found {
    /// `/`-separated relative paths, parents before children.
    pub items: Vec<(String, Item)>,
    pub left_out: Vec<String>,
    /// Directories listed in `items` but not entered (deeper than `MAX_DEPTH`).
    pub unseen: Vec<String>,
    /// The walk stopped at its bounds: anything may be missing from `items`.
    pub stopped: bool,
}

/// Every path beneath the workspace but `skip`, each file hashed (and, with `store`, its
/// content kept there by hash); with `strict`, more than `bounds` (or deeper than
/// `MAX_DEPTH`) is an error (a snapshot is whole or not at all); without, the walk stops
/// there and says so in `left_out`.
pub(super) fn walk(
    workspace: &Workspace,
    skip: &[PathBuf],
    bounds: Bounds,
    strict: bool,
    store: Option<&Path>,
) -> Result<Found, SnapshotError> {
    let mut walker = Walker {
        root: workspace.root(),
        store,
        skip,
        bounds,
        strict,
        bytes: 0,
        found: Found {
            items: Vec::new(),
            left_out: Vec::new(),
            unseen: Vec::new(),
            stopped: false,
        },
    };
    let dir = workspace
        .dir()
        .try_clone()
        .map_err(|err| walker.read_err("", err))?;
    walker.run(dir)?;
    Ok(walker.found)
}

struct Walker<'a> {
    root: &'a Path,
    store: Option<&'a Path>,
    skip: &'a [PathBuf],
    bounds: Bounds,
    strict: bool,
    bytes: u64,
    found: Found,
}

/// A directory being listed: its descriptor, its path with a trailing `/` (empty for the
/// root), and its names not yet looked at (sorted, the next last).
struct Level {
    dir: Dir,
    prefix: String,
    names: Vec<OsString>,
}

impl Walker<'_> {
    fn read_err(&self, path: &str, err: std::io::Error) -> SnapshotError {
        SnapshotError::Read {
            path: self.root.join(path).display().to_string(),
            err,
        }
    }

    fn too_big(&mut self, limit: String) -> Result<(), SnapshotError> {
        if self.strict {
            return Err(SnapshotError::TooBig {
                dir: self.root.display().to_string(),
                limit,
            });
        }
        if !self.found.stopped {
            self.found
                .left_out
                .push(format!("everything past {limit} (the walk stopped there)"));
            self.found.stopped = true;
        }
        Ok(())
    }

    fn level(&self, dir: Dir, prefix: String) -> Result<Level, SnapshotError> {
        let mut names: Vec<OsString> = dir
            .entries()
            .map_err(|err| self.read_err(&prefix, err))?
            .filter_map(Result::ok)
            .map(|entry| entry.file_name())
            .collect();
        // Reversed: `pop` takes them in order.
        names.sort_by(|a, b| b.cmp(a));
        Ok(Level { dir, prefix, names })
    }

    fn run(&mut self, root: Dir) -> Result<(), SnapshotError> {
        let mut stack = vec![self.level(root, String::new())?];
        loop {
            let depth = stack.len();
            let Some(level) = stack.last_mut() else {
                break;
            };
            if self.found.stopped {
                return Ok(());
            }
            let Some(name) = level.names.pop() else {
                stack.pop();
                continue;
            };
            let prefix = level.prefix.clone();
            let Ok(name_text) = std::str::from_utf8(name.as_bytes()) else {
                self.found.left_out.push(format!(
                    "{prefix}{} (a name that is not UTF-8)",
                    name.to_string_lossy()
                ));
                continue;
            };
            let path = format!("{prefix}{name_text}");
            if self.skip.iter().any(|s| Path::new(&path) == s) {
                continue;
            }
            if self.found.items.len() >= self.bounds.max_entries {
                self.too_big(format!("{} files and directories", self.bounds.max_entries))?;
                return Ok(());
            }
            let dir = &level.dir;
            let meta = match dir.symlink_metadata(&name) {
                Ok(meta) => meta,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                Err(err) => return Err(self.read_err(&path, err)),
            };
            let mode = meta.permissions().mode() & 0o7777;
            let kind = meta.file_type();
            if kind.is_symlink() {
                let target = dir
                    .read_link_contents(&name)
                    .map_err(|err| self.read_err(&path, err))?;
                match target.to_str() {
                    Some(target) => self.found.items.push((
                        path,
                        Item::Link {
                            target: target.to_string(),
                        },
                    )),
                    None => self
                        .found
                        .left_out
                        .push(format!("{path} (a link whose target is not UTF-8)")),
                }
            } else if kind.is_dir() {
                self.found.items.push((path.clone(), Item::Dir { mode }));
                if depth >= MAX_DEPTH {
                    if self.strict {
                        return Err(SnapshotError::TooBig {
                            dir: self.root.display().to_string(),
                            limit: format!("{MAX_DEPTH} levels of directories"),
                        });
                    }
                    self.found.left_out.push(format!(
                        "what is in {} (more than {MAX_DEPTH} directories deep: not looked at)",
                        shorten(&path)
                    ));
                    self.found.unseen.push(path);
                    continue;
                }
                let sub = open_dir_nofollow(dir, &name).map_err(|err| self.read_err(&path, err))?;
                let next = self.level(sub, format!("{path}/"))?;
                stack.push(next);
            } else if kind.is_file() {
                self.bytes += meta.len();
                if self.bytes > self.bounds.max_bytes {
                    self.too_big(format!("{} MiB", self.bounds.max_bytes >> 20))?;
                    return Ok(());
                }
                let (sha256, size) = hash_regular(dir, &name, meta.len(), self.store)
                    .map_err(|err| self.read_err(&path, err))?;
                self.found
                    .items
                    .push((path, Item::File { mode, size, sha256 }));
            } else {
                self.found
                    .left_out
                    .push(format!("{path} (not a file, a directory or a link)"));
            }
        }
        Ok(())
    }
}

/// A long path as a person can read it: its start and its end.
pub(crate) fn shorten(path: &str) -> String {
    const KEEP: usize = 60;
    if path.len() <= 2 * KEEP + 10 {
        return path.to_string();
    }
    let start = path.char_indices().nth(KEEP).map_or(0, |(i, _)| i);
    let end = path
        .char_indices()
        .rev()
        .nth(KEEP)
        .map_or(path.len(), |(i, _)| i);
    format!(
        "{}…{} ({} levels)",
        &path[..start],
        &path[end..],
        path.matches('/').count() + 1
    )
}

/// The directory holding `path` (relative, `/`-separated) beneath `root`, and its last
/// name: each directory on the way opened from the one before without following a link,
/// one descriptor held at a time, so no path is ever longer than a name (`PATH_MAX` does
/// not bound it) and nothing the agent planted leads elsewhere.
pub fn parent_dir(root: &Dir, path: &str) -> std::io::Result<(Dir, OsString)> {
    let mut names = path.split('/').filter(|n| !n.is_empty() && *n != ".");
    let Some(mut last) = names.next() else {
        return Err(std::io::Error::other("not a path beneath the workspace"));
    };
    let mut dir = root.try_clone()?;
    for name in names {
        if last == ".." {
            return Err(std::io::Error::other("not a path beneath the workspace"));
        }
        dir = open_dir_nofollow(&dir, std::ffi::OsStr::new(last))?;
        last = name;
    }
    if last == ".." {
        return Err(std::io::Error::other("not a path beneath the workspace"));
    }
    Ok((dir, OsString::from(last)))
}

/// The regular file `name` in `dir`, opened without following a link or blocking on a
/// FIFO put there meanwhile, to be read no further than `expected` bytes plus a bit.
pub fn open_regular(
    dir: &Dir,
    name: &std::ffi::OsStr,
    expected: u64,
) -> std::io::Result<std::io::Take<std::fs::File>> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY | nix::libc::O_NOFOLLOW);
    let file = dir.open_with(name, &options)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(file.into_std().take(expected.saturating_add(1 << 20)))
}

/// The content of the regular file `name` in `dir` (see `open_regular`), whole.
pub(super) fn read_regular(
    dir: &Dir,
    name: &std::ffi::OsStr,
    expected: u64,
) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular(dir, name, expected)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The SHA-256 and size of the regular file `name` in `dir`, read in pieces (a file of any
/// size costs wright no more than a buffer); with `store`, its content is kept there
/// under its hash.
pub(super) fn hash_regular(
    dir: &Dir,
    name: &std::ffi::OsStr,
    expected: u64,
    store: Option<&Path>,
) -> std::io::Result<(String, u64)> {
    use sha2::Digest;
    use std::io::Write;
    let mut file = open_regular(dir, name, expected)?;
    let mut kept = match store {
        Some(store) => Some(tempfile::NamedTempFile::new_in(store)?),
        None => None,
    };
    let mut hasher = sha2::Sha256::new();
    let mut buffer = vec![0u8; 64 << 10];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        if let Some(kept) = kept.as_mut() {
            kept.write_all(&buffer[..n])?;
        }
        size += n as u64;
    }
    let sha256: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if let (Some(kept), Some(store)) = (kept, store) {
        let blob = store.join(&sha256);
        if !blob.exists() {
            kept.persist(&blob).map_err(|err| err.error)?;
        }
    }
    Ok((sha256, size))
}

/// The directory `name` in `dir`, refused if it is a link.
pub fn open_dir_nofollow(dir: &Dir, name: &std::ffi::OsStr) -> std::io::Result<Dir> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(nix::libc::O_DIRECTORY | nix::libc::O_NOFOLLOW);
    let file = dir.open_with(name, &options)?;
    Ok(Dir::from_std_file(file.into_std()))
}
