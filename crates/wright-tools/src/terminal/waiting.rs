//! Telling a command that waits for keyboard input from one that is merely slow: some
//! process of the terminal's foreground group is blocked in `read` on a terminal. Read
//! from `/proc/<pid>/syscall`, so it is exact rather than a guess from silence.

use std::fs;

#[cfg(target_arch = "x86_64")]
const READ_SYSCALLS: &[u64] = &[0, 17, 19];
#[cfg(target_arch = "aarch64")]
const READ_SYSCALLS: &[u64] = &[63, 65, 67];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const READ_SYSCALLS: &[u64] = &[];

/// Whether a process of group `group` is blocked reading from a terminal.
pub fn group_waits_for_input(group: i32) -> bool {
    let Ok(entries) = fs::read_dir("/proc") else {
        return false;
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| process_group(*pid) == Some(group))
        .any(reads_terminal)
}

fn process_group(pid: i32) -> Option<i32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(2)?.parse().ok()
}

fn reads_terminal(pid: i32) -> bool {
    let Ok(syscall) = fs::read_to_string(format!("/proc/{pid}/syscall")) else {
        return false;
    };
    let mut fields = syscall.split_whitespace();
    let Some(number) = fields.next().and_then(|n| n.parse::<u64>().ok()) else {
        return false;
    };
    if !READ_SYSCALLS.contains(&number) {
        return false;
    }
    let Some(fd) = fields
        .next()
        .and_then(|fd| u64::from_str_radix(fd.trim_start_matches("0x"), 16).ok())
    else {
        return false;
    };
    fs::read_link(format!("/proc/{pid}/fd/{fd}"))
        .map(|target| target.starts_with("/dev/pts") || target.starts_with("/dev/tty"))
        .unwrap_or(false)
}
