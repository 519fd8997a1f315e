//! The programs the rules know by name: what fetches, what needs the network, what only
//! reads, what runs as root, what changes permissions, what acts on the machine beyond
//! the workspace, and which are interpreters.

/// Programs that fetch from the network.
#[rustfmt::skip]
pub(crate) const DOWNLOADERS: &[&str] = &["curl", "wget", "aria2c", "http", "https", "xh", "fetch"];

/// Programs that need the network whatever their arguments.
#[rustfmt::skip]
pub(crate) const NETWORK: &[&str] = &[
    "curl", "wget", "aria2c", "http", "https", "xh", "ssh", "scp", "sftp", "ftp", "lftp",
    "telnet", "nc", "ncat", "netcat", "socat", "ping", "ping6", "dig", "nslookup", "host",
    "whois", "traceroute", "mosh", "rclone",
];

/// Programs that only read (files, the system's state), whatever their arguments, save
/// the redirections of their output, judged apart.
#[rustfmt::skip]
pub(crate) const READ_ONLY: &[&str] = &[
    "ls", "cat", "head", "tail", "less", "more", "wc", "grep", "egrep", "fgrep", "rg", "ag",
    "ack", "tree", "pwd", "echo", "printf", "true", "false", ":", "which", "type",
    "whereis", "whoami", "id", "groups", "date", "uname", "file", "stat", "du", "df",
    "diff", "cmp", "comm", "cut", "tr", "nl", "column", "jq", "uniq", "rev", "tac", "fold",
    "paste", "join", "expand", "unexpand", "basename", "dirname", "realpath", "readlink",
    "test", "[", "[[", "sleep", "seq", "md5sum", "sha1sum", "sha256sum", "sha512sum",
    "cksum", "xxd", "od", "hexdump", "strings", "ps", "pgrep", "free", "nproc", "uptime",
    "pushd", "popd", "dirs", "unset", "alias", "help", "man", "locale", "tput", "clear",
    "wait", "jobs", "trap", "shopt", "read", "let", "local", "hash", "return", "exit",
    "break", "continue", "{", "}", "then", "else", "fi", "do", "done", "esac", "for",
    "case", "select", "lscpu", "lsblk", "getconf", "zcat", "bat", "fd", "shasum", "numfmt",
    "fmt", "sed", "sort",
];

/// Programs that run as another user.
#[rustfmt::skip]
pub(crate) const AS_ROOT: &[&str] = &["sudo", "doas", "su", "pkexec", "runuser"];

/// Programs that change permissions or ownership.
#[rustfmt::skip]
pub(crate) const PERMISSIONS: &[&str] = &["chmod", "chown", "chgrp", "chattr", "setfacl", "chcon"];

/// Programs that act on the machine, beyond the workspace (services, mounts, users, the
/// container engine).
#[rustfmt::skip]
pub(crate) const SYSTEM: &[&str] = &[
    "docker", "podman", "kubectl", "helm", "systemctl", "service", "launchctl", "crontab",
    "mount", "umount", "mkfs", "fdisk", "parted", "reboot", "shutdown", "halt", "poweroff",
    "iptables", "nft", "useradd", "usermod", "userdel", "passwd", "chpasswd", "visudo",
    "insmod", "modprobe", "sysctl", "swapon", "nsenter", "unshare", "chroot",
];

/// Whether `name` runs a script (a shell, or a language's interpreter).
pub(crate) fn is_interpreter(name: &str) -> bool {
    matches!(
        name,
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish" | "perl" | "ruby" | "node" | "php"
    ) || name.starts_with("python")
}
