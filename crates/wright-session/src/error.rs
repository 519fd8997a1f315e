//! What went wrong when a front end asked the session for a conversation, typed: the
//! settings did not resolve, the model server could not be used (and what the user can
//! do about it, as a `Remedy`), no server of the fallback chain answered, the workspace
//! cannot be worked on as it is (a repository with no commit), or something
//! of wright's own failed (the disk, git, the sandbox). The error carries the facts and
//! names no flag or field: each front end words the remedy its own way — the command
//! line a flag, the server a field of its request, an editor's agent its command's flag.

use wright_config::ConfigError;
use wright_llm::LlmError;
use wright_llm::Remedy;
use wright_protocol::ModelAt;

/// Why the session could not give a front end what it asked for.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The settings (configuration files, environment, the front end's own) do not
    /// resolve: an unknown profile, a value out of range, a key a file may not set.
    #[error(transparent)]
    Settings(#[from] ConfigError),
    /// The model server named (or found) cannot be used; `error.remedy()` says what the
    /// user can do.
    #[error("{error}{}", logged_words(.logged))]
    ModelServer {
        // Boxed: a model server's error is large, and this is every `Err`'s size.
        error: Box<LlmError>,
        /// A resumed conversation's server and model, as its log names them (never
        /// taken from the log: the user is told how to name it again).
        logged: Option<Logged>,
    },
    /// The profile in use and every fallback profile after it did not answer.
    #[error("no profile's server answered:{}", tried_words(.tried))]
    NoneAnswered { tried: Vec<Tried> },
    /// A fallback profile cannot be used for a reason that is the user's to fix (a bad
    /// key, an unknown model), after the ones before it did not answer.
    #[error("the fallback profile '{profile}' cannot be used: {error}\n  tried before it:{}", tried_words(.tried))]
    FallbackUnusable {
        profile: String,
        error: Box<LlmError>,
        tried: Vec<Tried>,
    },
    /// The workspace named cannot be worked on as it is (a repository with no commit to
    /// clone); what to do is the front end's to word.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// Something of wright's own failed (the working copy, the sandbox, the disk), with
    /// its context.
    #[error(transparent)]
    Other(anyhow::Error),
}

/// Why a workspace cannot be worked on as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkspaceError {
    /// A clone starts from the repository's last commit, and it has none.
    #[error("the repository {} has no commit yet, and a clone starts from its last commit", .repo.display())]
    NoCommit { repo: std::path::PathBuf },
}

/// A resumed conversation's server and model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logged {
    pub base_url: String,
    pub model: String,
}

/// A profile of the fallback chain that did not answer, and why.
#[derive(Debug)]
pub struct Tried {
    pub at: ModelAt,
    pub error: LlmError,
}

impl SessionError {
    /// What the user can do about it, when the model server's error says.
    pub fn remedy(&self) -> Option<Remedy> {
        match self {
            SessionError::ModelServer { error, .. }
            | SessionError::FallbackUnusable { error, .. } => error.remedy(),
            SessionError::NoneAnswered { tried } => tried.last().and_then(|t| t.error.remedy()),
            SessionError::Settings(_) | SessionError::Workspace(_) | SessionError::Other(_) => None,
        }
    }
}

impl From<LlmError> for SessionError {
    fn from(error: LlmError) -> Self {
        SessionError::ModelServer {
            error: Box::new(error),
            logged: None,
        }
    }
}

impl From<anyhow::Error> for SessionError {
    /// An error of the session's insides, typed again when it is one of the kinds above
    /// without context around it (a `?` that passed it on as it was).
    fn from(err: anyhow::Error) -> Self {
        let err = match err.downcast::<SessionError>() {
            Ok(typed) => return typed,
            Err(err) => err,
        };
        // Kept typed under any context the session put around it (its words say all).
        if let Some(workspace) = err.downcast_ref::<WorkspaceError>() {
            return SessionError::Workspace(workspace.clone());
        }
        let err = match err.downcast::<ConfigError>() {
            Ok(config) => return SessionError::Settings(config),
            Err(err) => err,
        };
        match err.downcast::<LlmError>() {
            Ok(error) => SessionError::ModelServer {
                error: Box::new(error),
                logged: None,
            },
            Err(err) => SessionError::Other(err),
        }
    }
}

fn logged_words(logged: &Option<Logged>) -> String {
    match logged {
        Some(Logged { base_url, model }) => format!(
            "\n  this conversation worked with {model} on {base_url}; wright does not take a server from a log"
        ),
        None => String::new(),
    }
}

fn tried_words(tried: &[Tried]) -> String {
    tried
        .iter()
        .map(|t| format!("\n  {}", tried_line(t, &t.error.to_string())))
        .collect()
}

/// One profile tried, with its failure worded by the caller.
pub fn tried_line(tried: &Tried, failure: &str) -> String {
    format!(
        "{} on {}: {failure}",
        crate::settings::fleet::model_words(&tried.at),
        tried.at.base_url
    )
}
