//! Reading the agent's changes for the review before `finish` and for `/diff`: the diff
//! against the commit the run started from, new files included, produced by git inside
//! the sandbox — the repository's config, attributes and filters may be the agent's, so
//! they never run outside it — and bounded in size.

use std::path::PathBuf;
use wright_core::FileChange;
use wright_core::Inspector;
use wright_sandbox::git::AgentRepo;
use wright_sandbox::git::Oid;
use wright_sandbox::Sandbox;

#[derive(Clone)]
pub struct GitInspector {
    /// Where git runs: the clone's top level, or an in-place workspace.
    pub root: PathBuf,
    pub base: Oid,
    pub sandbox: Sandbox,
    pub env: Vec<(String, String)>,
}

impl GitInspector {
    /// The diff against the start commit, new files included (`/diff` in chat).
    pub fn diff_text(&self) -> String {
        self.changes_text()
            .unwrap_or_else(|err| format!("(the changes cannot be read: {err})"))
    }

    /// The diff against the start commit, new files included, or why git could not
    /// make it (the server's live diff).
    pub fn changes_text(&self) -> Result<String, wright_sandbox::git::GitError> {
        AgentRepo::new(&self.sandbox, &self.env, &self.root).changes_since(&self.base)
    }
}

impl Inspector for GitInspector {
    fn changes(&self) -> Vec<FileChange> {
        let diff = AgentRepo::new(&self.sandbox, &self.env, &self.root)
            .changes_since(&self.base)
            .unwrap_or_default();
        parse_diff(&diff)
    }
}

/// The files of a unified diff, with their added and removed lines.
fn parse_diff(diff: &str) -> Vec<FileChange> {
    let mut changes: Vec<FileChange> = Vec::new();
    for line in diff.lines() {
        if let Some(header) = line.strip_prefix("diff --git a/") {
            let path = header.split(" b/").next().unwrap_or(header).to_string();
            changes.push(FileChange {
                path,
                ..FileChange::default()
            });
        } else if let Some(path) = line.strip_prefix("new file (not a regular file): ") {
            changes.push(FileChange {
                path: path.to_string(),
                ..FileChange::default()
            });
        } else if line.starts_with("--- ") || line.starts_with("+++ ") {
            // The file is named by its `diff --git` header.
        } else if let Some(change) = changes.last_mut() {
            if let Some(added) = line.strip_prefix('+') {
                change.added.push(added.to_string());
            } else if let Some(removed) = line.strip_prefix('-') {
                change.removed.push(removed.to_string());
            }
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_lines_of_a_diff() {
        let diff = "diff --git a/x.py b/x.py\nindex 1..2 100644\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old\n+new\ndiff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\nnew file (not a regular file): pipe\n";
        let changes = parse_diff(diff);
        assert_eq!(
            changes,
            vec![
                FileChange {
                    path: "x.py".into(),
                    added: vec!["new".into()],
                    removed: vec!["old".into()]
                },
                FileChange {
                    path: "new.txt".into(),
                    added: vec!["hello".into()],
                    removed: vec![]
                },
                FileChange {
                    path: "pipe".into(),
                    added: vec![],
                    removed: vec![]
                },
            ]
        );
    }
}
