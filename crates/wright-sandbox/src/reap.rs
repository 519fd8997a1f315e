//! Nothing the agent started outlives its run. Where a PID namespace or a cgroup holds
//! every process of the run, ending it ends them all; without them (an unprivileged user
//! without user namespaces, `--sandbox landlock`, `--sandbox none`) a process that left its
//! session (`setsid … &`) would go on writing the workspace after wright reported. So
//! wright makes itself a child subreaper: whatever the agent leaves orphaned becomes
//! wright's child, and `kill_leftovers` kills and reaps every child wright still has.

use nix::sys::signal::kill;
use nix::sys::signal::Signal;
use nix::sys::wait::waitpid;
use nix::sys::wait::WaitPidFlag;
use nix::sys::wait::WaitStatus;
use nix::unistd::Pid;

/// Makes orphans of this process's descendants its own children. Call once, early.
pub fn become_subreaper() {
    // Without it leftovers are only caught where a namespace or cgroup holds them.
    let _ = nix::sys::prctl::set_child_subreaper(true);
}

/// The runs of this process whose commands may be running (a server runs several).
static LIVE_RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Held for as long as a run's commands may be running: `kill_leftovers` kills nothing
/// while another run of this process holds one.
#[derive(Debug)]
pub struct LiveRun(());

impl LiveRun {
    pub fn start() -> Self {
        LIVE_RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Self(())
    }
}

impl Drop for LiveRun {
    fn drop(&mut self) {
        LIVE_RUNS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Kills every child process of this one (orphans included, once a subreaper) and reaps
/// them, until none is left. Call only when nothing of wright's own is running: after
/// the agent's shell has ended, by the only run that holds a `LiveRun`. While another run
/// of this process is live (a server's), nothing is killed: an orphan carries no mark of
/// the run that left it, and that run's shell is a child too. The leftovers then go with
/// the last run's end (and, where the run has one, with its PID namespace or cgroup).
pub fn kill_leftovers() {
    if LIVE_RUNS.load(std::sync::atomic::Ordering::SeqCst) > 1 {
        return;
    }
    let me = std::process::id() as i32;
    for _ in 0..200 {
        let children = children_of(me);
        if children.is_empty() {
            break;
        }
        for child in &children {
            let _ = kill(Pid::from_raw(*child), Signal::SIGKILL);
        }
        reap();
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    reap();
}

fn reap() {
    loop {
        match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) | Err(_) => break,
            Ok(_) => continue,
        }
    }
}

/// The pids whose parent is `parent`, from /proc.
fn children_of(parent: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| parent_of(*pid) == Some(parent))
        .collect()
}

fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}
