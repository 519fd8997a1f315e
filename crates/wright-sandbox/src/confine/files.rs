//! Landlock: the file system rules (and TCP, where the kernel's Landlock has it).

use super::policy::Policy;
use landlock::Access;
use landlock::AccessFs;
use landlock::AccessNet;
use landlock::CompatLevel;
use landlock::Compatible;
use landlock::NetPort;
use landlock::PathBeneath;
use landlock::PathFd;
use landlock::Ruleset;
use landlock::RulesetAttr;
use landlock::RulesetCreated;
use landlock::RulesetCreatedAttr;
use landlock::RulesetStatus;
use landlock::Scope;
use landlock::ABI;

/// The newest ABI wright knows how to use; older kernels get what they support.
const TARGET: ABI = ABI::V6;

pub struct Prepared {
    ruleset: RulesetCreated,
    handles_net: bool,
}

/// Builds the ruleset (opening every allowed path now, before anything is restricted).
/// `local_tcp`: TCP is left to the namespace (its own loopback only), since Landlock
/// cannot allow a range of ports.
/// With a root of its own, the command's fresh `/dev/shm` is writable too. (Its `/tmp`
/// is not: it holds the mount points of the paths bound under the host's /tmp, which must
/// not look writable; TMPDIR is the private tmp.)
pub fn prepare(policy: &Policy, own_root: bool, local_tcp: bool) -> Result<Prepared, String> {
    let all_fs = AccessFs::from_all(TARGET);
    let read_fs = AccessFs::from_read(TARGET);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all_fs)
        .map_err(|e| format!("Landlock: {e}"))?;
    let abi_net = AccessNet::from_all(TARGET);
    let handles_net = !policy.network && !local_tcp && !abi_net.is_empty();
    let proxied = policy.proxy.is_some();
    if handles_net {
        ruleset = ruleset
            .handle_access(abi_net)
            .map_err(|e| format!("Landlock: {e}"))?;
    }
    ruleset = ruleset
        .scope(Scope::from_all(TARGET))
        .map_err(|e| format!("Landlock: {e}"))?;
    let mut created = ruleset.create().map_err(|e| format!("Landlock: {e}"))?;
    if handles_net && proxied {
        // TCP connect to the relay of wright's proxy on the namespace's loopback only.
        created = created
            .add_rule(NetPort::new(
                crate::egress::PROXY_PORT,
                AccessNet::ConnectTcp,
            ))
            .map_err(|e| format!("Landlock rule for the proxy port: {e}"))?;
    }
    let private_tmpfs: Vec<std::path::PathBuf> = if own_root {
        vec!["/dev/shm".into()]
    } else {
        Vec::new()
    };
    // With a root of its own the caches are private layers; else the user's own, read-only.
    let cache_access = if own_root { all_fs } else { read_fs };
    for (paths, access) in [
        (&policy.read_only, read_fs),
        (&policy.read_write, all_fs),
        (&private_tmpfs, all_fs),
        (&policy.caches, cache_access),
    ] {
        for path in paths {
            // A path that vanished since the policy was made is simply not granted.
            let Ok(fd) = PathFd::new(path) else { continue };
            let access = if path.is_dir() {
                access
            } else {
                access & AccessFs::from_file(TARGET)
            };
            created = created
                .add_rule(PathBeneath::new(fd, access))
                .map_err(|e| format!("Landlock rule for {}: {e}", path.display()))?;
        }
    }
    Ok(Prepared {
        ruleset: created,
        handles_net,
    })
}

/// Restricts this process (and what it execs). Fails unless files are fully confined.
pub fn enforce(prepared: Prepared) -> Result<(String, bool), String> {
    let handles_net = prepared.handles_net;
    let status = prepared
        .ruleset
        .restrict_self()
        .map_err(|e| format!("Landlock: {e}"))?;
    let words = match status.ruleset {
        RulesetStatus::FullyEnforced => "Landlock, fully enforced",
        RulesetStatus::PartiallyEnforced => "Landlock, partially enforced (older kernel)",
        RulesetStatus::NotEnforced => {
            return Err("this kernel does not enforce Landlock (Linux 5.13+ with Landlock enabled is needed); use --sandbox docker, or --sandbox none to run unconfined".into())
        }
    };
    if !status.no_new_privs {
        return Err("cannot set no_new_privs".into());
    }
    let tcp_blocked = handles_net && status.ruleset == RulesetStatus::FullyEnforced;
    Ok((words.to_string(), tcp_blocked))
}

/// The relay's confinement: no file at all, no TCP (best effort on older kernels).
pub fn deny_all() -> Result<(), String> {
    Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(TARGET))
        .and_then(|r| r.handle_access(AccessNet::from_all(TARGET)))
        .and_then(|r| r.create())
        .and_then(|r| r.restrict_self())
        .map(|_| ())
        .map_err(|e| format!("Landlock: {e}"))
}
