//! A PID namespace of the command's own, with a /proc that shows only its processes: the
//! user's other processes (a shell with an exported API key, say) vanish from /proc, so
//! their `environ` cannot be read even though they run as the same user.
//!
//! The launcher forks after `unshare(CLONE_NEWPID)`: the child becomes PID 1 of the new
//! namespace and goes on to confine itself (its root, with a /proc of its own, is built
//! after the fork: see `root`) and exec the shell; the parent only waits and
//! exits with the child's status. The child takes the terminal as its own session (so the
//! terminal's foreground job, timeouts and input detection act on the real shell): the
//! parent, which leads the terminal's session, lets go of it first, since taking a
//! terminal from another session needs a capability an unprivileged user lacks; and
//! carries the mark the PTY looks for (see `remote`), since the PTY spawned the parent.
//! It dies with the parent (PR_SET_PDEATHSIG), and everything in the namespace dies with it.

use nix::sched::unshare;
use nix::sched::CloneFlags;
use nix::sys::signal::Signal;
use nix::sys::wait::waitpid;
use nix::sys::wait::WaitStatus;
use nix::unistd::ForkResult;

nix::ioctl_write_int_bad!(take_controlling_terminal, libc::TIOCSCTTY);
nix::ioctl_none_bad!(give_up_controlling_terminal, libc::TIOCNOTTY);

/// Enters a new PID namespace. Returns in the child (PID 1 there); the parent never returns.
pub fn enter(mark: Option<&str>) -> Result<(), String> {
    unshare(CloneFlags::CLONE_NEWPID).map_err(|e| format!("PID namespace refused: {e}"))?;
    // Letting go of the terminal hangs up its foreground group, which is this process's.
    let ignore = nix::sys::signal::SigHandler::SigIgn;
    // SAFETY: setting a signal's disposition to "ignore" installs no handler code.
    #[allow(unsafe_code)]
    let _ = unsafe { nix::sys::signal::signal(Signal::SIGHUP, ignore) };
    // SAFETY: an ioctl on fd 0 without an argument; it fails harmlessly on a pipe.
    #[allow(unsafe_code)]
    let _ = unsafe { give_up_controlling_terminal(0) };
    // SAFETY: the launcher is single-threaded (it runs before any runtime starts), so the
    // child may go on doing anything the parent could.
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
            // The shell must see hang-ups as usual.
            // SAFETY: restoring the default disposition installs no handler code.
            #[allow(unsafe_code)]
            let _ = unsafe {
                nix::sys::signal::signal(Signal::SIGHUP, nix::sys::signal::SigHandler::SigDfl)
            };
            // On a terminal, become its session (no terminal, as for git: nothing to do).
            if nix::unistd::setsid().is_ok() {
                // SAFETY: an ioctl on fd 0 with an integer argument, no memory passed.
                #[allow(unsafe_code)]
                let _ = unsafe { take_controlling_terminal(0, 0) };
            }
            if let Some((key, value)) = mark.and_then(|m| m.split_once('=')) {
                // Single-threaded, before exec: nothing else reads the environment.
                std::env::set_var(key, value);
            }
            Ok(())
        }
    }
}
