//! A shell that runs in a Docker container while the terminal drives it through a local
//! PTY, by way of the `docker exec` client. The client is what the local terminal sees,
//! and it hides the shell: it never blocks reading the terminal in its main thread (so a
//! program waiting for input would go unnoticed), and a signal meant for the running
//! command ends the client instead, leaving the command running in the container.
//!
//! So the PTY looks through the client at the shell itself. A container's processes are
//! host processes, in the host's /proc with host pids. The Docker sandbox marks each shell
//! it starts with a variable holding a token of its own (`-e WRIGHT_REMOTE_SHELL=TOKEN`);
//! the shell is the process whose environment holds that entry and which leads its own
//! session (its children inherit the variable, not the leadership).
//!
//! Guarantees: once found, `pid` and `foreground_group` are the host ids of the shell and
//! of its terminal's foreground job, so the terminal's timeout (SIGINT, then SIGKILL to that
//! group), its kill, its cwd and its waiting-for-input check act on the processes in the
//! container. Until the shell is found, and wherever /proc does not show it (a container
//! user other than wright's, rootless Docker), `None`: callers fall back to the client.

use std::fs;
use std::sync::OnceLock;

/// The variable whose value identifies one remote shell.
pub(crate) const REMOTE_SHELL_VAR: &str = "WRIGHT_REMOTE_SHELL";

pub(crate) struct RemoteShell {
    /// `WRIGHT_REMOTE_SHELL=TOKEN`, as it appears in /proc/PID/environ.
    entry: Vec<u8>,
    pid: OnceLock<i32>,
}

impl RemoteShell {
    /// The remote shell that a program started with `args` runs, if they mark one.
    pub(crate) fn from_args(args: &[&str]) -> Option<Self> {
        let prefix = format!("{REMOTE_SHELL_VAR}=");
        args.iter()
            .find(|arg| arg.starts_with(&prefix) && arg.len() > prefix.len())
            .map(|entry| Self {
                entry: entry.as_bytes().to_vec(),
                pid: OnceLock::new(),
            })
    }

    /// The shell's host pid, while it runs.
    pub(crate) fn pid(&self) -> Option<i32> {
        if let Some(pid) = self.pid.get() {
            // Checked again each time: once the shell is gone its pid may be reused.
            return holds_entry(*pid, &self.entry).then_some(*pid);
        }
        let found = find_session_leader(&self.entry)?;
        Some(*self.pid.get_or_init(|| found))
    }

    /// The host id of the foreground process group of the shell's terminal.
    pub(crate) fn foreground_group(&self) -> Option<i32> {
        let fields = stat_fields(self.pid()?)?;
        fields
            .get(TPGID)
            .and_then(|group| group.parse().ok())
            .filter(|group: &i32| *group > 0)
    }
}

/// Indexes in /proc/PID/stat after the command name: state, ppid, pgrp, session,
/// tty_nr, tpgid, …
const SESSION: usize = 3;
const TPGID: usize = 5;

fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let after_name = &stat[stat.rfind(')')? + 1..];
    Some(after_name.split_whitespace().map(String::from).collect())
}

fn holds_entry(pid: i32, entry: &[u8]) -> bool {
    fs::read(format!("/proc/{pid}/environ"))
        .map(|environ| environ.split(|b| *b == 0).any(|e| e == entry))
        .unwrap_or(false)
}

fn find_session_leader(entry: &[u8]) -> Option<i32> {
    fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| holds_entry(*pid, entry))
        .find(|pid| {
            stat_fields(*pid)
                .and_then(|f| f.get(SESSION)?.parse::<i32>().ok())
                .is_some_and(|session| session == *pid)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_marked_program_is_remote() {
        assert!(RemoteShell::from_args(&["--noprofile", "-i"]).is_none());
        assert!(RemoteShell::from_args(&["-e", "WRIGHT_REMOTE_SHELL="]).is_none());
        let remote = RemoteShell::from_args(&["-e", "WRIGHT_REMOTE_SHELL=t1", "c", "bash"]);
        assert!(remote.is_some_and(|r| r.entry == b"WRIGHT_REMOTE_SHELL=t1"));
    }

    #[test]
    fn finds_a_session_leader_by_its_variable() {
        let entry = format!("{REMOTE_SHELL_VAR}=test-{}", std::process::id());
        let (key, value) = entry.split_once('=').unwrap();
        // setsid(1) makes the sleep lead its own session, as `docker exec -t` does (and,
        // not being a group leader here, execs it in place: same pid).
        let mut child = std::process::Command::new("setsid")
            .args(["sleep", "5"])
            .env(key, value)
            .spawn()
            .unwrap();
        let remote = RemoteShell::from_args(&[entry.as_str()]).unwrap();
        let mut found = None;
        for _ in 0..50 {
            found = remote.pid();
            if found.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(found.is_some(), "the marked session leader was not found");
        assert_eq!(remote.pid(), None, "a shell that ended is not reported");
    }
}
