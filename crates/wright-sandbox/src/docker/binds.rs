//! The container's bind mounts, checked before it is created and after it starts. The
//! Engine API takes path strings and the daemon resolves them again, following links, so
//! a parent directory the agent swapped for a link (in an earlier run of the same
//! conversation) would bind another repository's `.git` where a protected one was.
//!
//! Guarantees: every bind's host path is walked without following a link (`pinned`):
//! below the workspace from the workspace's own descriptor, elsewhere (paths the agent
//! cannot write: the shared objects, wright's scratch) from their canonical form; a link
//! is refused with the component that is one, where it leads and what to do. Once the
//! container has started, before any command of the agent's runs in it, each mount point
//! is walked again inside the container, from the kernel's view of its root
//! (`/proc/PID/root`), and must be the device and inode resolved here; else the caller
//! removes the container and refuses. Where that view cannot be had (the container runs as
//! another user), the image's `stat` reports them instead, from a fresh container.

use super::engine::refused;
use crate::mode::SandboxError;
use crate::pinned::FileId;
use crate::pinned::PinError;
use crate::pinned::Pinned;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;

/// One path bound at the same path in the container.
#[derive(Debug)]
pub(super) struct Bind {
    pub(super) pinned: Pinned,
    pub(super) read_only: bool,
}

impl Bind {
    pub(super) fn path(&self) -> &Path {
        self.pinned.path()
    }
}

/// The workspace first, then the read-only paths.
#[derive(Debug)]
pub(super) struct Binds(Vec<Bind>);

impl Binds {
    /// Pins `workspace` (canonical) and each of `read_only` and `protected` that exists.
    /// `given` is the workspace as the caller named it (the paths below it may use it).
    pub(super) fn resolve(
        workspace: &Path,
        given: &Path,
        read_only: &[PathBuf],
        protected: &[PathBuf],
    ) -> Result<Self, SandboxError> {
        let top = crate::pinned::pin(workspace).map_err(|e| {
            refused(format!(
                "the workspace {} cannot be opened without following a link: {e}",
                workspace.display()
            ))
        })?;
        let mut binds = Vec::new();
        for path in read_only.iter().chain(protected) {
            let below = path
                .strip_prefix(workspace)
                .or_else(|_| path.strip_prefix(given))
                .ok();
            let pinned = match below {
                Some(relative) => top.pin_below(relative),
                // Out of the agent's reach: a link there is the user's own.
                None => match path.canonicalize() {
                    Ok(real) => crate::pinned::pin(&real),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => Err(PinError::Io {
                        path: path.clone(),
                        source: e,
                    }),
                },
            };
            match pinned {
                Ok(pinned) => binds.push(Bind {
                    pinned,
                    read_only: true,
                }),
                // Nothing there, nothing to bind.
                Err(PinError::Missing { .. }) => continue,
                Err(PinError::Link { link, target }) => {
                    return Err(SandboxError::Tampered(crate::pinned::link_found(
                        path,
                        &link,
                        target.as_deref(),
                    )))
                }
                Err(e) => {
                    return Err(refused(format!(
                        "{} cannot be bound into the container: {e}",
                        path.display()
                    )))
                }
            }
        }
        binds.insert(
            0,
            Bind {
                pinned: top,
                read_only: false,
            },
        );
        Ok(Self(binds))
    }

    pub(super) fn all(&self) -> &[Bind] {
        &self.0
    }

    /// Checks, inside the started container whose first process is `pid`, that each
    /// mount point is what was pinned. `exec` runs a command in the container (the
    /// fallback's `stat`).
    pub(super) fn verify(
        &self,
        container: &str,
        pid: i64,
        exec: impl FnOnce(&[String]) -> Result<String, SandboxError>,
    ) -> Result<(), SandboxError> {
        let found = match self.seen_through_proc(pid) {
            Some(found) => found,
            None => self.seen_by_stat(exec)?,
        };
        for (bind, seen) in self.0.iter().zip(found) {
            let expected = bind.pinned.id();
            match seen {
                Seen::Same(id) if id == expected => {}
                Seen::Same(id) => {
                    return Err(SandboxError::Tampered(format!(
                        "in the container {container}, {} is {id}, not the {expected} wright found on this machine: it changed while the container was made (is something of the agent's still running?); the container was removed, try again",
                        bind.path().display()
                    )))
                }
                Seen::Broken(why) => {
                    return Err(SandboxError::Tampered(format!(
                        "in the container {container}, {} is not what wright bound there ({why}); the container was removed, try again",
                        bind.path().display()
                    )))
                }
            }
        }
        Ok(())
    }

    /// Each mount point walked without links from the container's root as the kernel
    /// gives it; `None` when that root cannot be opened (another user's process).
    fn seen_through_proc(&self, pid: i64) -> Option<Vec<Seen>> {
        let root = crate::pinned::open_dir(Path::new(&format!("/proc/{pid}/root"))).ok()?;
        Some(
            self.0
                .iter()
                .map(|bind| {
                    let relative = bind.path().strip_prefix("/").unwrap_or(bind.path());
                    match root.pin_below(relative) {
                        Ok(pinned) => Seen::Same(pinned.id()),
                        Err(e) => Seen::Broken(e.to_string()),
                    }
                })
                .collect(),
        )
    }

    /// The image's `stat` on every component of each mount point (a link among them is
    /// refused): run before any command of the agent's, in a container just made.
    fn seen_by_stat(
        &self,
        exec: impl FnOnce(&[String]) -> Result<String, SandboxError>,
    ) -> Result<Vec<Seen>, SandboxError> {
        let mut args: Vec<String> = ["stat", "-c", "%f %d %i %n", "--"]
            .map(String::from)
            .to_vec();
        for bind in &self.0 {
            args.extend(prefixes(bind.path()));
        }
        let output = exec(&args)?;
        let lines: Vec<&str> = output.lines().collect();
        let mut at = 0;
        let mut found = Vec::new();
        for bind in &self.0 {
            let count = prefixes(bind.path()).len();
            let Some(own) = lines.get(at..at + count) else {
                return Err(refused(format!(
                    "cannot check the container's mounts: `stat` in the image answered {output:?}"
                )));
            };
            at += count;
            found.push(seen_in_stat(own));
        }
        Ok(found)
    }
}

/// What is at a mount point inside the container.
enum Seen {
    Same(FileId),
    Broken(String),
}

/// `/a`, `/a/b`, … `path`.
fn prefixes(path: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = PathBuf::from("/");
    for component in path.components().skip(1) {
        at.push(component);
        out.push(at.display().to_string());
    }
    out
}

/// The last of `stat -c '%f %d %i %n'`'s lines, unless a line before it (or it) is a link.
fn seen_in_stat(lines: &[&str]) -> Seen {
    const S_IFMT: u32 = 0o170000;
    const S_IFLNK: u32 = 0o120000;
    let mut last = None;
    for line in lines {
        let mut words = line.splitn(4, ' ');
        let (Some(mode), Some(dev), Some(ino)) = (words.next(), words.next(), words.next()) else {
            return Seen::Broken(format!("stat said {line:?}"));
        };
        let (Ok(mode), Ok(dev), Ok(ino)) = (
            u32::from_str_radix(mode, 16),
            dev.parse::<u64>(),
            ino.parse::<u64>(),
        ) else {
            return Seen::Broken(format!("stat said {line:?}"));
        };
        if mode & S_IFMT == S_IFLNK {
            return Seen::Broken(format!("{} is a symbolic link", words.next().unwrap_or("")));
        }
        last = Some(FileId { dev, ino });
    }
    last.map_or_else(|| Seen::Broken("stat said nothing".into()), Seen::Same)
}

/// Runs `args` in the container `name` as `user`, from `/`, with a fixed PATH (never
/// the workspace's), and gives its standard output.
pub(super) fn exec_in(
    cli: &Path,
    host: &[String; 2],
    user: &str,
    name: &str,
    args: &[String],
) -> Result<String, SandboxError> {
    exec_bytes(cli, host, user, name, args).map(|out| String::from_utf8_lossy(&out).into_owned())
}

/// `exec_in`, its standard output as bytes (names that are not UTF-8 stay whole).
pub(super) fn exec_bytes(
    cli: &Path,
    host: &[String; 2],
    user: &str,
    name: &str,
    args: &[String],
) -> Result<Vec<u8>, SandboxError> {
    let output = Command::new(cli)
        .args(host)
        .args(["exec", "-u", user, "-w", "/"])
        .args([
            "-e",
            "PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
        ])
        .arg(name)
        .args(args)
        .env_clear()
        .envs(std::env::vars().filter(|(k, _)| k == "PATH" || k == "HOME"))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| refused(format!("cannot run {}: {e}", cli.display())))?;
    if !output.status.success() {
        let what = if args.first().is_some_and(|a| a == "stat") {
            "cannot check the container's mounts with the image's `stat` (wright cannot see into the container as this user, and the image needs stat for it)".to_string()
        } else {
            format!("`{}` in the container {name} failed", args.join(" "))
        };
        return Err(refused(format!(
            "{what}: {} {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(output.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_read_and_links_refused() {
        let dir = |d: u64, i: u64, name: &str| format!("41ed {d} {i} {name}");
        let lines = [dir(1, 2, "/w"), dir(1, 3, "/w/a b")];
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        assert!(matches!(
            seen_in_stat(&refs),
            Seen::Same(FileId { dev: 1, ino: 3 })
        ));
        let link = ["41ed 1 2 /w", "a1ff 1 9 /w/sub", "41ed 5 6 /w/sub/.git"];
        assert!(
            matches!(seen_in_stat(&link), Seen::Broken(why) if why.contains("/w/sub is a symbolic link"))
        );
        assert!(matches!(seen_in_stat(&["nonsense"]), Seen::Broken(_)));
        assert_eq!(
            prefixes(Path::new("/w/sub/.git")),
            ["/w", "/w/sub", "/w/sub/.git"]
        );
    }

    #[test]
    fn a_link_below_the_workspace_is_refused_and_a_missing_path_skipped() {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().canonicalize().unwrap();
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join("sub/inner/.git")).unwrap();
        std::fs::create_dir_all(root.join("other/inner/.git")).unwrap();
        let protected = [ws.join("sub/inner/.git"), ws.join("gone/.git")];
        let binds = Binds::resolve(&ws, &ws, &[], &protected).unwrap();
        let paths: Vec<&Path> = binds.all().iter().map(Bind::path).collect();
        assert_eq!(paths, [ws.as_path(), protected[0].as_path()]);
        assert!(!binds.all()[0].read_only && binds.all()[1].read_only);

        std::fs::rename(ws.join("sub"), ws.join("sub.old")).unwrap();
        std::os::unix::fs::symlink(root.join("other"), ws.join("sub")).unwrap();
        let err = Binds::resolve(&ws, &ws, &[], &protected).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, SandboxError::Tampered(_)), "{text}");
        assert!(
            text.contains(&format!(
                "{} is a symbolic link to {} where a directory was",
                ws.join("sub").display(),
                root.join("other").display()
            )) && text.contains("put the directory back"),
            "{text}"
        );
    }

    /// The check after the start, against this process's own root (where the paths are
    /// what they are on the host): what was resolved passes; a directory replaced since,
    /// or a link put in its way, is refused.
    #[test]
    fn the_check_after_the_start_compares_device_and_inode() {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().canonicalize().unwrap();
        let ws = root.join("ws");
        let git = ws.join("sub/inner/.git");
        std::fs::create_dir_all(&git).unwrap();
        let pid = i64::from(std::process::id());
        let no_exec = |_: &[String]| -> Result<String, SandboxError> { panic!("not needed") };
        let binds = Binds::resolve(&ws, &ws, &[], std::slice::from_ref(&git)).unwrap();
        binds.verify("c", pid, no_exec).unwrap();

        std::fs::rename(&git, ws.join("sub/inner/moved")).unwrap();
        std::fs::create_dir(&git).unwrap();
        let err = binds.verify("c", pid, no_exec).unwrap_err().to_string();
        assert!(
            err.contains("not the device") && err.contains("the container was removed"),
            "{err}"
        );

        std::fs::rename(ws.join("sub"), ws.join("sub.old")).unwrap();
        std::fs::create_dir_all(root.join("other/inner/.git")).unwrap();
        std::os::unix::fs::symlink(root.join("other"), ws.join("sub")).unwrap();
        let err = binds.verify("c", pid, no_exec).unwrap_err().to_string();
        assert!(err.contains("is a symbolic link"), "{err}");
    }

    /// Where the container's root cannot be opened, the image's `stat` is asked, for
    /// every component of each mount point.
    #[test]
    fn without_the_containers_root_stat_in_it_decides() {
        let base = tempfile::tempdir().unwrap();
        let ws = base.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        let binds = Binds::resolve(&ws, &ws, &[], &[ws.join(".git")]).unwrap();
        let no_such_pid = i64::from(i32::MAX);
        let answer = |lie: Option<PathBuf>| {
            move |args: &[String]| -> Result<String, SandboxError> {
                use std::os::unix::fs::MetadataExt;
                assert_eq!(args[..4], ["stat", "-c", "%f %d %i %n", "--"]);
                let mut out = String::new();
                for path in &args[4..] {
                    let meta = std::fs::symlink_metadata(path).unwrap();
                    let lied = lie.as_deref() == Some(Path::new(path));
                    let ino = if lied { 1 } else { meta.ino() };
                    out += &format!("{:x} {} {ino} {path}\n", meta.mode(), meta.dev());
                }
                Ok(out)
            }
        };
        binds.verify("c", no_such_pid, answer(None)).unwrap();
        assert!(binds
            .verify("c", no_such_pid, answer(Some(ws.join(".git"))))
            .is_err());
    }
}
