//! A cgroup per conversation bounding the number of processes and the memory of all the
//! model's commands together — what stops a fork bomb or a memory bomb even for root, for
//! whom RLIMIT_NPROC does nothing. Used when the cgroup tree is writable (cgroup v1
//! `pids` and `memory` controllers, or v2); otherwise the run says it is not enforced.

use std::path::Path;
use std::path::PathBuf;

const ROOT: &str = "/sys/fs/cgroup";

#[derive(Debug, Clone, PartialEq)]
pub struct Cgroup {
    /// The directories created (one per v1 controller, or one in v2).
    dirs: Vec<PathBuf>,
    pub description: String,
}

/// The cgroup the current process is in, for `controller` (v1), or the v2 one.
fn current_path(controller: Option<&str>) -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let relative = path.trim_start_matches('/');
        match controller {
            Some(name) if controllers.split(',').any(|c| c == name) => {
                return Some(Path::new(ROOT).join(name).join(relative));
            }
            None if controllers.is_empty() => return Some(Path::new(ROOT).join(relative)),
            _ => {}
        }
    }
    None
}

fn make(dir: &Path, files: &[(&str, String)]) -> Result<(), std::io::Error> {
    std::fs::create_dir_all(dir)?;
    for (file, value) in files {
        std::fs::write(dir.join(file), value)?;
    }
    Ok(())
}

impl Cgroup {
    /// Creates `wright-<name>` limits; `None` when the tree is not writable here.
    pub fn create(name: &str, max_processes: u64, max_memory: u64) -> Option<Self> {
        let leaf = format!("wright-{name}");
        let v1_pids = current_path(Some("pids")).map(|p| p.join(&leaf));
        let v1_memory = current_path(Some("memory")).map(|p| p.join(&leaf));
        if let (Some(pids), Some(memory)) = (&v1_pids, &v1_memory) {
            let made_pids = make(pids, &[("pids.max", max_processes.to_string())]);
            let made_memory = make(memory, &[("memory.limit_in_bytes", max_memory.to_string())]);
            if made_pids.is_ok() && made_memory.is_ok() {
                // Without swap accounting this file is absent; the RAM limit still holds.
                let _ = std::fs::write(
                    memory.join("memory.memsw.limit_in_bytes"),
                    max_memory.to_string(),
                );
                return Some(Self {
                    dirs: vec![pids.clone(), memory.clone()],
                    description: describe(max_processes, max_memory, "v1"),
                });
            }
            let _ = std::fs::remove_dir(pids);
            let _ = std::fs::remove_dir(memory);
        }
        let v2 = current_path(None)?.join(&leaf);
        if Path::new(ROOT).join("cgroup.controllers").exists()
            && make(
                &v2,
                &[
                    ("pids.max", max_processes.to_string()),
                    ("memory.max", max_memory.to_string()),
                ],
            )
            .is_ok()
        {
            let _ = std::fs::write(v2.join("memory.swap.max"), "0");
            return Some(Self {
                dirs: vec![v2],
                description: describe(max_processes, max_memory, "v2"),
            });
        }
        let _ = std::fs::remove_dir(&v2);
        None
    }

    /// The `cgroup.procs` files the launcher writes its pid into.
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// Kills everything still in the cgroup and removes it.
    pub fn remove(&self) {
        self.kill_all();
        for dir in &self.dirs {
            let _ = std::fs::remove_dir(dir);
        }
    }

    /// Kills everything in the cgroup (which stays, for the next commands).
    pub fn kill_all(&self) {
        for _ in 0..20 {
            let mut alive = false;
            for dir in &self.dirs {
                let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
                for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                    alive = true;
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
            }
            if !alive {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

impl Cgroup {
    /// Kills what is left in, and removes, the `wright-<run>` cgroups of the runs
    /// `is_dead` names. Returns how many were removed.
    pub fn reap(is_dead: &dyn Fn(&str) -> bool) -> usize {
        let parents = [
            current_path(Some("pids")),
            current_path(Some("memory")),
            current_path(None).filter(|_| Path::new(ROOT).join("cgroup.controllers").exists()),
        ];
        let mut removed = 0;
        for parent in parents.into_iter().flatten() {
            let Ok(entries) = std::fs::read_dir(&parent) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(run) = name.to_str().and_then(|n| n.strip_prefix("wright-")) else {
                    continue;
                };
                if !entry.path().is_dir() || !is_dead(run) {
                    continue;
                }
                let left = Cgroup {
                    dirs: vec![entry.path()],
                    description: String::new(),
                };
                left.kill_all();
                if std::fs::remove_dir(entry.path()).is_ok() {
                    removed += 1;
                }
            }
        }
        removed
    }
}

fn describe(max_processes: u64, max_memory: u64, version: &str) -> String {
    format!(
        "cgroup {version}: {max_processes} processes, {} MiB memory",
        max_memory >> 20
    )
}

/// Joins the cgroups listed (called by the launcher before it restricts itself).
pub fn join(procs_files: &[PathBuf]) -> Result<(), String> {
    let pid = std::process::id().to_string();
    for file in procs_files {
        std::fs::write(file, &pid).map_err(|e| format!("cannot join {}: {e}", file.display()))?;
    }
    Ok(())
}
