//! Unpacking an archive that came out of a container onto this machine's copy of the
//! workspace. The archive is the agent's work, so hostile input: a name may be absolute,
//! hold `..`, lead through a symbolic link the same archive (or an earlier one) made, or
//! be a device.
//!
//! Guarantees: nothing is written outside the workspace. Every name is taken apart into
//! plain components (anything else is skipped and counted); the directories on its way
//! are opened one at a time from the workspace's own descriptor without following a link
//! (`pinned`), so a link in the way skips the entry; the last component is replaced, never
//! followed (a link there is removed first, and files are opened `O_NOFOLLOW`). Regular
//! files, directories and symbolic links (made as links, never followed here) are
//! written; hard links, devices and FIFOs are skipped. Set-id bits are dropped. What is
//! at or below a protected path is never touched. New files get the workspace's owner,
//! as a bind mount would have given them.

use super::tar::Header;
use super::tar::Kind;
use super::tar::Reader;
use super::tar::TarError;
use crate::pinned::PinError;
use crate::pinned::Pinned;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;

/// Files up to this size are compared with what is here before being written.
const SMALL: u64 = 1 << 20;

/// Why an entry was not unpacked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Skip {
    /// Absolute, or with `..`, or empty.
    NotPlain,
    /// A directory on its way is a link, or not a directory.
    ThroughLink,
    /// A hard link, a device, a FIFO.
    Special,
    /// At or below a protected path.
    Protected,
}

/// What one unpacking did.
#[derive(Debug, Default)]
pub(crate) struct Unpacked {
    /// Every plain name the archive holds (written or already equal), relative.
    pub(crate) names: Vec<PathBuf>,
    /// Files, links and directories written or changed.
    pub(crate) written: usize,
    pub(crate) skipped: Vec<(String, Skip)>,
}

/// The relative, plain path of `name` with its first component (the directory the
/// archive was taken of) removed; `None` for the top itself, `Err` for a name that is not
/// plain.
pub(crate) fn plain_below_top(name: &[u8]) -> Result<Option<PathBuf>, Skip> {
    let path = Path::new(OsStr::from_bytes(name));
    let mut out = PathBuf::new();
    let mut top_seen = false;
    for component in path.components() {
        match component {
            Component::Normal(part) if top_seen => out.push(part),
            Component::Normal(_) => top_seen = true,
            Component::CurDir => {}
            Component::RootDir | Component::ParentDir | Component::Prefix(_) => {
                return Err(Skip::NotPlain)
            }
        }
    }
    if !top_seen {
        return Err(Skip::NotPlain);
    }
    Ok((!out.as_os_str().is_empty()).then_some(out))
}

/// Where an archive's names are.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Names<'a> {
    /// Below a top directory: the archive was taken of the workspace itself.
    BelowTop,
    /// In this directory of the workspace: the archive was taken of one path in it.
    In(&'a Path),
}

/// `name` as a relative path of plain components, else why not.
pub(crate) fn plain_relative(name: &[u8]) -> Result<PathBuf, Skip> {
    let mut out = PathBuf::new();
    for component in Path::new(OsStr::from_bytes(name)).components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            _ => return Err(Skip::NotPlain),
        }
    }
    if out.as_os_str().is_empty() {
        return Err(Skip::NotPlain);
    }
    Ok(out)
}

/// Unpacks `archive` into `root`. `protected` are relative paths never touched; `owner`
/// is given to what is created when wright runs as root.
pub(crate) fn unpack(
    archive: impl Read,
    names: Names<'_>,
    root: &Pinned,
    protected: &[PathBuf],
    owner: Option<(u32, u32)>,
) -> Result<Unpacked, TarError> {
    let mut reader = Reader::new(archive);
    let mut done = Unpacked::default();
    while let Some(header) = reader.next()? {
        let shown = String::from_utf8_lossy(&header.path).into_owned();
        let plain = match names {
            Names::BelowTop => plain_below_top(&header.path),
            Names::In(dir) => plain_relative(&header.path).map(|p| Some(dir.join(p))),
        };
        let relative = match plain {
            Ok(Some(relative)) => relative,
            // The top: the workspace itself, which stays as it is.
            Ok(None) => continue,
            Err(why) => {
                done.skipped.push((shown, why));
                continue;
            }
        };
        if protected.iter().any(|p| relative.starts_with(p)) {
            done.skipped.push((shown, Skip::Protected));
            continue;
        }
        if matches!(header.kind, Kind::HardLink(_) | Kind::Other(_)) {
            done.skipped.push((shown, Skip::Special));
            continue;
        }
        match write_entry(&mut reader, root, &relative, &header, owner)? {
            Ok(changed) => {
                done.written += usize::from(changed);
                done.names.push(relative);
            }
            Err(why) => done.skipped.push((shown, why)),
        }
    }
    Ok(done)
}

/// Writes one entry; `Ok(Ok(false))` when what is there already equals it.
fn write_entry(
    reader: &mut Reader<impl Read>,
    root: &Pinned,
    relative: &Path,
    header: &Header,
    owner: Option<(u32, u32)>,
) -> Result<Result<bool, Skip>, TarError> {
    let (Some(name), parent) = (relative.file_name(), relative.parent()) else {
        return Ok(Err(Skip::NotPlain));
    };
    let dir = match directory(root, parent.unwrap_or(Path::new("")), owner) {
        Ok(dir) => dir,
        Err(why) => return Ok(Err(why)),
    };
    let at = dir.proc_path(Path::new("/proc")).join(name);
    let mode = header.mode & 0o777;
    let existing = std::fs::symlink_metadata(&at).ok();
    let changed = match &header.kind {
        Kind::Dir => {
            match &existing {
                Some(meta) if meta.is_dir() => {
                    if meta.permissions().mode() & 0o777 == mode {
                        return Ok(Ok(false));
                    }
                }
                Some(_) => {
                    remove(&at)?;
                    std::fs::create_dir(&at)?;
                    chown(&at, owner)?;
                }
                None => {
                    std::fs::create_dir(&at)?;
                    chown(&at, owner)?;
                }
            }
            // Kept writable by its owner, as it was in the container for the copy to work.
            std::fs::set_permissions(&at, std::fs::Permissions::from_mode(mode | 0o700))?;
            true
        }
        Kind::Symlink(target) => {
            let same = existing
                .as_ref()
                .is_some_and(|m| m.file_type().is_symlink())
                && std::fs::read_link(&at).is_ok_and(|t| t.as_os_str().as_bytes() == target);
            if same {
                return Ok(Ok(false));
            }
            if existing.is_some() {
                remove(&at)?;
            }
            std::os::unix::fs::symlink(OsStr::from_bytes(target), &at)?;
            chown(&at, owner)?;
            true
        }
        Kind::File => {
            // Small files are compared before anything is replaced: most files of a
            // sync are unchanged. Larger ones are written again.
            let small = header.size <= SMALL;
            let mut data = Vec::new();
            if small {
                reader.copy_data(header.size, &mut data)?;
                let same = existing.as_ref().is_some_and(|m| {
                    m.is_file() && m.len() == header.size && m.permissions().mode() & 0o777 == mode
                }) && std::fs::read(&at).is_ok_and(|now| now == data);
                if same {
                    return Ok(Ok(false));
                }
            }
            let created = match &existing {
                Some(meta) if meta.is_file() => false,
                Some(_) => {
                    remove(&at)?;
                    true
                }
                None => true,
            };
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(mode)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&at)?;
            if small {
                std::io::Write::write_all(&mut file, &data)?;
            } else {
                reader.copy_data(header.size, &mut file)?;
            }
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
            if created {
                chown(&at, owner)?;
            }
            true
        }
        Kind::HardLink(_) | Kind::Other(_) => return Ok(Err(Skip::Special)),
    };
    Ok(Ok(changed))
}

/// The directory `relative` below `root`, made where missing, no component a link.
pub(crate) fn directory(
    root: &Pinned,
    relative: &Path,
    owner: Option<(u32, u32)>,
) -> Result<Pinned, Skip> {
    match root.pin_below(relative) {
        Ok(dir) => return Ok(dir),
        Err(PinError::Missing { .. }) => {}
        Err(_) => return Err(Skip::ThroughLink),
    }
    // Made one component at a time, each from the one before it.
    let mut at = root
        .pin_below(Path::new(""))
        .map_err(|_| Skip::ThroughLink)?;
    for component in relative.components() {
        let Component::Normal(name) = component else {
            return Err(Skip::NotPlain);
        };
        let next = at.pin_below(Path::new(name));
        at = match next {
            Ok(dir) => dir,
            Err(PinError::Missing { .. }) => {
                let path = at.proc_path(Path::new("/proc")).join(name);
                std::fs::create_dir(&path).map_err(|_| Skip::ThroughLink)?;
                chown(&path, owner).map_err(|_| Skip::ThroughLink)?;
                at.pin_below(Path::new(name))
                    .map_err(|_| Skip::ThroughLink)?
            }
            Err(_) => return Err(Skip::ThroughLink),
        };
    }
    Ok(at)
}

/// Removes what is at `at` (a link itself, never what it leads to; a directory with all
/// it holds).
pub(crate) fn remove(at: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(at) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(at),
        Ok(_) => std::fs::remove_file(at),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn chown(at: &Path, owner: Option<(u32, u32)>) -> std::io::Result<()> {
    match owner {
        Some((uid, gid)) => std::os::unix::fs::lchown(at, Some(uid), Some(gid)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tar::Writer;
    use super::*;

    /// An archive of the named entries, as a hostile container could make it.
    fn archive(entries: &[(&str, Kind, &[u8])]) -> Vec<u8> {
        let mut writer = Writer::new(Vec::new(), 0, 0);
        for (name, kind, data) in entries {
            match kind {
                Kind::Dir => writer.dir(name.as_bytes(), 0o755, 1).unwrap(),
                Kind::Symlink(target) => writer.symlink(name.as_bytes(), target, 1).unwrap(),
                Kind::File => writer
                    .file(
                        name.as_bytes(),
                        0o4755,
                        1,
                        data.len() as u64,
                        &mut &data[..],
                    )
                    .unwrap(),
                _ => unreachable!(),
            }
        }
        writer.finish().unwrap()
    }

    fn special(mut tar: Vec<u8>, name: &str, kind: u8) -> Vec<u8> {
        // A header of `kind` put before the end blocks, checksummed as the writer does.
        let mut writer = Writer::new(Vec::new(), 0, 0);
        writer.dir(name.as_bytes(), 0o644, 1).unwrap();
        let mut block = writer.finish().unwrap()[..512].to_vec();
        block[156] = kind;
        block[148..156].copy_from_slice(b"        ");
        let sum: u32 = block.iter().map(|b| u32::from(*b)).sum();
        block[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        let end = tar.len() - 1024;
        tar.splice(end..end, block);
        tar
    }

    #[test]
    fn a_hostile_archive_writes_nothing_outside_the_workspace() {
        let base = tempfile::tempdir().unwrap();
        let base_path = base.path().canonicalize().unwrap();
        let ws = base_path.join("ws");
        let outside = base_path.join("outside");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(ws.join(".git/config"), "mine").unwrap();
        let tar = archive(&[
            ("ws", Kind::Dir, b""),
            ("ws/ok.txt", Kind::File, b"fine"),
            ("ws/sub/deep.txt", Kind::File, b"deep"),
            ("/etc/evil", Kind::File, b"x"),
            ("ws/../outside/evil", Kind::File, b"x"),
            ("../outside/evil2", Kind::File, b"x"),
            // A link out, then a file through it, then a file at it.
            (
                "ws/out",
                Kind::Symlink(outside.as_os_str().as_bytes().to_vec()),
                b"",
            ),
            ("ws/out/evil3", Kind::File, b"x"),
            ("ws/.git/config", Kind::File, b"[core]\n\thooksPath = /tmp"),
            ("ws/.git/hooks/pre-commit", Kind::File, b"x"),
        ]);
        let tar = special(tar, "ws/dev-null", b'3');
        let tar = special(tar, "ws/hard", b'1');
        let root = crate::pinned::pin(&ws).unwrap();
        let done = unpack(
            &tar[..],
            Names::BelowTop,
            &root,
            &[PathBuf::from(".git")],
            None,
        )
        .unwrap();

        assert_eq!(std::fs::read_to_string(ws.join("ok.txt")).unwrap(), "fine");
        assert_eq!(
            std::fs::read_to_string(ws.join("sub/deep.txt")).unwrap(),
            "deep"
        );
        // Set-id bits dropped.
        let mode = std::fs::metadata(ws.join("ok.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o755);
        assert!(
            std::fs::read_dir(&outside).unwrap().next().is_none(),
            "wrote outside"
        );
        assert!(!Path::new("/etc/evil").exists());
        assert_eq!(std::fs::read_link(ws.join("out")).unwrap(), outside);
        assert_eq!(
            std::fs::read_to_string(ws.join(".git/config")).unwrap(),
            "mine"
        );
        assert!(!ws.join(".git/hooks").exists());
        assert!(!ws.join("dev-null").exists() && !ws.join("hard").exists());
        let why = |name: &str| {
            done.skipped
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, w)| *w)
        };
        assert_eq!(why("/etc/evil"), Some(Skip::NotPlain));
        assert_eq!(why("ws/../outside/evil"), Some(Skip::NotPlain));
        assert_eq!(why("../outside/evil2"), Some(Skip::NotPlain));
        assert_eq!(why("ws/out/evil3"), Some(Skip::ThroughLink));
        assert_eq!(why("ws/.git/config"), Some(Skip::Protected));
        assert_eq!(why("ws/dev-null"), Some(Skip::Special));
        assert_eq!(why("ws/hard"), Some(Skip::Special));

        // A later archive puts a file where the link is: the link goes, not its target.
        let tar = archive(&[("ws/out", Kind::File, b"now a file")]);
        unpack(&tar[..], Names::BelowTop, &root, &[], None).unwrap();
        assert_eq!(
            std::fs::read_to_string(ws.join("out")).unwrap(),
            "now a file"
        );
        assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
        // And a link where a file was is replaced, not written through.
        std::fs::write(outside.join("target"), "safe").unwrap();
        std::os::unix::fs::symlink(outside.join("target"), ws.join("ln")).unwrap();
        let tar = archive(&[("ws/ln", Kind::File, b"through?")]);
        unpack(&tar[..], Names::BelowTop, &root, &[], None).unwrap();
        assert_eq!(
            std::fs::read_to_string(outside.join("target")).unwrap(),
            "safe"
        );
        assert_eq!(std::fs::read_to_string(ws.join("ln")).unwrap(), "through?");
    }

    #[test]
    fn names_are_taken_below_the_top_directory() {
        let plain = |n: &str| plain_below_top(n.as_bytes());
        assert_eq!(plain("ws/a/b"), Ok(Some(PathBuf::from("a/b"))));
        assert_eq!(plain("./ws/a"), Ok(Some(PathBuf::from("a"))));
        assert_eq!(plain("ws/"), Ok(None));
        assert_eq!(plain("ws/a/../../x"), Err(Skip::NotPlain));
        assert_eq!(plain("/ws/a"), Err(Skip::NotPlain));
        assert_eq!(plain(""), Err(Skip::NotPlain));
        assert_eq!(plain_relative(b"a/./b"), Ok(PathBuf::from("a/b")));
        assert_eq!(plain_relative(b"a/../b"), Err(Skip::NotPlain));
        assert_eq!(plain_relative(b"/a"), Err(Skip::NotPlain));
    }
}
