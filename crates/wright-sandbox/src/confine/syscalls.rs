//! seccomp: system calls a confined command is refused (with EPERM, so programs see an
//! ordinary error), whatever Landlock covers or not.
//!
//! - sockets other than Unix ones, unless the network is allowed (Landlock does not cover
//!   UDP or raw sockets);
//! - Unix sockets too (but `socketpair`) when the command has no root of its own, where
//!   the host's socket paths (tmux, ssh-agent, Docker) are there to connect to and Landlock
//!   does not cover `connect()`, and when the workspace is the user's own tree, where
//!   their programs make sockets at any time (git's fsmonitor daemon in `.git`);
//! - io_uring (it can perform I/O without the system calls filtered here);
//! - ptrace and reading or writing other processes' memory;
//! - the kernel keyrings;
//! - TIOCSTI and TIOCLINUX, which push keystrokes into a terminal.

use seccompiler::BpfProgram;
use seccompiler::SeccompAction;
use seccompiler::SeccompCmpArgLen;
use seccompiler::SeccompCmpOp;
use seccompiler::SeccompCondition;
use seccompiler::SeccompFilter;
use seccompiler::SeccompRule;
use seccompiler::TargetArch;
use std::collections::BTreeMap;

#[cfg(target_arch = "x86_64")]
const ARCH: TargetArch = TargetArch::x86_64;
#[cfg(target_arch = "aarch64")]
const ARCH: TargetArch = TargetArch::aarch64;

const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;

fn condition(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(|e| e.to_string())
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| e.to_string())
}

/// Compiles the filter (done before any restriction; applying it is one system call).
/// `no_unix_sockets`: `socket(AF_UNIX, …)` is refused too (where the host's socket paths
/// are visible), while `socketpair` still works. `proxied` (the network off, an
/// allow-list through wright's proxy): TCP sockets are allowed besides Unix ones, and no
/// other IP socket (UDP, raw, packet); the namespace has only its loopback, and Landlock
/// lets TCP connect only to the proxy's port.
pub fn program(network: bool, no_unix_sockets: bool, proxied: bool) -> Result<BpfProgram, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    // An empty rule list refuses the call whatever its arguments.
    for syscall in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_keyctl,
    ] {
        rules.insert(syscall, Vec::new());
    }
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![condition(1, SeccompCmpOp::Eq, TIOCSTI)?])?,
            rule(vec![condition(1, SeccompCmpOp::Eq, TIOCLINUX)?])?,
        ],
    );
    let not_unix = || condition(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64);
    match (network, no_unix_sockets) {
        (false, _) if proxied => {
            let family = |op, family: i32| condition(0, op, family as u64);
            let mut refused = vec![rule(vec![
                family(SeccompCmpOp::Ne, libc::AF_UNIX)?,
                family(SeccompCmpOp::Ne, libc::AF_INET)?,
                family(SeccompCmpOp::Ne, libc::AF_INET6)?,
            ])?];
            if no_unix_sockets {
                refused.push(rule(vec![family(SeccompCmpOp::Eq, libc::AF_UNIX)?])?);
            }
            for domain in [libc::AF_INET, libc::AF_INET6] {
                for kind in [
                    libc::SOCK_DGRAM,
                    libc::SOCK_RAW,
                    libc::SOCK_RDM,
                    libc::SOCK_SEQPACKET,
                    // SOCK_PACKET (old AF_INET packet sockets).
                    10,
                ] {
                    refused.push(rule(vec![
                        family(SeccompCmpOp::Eq, domain)?,
                        condition(1, SeccompCmpOp::MaskedEq(0xf), kind as u64)?,
                    ])?);
                }
            }
            rules.insert(libc::SYS_socket, refused);
            rules.insert(libc::SYS_socketpair, vec![rule(vec![not_unix()?])?]);
        }
        (true, false) => {}
        (true, true) => {
            let unix = condition(0, SeccompCmpOp::Eq, libc::AF_UNIX as u64)?;
            rules.insert(libc::SYS_socket, vec![rule(vec![unix])?]);
        }
        (false, false) => {
            rules.insert(libc::SYS_socket, vec![rule(vec![not_unix()?])?]);
            rules.insert(libc::SYS_socketpair, vec![rule(vec![not_unix()?])?]);
        }
        // Every socket() refused; socketpair only for Unix pairs.
        (false, true) => {
            rules.insert(libc::SYS_socket, Vec::new());
            rules.insert(libc::SYS_socketpair, vec![rule(vec![not_unix()?])?]);
        }
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        ARCH,
    )
    .map_err(|e| e.to_string())?;
    BpfProgram::try_from(filter).map_err(|e| e.to_string())
}

pub fn apply(program: &BpfProgram) -> Result<(), String> {
    seccompiler::apply_filter(program).map_err(|e| format!("seccomp: {e}"))
}
