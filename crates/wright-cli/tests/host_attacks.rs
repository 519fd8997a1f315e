//! Attacks on wright's own host-side work: what the agent plants in the workspace, its
//! `.git`, its scratch files and its output, waiting for a process outside the sandbox to
//! follow, parse or run it. Each test plants through the real tools under the default
//! sandbox and checks that nothing outside was touched, read or run.

mod agent_repos;
pub mod bind_links;
mod caches;
mod editor;
mod exhaustion;
pub(crate) mod git;
mod host_git;
mod in_place;
mod injection;
mod leftovers;
mod policy_paths;
mod protected;
mod resume;
mod scratch;
mod sockets;

use std::path::Path;
use std::path::PathBuf;
use tempfile::TempDir;

/// A directory outside every workspace: the sandbox cannot write it, wright's own process
/// (the host user) can. A file appearing here was made outside the sandbox.
pub struct Outside {
    dir: TempDir,
}

impl Outside {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("target.txt"), "original").unwrap();
        Self { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn display(&self) -> String {
        self.dir.path().display().to_string()
    }

    pub fn target(&self) -> PathBuf {
        self.dir.path().join("target.txt")
    }

    /// Asserts that nothing but `target.txt`, unchanged, is here.
    pub fn assert_untouched(&self) {
        let mut names: Vec<String> = std::fs::read_dir(self.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            vec!["target.txt".to_string()],
            "files appeared outside"
        );
        assert_eq!(
            std::fs::read_to_string(self.target()).unwrap(),
            "original",
            "a file outside was written"
        );
    }
}

/// Runs `wright run TASK EXTRA…` on a model that plants with one command, then finishes.
pub async fn plant_then_finish(
    h: &crate::common::Harness,
    plant: &str,
    task: &str,
    extra: &[&str],
) -> std::process::Output {
    use serde_json::json;
    use wright_testkit::reply;
    let server = wright_testkit::ScriptedServer::start(vec![
        reply().call("terminal", json!({ "command": plant })),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    h.run(&server.url(), task, extra).await
}

/// `CMD && echo ESCAPED || echo BLOCKED`
pub fn attempt(command: &str) -> String {
    format!("{{ {command} ; }} >/dev/null 2>&1 && echo ESCAPED || echo BLOCKED")
}
