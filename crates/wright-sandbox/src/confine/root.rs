//! The confined command's own root file system, built in its mount namespace from the
//! policy alone: what is not listed does not exist inside. That is what hides the host's
//! named Unix sockets (tmux, ssh-agent, Docker, D-Bus, X11, gpg-agent in the home) —
//! which Landlock cannot refuse a `connect()` to — and the conversation's own files, and
//! makes every mount read-only but the workspace and private directories.
//!
//! Built as bubblewrap does: a tmpfs becomes the root (`pivot_root`), the host's root
//! stays reachable at `/oldroot` while the new one is assembled at `/newroot`, then a
//! second pivot makes `/newroot` the root and the host's is detached. Inside:
//! - the policy's read-only paths (system, toolchains, shared objects, wright's scratch)
//!   and read-write paths (workspace, private tmp and home, caches), bound at the same
//!   paths; a path that is a symbolic link on the host is the same link inside;
//! - `protected` paths bound read-only over a read-write one (an in-place `.git`), both
//!   ends found without following a link and bound through their descriptors: they lie
//!   in the workspace, which the agent may have changed (a parent directory swapped for a
//!   link to another repository is refused, saying so, rather than bound); and the
//!   directories between them and the workspace pinned (bound onto themselves), so the
//!   agent cannot move a protected path aside by renaming its parent;
//! - the user's toolchain caches as overlays: theirs below, read-only, and a private
//!   upper layer taking the writes, so nothing the agent writes there reaches the real
//!   cache, which the user's own builds run (read-only where an overlay cannot be had);
//! - fresh, size-bounded tmpfs at `/tmp`, `/run` (and `/var/run`), `/dev/shm`;
//! - a minimal `/dev`: null, zero, full, random, urandom, tty, and a devpts of its own;
//! - `/proc`: a fresh one in the command's PID namespace, else the host's, read-only;
//! - for root, the password hashes and SSH host keys masked by an empty file.
//!
//! Mounts that come read-only get every flag their source had (a user namespace may not
//! drop nosuid, nodev, noexec or the atime flags), submounts included.

use super::mounts::fs;
use super::mounts::kept_vfs_flags;
use super::mounts::make_dir;
use super::mounts::make_mount_point;
use super::mounts::mount_flags;
use super::mounts::mounts;
use super::mounts::remount;
use crate::pinned::PinError;
use nix::mount::umount2;
use nix::mount::MntFlags;
use nix::mount::MsFlags;
use std::path::Path;
use std::path::PathBuf;

/// What the new root holds.
pub struct Layout<'a> {
    pub read_only: &'a [PathBuf],
    pub read_write: &'a [PathBuf],
    pub protected: &'a [PathBuf],
    /// The size of each private tmpfs (`/tmp`, `/dev/shm`).
    pub tmpfs_bytes: u64,
    /// The command is PID 1 of its own PID namespace: `/proc` can be its own.
    pub own_pids: bool,
    /// The network is allowed: a resolver file that `/etc` links into `/run` (as
    /// systemd-resolved sets up) is brought along.
    pub network: bool,
    /// Toolchain caches, given a private writable layer in `cache_layers`.
    pub caches: &'a [PathBuf],
    pub cache_layers: Option<&'a Path>,
}

/// Device nodes bound into the new `/dev`.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

/// Files masked for root, who could otherwise read them through `/etc`.
const MASKED: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    "/etc/ssh/ssh_host_dsa_key",
];

const STAGE: &str = "/tmp";
const OLD: &str = "/oldroot";
const NEW: &str = "/newroot";

/// One thing to put in the new root, at a path inside it.
enum Entry {
    Bind {
        path: PathBuf,
        writable: bool,
    },
    /// Bound read-only over a part of a read-write bind (see `place_protected`).
    Protected {
        path: PathBuf,
    },
    /// The host's `path` below, read-only, with writes going to `layer` (`upper`, `work`).
    Overlay {
        path: PathBuf,
        layer: PathBuf,
    },
    /// A directory between the workspace and a protected path, bound onto itself
    /// writable: a mount point, which the agent cannot rename or remove to move the
    /// protected path aside and put its own in its place.
    Pin {
        path: PathBuf,
    },
    /// A file (a lock) given a private empty copy, writable.
    PrivateFile {
        path: PathBuf,
        copy: PathBuf,
    },
    Tmpfs {
        path: PathBuf,
        bytes: u64,
    },
    /// `/dev`, `/proc` and the masks come after the binds, in `finish_special`.
    Link {
        path: PathBuf,
        target: PathBuf,
    },
}

impl Entry {
    fn path(&self) -> &Path {
        match self {
            Entry::Bind { path, .. }
            | Entry::Protected { path }
            | Entry::Pin { path }
            | Entry::Overlay { path, .. }
            | Entry::PrivateFile { path, .. }
            | Entry::Tmpfs { path, .. }
            | Entry::Link { path, .. } => path,
        }
    }
}

/// Builds the new root and enters it; the current directory becomes `cwd` (or `/` when
/// `cwd` is not inside and `cwd_optional`).
pub fn enter(layout: &Layout<'_>, cwd: &Path, cwd_optional: bool) -> Result<(), String> {
    let entries = plan(layout);
    mount_flags(None, "/", None, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None)?;
    // The stage: a tmpfs that becomes the root while the new one is assembled in it.
    mount_flags(
        fs("tmpfs"),
        STAGE,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("mode=0755,size=1m"),
    )?;
    std::env::set_current_dir(STAGE).map_err(|e| format!("cd {STAGE}: {e}"))?;
    for dir in ["oldroot", "newroot"] {
        make_dir(Path::new(dir))?;
    }
    nix::unistd::pivot_root(".", "oldroot").map_err(|e| format!("pivot_root: {e}"))?;
    std::env::set_current_dir("/").map_err(|e| format!("cd /: {e}"))?;
    mount_flags(
        fs("tmpfs"),
        NEW,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("mode=0755,size=1m"),
    )?;
    for entry in &entries {
        place(entry)?;
    }
    seal(&entries)?;
    finish_special(layout)?;
    // Read-only from here on where the new root itself is concerned (its mount points
    // are made), then the host's root goes away.
    remount(
        Path::new(NEW),
        MsFlags::MS_REMOUNT
            | MsFlags::MS_BIND
            | MsFlags::MS_RDONLY
            | MsFlags::MS_NOSUID
            | MsFlags::MS_NODEV,
    )?;
    mount_flags(None, OLD, None, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None)?;
    umount2(OLD, MntFlags::MNT_DETACH).map_err(|e| format!("detach the host's root: {e}"))?;
    let stage_root = std::fs::File::open("/").map_err(|e| format!("open /: {e}"))?;
    std::env::set_current_dir(NEW).map_err(|e| format!("cd {NEW}: {e}"))?;
    nix::unistd::pivot_root(".", ".").map_err(|e| format!("pivot_root into the new root: {e}"))?;
    nix::unistd::fchdir(&stage_root).map_err(|e| format!("fchdir: {e}"))?;
    umount2(".", MntFlags::MNT_DETACH).map_err(|e| format!("detach the stage: {e}"))?;
    drop(stage_root);
    match std::env::set_current_dir(cwd) {
        Ok(()) => Ok(()),
        Err(_) if cwd_optional => std::env::set_current_dir("/").map_err(|e| e.to_string()),
        Err(e) => Err(format!(
            "the directory {} is not inside the sandbox: {e}",
            cwd.display()
        )),
    }
}

/// The binds, tmpfs and links, parents before children.
fn plan(layout: &Layout<'_>) -> Vec<Entry> {
    let mut entries = Vec::new();
    let special = |path: &Path| path.starts_with("/dev") || path.starts_with("/proc");
    for (paths, writable) in [(layout.read_only, false), (layout.read_write, true)] {
        for path in paths.iter().filter(|p| !special(p)) {
            let entry = match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.file_type().is_symlink() => match std::fs::read_link(path) {
                    Ok(target) => Entry::Link {
                        path: path.clone(),
                        target,
                    },
                    Err(_) => continue,
                },
                Ok(_) => Entry::Bind {
                    path: path.clone(),
                    writable,
                },
                // Gone since the policy was made: nothing to give.
                Err(_) => continue,
            };
            entries.push(entry);
        }
    }
    entries.push(Entry::Tmpfs {
        path: "/tmp".into(),
        bytes: layout.tmpfs_bytes,
    });
    entries.push(Entry::Tmpfs {
        path: "/run".into(),
        bytes: 16 << 20,
    });
    entries.push(Entry::Link {
        path: "/var/run".into(),
        target: "../run".into(),
    });
    for (n, cache) in layout.caches.iter().enumerate() {
        let (Some(layers), Ok(meta)) = (layout.cache_layers, std::fs::metadata(cache)) else {
            continue;
        };
        let layer = layers.join(n.to_string());
        entries.push(if meta.is_dir() {
            Entry::Overlay {
                path: cache.clone(),
                layer,
            }
        } else {
            Entry::PrivateFile {
                path: cache.clone(),
                copy: layer,
            }
        });
    }
    if layout.network {
        if let Ok(resolver) = std::fs::canonicalize("/etc/resolv.conf") {
            if resolver.starts_with("/run") {
                entries.push(Entry::Bind {
                    path: resolver,
                    writable: false,
                });
            }
        }
    }
    for path in layout.protected {
        entries.push(Entry::Protected { path: path.clone() });
    }
    for path in crate::protection_pins(layout.protected, layout.read_write) {
        // Never through a link in any component (the bind would follow it): a parent
        // swapped for a link is left to the protected path's own placement, which refuses
        // it and says so.
        if crate::pinned::pin(&path).is_ok()
            && std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir())
        {
            entries.push(Entry::Pin { path });
        }
    }
    // Parents first; at one depth, a tmpfs before what is bound into it, and protected
    // paths (pushed last) after what they sit in.
    entries.sort_by_key(|entry| entry.path().components().count());
    without_redundant_binds(entries)
}

/// Drops a bind that an earlier bind of the same kind already covers (`/usr/bin` after
/// `/usr`, both read-only): the recursive bind brought it, submounts included.
fn without_redundant_binds(entries: Vec<Entry>) -> Vec<Entry> {
    let mut kept: Vec<Entry> = Vec::with_capacity(entries.len());
    for entry in entries {
        if let Entry::Bind { path, writable } = &entry {
            // The nearest earlier entry covering this path decides.
            let covering = kept
                .iter()
                .filter(|earlier| path.starts_with(earlier.path()))
                .max_by_key(|earlier| earlier.path().components().count());
            if let Some(Entry::Bind { writable: same, .. }) = covering {
                if same == writable {
                    continue;
                }
            }
        }
        kept.push(entry);
    }
    kept
}

fn inside(root: &str, path: &Path) -> PathBuf {
    Path::new(root).join(path.strip_prefix("/").unwrap_or(path))
}

fn place(entry: &Entry) -> Result<(), String> {
    match entry {
        Entry::Bind { path, writable } => {
            let (source, target) = (inside(OLD, path), inside(NEW, path));
            let is_dir = source.is_dir();
            make_mount_point(&target, is_dir)?;
            mount_flags(
                Some(&source),
                &target,
                None,
                MsFlags::MS_BIND | MsFlags::MS_REC,
                None,
            )?;
            let _ = writable; // made read-only, submounts included, by `seal`
            Ok(())
        }
        Entry::Protected { path } => place_protected(path),
        Entry::Pin { path } => place(&Entry::Bind {
            path: path.clone(),
            writable: true,
        }),
        Entry::Overlay { path, layer } => {
            let target = inside(NEW, path);
            make_dir(&target)?;
            match overlay(&inside(OLD, path), &inside(OLD, layer), &target) {
                Ok(()) => Ok(()),
                // No overlay here (or a path it cannot name): the cache, read-only.
                Err(_) => place(&Entry::Bind {
                    path: path.clone(),
                    writable: false,
                }),
            }
        }
        Entry::PrivateFile { path, copy } => {
            let (copy, target) = (inside(OLD, copy), inside(NEW, path));
            std::fs::File::create(&copy).map_err(|e| format!("create {}: {e}", copy.display()))?;
            make_mount_point(&target, false)?;
            mount_flags(Some(&copy), &target, None, MsFlags::MS_BIND, None)
        }
        Entry::Tmpfs { path, bytes } => {
            let target = inside(NEW, path);
            make_dir(&target)?;
            let options = format!("mode=1777,size={bytes}");
            mount_flags(
                fs("tmpfs"),
                &target,
                Some("tmpfs"),
                MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
                Some(&options),
            )
        }
        Entry::Link { path, target } => {
            let at = inside(NEW, path);
            if let Some(parent) = at.parent() {
                make_dir(parent)?;
            }
            match std::os::unix::fs::symlink(target, &at) {
                Ok(()) => Ok(()),
                // Already there through a bound parent: the host's own link.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
                Err(e) => Err(format!("link {}: {e}", at.display())),
            }
        }
    }
}

/// Binds `path` read-only over itself in the new root. It lies in the workspace, which the
/// agent may change while this runs (a command of its still running) or may have changed
/// before: neither end is found by name, where a link would lead elsewhere (another
/// repository's `.git` bound in its place). Both are walked without links and bound
/// through their descriptors; the mount is then opened the same way, checked to be the
/// source's device and inode, and made read-only through its own descriptor.
fn place_protected(path: &Path) -> Result<(), String> {
    let proc = Path::new(OLD).join("proc");
    let explain = |e: PinError| match e {
        PinError::Link { link, target } => format!(
            "{}{}",
            crate::pinned::TAMPERED,
            crate::pinned::link_found(path, &outside(&link), target.as_deref())
        ),
        other => format!("{} cannot be kept read-only: {other}", path.display()),
    };
    let pin = |at: &Path| crate::pinned::pin(at).map_err(explain);
    let source = match crate::pinned::pin(&inside(OLD, path)) {
        Ok(source) => source,
        // Gone since the policy was made: nothing to protect.
        Err(PinError::Missing { .. }) => return Ok(()),
        Err(e) => return Err(explain(e)),
    };
    let target = pin(&inside(NEW, path))?;
    if source.id() != target.id() {
        return Err(format!(
            "{}{} changed while the sandbox was built (is something of the agent's still running?)",
            crate::pinned::TAMPERED,
            path.display()
        ));
    }
    // Recursive as every bind here (a user namespace refuses to split locked mounts);
    // `seal` makes what is mounted below it read-only too.
    mount_flags(
        Some(&source.proc_path(&proc)),
        target.proc_path(&proc),
        None,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None,
    )?;
    let mounted = pin(&inside(NEW, path))?;
    if mounted.id() != source.id() {
        return Err(format!(
            "{}{} is not what was bound there (it changed while the sandbox was built)",
            crate::pinned::TAMPERED,
            path.display()
        ));
    }
    // The flags a user namespace may not drop, read from the mount itself.
    let kept = nix::sys::statvfs::fstatvfs(mounted.fd())
        .map(|vfs| kept_vfs_flags(vfs.flags()))
        .map_err(|e| format!("statvfs {}: {e}", path.display()))?;
    remount(
        &mounted.proc_path(&proc),
        MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | kept,
    )
}

/// A path under the host's root as seen while the new root is built, as the host names it.
fn outside(path: &Path) -> PathBuf {
    path.strip_prefix(OLD)
        .map_or_else(|_| path.to_path_buf(), |inner| Path::new("/").join(inner))
}

/// An overlay of `lower` (read-only) with its upper layer in `layer`, at `target`.
fn overlay(lower: &Path, layer: &Path, target: &Path) -> Result<(), String> {
    let (upper, work) = (layer.join("upper"), layer.join("work"));
    make_dir(&upper)?;
    make_dir(&work)?;
    let named = [lower, upper.as_path(), work.as_path()];
    // The option string cannot quote these.
    if named
        .iter()
        .any(|p| p.to_str().is_none_or(|s| s.contains([',', ':', '\\'])))
    {
        return Err("a path the overlay cannot name".into());
    }
    let mut options = format!(
        "lowerdir={},upperdir={},workdir={}",
        lower.display(),
        upper.display(),
        work.display()
    );
    if !nix::unistd::geteuid().is_root() {
        // In a user namespace the overlay keeps its metadata in user.* attributes.
        options.push_str(",userxattr");
    }
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    // Volatile: the upper layer is this run's scratch, thrown away with the private
    // directory, so it need not be synced when the overlay goes, which it does at the
    // exit of every sandboxed process (its mount namespace's last). That sync of the
    // upper file system took 4–10 ms per overlay on ext4, so tens of ms per process,
    // the start's sandbox check included. A volatile mount leaves a marker that refuses
    // the next mount of the layer (meant for a crash, after which the layer must go —
    // as this one does: a new run makes a new private directory); the marker of this
    // run's own earlier mount is removed first. A kernel without `volatile` (before
    // 5.10) gets the synced overlay.
    let _ = std::fs::remove_dir_all(work.join("work").join("incompat"));
    let mount_with =
        |options: &str| mount_flags(fs("overlay"), target, Some("overlay"), flags, Some(options));
    mount_with(&format!("{options},volatile")).or_else(|_| mount_with(&options))
}

/// `/dev`, `/proc`, `/dev/shm` and the masks.
fn finish_special(layout: &Layout<'_>) -> Result<(), String> {
    let dev = inside(NEW, Path::new("/dev"));
    make_dir(&dev)?;
    mount_flags(
        fs("tmpfs"),
        &dev,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("mode=0755,size=1m"),
    )?;
    for device in DEVICES {
        let (source, target) = (Path::new(OLD).join("dev").join(device), dev.join(device));
        if source.exists() {
            make_mount_point(&target, false)?;
            mount_flags(Some(&source), &target, None, MsFlags::MS_BIND, None)?;
        }
    }
    make_dir(&dev.join("pts"))?;
    mount_flags(
        fs("devpts"),
        dev.join("pts"),
        Some("devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=0620"),
    )?;
    for (link, target) in [
        ("ptmx", "pts/ptmx"),
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(target, dev.join(link))
            .map_err(|e| format!("link /dev/{link}: {e}"))?;
    }
    let shm = dev.join("shm");
    make_dir(&shm)?;
    let options = format!("mode=1777,size={}", layout.tmpfs_bytes);
    mount_flags(
        fs("tmpfs"),
        &shm,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(&options),
    )?;
    let proc = inside(NEW, Path::new("/proc"));
    make_dir(&proc)?;
    if layout.own_pids {
        // While the host's /proc is still visible in this namespace, as a user namespace
        // requires.
        mount_flags(
            fs("proc"),
            &proc,
            Some("proc"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            None,
        )?;
    } else {
        mount_flags(
            Some(&Path::new(OLD).join("proc")),
            &proc,
            None,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None,
        )?;
        read_only_below(&proc)?;
    }
    if nix::unistd::geteuid().is_root() {
        let empty = Path::new(OLD).join("dev/null");
        for masked in MASKED {
            let target = inside(NEW, Path::new(masked));
            if target.is_file() {
                mount_flags(Some(&empty), &target, None, MsFlags::MS_BIND, None)?;
            }
        }
    }
    Ok(())
}

/// Makes every mount of a read-only bind read-only, its submounts included, keeping the
/// flags each had: a mount belongs to the deepest entry whose path holds it. (One read of
/// mountinfo for all of them: this is most of the cost of starting a confined command.)
fn seal(entries: &[Entry]) -> Result<(), String> {
    for (point, kept) in mounts(Path::new(OLD))? {
        let Ok(inner) = point.strip_prefix(NEW) else {
            continue;
        };
        let inner = Path::new("/").join(inner);
        let owner = entries
            .iter()
            .filter(|entry| inner.starts_with(entry.path()))
            .max_by_key(|entry| entry.path().components().count());
        if let Some(
            Entry::Bind {
                writable: false, ..
            }
            | Entry::Protected { .. },
        ) = owner
        {
            remount(
                &point,
                MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | kept,
            )?;
        }
    }
    Ok(())
}

/// Makes the mount at `target` and every mount below it read-only, keeping the flags
/// each had.
fn read_only_below(target: &Path) -> Result<(), String> {
    for (point, kept) in mounts(Path::new(OLD))? {
        if point == target || point.starts_with(target) {
            remount(
                &point,
                MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | kept,
            )?;
        }
    }
    Ok(())
}
