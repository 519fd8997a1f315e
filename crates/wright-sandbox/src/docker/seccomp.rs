//! The seccomp profile of a container whose workspace is the user's own tree (in place,
//! or a plain directory): there the user's programs make Unix sockets at any time (git's
//! fsmonitor daemon in `.git`, an editor's, a dev server's), the bind mount shows them to
//! the container, and nothing else stops `connect()` on a path. So, as the native sandbox
//! does there (`confine::syscalls`), `socket(AF_UNIX, …)` is refused with EPERM, while
//! `socketpair` (pipes between the agent's own processes) still works.
//!
//! A profile given to Docker replaces its default one, so this one is, like Docker's, an
//! allow-list: every call not named is refused with EPERM. What it allows is Docker's
//! default for a container without capabilities (`seccomp_allowed`), less what the native
//! sandbox refuses besides — the kernel keyrings, `bpf`, `userfaultfd`, io_uring, ptrace
//! and other processes' memory, the clocks — with arguments checked where a call is only
//! sometimes harmless: `socket` for every family but `AF_UNIX` and `AF_VSOCK`, `ioctl`
//! for every request but those that push keystrokes into a terminal (`TIOCSTI`,
//! `TIOCLINUX`), `clone` without a namespace flag (`clone3`, whose flags the filter cannot
//! read, answers ENOSYS so libc falls back to `clone`), `personality` for the usual
//! personas. The kernel reads a family and a request as 32-bit numbers, so only their low
//! 32 bits are compared: upper bits set do not pass a refused value. Only the native
//! architecture is named: Docker then refuses the other ABIs (x86's `socketcall`, which
//! would pass a socket's family unseen).

use super::seccomp_allowed::ALLOWED;
use super::seccomp_allowed::X86_64_ONLY;
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
/// The low 32 bits: what the kernel reads of an `int` or `unsigned int` argument.
const LOW_32: u64 = 0xFFFF_FFFF;

/// The namespace flags of `clone`: NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID,
/// NEWNET (Docker's mask).
const NAMESPACE_FLAGS: u64 =
    0x0002_0000 | 0x0200_0000 | 0x0400_0000 | 0x0800_0000 | 0x1000_0000 | 0x2000_0000 | 0x4000_0000;

/// The personas `personality` may set: Linux, PER_LINUX32, UNAME26, both, and a query.
const PERSONAS: [u64; 5] = [0, 0x8, 0x2_0000, 0x2_0008, 0xFFFF_FFFF];

fn allow(names: &[&str], args: Vec<Value>) -> Value {
    let mut rule = json!({"names": names, "action": "SCMP_ACT_ALLOW"});
    if !args.is_empty() {
        rule["args"] = Value::Array(args);
    }
    rule
}

/// `(argument & mask) == value`, as Docker writes it (`value` is the mask).
fn masked(index: u32, mask: u64, value: u64) -> Value {
    json!({"index": index, "value": mask, "valueTwo": value, "op": "SCMP_CMP_MASKED_EQ"})
}

/// Rules that together allow `name` when the low 32 bits of argument `index` are none of
/// `refused`, each with one masked comparison (a rule's comparisons must be on distinct
/// arguments). A value differs from every refused one either in a bit where they all
/// agree — one rule per such bit — or else only in the bits where they differ, every
/// combination of which but the refused ones' is a rule.
fn all_but(name: &str, index: u32, refused: &[u64]) -> Vec<Value> {
    let Some(first) = refused.first() else {
        return vec![allow(&[name], Vec::new())];
    };
    let differing = refused
        .iter()
        .fold(0, |bits, value| bits | ((value ^ first) & LOW_32));
    let mut rules = Vec::new();
    for bit in (0..32)
        .map(|n| 1u64 << n)
        .filter(|bit| differing & bit == 0)
    {
        rules.push(allow(&[name], vec![masked(index, bit, !first & bit)]));
    }
    // Every value of the differing bits, as a sub-mask walk.
    let mut combination: u64 = 0;
    loop {
        if !refused.iter().any(|value| value & differing == combination) {
            rules.push(allow(&[name], vec![masked(index, differing, combination)]));
        }
        if combination == differing {
            break;
        }
        combination = (combination.wrapping_sub(differing)) & differing;
    }
    rules
}

/// The profile, as Docker's `SecurityOpt: seccomp=<json>` takes it.
pub(super) fn users_tree_profile() -> Value {
    let mut names: Vec<&str> = ALLOWED.to_vec();
    if cfg!(target_arch = "x86_64") {
        names.extend(X86_64_ONLY);
    }
    let mut rules = vec![
        allow(&names, Vec::new()),
        allow(&["clone"], vec![masked(0, NAMESPACE_FLAGS, 0)]),
        json!({"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": ENOSYS}),
    ];
    for persona in PERSONAS {
        rules.push(allow(&["personality"], vec![masked(0, LOW_32, persona)]));
    }
    rules.extend(all_but("socket", 0, &[AF_UNIX, AF_VSOCK]));
    rules.extend(all_but("ioctl", 1, &[TIOCSTI, TIOCLINUX]));
    json!({
        "defaultAction": "SCMP_ACT_ERRNO",
        "defaultErrnoRet": EPERM,
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

    /// Whether the profile lets `name` run with `args`, as the kernel's filter decides:
    /// some allowing rule for it whose every comparison holds.
    fn allows(profile: &Value, name: &str, args: &[u64]) -> bool {
        profile["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|rule| rule["names"].as_array().unwrap().iter().any(|n| n == name))
            .filter(|rule| rule["action"] == "SCMP_ACT_ALLOW")
            .any(|rule| {
                let empty = Vec::new();
                let checks = rule.get("args").and_then(Value::as_array).unwrap_or(&empty);
                checks.iter().all(|check| {
                    let arg = args[check["index"].as_u64().unwrap() as usize];
                    let value = check["value"].as_u64().unwrap();
                    match check["op"].as_str().unwrap() {
                        "SCMP_CMP_MASKED_EQ" => arg & value == check["valueTwo"].as_u64().unwrap(),
                        "SCMP_CMP_EQ" => arg == value,
                        op => panic!("a comparison this test does not read: {op}"),
                    }
                })
            })
    }

    /// The numbers to try for a 32-bit argument: every small one, the ones around those
    /// refused, and each again with upper bits set (which the kernel does not read).
    fn tried(around: &[u64]) -> Vec<u64> {
        let mut values: Vec<u64> = (0..=128).collect();
        for &value in around {
            values.extend(value.saturating_sub(64)..value + 64);
        }
        values.extend([0x8000_0000, 0xFFFF_FFFF, 0x4004_5431, 0xC020_660B]);
        let high: Vec<u64> = values
            .iter()
            .flat_map(|v| [v | 1 << 32, v | 0xFFFF_FFFF_0000_0000])
            .collect();
        values.extend(high);
        values
    }

    #[test]
    fn everything_not_named_is_refused() {
        let profile = users_tree_profile();
        assert_eq!(profile["defaultAction"], "SCMP_ACT_ERRNO");
        assert_eq!(profile["defaultErrnoRet"], EPERM);
        for name in [
            "unshare",
            "setns",
            "keyctl",
            "add_key",
            "request_key",
            "io_uring_setup",
            "io_uring_enter",
            "ptrace",
            "process_vm_readv",
            "process_vm_writev",
            "bpf",
            "userfaultfd",
            "perf_event_open",
            "mount",
            "umount2",
            "pivot_root",
            "chroot",
            "init_module",
            "kexec_load",
            "reboot",
            "swapon",
            "syslog",
            "acct",
            "sysfs",
            "adjtimex",
            "clock_adjtime",
            "clock_settime",
            "settimeofday",
            "socketcall",
            "open_by_handle_at",
            "fanotify_init",
            "lookup_dcookie",
            "iopl",
            "kcmp",
            "pidfd_getfd",
            "clone3",
        ] {
            assert!(!allows(&profile, name, &[0; 6]), "{name} is allowed");
        }
        let clone3: Vec<&Value> = profile["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|rule| rule["names"][0] == "clone3")
            .collect();
        assert_eq!(clone3[0]["errnoRet"], ENOSYS);
        // What a build, a test run and git make.
        for name in [
            "read",
            "write",
            "openat",
            "execve",
            "wait4",
            "pipe2",
            "socketpair",
            "connect",
            "mmap",
            "futex",
            "getdents64",
            "renameat2",
            "statx",
            "prctl",
            "seccomp",
        ] {
            assert!(allows(&profile, name, &[0; 6]), "{name} is refused");
        }
    }

    #[test]
    fn sockets_of_every_family_but_unix_and_vsock_upper_bits_or_not() {
        let profile = users_tree_profile();
        for family in tried(&[AF_UNIX, AF_VSOCK]) {
            let low = family & LOW_32;
            let expected = low != AF_UNIX && low != AF_VSOCK;
            assert_eq!(
                allows(&profile, "socket", &[family, 1, 0, 0, 0, 0]),
                expected,
                "socket family {family:#x}"
            );
        }
        assert!(allows(
            &profile,
            "socket",
            &[libc::AF_INET as u64, 1, 0, 0, 0, 0]
        ));
        assert!(allows(&profile, "socketpair", &[AF_UNIX, 1, 0, 0, 0, 0]));
    }

    #[test]
    fn every_ioctl_but_those_typing_into_a_terminal() {
        let profile = users_tree_profile();
        for request in tried(&[TIOCSTI, TIOCLINUX]) {
            let low = request & LOW_32;
            let expected = low != TIOCSTI && low != TIOCLINUX;
            assert_eq!(
                allows(&profile, "ioctl", &[0, request, 0, 0, 0, 0]),
                expected,
                "ioctl {request:#x}"
            );
        }
        assert_eq!(TIOCSTI, libc::TIOCSTI);
    }

    #[test]
    fn clone_without_namespaces_and_the_usual_personas() {
        let profile = users_tree_profile();
        // fork() and a pthread's clone.
        let thread = (libc::CLONE_VM
            | libc::CLONE_FS
            | libc::CLONE_FILES
            | libc::CLONE_SIGHAND
            | libc::CLONE_THREAD
            | libc::CLONE_SYSVSEM
            | libc::CLONE_SETTLS
            | libc::CLONE_PARENT_SETTID
            | libc::CLONE_CHILD_CLEARTID) as u64;
        for flags in [libc::SIGCHLD as u64, thread] {
            assert!(
                allows(&profile, "clone", &[flags, 0, 0, 0, 0, 0]),
                "{flags:#x}"
            );
        }
        for namespace in [
            libc::CLONE_NEWNS,
            libc::CLONE_NEWCGROUP,
            libc::CLONE_NEWUTS,
            libc::CLONE_NEWIPC,
            libc::CLONE_NEWUSER,
            libc::CLONE_NEWPID,
            libc::CLONE_NEWNET,
        ] {
            let flags = namespace as u64 | libc::SIGCHLD as u64;
            assert!(
                !allows(&profile, "clone", &[flags, 0, 0, 0, 0, 0]),
                "{flags:#x}"
            );
        }
        assert!(allows(
            &profile,
            "personality",
            &[0xFFFF_FFFF, 0, 0, 0, 0, 0]
        ));
        assert!(allows(&profile, "personality", &[0x8, 0, 0, 0, 0, 0]));
        // ADDR_NO_RANDOMIZE: not a persona a command needs.
        assert!(!allows(
            &profile,
            "personality",
            &[0x0004_0000, 0, 0, 0, 0, 0]
        ));
    }

    #[test]
    fn the_filter_stays_small() {
        // The kernel takes at most 4096 instructions; each rule costs a few.
        let rules = users_tree_profile()["syscalls"].as_array().unwrap().len();
        assert!(rules < 100, "{rules} rules");
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
