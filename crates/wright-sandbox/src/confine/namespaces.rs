//! Fresh mount and network namespaces (and a user namespace for non-root users) for the
//! confined command, where the kernel allows. This only enters them; `root` then builds
//! the command's own root file system in the mount namespace. The network namespace has
//! no interface but a loopback that is down: no traffic at all, whatever the socket type.
//! If the kernel refuses, the caller decides whether that is fatal.

use nix::sched::unshare;
use nix::sched::CloneFlags;

/// Why there is no isolation: the kernel said no before anything changed (the caller may
/// go on without), or a later step failed half-way (nothing can be trusted: stop).
pub enum Isolation {
    Refused(String),
    Broken(String),
}

pub fn enter(network: bool) -> Result<(), Isolation> {
    let root = nix::unistd::geteuid().is_root();
    let mut flags = CloneFlags::CLONE_NEWNS;
    if !network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    if !root {
        flags |= CloneFlags::CLONE_NEWUSER;
    }
    let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
    unshare(flags)
        .map_err(|e| Isolation::Refused(format!("namespaces refused by the kernel: {e}")))?;
    if !root {
        let write = |file: &str, text: String| {
            std::fs::write(file, text).map_err(|e| Isolation::Broken(format!("{file}: {e}")))
        };
        write("/proc/self/setgroups", "deny".into())?;
        write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
        write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    }
    Ok(())
}

/// What the launcher got.
pub struct Isolated {
    pub words: String,
    /// The command has a root of its own (see `root`): no host socket path exists in it.
    pub own_root: bool,
}

/// Enters the namespaces the policy asks for and builds the command's root in them.
/// `Namespaces::WhereAvailable` goes on without them when the kernel refuses, unless a
/// path must be protected (only a mount namespace can); anything failing half-way stops.
pub fn isolate(
    policy: &super::Policy,
    mark: Option<&str>,
    report_only: bool,
) -> Result<Isolated, String> {
    use super::Namespaces;
    let without = |reason: String| -> Result<Isolated, String> {
        if !policy.protected.is_empty() {
            return Err(format!(
                "{} must stay read-only inside the workspace, which needs a mount namespace: {reason}",
                policy
                    .protected
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(Isolated {
            words: format!(
                "no namespaces ({reason}); Unix sockets refused, so no host socket is reachable"
            ),
            own_root: false,
        })
    };
    if policy.namespaces == Namespaces::Off {
        return without("--sandbox landlock".into());
    }
    let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    match enter(policy.network) {
        Ok(()) => {}
        // Without them, unless a path must be protected (then `without` refuses).
        Err(Isolation::Refused(reason)) if policy.namespaces == Namespaces::WhereAvailable => {
            return without(reason)
        }
        Err(Isolation::Refused(reason)) | Err(Isolation::Broken(reason)) => return Err(reason),
    }
    let pids = match super::pid::enter(mark) {
        Ok(()) => Ok(()),
        Err(reason) if policy.namespaces == Namespaces::WhereAvailable => Err(reason),
        Err(reason) => return Err(reason),
    };
    let layout = super::root::Layout {
        read_only: &policy.read_only,
        read_write: &policy.read_write,
        protected: &policy.protected,
        tmpfs_bytes: (policy.max_memory_bytes / 4).clamp(64 << 20, 1 << 30),
        own_pids: pids.is_ok(),
        network: policy.network,
        caches: &policy.caches,
        cache_layers: policy.cache_layers.as_deref(),
    };
    super::root::enter(&layout, &cwd, report_only)?;
    let net = if policy.network {
        ""
    } else {
        ", empty network namespace"
    };
    let pid_words = match pids {
        Ok(()) => ", own PID namespace and /proc".to_string(),
        Err(reason) => format!("; no PID namespace ({reason})"),
    };
    Ok(Isolated {
        words: format!(
            "own root (only the workspace, private tmp and toolchains, caches as private layers; fresh /tmp, /run, /dev: no host socket reachable){net}{pid_words}"
        ),
        own_root: true,
    })
}
