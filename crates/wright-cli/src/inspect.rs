//! Reading the agent's changes for the review before `finish`: `git diff` against the
//! commit the run started from, plus untracked files, run inside the sandbox — the repo's
//! config and filters may have been written by the agent, so they never run outside it.

use std::path::PathBuf;
use std::process::Command;
use wright_core::FileChange;
use wright_core::Inspector;
use wright_sandbox::Sandbox;

#[derive(Clone)]
pub struct GitInspector {
    pub root: PathBuf,
    pub base: String,
    pub sandbox: Sandbox,
    pub env: Vec<(String, String)>,
}

/// Files larger than this are not read for the review (their name still counts).
const MAX_READ: u64 = 1 << 20;

impl GitInspector {
    /// An inspector for `root` when it is in a git repository with a commit. The start
    /// commit is read directly: before the agent's first step the repository is the
    /// user's own (or wright's fresh clone), so its config can be trusted.
    pub fn new(root: PathBuf, sandbox: Sandbox, env: Vec<(String, String)>) -> Option<Self> {
        let output = Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(["rev-parse", "--verify", "--quiet", "HEAD"])
            .output()
            .ok()?;
        if !output.status.success() {
            return None;
        }
        let base = String::from_utf8_lossy(&output.stdout).trim().to_string();
        Some(Self {
            root,
            base,
            sandbox,
            env,
        })
    }

    fn git(&self, args: &[&str]) -> Option<String> {
        let mut full = vec![
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
            "--no-optional-locks",
        ];
        full.extend_from_slice(args);
        let (program, wrapped) = self.sandbox.wrap("git", &full);
        let output = Command::new(program)
            .args(wrapped)
            .current_dir(&self.root)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .output()
            .ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

impl GitInspector {
    /// The diff against the start commit, new files included (`/diff` in chat).
    pub fn diff_text(&self) -> String {
        let mut text = self
            .git(&[
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                &self.base,
                "--",
            ])
            .unwrap_or_default();
        let untracked = self
            .git(&["ls-files", "--others", "--exclude-standard", "-z"])
            .unwrap_or_default();
        for path in untracked.split('\0').filter(|p| !p.is_empty()) {
            text.push_str(&format!("new file: {path}\n"));
        }
        text
    }
}

impl Inspector for GitInspector {
    fn changes(&self) -> Vec<FileChange> {
        let mut changes: Vec<FileChange> = Vec::new();
        let diff = self
            .git(&[
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "-U0",
                &self.base,
                "--",
            ])
            .unwrap_or_default();
        for line in diff.lines() {
            if let Some(path) = line.strip_prefix("+++ b/") {
                changes.push(FileChange {
                    path: path.to_string(),
                    ..FileChange::default()
                });
            } else if line.starts_with("--- ") || line.starts_with("+++ ") {
                // "--- a/x" or "+++ /dev/null" (a deleted file): named by the diff header.
                if line == "+++ /dev/null" {
                    changes.push(FileChange::default());
                }
            } else if let Some(header) = line.strip_prefix("diff --git a/") {
                let path = header.split(" b/").next().unwrap_or(header).to_string();
                changes.push(FileChange {
                    path,
                    ..FileChange::default()
                });
            } else if let Some(change) = changes.last_mut() {
                if let Some(added) = line.strip_prefix('+') {
                    change.added.push(added.to_string());
                } else if let Some(removed) = line.strip_prefix('-') {
                    change.removed.push(removed.to_string());
                }
            }
        }
        // A header block yields "diff --git" then "+++ b/": keep one entry per file.
        changes.retain(|c| !c.path.is_empty());
        changes.dedup_by(|later, earlier| {
            if later.path == earlier.path {
                earlier.added.append(&mut later.added);
                earlier.removed.append(&mut later.removed);
                true
            } else {
                false
            }
        });
        let untracked = self
            .git(&["ls-files", "--others", "--exclude-standard", "-z"])
            .unwrap_or_default();
        for path in untracked.split('\0').filter(|p| !p.is_empty()) {
            let full = self.root.join(path);
            let added = match std::fs::metadata(&full) {
                Ok(meta) if meta.len() <= MAX_READ => std::fs::read_to_string(&full)
                    .map(|text| text.lines().map(str::to_string).collect())
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            changes.push(FileChange {
                path: path.to_string(),
                added,
                removed: Vec::new(),
            });
        }
        changes
    }
}
