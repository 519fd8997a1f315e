//! The seccomp profile of a container whose workspace is the user's own tree (in place,
//! or a plain directory): there the user's programs make Unix sockets at any time (git's
//! fsmonitor daemon in `.git`, an editor's, a dev server's), the bind mount shows them to
//! the container, and nothing else stops `connect()` on a path. So, as the native sandbox
//! does there (`confine::syscalls`), `socket(AF_UNIX, …)` is refused with EPERM, while
//! `socketpair` (pipes between the agent's own processes) still works.
//!
//! A profile given to Docker replaces its default one, so this one keeps what the default
//! refuses a container without capabilities that the dropped capabilities do not already
//! stop — new namespaces (`unshare`, `setns`, `clone` with a namespace flag, `clone3`
//! answered ENOSYS so libc falls back to `clone`), the kernel keyrings, `bpf`,
//! `perf_event_open`, `userfaultfd`, `AF_VSOCK` sockets — and adds what the native
//! sandbox refuses besides: io_uring, ptrace and other processes' memory, and the ioctls
//! that push keystrokes into a terminal. The calls that need a capability (mounts,
//! modules, clocks, reboot, …) are listed too, so the profile does not rest on the
//! capabilities alone. Only the native architecture is named: Docker then refuses the
//! other ABIs (x86's `socketcall`, which would pass a socket's family unseen).

use serde_json::json;
use serde_json::Value;

/// EPERM, what a refused call returns: programs see an ordinary error.
const EPERM: u32 = 1;
/// ENOSYS, for `clone3`: libc then uses `clone`, whose flags the filter can see.
const ENOSYS: u32 = 38;
const AF_UNIX: u64 = 1;
const AF_VSOCK: u64 = 40;
const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;

/// The namespace flags of `clone`: NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID,
/// NEWNET.
const NAMESPACE_FLAGS: [u64; 7] = [
    0x0002_0000,
    0x0200_0000,
    0x0400_0000,
    0x0800_0000,
    0x1000_0000,
    0x2000_0000,
    0x4000_0000,
];

/// Refused whatever their arguments.
const REFUSED: &[&str] = &[
    // New namespaces: user namespaces need no capability.
    "unshare",
    "setns",
    // The kernel keyrings are not namespaced.
    "add_key",
    "request_key",
    "keyctl",
    // Kernel attack surface a command has no use for.
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "lookup_dcookie",
    "fanotify_init",
    "open_by_handle_at",
    // As the native sandbox: I/O unseen by this filter, other processes.
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    // Need a capability, dropped anyway.
    "mount",
    "umount",
    "umount2",
    "mount_setattr",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "pivot_root",
    "chroot",
    "swapon",
    "swapoff",
    "reboot",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "acct",
    "quotactl",
    "quotactl_fd",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    "syslog",
    "iopl",
    "ioperm",
    "vhangup",
    "nfsservctl",
    "uselib",
    "_sysctl",
];

fn errno(names: &[&str], errno: u32, args: Vec<Value>) -> Value {
    let mut rule = json!({"names": names, "action": "SCMP_ACT_ERRNO", "errnoRet": errno});
    if !args.is_empty() {
        rule["args"] = Value::Array(args);
    }
    rule
}

fn equal(index: u32, value: u64) -> Value {
    json!({"index": index, "value": value, "op": "SCMP_CMP_EQ"})
}

/// The profile, as Docker's `SecurityOpt: seccomp=<json>` takes it.
pub(super) fn users_tree_profile() -> Value {
    let mut rules = vec![
        errno(REFUSED, EPERM, Vec::new()),
        errno(&["clone3"], ENOSYS, Vec::new()),
    ];
    // One rule per flag: the rules of a call are alternatives.
    for flag in NAMESPACE_FLAGS {
        rules.push(errno(
            &["clone"],
            EPERM,
            vec![json!({"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"})],
        ));
    }
    for family in [AF_UNIX, AF_VSOCK] {
        rules.push(errno(&["socket"], EPERM, vec![equal(0, family)]));
    }
    for request in [TIOCSTI, TIOCLINUX] {
        rules.push(errno(&["ioctl"], EPERM, vec![equal(1, request)]));
    }
    json!({
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": [native_architecture()],
        "syscalls": rules,
    })
}

/// The `SecurityOpt` entry that applies the profile.
pub(super) fn security_opt() -> String {
    format!("seccomp={}", users_tree_profile())
}

fn native_architecture() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "SCMP_ARCH_AARCH64"
    } else {
        "SCMP_ARCH_X86_64"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules refusing `name`, with their arguments.
    fn rules_for(profile: &Value, name: &str) -> Vec<Value> {
        profile["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|rule| rule["names"].as_array().unwrap().iter().any(|n| n == name))
            .cloned()
            .collect()
    }

    #[test]
    fn unix_sockets_are_refused_and_socketpair_is_not() {
        let profile = users_tree_profile();
        assert_eq!(profile["defaultAction"], "SCMP_ACT_ALLOW");
        let socket = rules_for(&profile, "socket");
        let families: Vec<u64> = socket
            .iter()
            .map(|rule| {
                assert_eq!(rule["action"], "SCMP_ACT_ERRNO");
                assert_eq!(rule["args"][0]["index"], 0);
                assert_eq!(rule["args"][0]["op"], "SCMP_CMP_EQ");
                rule["args"][0]["value"].as_u64().unwrap()
            })
            .collect();
        assert_eq!(families, vec![libc::AF_UNIX as u64, libc::AF_VSOCK as u64]);
        assert!(rules_for(&profile, "socketpair").is_empty());
        assert!(rules_for(&profile, "connect").is_empty());
    }

    #[test]
    fn what_the_native_sandbox_and_dockers_default_refuse_stays_refused() {
        let profile = users_tree_profile();
        for name in [
            "unshare",
            "setns",
            "keyctl",
            "add_key",
            "request_key",
            "io_uring_setup",
            "ptrace",
            "process_vm_readv",
            "bpf",
            "userfaultfd",
            "mount",
        ] {
            let rules = rules_for(&profile, name);
            assert_eq!(rules.len(), 1, "{name}");
            assert!(rules[0].get("args").is_none(), "{name} only sometimes");
        }
        assert_eq!(rules_for(&profile, "clone3")[0]["errnoRet"], ENOSYS);
        let clone_flags: u64 = rules_for(&profile, "clone")
            .iter()
            .map(|rule| rule["args"][0]["value"].as_u64().unwrap())
            .fold(0, |all, flag| all | flag);
        let namespaces = libc::CLONE_NEWNS
            | libc::CLONE_NEWCGROUP
            | libc::CLONE_NEWUTS
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUSER
            | libc::CLONE_NEWPID
            | libc::CLONE_NEWNET;
        assert_eq!(clone_flags, namespaces as u64);
        let ioctls: Vec<u64> = rules_for(&profile, "ioctl")
            .iter()
            .map(|rule| rule["args"][0]["value"].as_u64().unwrap())
            .collect();
        assert_eq!(ioctls, vec![0x5412, 0x541C], "TIOCSTI, TIOCLINUX");
    }

    #[test]
    fn the_option_is_the_profile_inline() {
        let option = security_opt();
        let json = option.strip_prefix("seccomp=").unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(json).unwrap(),
            users_tree_profile()
        );
    }
}
