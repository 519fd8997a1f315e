//! Whether a tree changed since it was last looked at, from its entries' stat data alone
//! (no file is opened, nothing is read but directories): each path's kind, mode, size,
//! inode and change times, walked beneath the tree's descriptor without following a link.
//!
//! What it guarantees: when `unchanged_since` says yes, no path under the tree was
//! created, removed, or written between the two looks — the write that leaves every stat
//! field as it was cannot happen unseen. A write moves the change time (ctime) to the
//! kernel's clock, which no process sets; the one case where it may not look moved is a
//! write within the same clock tick as the earlier look read that entry, so an entry
//! whose times were that recent at the earlier look ("racy", as git calls it) never
//! counts as unchanged. Bounded: a tree with more entries than `MAX_ENTRIES` is not
//! stamped (the caller then treats every step as a change).

use super::walk::open_dir_nofollow;
use cap_std::fs::Dir;
use cap_std::fs::MetadataExt;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::time::SystemTime;
use std::time::UNIX_EPOCH;

/// Past this many entries a tree is not stamped: a walk of the tree would cost more than
/// it saves.
pub const MAX_ENTRIES: usize = 200_000;

/// How recent (before the look began) a time must be for the entry to count as racy:
/// above Linux's coarse clock tick (10 ms at the lowest `HZ`), which file times follow.
const RACY_NS: i128 = 20_000_000;
/// The same for a filesystem that keeps whole seconds (ext3, FAT: two).
const RACY_COARSE_NS: i128 = 2_000_000_000;

/// One entry's stat data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    dev: u64,
    ino: u64,
    /// Kind and permission bits.
    mode: u32,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stat {
    fn racy(&self, looked_ns: i128) -> bool {
        [self.mtime_ns, self.ctime_ns].iter().any(|&t| {
            // Whole seconds: a filesystem that keeps no finer times.
            let margin = if t % 1_000_000_000 == 0 {
                RACY_COARSE_NS
            } else {
                RACY_NS
            };
            t >= looked_ns - margin
        })
    }
}

/// Why a tree could not be stamped.
#[derive(Debug, thiserror::Error)]
pub enum StampError {
    #[error("cannot look at {path}: {err}")]
    Read { path: String, err: std::io::Error },
    #[error("more than {MAX_ENTRIES} entries")]
    TooMany,
}

/// The stat data of every entry of a tree at one moment.
#[derive(Debug, Clone)]
pub struct TreeStamp {
    /// Paths (relative, as bytes, `/`-separated) and their stat data.
    entries: HashMap<Vec<u8>, Stat>,
    /// When the look began, in nanoseconds since the epoch.
    looked_ns: i128,
}

impl TreeStamp {
    /// Looks at every entry beneath `root` except the top-level names in `skip` (the
    /// tree's `.git`), and at the files `also` (paths beneath `root` inside skipped
    /// directories whose change matters all the same: a repository's own ignore rules
    /// and configuration). Directories are entered without following a link.
    pub fn take(root: &Dir, skip: &[&str], also: &[&str]) -> Result<Self, StampError> {
        let looked_ns = now_ns();
        let mut entries = HashMap::new();
        let read_err = |path: &[u8], err| StampError::Read {
            path: String::from_utf8_lossy(path).into_owned(),
            err,
        };
        let mut stack: Vec<(Dir, Vec<u8>)> = vec![(
            root.try_clone().map_err(|err| read_err(b".", err))?,
            Vec::new(),
        )];
        while let Some((dir, prefix)) = stack.pop() {
            let listing = dir.entries().map_err(|err| read_err(&prefix, err))?;
            for entry in listing {
                let name = entry.map_err(|err| read_err(&prefix, err))?.file_name();
                if prefix.is_empty() && skip.iter().any(|s| OsStr::new(s) == name) {
                    continue;
                }
                let mut path = prefix.clone();
                path.extend_from_slice(name.as_bytes());
                let meta = match dir.symlink_metadata(&name) {
                    Ok(meta) => meta,
                    // Gone since it was listed: as if never there.
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(err) => return Err(read_err(&path, err)),
                };
                if meta.is_dir() {
                    let sub = open_dir_nofollow(&dir, &name).map_err(|err| read_err(&path, err))?;
                    let mut sub_prefix = path.clone();
                    sub_prefix.push(b'/');
                    stack.push((sub, sub_prefix));
                }
                entries.insert(path, stat_of(&meta));
                if entries.len() > MAX_ENTRIES {
                    return Err(StampError::TooMany);
                }
            }
        }
        for path in also {
            if let Some(meta) = lstat_beneath(root, path) {
                entries.insert(path.as_bytes().to_vec(), stat_of(&meta));
            }
        }
        Ok(Self { entries, looked_ns })
    }

    /// Whether nothing beneath the tree changed between `earlier` and this look (see the
    /// module's guarantee): the same paths, each with the same stat data, none of it so
    /// recent at the earlier look that a write in the same clock tick could hide.
    pub fn unchanged_since(&self, earlier: &TreeStamp) -> bool {
        self.entries.len() == earlier.entries.len()
            && earlier.entries.iter().all(|(path, before)| {
                !before.racy(earlier.looked_ns) && self.entries.get(path) == Some(before)
            })
    }

    /// What changed beneath the tree between `earlier` and this look, as paths a commit of
    /// the step can be made from without reading the tree again: the regular files there
    /// now whose stat data moved (or was racy at the earlier look), with their permission
    /// bits, and the non-directories gone (or turned into directories). `None` when the
    /// change is not one of files alone (a link, a FIFO, a nested repository, the
    /// repository's own rules under `.git`, a name that is not UTF-8): then only a look at
    /// the whole tree says what it holds.
    pub fn delta_since(&self, earlier: &TreeStamp) -> Option<Delta> {
        let mut delta = Delta::default();
        for (path, now) in &self.entries {
            let changed = match earlier.entries.get(path) {
                Some(before) => before.racy(earlier.looked_ns) || before != now,
                None => true,
            };
            if !changed {
                continue;
            }
            let text = plain_path(path)?;
            match now.mode & S_IFMT {
                S_IFDIR => {
                    // A file that became a directory is gone as a file.
                    if earlier
                        .entries
                        .get(path)
                        .is_some_and(|before| before.mode & S_IFMT != S_IFDIR)
                    {
                        delta.removed.push(text);
                    }
                }
                S_IFREG => delta.files.push(ChangedFile {
                    path: text,
                    mode: now.mode & 0o7777,
                    size: now.size,
                }),
                _ => return None,
            }
        }
        for (path, before) in &earlier.entries {
            if before.mode & S_IFMT != S_IFDIR && !self.entries.contains_key(path) {
                delta.removed.push(plain_path(path)?);
            }
        }
        delta.files.sort_by(|a, b| a.path.cmp(&b.path));
        delta.removed.sort();
        Some(delta)
    }

    /// Whether `path` (relative, `/`-separated) is a regular file at this look.
    pub fn is_file(&self, path: &str) -> bool {
        self.entries
            .get(path.as_bytes())
            .is_some_and(|stat| stat.mode & S_IFMT == S_IFREG)
    }

    /// How many entries it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

const S_IFMT: u32 = 0o170_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFREG: u32 = 0o100_000;

/// What changed between two looks (see `TreeStamp::delta_since`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delta {
    /// The regular files written or created, by path.
    pub files: Vec<ChangedFile>,
    /// The paths of the files (and links) gone.
    pub removed: Vec<String>,
}

/// A regular file a step wrote or created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    pub path: String,
    /// Its permission bits.
    pub mode: u32,
    /// Its size at the look.
    pub size: u64,
}

/// `path` as text when it names a plain path of the tree: UTF-8, no component that is a
/// repository of its own (`.git`, or one wright quarantined), which only git can read.
fn plain_path(path: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(path).ok()?;
    let nested_repository = text
        .split('/')
        .any(|name| name == ".git" || name.starts_with(".git.wright-quarantined"));
    (!nested_repository && !text.contains('\n')).then(|| text.to_string())
}

fn stat_of(meta: &cap_std::fs::Metadata) -> Stat {
    let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
    Stat {
        dev: meta.dev(),
        ino: meta.ino(),
        mode: meta.mode(),
        size: meta.size(),
        mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
        ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
    }
}

/// The stat data of `path` (relative, `/`-separated) beneath `root`, each directory on
/// the way opened without following a link; none when it is not there or cannot be
/// reached (the same at both looks, or a change: either way the comparison is right).
fn lstat_beneath(root: &Dir, path: &str) -> Option<cap_std::fs::Metadata> {
    let (dir, name) = super::walk::parent_dir(root, path).ok()?;
    dir.symlink_metadata(&name).ok()
}

fn now_ns() -> i128 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(since) => since.as_nanos() as i128,
        // A clock before 1970: every entry is racy, nothing counts as unchanged.
        Err(_) => i128::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cap_std::ambient_authority;
    use std::path::Path;
    use std::time::Duration;

    fn open(path: &Path) -> Dir {
        Dir::open_ambient_dir(path, ambient_authority()).unwrap()
    }

    /// A stamp taken once the clock has moved past the racy window of everything so far.
    fn settled(dir: &Dir) -> TreeStamp {
        std::thread::sleep(Duration::from_millis(60));
        TreeStamp::take(dir, &[".git"], &[".git/config"]).unwrap()
    }

    #[test]
    fn a_look_without_changes_is_unchanged_and_every_change_is_seen() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join("src/deep/a.txt"), "one").unwrap();
        std::fs::write(root.join("b.txt"), "two").unwrap();
        let dir = open(root);
        let take = || TreeStamp::take(&dir, &[".git"], &[".git/config"]).unwrap();

        let before = settled(&dir);
        assert!(take().unchanged_since(&before));

        // The same size, written at once (within the clock tick of the look): still seen.
        std::fs::write(root.join("src/deep/a.txt"), "uno").unwrap();
        assert!(!take().unchanged_since(&before));

        let changes: Vec<Box<dyn Fn()>> = vec![
            Box::new(|| std::fs::write(root.join("new.txt"), "").unwrap()),
            Box::new(|| std::fs::remove_file(root.join("b.txt")).unwrap()),
            Box::new(|| std::fs::create_dir(root.join("src/empty")).unwrap()),
            Box::new(|| {
                use std::os::unix::fs::PermissionsExt;
                let exec = std::fs::Permissions::from_mode(0o755);
                std::fs::set_permissions(root.join("src/deep/a.txt"), exec).unwrap()
            }),
            // The repository's own configuration, inside the skipped `.git`.
            Box::new(|| std::fs::write(root.join(".git/config"), "[core]").unwrap()),
        ];
        for change in changes {
            let before = settled(&dir);
            change();
            assert!(!take().unchanged_since(&before));
        }
        // The rest of `.git` is not looked at.
        let before = settled(&dir);
        std::fs::write(root.join(".git/index"), "x").unwrap();
        assert!(take().unchanged_since(&before));
    }

    #[test]
    fn an_entry_written_just_before_the_look_never_counts_as_unchanged() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a"), "1").unwrap();
        let dir = open(tmp.path());
        // Written this instant: the next look cannot tell a same-tick rewrite from none.
        let racy = TreeStamp::take(&dir, &[], &[]).unwrap();
        assert!(!TreeStamp::take(&dir, &[], &[])
            .unwrap()
            .unchanged_since(&racy));
        let later = settled(&dir);
        assert!(TreeStamp::take(&dir, &[], &[])
            .unwrap()
            .unchanged_since(&later));
    }

    #[test]
    fn the_delta_names_the_files_written_and_gone_and_refuses_what_is_not_a_file() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("src/old")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join("src/a.txt"), "one").unwrap();
        std::fs::write(root.join("src/old/gone.txt"), "x").unwrap();
        std::fs::write(root.join("same.txt"), "same").unwrap();
        std::fs::write(root.join("became_dir"), "file").unwrap();
        let dir = open(root);
        let before = settled(&dir);

        std::fs::write(root.join("src/a.txt"), "uno").unwrap();
        std::fs::write(root.join("new.sh"), "#!/bin/sh").unwrap();
        std::fs::set_permissions(root.join("new.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::fs::remove_dir_all(root.join("src/old")).unwrap();
        std::fs::remove_file(root.join("became_dir")).unwrap();
        std::fs::create_dir(root.join("became_dir")).unwrap();
        let now = TreeStamp::take(&dir, &[".git"], &[".git/config"]).unwrap();
        let delta = now.delta_since(&before).unwrap();
        let files: Vec<(&str, bool)> = delta
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.mode & 0o111 != 0))
            .collect();
        assert_eq!(files, vec![("new.sh", true), ("src/a.txt", false)]);
        assert_eq!(delta.removed, vec!["became_dir", "src/old/gone.txt"]);
        assert!(now.is_file("same.txt") && !now.is_file("src"));

        // Nothing since: an empty delta (once the writes are no longer racy).
        let later = settled(&dir);
        assert_eq!(
            TreeStamp::take(&dir, &[".git"], &[".git/config"])
                .unwrap()
                .delta_since(&later),
            Some(Delta::default())
        );

        // A link, a nested repository and the repository's own configuration are not
        // changes of files alone.
        let changes: Vec<Box<dyn Fn()>> = vec![
            Box::new(|| std::os::unix::fs::symlink("same.txt", root.join("link")).unwrap()),
            Box::new(|| {
                std::fs::create_dir_all(root.join("vendor/.git")).unwrap();
                std::fs::write(root.join("vendor/.git/HEAD"), "ref").unwrap()
            }),
            Box::new(|| std::fs::write(root.join(".git/config"), "[core]").unwrap()),
        ];
        for change in changes {
            let before = settled(&dir);
            change();
            let now = TreeStamp::take(&dir, &[".git"], &[".git/config"]).unwrap();
            assert_eq!(now.delta_since(&before), None);
        }
    }

    #[test]
    fn a_link_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("out")).unwrap();
        let dir = open(tmp.path());
        let before = settled(&dir);
        std::fs::write(outside.path().join("elsewhere"), "x").unwrap();
        let after = TreeStamp::take(&dir, &[], &[]).unwrap();
        assert_eq!(after.len(), 1);
        assert!(after.unchanged_since(&before));
    }
}
