//! The files of the workspace (or of a directory in it) that `grep` and `glob` look at,
//! found by wright's own walk beneath the workspace's descriptor: each directory is opened
//! from its parent's descriptor (`cap-std`), so a directory swapped for a link while the
//! walk runs cannot lead it outside, and links are never followed at all — a link to
//! `/etc/passwd` in the workspace is neither listed nor read. `.git` is skipped, and so is
//! whatever the workspace's `.gitignore` files (and `.git/info/exclude`) ignore; those
//! files are read beneath the descriptor too, and only their patterns are used.

use crate::ToolError;
use crate::Workspace;
use cap_std::fs::Dir;
use cap_std::fs::OpenOptions;
use cap_std::fs::OpenOptionsExt;
use ignore::gitignore::Gitignore;
use ignore::gitignore::GitignoreBuilder;
use std::ffi::OsStr;
use std::io::Read;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;
use std::time::SystemTime;

/// Files looked at, at most, in one walk: a bound on the time a call can take.
pub const MAX_FILES: usize = 50_000;
/// Directories deeper than this are not entered.
const MAX_DEPTH: usize = 64;
/// A `.gitignore` larger than this is not read.
const MAX_IGNORE_FILE: u64 = 1 << 20;

/// A regular file the walk found, and how to open it.
pub struct FileAt<'a> {
    /// Its directory, opened beneath the workspace's descriptor.
    pub dir: &'a Dir,
    pub name: &'a OsStr,
    /// Relative to the workspace root.
    pub path: &'a Path,
    pub len: u64,
    pub modified: SystemTime,
}

impl FileAt<'_> {
    /// Opens the file for reading, beneath its directory and without following a link;
    /// `None` if it is no longer a regular file there.
    pub fn open(&self) -> Option<std::fs::File> {
        let mut options = OpenOptions::new();
        options
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY | nix::libc::O_NOFOLLOW);
        let file = self.dir.open_with(self.name, &options).ok()?.into_std();
        file.metadata()
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map(|_| file)
    }
}

/// What the visitor wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visit {
    Continue,
    Stop,
}

/// How a walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Every file was visited.
    Complete,
    /// The visitor stopped it.
    Stopped,
    /// `MAX_FILES` were visited first.
    TooMany,
}

/// What a path given to `grep` or `glob` names.
pub enum Start {
    Dir(PathBuf),
    File(PathBuf),
}

/// The path the model gave, made relative to the workspace and checked to be a directory
/// or a regular file there (reached beneath the descriptor).
pub fn start(workspace: &Workspace, raw: Option<&str>) -> Result<Start, ToolError> {
    let relative = workspace.relative(raw.unwrap_or("."))?;
    let shown = workspace.display(&relative);
    let meta = workspace
        .dir()
        .symlink_metadata(&relative)
        .map_err(|err| workspace.open_error(&relative, err))?;
    if meta.is_dir() {
        return Ok(Start::Dir(relative));
    }
    if meta.is_file() {
        return Ok(Start::File(relative));
    }
    if meta.file_type().is_symlink() {
        return Err(ToolError::Model(format!(
            "{shown} is a symbolic link; links are not followed, search the place it points to inside the workspace"
        )));
    }
    Err(ToolError::Model(format!(
        "{shown} is not a file or a directory"
    )))
}

/// Visits the regular files under `start` (a directory, relative), in name order, that
/// no ignore file excludes.
pub fn walk(
    workspace: &Workspace,
    start: &Path,
    mut visit: impl FnMut(&FileAt) -> Visit,
) -> Result<Ended, ToolError> {
    // The ignore files of the directories above `start`, root first (`start`'s own are
    // read as the walk enters it).
    let mut rules = Vec::new();
    let mut above = PathBuf::new();
    let mut dir = workspace
        .dir()
        .try_clone()
        .map_err(|err| workspace.open_error(Path::new("."), err))?;
    let parts: Vec<&OsStr> = start
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    for name in parts {
        rules.extend(ignore_rules(
            workspace,
            &dir,
            &above,
            above.as_os_str().is_empty(),
        ));
        above.push(name);
        dir = dir
            .open_dir(name)
            .map_err(|err| workspace.open_error(&above, err))?;
    }
    let mut walker = Walker {
        workspace,
        rules,
        visited: 0,
        visit: &mut visit,
    };
    walker.directory(&dir, &above, 0)
}

struct Walker<'w, 'v> {
    workspace: &'w Workspace,
    /// The ignore rules in force, shallowest first.
    rules: Vec<Gitignore>,
    visited: usize,
    visit: &'v mut dyn FnMut(&FileAt) -> Visit,
}

impl Walker<'_, '_> {
    fn directory(&mut self, dir: &Dir, path: &Path, depth: usize) -> Result<Ended, ToolError> {
        let added = ignore_rules(self.workspace, dir, path, path.as_os_str().is_empty());
        let pushed = added.len();
        self.rules.extend(added);
        let ended = self.entries(dir, path, depth);
        self.rules.truncate(self.rules.len() - pushed);
        ended
    }

    fn entries(&mut self, dir: &Dir, path: &Path, depth: usize) -> Result<Ended, ToolError> {
        // A directory that cannot be read (no permission, gone) is passed over.
        let Ok(entries) = dir.entries() else {
            return Ok(Ended::Complete);
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|entry| entry.file_name());
        for entry in entries {
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let relative = path.join(&name);
            if kind.is_dir() {
                if name == ".git" || depth + 1 > MAX_DEPTH || self.ignored(&relative, true) {
                    continue;
                }
                let Ok(sub) = entry.open_dir() else {
                    continue;
                };
                match self.directory(&sub, &relative, depth + 1)? {
                    Ended::Complete => {}
                    other => return Ok(other),
                }
            } else if kind.is_file() {
                if self.ignored(&relative, false) {
                    continue;
                }
                // The entry's own metadata: a link is never followed to get it.
                let Ok(meta) = entry.metadata() else {
                    continue;
                };
                if self.visited >= MAX_FILES {
                    return Ok(Ended::TooMany);
                }
                self.visited += 1;
                let file = FileAt {
                    dir,
                    name: &name,
                    path: &relative,
                    len: meta.len(),
                    modified: meta
                        .modified()
                        .map(|time| time.into_std())
                        .unwrap_or(SystemTime::UNIX_EPOCH),
                };
                if (self.visit)(&file) == Visit::Stop {
                    return Ok(Ended::Stopped);
                }
            }
            // Links, FIFOs, sockets and devices are passed over.
        }
        Ok(Ended::Complete)
    }

    /// Whether the deepest rule that has a say about `relative` ignores it.
    fn ignored(&self, relative: &Path, is_dir: bool) -> bool {
        let full = self.workspace.root().join(relative);
        for rules in self.rules.iter().rev() {
            let matched = rules.matched(&full, is_dir);
            if matched.is_ignore() {
                return true;
            }
            if matched.is_whitelist() {
                return false;
            }
        }
        false
    }
}

/// The rules of `dir`'s `.gitignore` and `.ignore` (and, at the root, of
/// `.git/info/exclude`), read beneath `dir` without following a link. A file that
/// cannot be read or parsed adds nothing.
fn ignore_rules(workspace: &Workspace, dir: &Dir, path: &Path, root: bool) -> Vec<Gitignore> {
    let base = workspace.root().join(path);
    let mut names = vec![".gitignore", ".ignore"];
    if root {
        names.insert(0, ".git/info/exclude");
    }
    names
        .into_iter()
        .filter_map(|name| {
            let text = read_small(dir, Path::new(name))?;
            let mut builder = GitignoreBuilder::new(&base);
            for line in text.lines() {
                // A line that is not a valid pattern is skipped, as git does.
                let _ = builder.add_line(None, line);
            }
            builder.build().ok().filter(|rules| !rules.is_empty())
        })
        .collect()
}

/// A small regular file beneath `dir`, as text; never through a link.
fn read_small(dir: &Dir, path: &Path) -> Option<String> {
    let meta = dir.symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_IGNORE_FILE {
        return None;
    }
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY | nix::libc::O_NOFOLLOW);
    let file = dir.open_with(path, &options).ok()?.into_std();
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_IGNORE_FILE).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}
