//! The mount calls the confined root is built with: each failure said with its path,
//! and the per-mount flags (nosuid, nodev, noexec, the atime flags) read so that a
//! remount keeps them, as a user namespace requires.

use nix::mount::mount;
use nix::mount::MsFlags;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::path::PathBuf;

/// `kept_flags` from what `statvfs` says of a mount.
pub(super) fn kept_vfs_flags(flags: nix::sys::statvfs::FsFlags) -> MsFlags {
    use nix::sys::statvfs::FsFlags;
    [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ]
    .into_iter()
    .filter(|(vfs, _)| flags.contains(*vfs))
    .fold(MsFlags::empty(), |all, (_, ms)| all | ms)
}

pub(super) fn remount(target: &Path, flags: MsFlags) -> Result<(), String> {
    mount(None::<&str>, target, None::<&str>, flags, None::<&str>)
        .map_err(|e| format!("remount {}: {e}", target.display()))
}

pub(super) fn mount_flags(
    source: Option<&Path>,
    target: impl AsRef<Path>,
    fstype: Option<&str>,
    flags: MsFlags,
    data: Option<&str>,
) -> Result<(), String> {
    let target = target.as_ref();
    mount(source, target, fstype, flags, data)
        .map_err(|e| format!("mount {}: {e}", target.display()))
}

/// A pseudo file system's source name (`tmpfs`, `proc`, `devpts`).
pub(super) fn fs(name: &str) -> Option<&Path> {
    Some(Path::new(name))
}

pub(super) fn make_dir(path: &Path) -> Result<(), String> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(path)
        .map_err(|e| format!("mkdir {}: {e}", path.display()))
}

/// A directory, or an empty file, to mount over (parents made as needed).
pub(super) fn make_mount_point(target: &Path, is_dir: bool) -> Result<(), String> {
    if target.exists() {
        return Ok(());
    }
    if is_dir {
        return make_dir(target);
    }
    if let Some(parent) = target.parent() {
        make_dir(parent)?;
    }
    std::fs::File::create(target)
        .map(drop)
        .map_err(|e| format!("create {}: {e}", target.display()))
}

/// Per-mount flags that must be kept when remounting (a user namespace may not drop them).
pub(super) fn kept_flags(options: &str) -> MsFlags {
    let mut flags = MsFlags::empty();
    for option in options.split(',') {
        flags |= match option {
            "nosuid" => MsFlags::MS_NOSUID,
            "nodev" => MsFlags::MS_NODEV,
            "noexec" => MsFlags::MS_NOEXEC,
            "noatime" => MsFlags::MS_NOATIME,
            "nodiratime" => MsFlags::MS_NODIRATIME,
            "relatime" => MsFlags::MS_RELATIME,
            _ => MsFlags::empty(),
        };
    }
    flags
}

/// Mount points and their per-mount options, from mountinfo (the host's /proc, reached
/// through `old_root`, the old root while the new root is built).
pub(super) fn mounts(old_root: &Path) -> Result<Vec<(PathBuf, MsFlags)>, String> {
    let info = std::fs::read_to_string(old_root.join("proc/self/mountinfo"))
        .map_err(|e| format!("mountinfo: {e}"))?;
    Ok(info
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let point = unescape(fields.get(4)?);
            Some((PathBuf::from(point), kept_flags(fields.get(5)?)))
        })
        .collect())
}

/// mountinfo escapes spaces and a few other bytes as \\ooo.
pub(super) fn unescape(field: &str) -> String {
    field
        .replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}
