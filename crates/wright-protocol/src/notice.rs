//! What wright tells or asks the user beside a conversation's events, as typed values: a
//! front end words them (their `Display` is the plain sentence, paths and names as they
//! are) and decides where they go — a terminal's stdout or stderr, a server's stream.
//! Anything in them may come from the agent: sanitize before a terminal.

use serde::Deserialize;
use serde::Serialize;
use std::fmt;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Notice {
    /// An earlier run's agent made a git repository in `repo`; its `.git` was set aside
    /// (renamed to `moved_to`) before anyone trusts it. A warning, beside the work.
    AgentRepoSetAside { repo: PathBuf, moved_to: PathBuf },
    /// The conversation's `branch` was taken into the user's repository at `into`.
    Took { branch: String, into: PathBuf },
    /// The conversation's branch and clone were removed.
    Discarded { branch: String },
    /// Nothing was left of the branch or the clone.
    AlreadyDiscarded { branch: String },
    /// The agent's changes to a directory worked in directly were undone: `restored`
    /// paths put back, `removed` it added removed; `kept` changed paths were left as they
    /// are (each named by a `LeftAsItIs`), not provably the agent's.
    PutBack {
        root: PathBuf,
        restored: u64,
        removed: u64,
        #[serde(default)]
        kept: u64,
    },
    /// A directory worked in directly already was as it was.
    AlreadyAsItWas { root: PathBuf },
    /// A path of a directory worked in directly could not be put back (`what` says which
    /// and why).
    NotPutBack { what: String },
    /// The conversation waits for its MCP servers `servers` to start and list their
    /// tools, each for at most `seconds`. A warning, beside the work: said before the
    /// wait, so a run (or a server's conversation, `starting`) never waits unexplained.
    StartingMcp { servers: Vec<String>, seconds: u64 },
    /// A path of a directory worked in directly that `discard` left as it is on purpose:
    /// it changed after the agent's run, or when wright cannot tell whose change it is
    /// (`what` says which and why).
    LeftAsItIs { what: String },
}

impl Notice {
    /// A warning beside the work (stderr on a terminal), rather than the result of what
    /// the user asked for.
    pub fn is_warning(&self) -> bool {
        matches!(
            self,
            Notice::AgentRepoSetAside { .. } | Notice::StartingMcp { .. }
        )
    }
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::AgentRepoSetAside { repo, moved_to } => write!(
                f,
                "an earlier run's agent made a git repository in {}; its .git is now {}",
                repo.display(),
                moved_to.display()
            ),
            Notice::Took { branch, into } => write!(f, "took {branch} into {}", into.display()),
            Notice::Discarded { branch } => write!(f, "discarded {branch}"),
            Notice::AlreadyDiscarded { branch } => {
                write!(f, "{branch} was already discarded: nothing left to remove")
            }
            Notice::PutBack {
                root,
                restored,
                removed,
                kept: 0,
            } => write!(
                f,
                "put {} back as it was before the conversation: {} restored, {} removed",
                root.display(),
                crate::count(*restored, "path"),
                crate::count(*removed, "new path")
            ),
            Notice::PutBack {
                root,
                restored,
                removed,
                kept,
            } => write!(
                f,
                "undid the agent's changes in {}: {} restored, {} removed; not undone: {}",
                root.display(),
                crate::count(*restored, "path"),
                crate::count(*removed, "new path"),
                crate::count(*kept, "changed path")
            ),
            Notice::AlreadyAsItWas { root } => write!(
                f,
                "{} is already as it was: nothing to put back",
                root.display()
            ),
            Notice::NotPutBack { what } => write!(f, "   not put back: {what}"),
            Notice::StartingMcp { servers, seconds } => write!(
                f,
                "waiting for the MCP {} {} to start (at most {seconds} s)",
                match servers.len() {
                    1 => "server",
                    _ => "servers",
                },
                servers.join(", ")
            ),
            Notice::LeftAsItIs { what } => write!(f, "   left as it is: {what}"),
        }
    }
}

/// A yes-or-no question wright asks the user before a conversation starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Question {
    /// Whether the agent gets a snapshot of the user's `changes` uncommitted changes in
    /// `repo` (on its branch only).
    GiveUncommitted { repo: PathBuf, changes: u64 },
    /// Whether the repository's hooks and setup script (`files`: each path and its
    /// content, at the commit the conversation starts from) may run, in the sandbox.
    RunRepoHooks {
        repo: PathBuf,
        files: Vec<(String, String)>,
    },
    /// Whether the repository's MCP servers (`files`: each path and its content, at the
    /// commit the conversation starts from) may start, in the sandbox.
    RunRepoMcp {
        repo: PathBuf,
        files: Vec<(String, String)>,
    },
}

impl fmt::Display for Question {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Question::GiveUncommitted { repo, changes } => write!(
                f,
                "{} has {}, which the agent will not see (it works on your last commit). Give it a snapshot of them (on its branch only; your checkout is not touched)?",
                repo.display(),
                crate::count(*changes, "uncommitted change")
            ),
            Question::RunRepoHooks { repo, files } => {
                write!(
                    f,
                    "{} has commands that run during a conversation (in the sandbox):",
                    repo.display()
                )?;
                for (path, text) in files {
                    write!(f, "\n\n{path}:\n{}", text.trim_end())?;
                }
                write!(
                    f,
                    "\n\nLet them run, with exactly this content, for this repository?"
                )
            }
            Question::RunRepoMcp { repo, files } => {
                write!(
                    f,
                    "{} names MCP servers whose tools the agent would call (a program runs in the sandbox; a URL is sent what the agent asks):",
                    repo.display()
                )?;
                for (path, text) in files {
                    write!(f, "\n\n{path}:\n{}", text.trim_end())?;
                }
                write!(
                    f,
                    "\n\nLet them start, with exactly this content, for this repository?"
                )
            }
        }
    }
}
