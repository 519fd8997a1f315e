//! The workspace of a container on an engine that does not see this machine's files
//! (`--docker-workspace copy`): sent in through the archive API when the container is
//! made, and kept in step around each command.
//!
//! Each tree (the workspace, and the read-only paths such as wright's scratch directory)
//! has the same path in the container as here, in a volume (the archive API may write a
//! volume although the image is read-only; the volume goes with the container): at the
//! tree itself when root owns it, else at its parent (see `Tree::volume`). Who is authoritative when:
//!
//! - before a command (`push`): this machine's copy. What wright's in-process tools
//!   changed since the last sync (a stat walk against the manifest of that sync: size,
//!   mtime and ctime in nanoseconds, inode, mode, link target) goes in as one archive; what
//!   they deleted is removed in the container.
//! - after a command (`pull`): the container's. The container lists what changed since
//!   the last pull (see `listing`), and those paths come out one archive each (past
//!   `PER_PATH_MAX` of them, on the first pull, or where the image's `find` cannot list,
//!   the whole workspace as one archive); everything is unpacked here as hostile input
//!   (see `unpack`), files compared by content so only what changed is written. What the
//!   manifest had and the container no longer lists is deleted here, unless it changed
//!   here meanwhile. Read-only trees never come back, nor protected paths.
//!
//! Cost: a push is a stat walk of each tree and an archive of what changed; a pull is a
//! listing (one `docker exec`) and one request per changed path (see docs/sandbox.md for
//! figures).

use super::engine;
use super::engine::refused;
use super::host::DockerHost;
use super::listing;
use super::tar::Writer;
use super::unpack;
use super::unpack::Names;
use crate::mode::SandboxError;
use std::collections::BTreeMap;
use std::io::Seek;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::path::PathBuf;

/// Most changed paths fetched one by one; past this, the whole tree in one archive.
const PER_PATH_MAX: usize = 64;

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
    /// When the last pull's listing started, here and by the container's clock; `None`
    /// before the first pull.
    last_listed: Option<(std::time::Instant, i64)>,
    /// Whether the image's `find` can list changes (else the whole tree comes out).
    listing_works: bool,
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
            last_listed: None,
            listing_works: true,
        }
    }

    /// Where its volume is mounted in the container: its own path when it belongs to
    /// root, else its parent directory, so that the archive makes the tree's top with its
    /// owner (the archive API never changes the owner of the directory it unpacks into,
    /// and a container without capabilities cannot either). A volume at a directory the
    /// image has starts with its content and mode (`/tmp` stays writable by all).
    pub(super) fn volume(&self) -> Result<&Path, SandboxError> {
        if !self.at_parent() {
            return Ok(&self.path);
        }
        self.path
            .parent()
            .filter(|parent| *parent != Path::new("/"))
            .ok_or_else(|| {
                refused(format!(
                    "{} is directly below /, and a copied workspace that root does not own is put in a volume at its parent directory: use a workspace one level deeper",
                    self.path.display()
                ))
            })
    }

    fn at_parent(&self) -> bool {
        self.owner.0 != 0
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
        let first = self.manifest.is_empty();
        if first || !changed.is_empty() {
            let archive = self.archive(&changed, first)?;
            let dest = self.volume()?.display().to_string();
            let name = container.to_string();
            engine::with_docker(host, |docker| async move {
                engine::upload(&docker, &name, &dest, archive).await
            })?;
            synced.sent = changed.len();
        }
        // A read-only tree's files belong to root there, beyond the container user's
        // reach: what wright removed here (its old command files) stays there, unread.
        if !gone.is_empty() && self.pull {
            remove_there(&gone)?;
            synced.removed_there = gone.len();
        }
        self.manifest = now;
        Ok(synced)
    }

    /// Brings back what the container changed in the tree (nothing for a read-only one).
    /// `exec` runs a command in the container as its user (the listing of what changed;
    /// without a listing, the whole tree comes out).
    pub(super) fn pull(
        &mut self,
        host: &DockerHost,
        container: &str,
        exec: impl FnOnce(&[String]) -> Result<Vec<u8>, SandboxError>,
    ) -> Result<Synced, SandboxError> {
        if !self.pull {
            return Ok(Synced::default());
        }
        let root = crate::pinned::pin(&self.path).map_err(|e| {
            refused(format!(
                "the workspace {} cannot be opened: {e}",
                self.path.display()
            ))
        })?;
        // As a bind mount would: what the container made belongs to the workspace's owner.
        let owner = nix::unistd::geteuid().is_root().then_some(self.owner);
        let started = std::time::Instant::now();
        let listing = if self.listing_works {
            // The first time, everything is new: the listing only sets the clock.
            let (since, elapsed) = self
                .last_listed
                .map_or((0, std::time::Duration::MAX), |(at, now)| {
                    (now, at.elapsed())
                });
            let listed = exec(&listing::command(&self.path, since, elapsed))
                .ok()
                .and_then(|out| listing::parse(&out, &self.path));
            // An image whose `find` cannot do it: the whole tree each time.
            self.listing_works = listed.is_some();
            listed
        } else {
            None
        };
        let clock = listing.as_ref().map(|listing| (started, listing.now));
        let (mut synced, names) = match listing {
            Some(listing)
                if self.last_listed.is_some() && listing.changed.len() <= PER_PATH_MAX =>
            {
                match self.pull_paths(host, container, &root, owner, &listing)? {
                    Some(synced) => (synced, listing.all),
                    None => self.pull_whole(host, container, &root, owner)?,
                }
            }
            _ => self.pull_whole(host, container, &root, owner)?,
        };
        self.last_listed = clock;
        synced.removed_here = self.remove_gone(&root, &names)?;
        self.manifest = walk(&self.path)?;
        Ok(synced)
    }

    /// The whole tree out of the container, unpacked here; with every name it holds.
    fn pull_whole(
        &self,
        host: &DockerHost,
        container: &str,
        root: &crate::pinned::Pinned,
        owner: Option<(u32, u32)>,
    ) -> Result<(Synced, Vec<PathBuf>), SandboxError> {
        let archive = download(host, container, &self.path)?;
        let done = unpack::unpack(archive, Names::BelowTop, root, &self.protected, owner)
            .map_err(|e| refused(format!("the workspace from the container {container}: {e}")))?;
        let synced = Synced {
            written_here: done.written,
            skipped: skipped_words(&done.skipped),
            ..Synced::default()
        };
        Ok((synced, done.names))
    }

    /// Only what the listing says changed, one path at a time; the directories it lists
    /// made here where missing. `None` when a path cannot be had (gone since the
    /// listing): the caller takes the whole tree instead.
    fn pull_paths(
        &self,
        host: &DockerHost,
        container: &str,
        root: &crate::pinned::Pinned,
        owner: Option<(u32, u32)>,
        listing: &listing::Listing,
    ) -> Result<Option<Synced>, SandboxError> {
        let mut synced = Synced::default();
        let protected = |path: &Path| self.protected.iter().any(|p| path.starts_with(p));
        for dir in listing.dirs.iter().filter(|dir| !protected(dir)) {
            if root.pin_below(dir).is_err() {
                match unpack::directory(root, dir, owner) {
                    Ok(_) => synced.written_here += 1,
                    Err(why) => synced.skipped.push(format!("{} ({why:?})", dir.display())),
                }
            }
        }
        for path in &listing.changed {
            if protected(path) {
                synced
                    .skipped
                    .push(format!("{} (Protected)", path.display()));
                continue;
            }
            let Ok(archive) = download(host, container, &self.path.join(path)) else {
                return Ok(None);
            };
            let parent = path.parent().unwrap_or(Path::new(""));
            let done = unpack::unpack(archive, Names::In(parent), root, &self.protected, owner)
                .map_err(|e| {
                    refused(format!(
                        "{} from the container {container}: {e}",
                        path.display()
                    ))
                })?;
            synced.written_here += done.written;
            synced.skipped.extend(skipped_words(&done.skipped));
        }
        Ok(Some(synced))
    }

    /// Removes here what the last sync had and the container no longer has, deepest
    /// first; only what is here as the last sync left it (a change made here since wins),
    /// never a protected path, never through a link.
    fn remove_gone(
        &self,
        root: &crate::pinned::Pinned,
        there: &[PathBuf],
    ) -> Result<usize, SandboxError> {
        let there: std::collections::HashSet<&PathBuf> = there.iter().collect();
        let mut removed = 0;
        for (path, stat) in self.manifest.iter().rev() {
            if there.contains(path) || self.protected.iter().any(|p| path.starts_with(p)) {
                continue;
            }
            let unchanged = std::fs::symlink_metadata(self.path.join(path))
                .ok()
                .and_then(|meta| Stat::of(&meta))
                .is_some_and(|now| now == *stat);
            let (Some(parent), Some(file)) = (path.parent(), path.file_name()) else {
                continue;
            };
            if !unchanged {
                continue;
            }
            if let Ok(dir) = root.pin_below(parent) {
                unpack::remove(&dir.proc_path(Path::new("/proc")).join(file))?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// An archive of `paths` (relative, parents first), named as `volume` needs, and of
    /// the tree's top when `top`; in a temporary file read from its start.
    fn archive(&self, paths: &[&PathBuf], top: bool) -> Result<std::fs::File, SandboxError> {
        let (uid, gid) = self.owner;
        let mut writer = Writer::new(std::io::BufWriter::new(tempfile::tempfile()?), uid, gid);
        let tar_error = |e: super::tar::TarError| {
            refused(format!("cannot archive {}: {e}", self.path.display()))
        };
        let base = match (self.at_parent(), self.path.file_name()) {
            (true, Some(name)) => PathBuf::from(name),
            _ => PathBuf::new(),
        };
        if top && self.at_parent() {
            let meta = std::fs::metadata(&self.path)?;
            writer
                .dir(base.as_os_str().as_bytes(), meta.mode(), meta.mtime())
                .map_err(tar_error)?;
        }
        for relative in paths {
            let here = self.path.join(relative);
            let name = base.join(relative);
            let name = name.as_os_str().as_bytes();
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

/// The archive of `path` in the container, in a temporary file read from its start.
fn download(
    host: &DockerHost,
    container: &str,
    path: &Path,
) -> Result<std::io::BufReader<std::fs::File>, SandboxError> {
    let mut archive = tempfile::tempfile()?;
    let (name, path) = (container.to_string(), path.display().to_string());
    let out = &mut archive;
    engine::with_docker(host, |docker| async move {
        engine::download(&docker, &name, &path, out).await
    })?;
    archive.rewind()?;
    Ok(std::io::BufReader::new(archive))
}

fn skipped_words(skipped: &[(String, unpack::Skip)]) -> Vec<String> {
    skipped
        .iter()
        .map(|(name, why)| format!("{name} ({why:?})"))
        .collect()
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
