//! Resource limits and capabilities of a confined command.

use super::policy::Policy;
use nix::sys::resource::setrlimit;
use nix::sys::resource::Resource;

/// Sets rlimits. RLIMIT_NPROC counts every process of the user and is not enforced for
/// root, so a fork bomb is only bounded here for ordinary users (cgroups would bound it
/// for root too).
pub fn apply_rlimits(policy: &Policy) -> Result<String, String> {
    let set = |resource, value: u64, name: &str| {
        setrlimit(resource, value, value).map_err(|e| format!("cannot set {name}: {e}"))
    };
    set(
        Resource::RLIMIT_FSIZE,
        policy.max_file_bytes,
        "RLIMIT_FSIZE",
    )?;
    set(
        Resource::RLIMIT_NOFILE,
        policy.max_open_files,
        "RLIMIT_NOFILE",
    )?;
    set(Resource::RLIMIT_CORE, 0, "RLIMIT_CORE")?;
    let root = nix::unistd::geteuid().is_root();
    if !root {
        set(Resource::RLIMIT_NPROC, policy.max_processes, "RLIMIT_NPROC")?;
    }
    Ok(format!(
        "files up to {} GiB, {} open files{}",
        policy.max_file_bytes >> 30,
        policy.max_open_files,
        if root {
            String::new()
        } else {
            format!(", {} processes", policy.max_processes)
        }
    ))
}

/// Drops every capability, from the bounding set too, so even root inside cannot regain
/// one (and cannot read wright's own /proc files, which are not dumpable).
pub fn drop_capabilities() -> Result<String, String> {
    use caps::CapSet;
    if nix::unistd::geteuid().is_root() {
        for cap in caps::all() {
            // Fails only without CAP_SETPCAP, in which case the set is already fixed.
            let _ = caps::drop(None, CapSet::Bounding, cap);
        }
    }
    for set in [
        CapSet::Ambient,
        CapSet::Inheritable,
        CapSet::Effective,
        CapSet::Permitted,
    ] {
        caps::clear(None, set).map_err(|e| format!("cannot drop capabilities: {e}"))?;
    }
    Ok("none".into())
}
