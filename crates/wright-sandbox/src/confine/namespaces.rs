//! Fresh mount and network namespaces for the confined command, where the kernel allows.
//!
//! The mount namespace makes every mount read-only except the policy's read-write paths
//! (bound onto themselves first), which closes what Landlock does not cover: chmod, chown,
//! timestamps and extended attributes on files outside the workspace. The network
//! namespace has no interface but a loopback that is down: no traffic at all, whatever the
//! socket type. Root gets them directly; other users through a user namespace mapping
//! only their own uid. If the kernel refuses, the caller decides whether that is fatal.

use nix::mount::mount;
use nix::mount::MsFlags;
use nix::sched::unshare;
use nix::sched::CloneFlags;
use std::path::Path;
use std::path::PathBuf;

pub struct Isolated {
    pub words: String,
}

/// Why there is no isolation: the kernel said no before anything changed (the caller may
/// go on without), or a later step failed half-way (nothing can be trusted: stop).
pub enum Isolation {
    Refused(String),
    Broken(String),
}

pub fn isolate(
    read_write: &[PathBuf],
    protected: &[PathBuf],
    network: bool,
) -> Result<Isolated, Isolation> {
    let root = nix::unistd::geteuid().is_root();
    let mut flags = CloneFlags::CLONE_NEWNS;
    if !network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    if !root {
        flags |= CloneFlags::CLONE_NEWUSER;
    }
    let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
    let cwd = std::env::current_dir()
        .map_err(|e| Isolation::Refused(format!("current directory: {e}")))?;
    unshare(flags)
        .map_err(|e| Isolation::Refused(format!("namespaces refused by the kernel: {e}")))?;
    let broken = Isolation::Broken;
    if !root {
        let write = |file: &str, text: String| {
            std::fs::write(file, text).map_err(|e| broken(format!("{file}: {e}")))
        };
        write("/proc/self/setgroups", "deny".into())?;
        write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
        write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    }
    read_only_except(read_write, protected).map_err(broken)?;
    // The current directory still points into the mount below the new bind mounts (now
    // read-only): enter it again so relative paths reach the writable one.
    std::env::set_current_dir(&cwd).map_err(|e| broken(format!("cd {}: {e}", cwd.display())))?;
    Ok(Isolated {
        words: if network {
            "own mount namespace (all read-only but the workspace and private tmp)".into()
        } else {
            "own mount namespace (all read-only but the workspace and private tmp), empty network namespace".into()
        },
    })
}

fn remount(target: &Path, flags: MsFlags) -> Result<(), String> {
    mount(None::<&str>, target, None::<&str>, flags, None::<&str>)
        .map_err(|e| format!("remount {}: {e}", target.display()))
}

/// Per-mount flags that must be kept when remounting (a user namespace may not drop them).
fn kept_flags(options: &str) -> MsFlags {
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

/// Mount points and their per-mount options, from /proc/self/mountinfo.
fn mounts() -> Result<Vec<(PathBuf, MsFlags)>, String> {
    let info =
        std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| format!("mountinfo: {e}"))?;
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
fn unescape(field: &str) -> String {
    field
        .replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

fn read_only_except(read_write: &[PathBuf], protected: &[PathBuf]) -> Result<(), String> {
    remount(Path::new("/"), MsFlags::MS_REC | MsFlags::MS_PRIVATE)?;
    for path in read_write {
        mount(
            Some(path),
            path,
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None::<&str>,
        )
        .map_err(|e| format!("bind {}: {e}", path.display()))?;
    }
    let all = mounts()?;
    for (point, kept) in &all {
        // Mounts that vanished or cannot be reached are left as they are; the writable
        // ones come back below, and Landlock still guards every path.
        let _ = remount(
            point,
            MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | *kept,
        );
    }
    let kept_for = |path: &Path| {
        all.iter()
            .filter(|(point, _)| path.starts_with(point))
            .max_by_key(|(point, _)| point.components().count())
            .map_or(MsFlags::empty(), |(_, kept)| *kept)
    };
    for path in read_write {
        remount(
            path,
            MsFlags::MS_REMOUNT | MsFlags::MS_BIND | kept_for(path),
        )?;
    }
    for path in protected {
        mount(
            Some(path),
            path,
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None::<&str>,
        )
        .map_err(|e| format!("bind {}: {e}", path.display()))?;
        remount(
            path,
            MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | kept_for(path),
        )?;
    }
    Ok(())
}
