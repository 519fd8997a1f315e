//! The one place wright runs git, with its hardening in one place.
//!
//! Two runners, for two kinds of repository:
//! - `UserRepo`: the user's own repository, which the agent cannot write (its clone is
//!   elsewhere; in place, its `.git` is read-only in the sandbox). Git runs on the host
//!   there, with the user's config, but never over a work tree the agent wrote and
//!   never with a configured program on the agent's content (no textconv, no external
//!   diff, no fsmonitor). What comes from the agent's repository arrives as data: a pack
//!   checked by `index-pack --strict`, and a commit id taken by value.
//! - `AgentRepo`: a repository the agent can write (its clone, or the work tree of an
//!   in-place run). Git runs there only inside the sandbox, with bounded output and a
//!   deadline, so hooks, filters, fsmonitor, aliases or alternates it planted run — if at
//!   all — confined, and can neither hang nor swell wright.

mod agent;
mod command;
mod configured;
mod listing;
mod push;
mod remote;
mod snapshot;
mod start;
mod store;
mod take;
mod touched;
mod user;

pub use agent::AgentRepo;
pub use agent::AsideCommit;
pub use agent::StepCommit;
pub use configured::InTree;
pub use configured::Pointed;
pub use configured::Use as ConfiguredUse;
pub use listing::LastChange;
pub use listing::Listing;
pub use remote::safe_branch_name;
pub use remote::RemoteUrl;
pub use remote::UrlError;
pub use snapshot::Snapshot;
pub use user::BranchTip;
pub use user::TreeEntry;
pub use user::UserRepo;

/// A full object id, as git prints it (SHA-1 or SHA-256), checked to be nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oid(String);

impl Oid {
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let hex = text
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase());
        (hex && (text.len() == 40 || text.len() == 64)).then(|| Self(text.to_string()))
    }

    /// The empty tree (SHA-1): what a repository without a commit is compared with.
    pub fn empty_tree() -> Self {
        Self("4b825dc642cb6eb9a060e54bf8d69288fbee4904".to_string())
    }

    /// The empty tree of a SHA-256 repository.
    pub fn empty_tree_sha256() -> Self {
        Self("6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321".to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Oid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(String),
    #[error("git {command} failed: {said}")]
    Failed { command: String, said: String },
    #[error("git {command} printed something that is not an object id: {printed}")]
    NotAnId { command: String, printed: String },
    #[error("{0}")]
    Sandbox(#[from] crate::mode::SandboxError),
    #[error("the {operation} did not go through{}; {}{}", if conflicted.is_empty() { String::new() } else { format!(" (conflicts in {})", conflicted.join(", ")) }, if *undone { "it was undone, so your repository is as it was" } else { "it could not be undone and is still in progress: finish it (edit, git add, git commit) or abort it (git merge --abort / git cherry-pick --abort)" }, if said.is_empty() { String::new() } else { format!("\n  git said: {said}") })]
    NotTaken {
        operation: &'static str,
        conflicted: Vec<String>,
        undone: bool,
        said: String,
    },
}

/// Variables that would point git at another repository, index or object store, or name
/// a program for it to run.
const LOCATING_VARIABLES: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PROXY_COMMAND",
];

/// Runs git in `dir` for a test (a committer named, `main` the first branch): what it
/// printed; a failure fails the test.
#[cfg(test)]
pub(crate) fn test_git(dir: &std::path::Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@e"])
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_only_ids() {
        assert!(Oid::parse("0123456789abcdef0123456789abcdef01234567").is_some());
        assert!(Oid::parse(&"a".repeat(64)).is_some());
        for bad in [
            "",
            "HEAD",
            "0123",
            "../../etc/passwd",
            &"A".repeat(40),
            &"g".repeat(40),
        ] {
            assert!(Oid::parse(bad).is_none(), "{bad}");
        }
    }
}
