//! Resource limits and capabilities of a confined command.

use super::policy::Policy;
use nix::sys::resource::getrlimit;
use nix::sys::resource::setrlimit;
use nix::sys::resource::Resource;

/// Sets rlimits. RLIMIT_NPROC is not enforced for root, so a fork bomb is only bounded
/// here for ordinary users (cgroups would bound it for root too). It counts the tasks of
/// the user in the current user namespace: in one of the sandbox's own that is the
/// sandbox alone, but without one (`in_own_user_namespace` false) it is every process and
/// thread the user runs — a desktop's browser alone has hundreds — so the limit is then
/// set that many above what the user runs now, or no command could fork at all.
pub fn apply_rlimits(policy: &Policy, in_own_user_namespace: bool) -> Result<String, String> {
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
    let processes = if nix::unistd::geteuid().is_root() {
        String::new()
    } else if in_own_user_namespace {
        set(Resource::RLIMIT_NPROC, policy.max_processes, "RLIMIT_NPROC")?;
        format!(", {} processes", policy.max_processes)
    } else {
        let others = tasks_of(nix::unistd::getuid().as_raw());
        let wanted = policy.max_processes.saturating_add(others);
        // An ordinary user cannot raise the hard limit: the user's own bound stays.
        let (_, hard) = getrlimit(Resource::RLIMIT_NPROC)
            .map_err(|e| format!("cannot read RLIMIT_NPROC: {e}"))?;
        set(Resource::RLIMIT_NPROC, wanted.min(hard), "RLIMIT_NPROC")?;
        format!(
            ", {} processes beyond the {others} threads the user runs now (no user namespace: the user's other programs share the limit)",
            wanted.min(hard).saturating_sub(others)
        )
    };
    // A limit under a GiB (`--max-file-size 16`) is said in MiB, not as "0 GiB".
    let files = match policy.max_file_bytes {
        bytes if bytes >= 1 << 30 => format!("{} GiB", bytes >> 30),
        bytes => format!("{} MiB", bytes >> 20),
    };
    Ok(format!(
        "files up to {files}, {} open files{processes}",
        policy.max_open_files,
    ))
}

/// How many tasks (threads, as RLIMIT_NPROC counts them) the real user `uid` runs, from
/// `/proc`; processes that end while it reads are skipped.
fn tasks_of(uid: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("status")).ok())
        .filter_map(|status| {
            let field = |name: &str| {
                status
                    .lines()
                    .find_map(|line| line.strip_prefix(name))
                    .and_then(|rest| rest.split_whitespace().next())
                    .and_then(|value| value.parse::<u64>().ok())
            };
            (field("Uid:")? == u64::from(uid)).then(|| field("Threads:"))?
        })
        .sum()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tasks_of_a_user_include_this_process_s_threads() {
        let uid = nix::unistd::getuid().as_raw();
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let stopped = std::sync::Arc::new(std::sync::Mutex::new(stopped));
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let stopped = stopped.clone();
                std::thread::spawn(move || {
                    let _ = stopped.lock().map(|rx| rx.recv());
                })
            })
            .collect();
        // This test's thread and the three waiting; other tests' threads come and go.
        let during = tasks_of(uid);
        drop(stop);
        for thread in threads {
            thread.join().unwrap();
        }
        assert!(during >= 4, "{during}");
        assert_eq!(tasks_of(u32::MAX - 7), 0);
    }
}
