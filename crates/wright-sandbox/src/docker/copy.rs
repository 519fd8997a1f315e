//! The workspace of a container on an engine that does not see this machine's files
//! (`--docker-workspace copy`): sent in through the archive API when the container is
//! made, and kept in step around each command.
//!
//! Each tree (the workspace, and the read-only paths such as wright's scratch directory)
//! lives in the container in a volume of its own at the same path as here (the archive
//! API may write a volume although the image is read-only; the volume goes with the
//! container). Who is authoritative when:
//!
//! - before a command (`push`): this machine's copy. What wright's in-process tools
//!   changed since the last sync (a stat walk against the manifest of that sync: size,
//!   mtime and ctime in nanoseconds, inode, mode, link target) goes in as one archive; what
//!   they deleted is removed in the container.
//! - after a command (`pull`): the container's. The workspace comes out as one archive
//!   and is unpacked here as hostile input (see `unpack`); files are compared by content,
//!   so only what changed is written; what the manifest had and the container no longer
//!   has is deleted here, unless it changed here meanwhile. Read-only trees never come
//!   back, nor protected paths.
//!
//! Cost: a push is a stat walk of each tree and an archive of what changed; a pull moves
//! the whole workspace out of the engine each time (see docs/sandbox.md for figures).

use super::engine;
use super::engine::refused;
use super::host::DockerHost;
use super::tar::Writer;
use super::unpack;
use crate::mode::SandboxError;
use std::collections::BTreeMap;
use std::io::Seek;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::path::PathBuf;

/// What a path was at the last sync, on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stat {
    kind: u8,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    ino: u64,
    mode: u32,
}

impl Stat {
    fn of(meta: &std::fs::Metadata) -> Option<Self> {
        let kind = if meta.file_type().is_symlink() {
            b'l'
        } else if meta.is_dir() {
            b'd'
        } else if meta.is_file() {
            b'f'
        } else {
            return None;
        };
        Some(Self {
            kind,
            size: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            ino: meta.ino(),
            mode: meta.mode(),
        })
    }
}

/// One directory tree copied into the container.
#[derive(Debug)]
pub(super) struct Tree {
    /// Canonical, on this machine; the same path in the container.
    path: PathBuf,
    /// Owner of what is written in the container (`uid:gid`).
    owner: (u32, u32),
    /// Brought back after each command (the workspace), or only sent in (read-only).
    pull: bool,
    /// Relative paths never brought back (a protected `.git`, …).
    protected: Vec<PathBuf>,
    manifest: BTreeMap<PathBuf, Stat>,
}

/// What a sync did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Synced {
    pub sent: usize,
    pub removed_there: usize,
    pub written_here: usize,
    pub removed_here: usize,
    /// Entries of the container's archive not brought back, with why.
    pub skipped: Vec<String>,
}

impl Tree {
    pub(super) fn new(
        path: PathBuf,
        owner: (u32, u32),
        pull: bool,
        protected: Vec<PathBuf>,
    ) -> Self {
        Self {
            path,
            owner,
            pull,
            protected,
            manifest: BTreeMap::new(),
        }
    }

    /// Where it is, here and in the container (where a volume is mounted there).
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Sends what changed here since the last sync (all of it the first time), and removes
    /// in the container what was deleted here.
    pub(super) fn push(
        &mut self,
        host: &DockerHost,
        container: &str,
        remove_there: impl FnOnce(&[PathBuf]) -> Result<(), SandboxError>,
    ) -> Result<Synced, SandboxError> {
        let now = walk(&self.path)?;
        let changed: Vec<&PathBuf> = now
            .iter()
            .filter(|(path, stat)| self.manifest.get(*path) != Some(stat))
            .map(|(path, _)| path)
            .collect();
        let gone: Vec<PathBuf> = self
            .manifest
            .keys()
            .filter(|path| !now.contains_key(*path))
            .map(|path| self.path.join(path))
            .collect();
        let mut synced = Synced::default();
        if !changed.is_empty() {
            let archive = self.archive(&changed)?;
            let dest = self.path.display().to_string();
            let name = container.to_string();
            engine::with_docker(host, |docker| async move {
                engine::upload(&docker, &name, &dest, archive).await
            })?;
            synced.sent = changed.len();
        }
        if !gone.is_empty() {
            remove_there(&gone)?;
            synced.removed_there = gone.len();
        }
        self.manifest = now;
        Ok(synced)
    }

    /// Brings back what the container changed in the tree (nothing for a read-only one).
    pub(super) fn pull(
        &mut self,
        host: &DockerHost,
        container: &str,
    ) -> Result<Synced, SandboxError> {
        if !self.pull {
            return Ok(Synced::default());
        }
        let mut archive = tempfile::tempfile()?;
        let (name, path) = (container.to_string(), self.path.display().to_string());
        let out = &mut archive;
        engine::with_docker(host, |docker| async move {
            engine::download(&docker, &name, &path, out).await
        })?;
        archive.rewind()?;
        let root = crate::pinned::pin(&self.path).map_err(|e| {
            refused(format!(
                "the workspace {} cannot be opened: {e}",
                self.path.display()
            ))
        })?;
        // As a bind mount would: what the container made belongs to the workspace's owner.
        let owner = nix::unistd::geteuid().is_root().then_some(self.owner);
        let done = unpack::unpack(
            std::io::BufReader::new(archive),
            &root,
            &self.protected,
            owner,
        )
        .map_err(|e| refused(format!("the workspace from the container {container}: {e}")))?;
        let mut synced = Synced {
            written_here: done.written,
            skipped: done
                .skipped
                .iter()
                .map(|(name, why)| format!("{name} ({why:?})"))
                .collect(),
            ..Synced::default()
        };
        let there: std::collections::HashSet<&PathBuf> = done.names.iter().collect();
        // Deepest first; only what is here as the last sync left it (a change made here
        // since wins), never a protected path.
        for (path, stat) in self.manifest.iter().rev() {
            if there.contains(path) || self.protected.iter().any(|p| path.starts_with(p)) {
                continue;
            }
            let here = self.path.join(path);
            let unchanged = std::fs::symlink_metadata(&here)
                .ok()
                .and_then(|meta| Stat::of(&meta))
                .is_some_and(|now| now == *stat);
            let (Some(parent), Some(file)) = (path.parent(), path.file_name()) else {
                continue;
            };
            if !unchanged {
                continue;
            }
            // Through the pinned parent: no link on the way is followed.
            if let Ok(dir) = root.pin_below(parent) {
                unpack::remove(&dir.proc_path(Path::new("/proc")).join(file))?;
                synced.removed_here += 1;
            }
        }
        self.manifest = walk(&self.path)?;
        Ok(synced)
    }

    /// An archive of `paths` (relative, parents first), in a temporary file read from its
    /// start.
    fn archive(&self, paths: &[&PathBuf]) -> Result<std::fs::File, SandboxError> {
        let (uid, gid) = self.owner;
        let mut writer = Writer::new(std::io::BufWriter::new(tempfile::tempfile()?), uid, gid);
        let tar_error = |e: super::tar::TarError| {
            refused(format!("cannot archive {}: {e}", self.path.display()))
        };
        for relative in paths {
            let here = self.path.join(relative);
            let name = relative.as_os_str().as_bytes();
            // Gone or changed since the walk: the next push sends it.
            let Ok(meta) = std::fs::symlink_metadata(&here) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&here)?;
                writer
                    .symlink(name, target.as_os_str().as_bytes(), meta.mtime())
                    .map_err(tar_error)?;
            } else if meta.is_dir() {
                writer
                    .dir(name, meta.mode(), meta.mtime())
                    .map_err(tar_error)?;
            } else if meta.is_file() {
                let mut file = std::fs::File::open(&here)?;
                let size = file.metadata()?.len();
                writer
                    .file(name, meta.mode(), meta.mtime(), size, &mut file)
                    .map_err(tar_error)?;
            }
        }
        let buffered = writer.finish().map_err(tar_error)?;
        let mut file = buffered
            .into_inner()
            .map_err(|e| refused(format!("cannot archive {}: {e}", self.path.display())))?;
        file.rewind()?;
        Ok(file)
    }
}

/// Every directory, file and link below `root` (not `root` itself), by relative path;
/// links are not followed, devices and FIFOs left out.
fn walk(root: &Path) -> Result<BTreeMap<PathBuf, Stat>, SandboxError> {
    let mut found = BTreeMap::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let entries = match std::fs::read_dir(root.join(&relative)) {
            Ok(entries) => entries,
            // Removed while walked: it is gone.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e.into()),
        };
        for entry in entries {
            let entry = entry?;
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            let Some(stat) = Stat::of(&meta) else {
                continue;
            };
            let path = relative.join(entry.file_name());
            if stat.kind == b'd' {
                pending.push(path.clone());
            }
            found.insert(path, stat);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_sees_changes_and_never_enters_links() {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/f"), "1").unwrap();
        std::os::unix::fs::symlink("/etc", root.join("etc")).unwrap();
        let first = walk(&root).unwrap();
        let names: Vec<&Path> = first.keys().map(PathBuf::as_path).collect();
        assert_eq!(
            names,
            [
                Path::new("a"),
                Path::new("a/b"),
                Path::new("a/b/f"),
                Path::new("etc")
            ]
        );
        std::fs::write(root.join("a/b/f"), "2").unwrap();
        let second = walk(&root).unwrap();
        assert_ne!(first[Path::new("a/b/f")], second[Path::new("a/b/f")]);
        assert_eq!(first[Path::new("etc")], second[Path::new("etc")]);
    }
}
