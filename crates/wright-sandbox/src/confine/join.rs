//! Joining a running sandbox: `wright __sandbox-exec POLICY --join PID -- PROGRAM ARGS…`
//! runs PROGRAM in the namespaces of PID (the terminal's confined shell): its user, mount,
//! network and PID namespaces, so PROGRAM sees the same root and the same loopback (the
//! servers the agent started there, the relay to wright's proxy) and dies with the shell's
//! PID namespace. The launcher then confines itself as it confines any command (rlimits,
//! no capabilities, Landlock, seccomp) before it execs: joining gives PROGRAM nothing the
//! shell's own commands lack.
//!
//! Fail closed: PID must be in network and mount namespaces other than the launcher's
//! (a shell started with `--sandbox landlock`, or a PID since reused by a host process,
//! is refused), and every namespace is opened as a descriptor before any is entered, so
//! the checks and the joins concern the same process.

use nix::sched::setns;
use nix::sched::CloneFlags;
use nix::sys::signal::Signal;
use nix::sys::wait::waitpid;
use nix::sys::wait::WaitStatus;
use nix::unistd::ForkResult;
use std::fs::File;
use std::os::fd::AsRawFd;

/// The kinds joined, in the order they must be entered: the user namespace first, which
/// gives the capabilities the others need (a user namespace of the same user's).
const KINDS: [(&str, CloneFlags); 4] = [
    ("user", CloneFlags::CLONE_NEWUSER),
    ("mnt", CloneFlags::CLONE_NEWNS),
    ("net", CloneFlags::CLONE_NEWNET),
    ("pid", CloneFlags::CLONE_NEWPID),
];

/// Enters PID's namespaces and forks into its PID namespace. Returns in the child; the
/// parent waits and exits with the child's status.
pub fn enter(pid: i32) -> Result<(), String> {
    let mut opened = Vec::new();
    for (kind, flag) in KINDS {
        let file = File::open(format!("/proc/{pid}/ns/{kind}"))
            .map_err(|e| format!("cannot open process {pid}'s {kind} namespace: {e}"))?;
        let theirs = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
            .map_err(|e| format!("{kind} namespace of {pid}: {e}"))?;
        let ours = std::fs::read_link(format!("/proc/self/ns/{kind}"))
            .map_err(|e| format!("own {kind} namespace: {e}"))?;
        let same = theirs == ours;
        if same && matches!(kind, "mnt" | "net") {
            return Err(format!(
                "the sandbox's shell (process {pid}) has no {kind} namespace of its own, so there is no sandbox to join"
            ));
        }
        // Entering one's own user namespace again is refused by the kernel (and needless).
        if !same {
            opened.push((kind, file, flag));
        }
    }
    for (kind, file, flag) in &opened {
        setns(file, *flag)
            .map_err(|e| format!("cannot join the sandbox's {kind} namespace: {e}"))?;
    }
    // SAFETY: the launcher is single-threaded (no runtime has started), so the child may
    // do anything the parent could.
    #[allow(unsafe_code)]
    let forked = unsafe { nix::unistd::fork() }.map_err(|e| format!("fork: {e}"))?;
    match forked {
        ForkResult::Parent { child } => loop {
            match waitpid(child, None) {
                Ok(WaitStatus::Exited(_, code)) => std::process::exit(code),
                Ok(WaitStatus::Signaled(_, signal, _)) => std::process::exit(128 + signal as i32),
                Ok(_) => continue,
                Err(nix::errno::Errno::EINTR) => continue,
                Err(_) => std::process::exit(125),
            }
        },
        ForkResult::Child => {
            let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
            Ok(())
        }
    }
}
