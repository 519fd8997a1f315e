//! The way from a sandbox with an allow-list to wright's proxy. The command's network
//! namespace has only its own loopback (brought up here); the relay, a small process the
//! launcher forks, listens on 127.0.0.1:PROXY_PORT there and hands each accepted socket,
//! as it is, to the proxy outside (over the Unix socket connected before the namespaces
//! were entered, `SCM_RIGHTS`), which reads the request and decides. The relay reads
//! nothing and reaches nothing itself: no files (Landlock), no new sockets (seccomp), no
//! capabilities; it dies with the command (PR_SET_PDEATHSIG, and with its PID namespace).
//!
//! What the command may do with IP sockets is limited elsewhere: seccomp allows only TCP
//! ones (see `syscalls`), Landlock only `connect` to the proxy port (ABI 4 and later).

use crate::egress::PROXY_PORT;
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;

/// Connects to the proxy's socket while the host's paths are still in sight.
pub fn connect(policy: &super::Policy) -> Result<Option<UnixStream>, String> {
    let Some(path) = &policy.proxy else {
        return Ok(None);
    };
    UnixStream::connect(path)
        .map(Some)
        .map_err(|e| format!("wright's network proxy at {}: {e}", path.display()))
}

/// Brings the namespace's loopback up and listens on the proxy port; unless only
/// reporting, forks the relay, which serves until the command ends.
pub fn start(control: UnixStream, report_only: bool) -> Result<(), String> {
    loopback_up()?;
    let listener = TcpListener::bind(("127.0.0.1", PROXY_PORT))
        .map_err(|e| format!("cannot listen on 127.0.0.1:{PROXY_PORT} in the sandbox: {e}"))?;
    if report_only {
        return Ok(());
    }
    let parent = nix::unistd::getpid();
    let relay_filter = super::syscalls::program(false, true, false)?;
    // SAFETY: the launcher is single-threaded (no runtime has started), so the child may
    // do anything the parent could.
    #[allow(unsafe_code)]
    let forked = unsafe { nix::unistd::fork() }.map_err(|e| format!("fork: {e}"))?;
    match forked {
        // The command goes on; the listener and the control socket close on exec.
        nix::unistd::ForkResult::Parent { .. } => Ok(()),
        nix::unistd::ForkResult::Child => {
            let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
            if nix::unistd::getppid() != parent {
                std::process::exit(0);
            }
            confine_relay(&relay_filter);
            serve(&listener, &control);
            std::process::exit(0);
        }
    }
}

/// No terminal, no files, no capabilities, no new sockets: only accept and pass on.
fn confine_relay(filter: &seccompiler::BpfProgram) {
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        for fd in 0..3 {
            // SAFETY: dup2 onto the standard descriptors, which this process owns.
            #[allow(unsafe_code)]
            let _ = unsafe { libc::dup2(null.as_raw_fd(), fd) };
        }
    }
    // A group of its own (not a session: the PTY finds the shell as its session's leader),
    // so signals meant for the shell's jobs never reach the relay.
    let _ = nix::unistd::setpgid(nix::unistd::Pid::from_raw(0), nix::unistd::Pid::from_raw(0));
    if super::limits::drop_capabilities().is_err()
        || super::files::deny_all().is_err()
        || super::syscalls::apply(filter).is_err()
    {
        std::process::exit(1);
    }
}

fn serve(listener: &TcpListener, control: &UnixStream) {
    use nix::sys::socket::sendmsg;
    use nix::sys::socket::ControlMessage;
    use nix::sys::socket::MsgFlags;
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let fds = [stream.as_raw_fd()];
        let byte = [0u8; 1];
        let iov = [std::io::IoSlice::new(&byte)];
        let sent = sendmsg::<()>(
            control.as_raw_fd(),
            &iov,
            &[ControlMessage::ScmRights(&fds)],
            MsgFlags::empty(),
            None,
        );
        if sent.is_err() {
            // The proxy is gone (wright ended): nothing more can go out.
            return;
        }
    }
}

nix::ioctl_read_bad!(get_flags, libc::SIOCGIFFLAGS, libc::ifreq);
nix::ioctl_write_ptr_bad!(set_flags, libc::SIOCSIFFLAGS, libc::ifreq);

/// `ip link set lo up`, in the namespace's own loopback.
pub(super) fn loopback_up() -> Result<(), String> {
    let fd = nix::sys::socket::socket(
        nix::sys::socket::AddressFamily::Inet,
        nix::sys::socket::SockType::Datagram,
        nix::sys::socket::SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(|e| format!("socket for the loopback: {e}"))?;
    set_up(fd.as_raw_fd())
}

fn set_up(fd: i32) -> Result<(), String> {
    // SAFETY: ifreq is plain data; zeroed is a valid value.
    #[allow(unsafe_code)]
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    // SAFETY: the ioctls read and write the ifreq passed, which lives across the calls.
    #[allow(unsafe_code)]
    unsafe {
        get_flags(fd, &mut request).map_err(|e| format!("loopback flags: {e}"))?;
        request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        set_flags(fd, &request).map_err(|e| format!("cannot bring the loopback up: {e}"))?;
    }
    Ok(())
}
