//! How much disk the agent's files take: cgroups have no disk-space controller, and a
//! quota needs root and a prepared file system, so the growth of what the sandbox may
//! write (the workspace, the private tmp and home) is measured instead, at each step.
//!
//! The check is cheap when nothing grew: the free space of the file systems holding those
//! directories (one `statvfs` each) is compared with the start. Only when a file system
//! has lost more than the limit are the directories themselves walked (without following
//! links or leaving their file system) and compared with their size at the start, so a
//! busy neighbour on the same disk does not stop the run by itself.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::thread::JoinHandle;

pub struct DiskUse {
    paths: Vec<PathBuf>,
    limit: u64,
    /// Used bytes of each file system at the start, by device (measured at once, or
    /// with the directories once the watch is ready).
    filesystems: OnceLock<Vec<(PathBuf, u64)>>,
    /// The directories' own size at the start (and the file systems', when not measured
    /// at once), measured in the background.
    measuring: Mutex<Option<JoinHandle<Measured>>>,
    baseline: OnceLock<u64>,
}

type Measured = (Option<Vec<(PathBuf, u64)>>, u64);

impl DiskUse {
    /// Starts watching `paths` for growth past `limit` bytes.
    pub fn start(paths: Vec<PathBuf>, limit: u64) -> Self {
        Self::start_after(paths, limit, None)
    }

    /// The same, the start measured once `ready` has answered (the agent's clone still
    /// being checked out: its files are not the agent's growth).
    pub fn start_after(paths: Vec<PathBuf>, limit: u64, ready: Option<crate::Verdict>) -> Self {
        let filesystems = OnceLock::new();
        if ready.is_none() {
            let _ = filesystems.set(used_by_filesystem(&paths));
        }
        let walked = paths.clone();
        // A large repository takes a moment to walk: not on the way to the first step.
        let measuring = std::thread::spawn(move || match ready {
            Some(ready) => {
                let _ = ready.wait();
                (Some(used_by_filesystem(&walked)), size_of(&walked))
            }
            None => (None, size_of(&walked)),
        });
        Self {
            paths,
            limit,
            filesystems,
            measuring: Mutex::new(Some(measuring)),
            baseline: OnceLock::new(),
        }
    }

    /// Half the free space where `path` is: the default limit.
    pub fn half_the_free_space(path: &Path) -> Option<u64> {
        let stat = nix::sys::statvfs::statvfs(path).ok()?;
        Some(stat.blocks_available() as u64 * stat.fragment_size() as u64 / 2)
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// How much the watched directories grew, if more than the limit.
    pub fn exceeded(&self) -> Option<u64> {
        let filesystems = match self.filesystems.get() {
            Some(measured) => measured,
            None => {
                self.baseline();
                self.filesystems.get_or_init(Vec::new)
            }
        };
        let grew_enough = filesystems.iter().any(|(path, start)| {
            used_bytes(path).is_some_and(|now| now.saturating_sub(*start) > self.limit)
        });
        if !grew_enough {
            return None;
        }
        let growth = size_of(&self.paths).saturating_sub(self.baseline());
        (growth > self.limit).then_some(growth)
    }
}

impl DiskUse {
    /// The directories' size at the start (waiting for its measure if it is under way).
    pub fn baseline(&self) -> u64 {
        *self.baseline.get_or_init(|| {
            let handle = self
                .measuring
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .take();
            let (filesystems, size) = handle.and_then(|h| h.join().ok()).unwrap_or_default();
            if let Some(filesystems) = filesystems {
                let _ = self.filesystems.set(filesystems);
            }
            size
        })
    }
}

/// Used bytes of the file systems holding `paths`, one each.
fn used_by_filesystem(paths: &[PathBuf]) -> Vec<(PathBuf, u64)> {
    let mut seen = HashSet::new();
    paths
        .iter()
        .filter(|path| std::fs::metadata(path).is_ok_and(|meta| seen.insert(meta.dev())))
        .filter_map(|path| Some((path.clone(), used_bytes(path)?)))
        .collect()
}

/// Bytes in use on the file system holding `path`.
fn used_bytes(path: &Path) -> Option<u64> {
    let stat = nix::sys::statvfs::statvfs(path).ok()?;
    let used = stat.blocks().saturating_sub(stat.blocks_free());
    Some(used as u64 * stat.fragment_size() as u64)
}

/// Bytes the files under `paths` take on disk, each file counted once.
fn size_of(paths: &[PathBuf]) -> u64 {
    let mut seen = HashSet::new();
    paths.iter().map(|path| walk(path, &mut seen)).sum()
}

fn walk(dir: &Path, seen: &mut HashSet<(u64, u64)>) -> u64 {
    let Ok(top) = std::fs::symlink_metadata(dir) else {
        return 0;
    };
    let mut total = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.dev() != top.dev() || !seen.insert((meta.dev(), meta.ino())) {
                continue;
            }
            total += meta.blocks() * 512;
            if meta.is_dir() {
                pending.push(entry.path());
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_past_the_limit_is_seen_and_links_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/usr", dir.path().join("usr")).unwrap();
        let watch = DiskUse::start(vec![dir.path().to_path_buf()], 4 << 20);
        watch.baseline();
        assert_eq!(watch.exceeded(), None);
        let big = std::fs::File::create(dir.path().join("big")).unwrap();
        // Written, not sparse: the blocks are really taken.
        use std::io::Write;
        let mut writer = std::io::BufWriter::new(big);
        for _ in 0..8 {
            writer.write_all(&vec![1u8; 1 << 20]).unwrap();
        }
        writer.flush().unwrap();
        drop(writer);
        let grew = watch.exceeded().expect("8 MiB written past a 4 MiB limit");
        assert!((8 << 20..9 << 20).contains(&grew), "{grew}");
    }
}
