//! The fix for a model server's error and the session's errors, worded for where the
//! user is: on the command line (`run`, `resume`, `fork`, `doctor`, the start of a chat) a
//! flag, inside a chat a slash command. The libraries carry only the facts (a typed
//! `Remedy`, a `SessionError`); the server and the editor's agent word them their own way.

use wright_llm::LlmError;
use wright_llm::Remedy;
use wright_session::error::tried_line;
use wright_session::error::Logged;
use wright_session::error::SessionError;
use wright_session::error::WorkspaceError;

/// Where the user will act on the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// A command line about to be typed again.
    CommandLine,
    /// A chat going on: the next line typed.
    Chat,
}

/// The error's sentence, then what to do about it here.
pub fn explain(err: &LlmError, front: Audience) -> String {
    with_remedy(&err.to_string(), err.remedy(), front)
}

/// The sentence that says what to do.
pub fn hint(remedy: Remedy, front: Audience) -> &'static str {
    match (remedy, front) {
        (Remedy::NameServer, Audience::CommandLine) => {
            "Or name a running server with --base-url URL (and --model NAME)"
        }
        (Remedy::NameServer, Audience::Chat) => {
            "Once it runs, type your message again, or switch with /profile NAME"
        }
        (Remedy::GetModel, Audience::CommandLine) => {
            "Let wright run a model itself: rerun with --pull to download qwen2.5-coder-1.5b, or `wright model pull NAME` (`wright model ls` lists them); offline, import a GGUF file with `wright model add FILE.gguf`. Or start a server (`ollama serve`, LM Studio's server, or `llama-server -m MODEL.gguf --port 8080`), or name one with --base-url URL (and --model NAME)"
        }
        (Remedy::GetModel, Audience::Chat) => {
            "Get a model with `wright model pull qwen2.5-coder-1.5b` (or `wright model add FILE.gguf` offline) or start a server, then type your message again"
        }
        (Remedy::ChooseModelFile, Audience::CommandLine) => {
            "Choose one with --model-file NAME (or set model_file in your configuration)"
        }
        (Remedy::ChooseModelFile, Audience::Chat) => {
            "Leave and start again with --model-file NAME (or set model_file in your configuration)"
        }
        (Remedy::ChooseModel, Audience::CommandLine) => "Choose one with --model NAME",
        (Remedy::ChooseModel, Audience::Chat) => "Choose one with /model NAME",
        (Remedy::GiveApiKey, Audience::CommandLine) => {
            "Give the key with --api-key KEY or OPENAI_API_KEY (or a profile's api_key_env)"
        }
        (Remedy::GiveApiKey, Audience::Chat) => {
            "Switch to a profile that has the key with /profile NAME, or leave and start again with --api-key KEY or OPENAI_API_KEY"
        }
        (Remedy::AllowLongerSilence, Audience::CommandLine) => {
            "Allow a longer silence with --idle-timeout SECS (or run.idle_timeout in the configuration)"
        }
        (Remedy::AllowLongerSilence, Audience::Chat) => {
            "Type your message again to retry; for a longer silence, start the chat with --idle-timeout SECS (or set run.idle_timeout)"
        }
    }
}

/// A failed run's reason with the fix, when the model server's error has one.
pub fn with_remedy(reason: &str, remedy: Option<Remedy>, front: Audience) -> String {
    let Some(remedy) = remedy else {
        return reason.to_string();
    };
    let stop = if reason.ends_with(['.', '?', '!']) {
        ""
    } else {
        "."
    };
    format!("{reason}{stop} {}", hint(remedy, front))
}

/// A session's error worded for `front`: the model server's remedy as a flag (or a chat
/// command), and for a resumed conversation how to name its server again.
pub fn session_error(err: &SessionError, front: Audience) -> String {
    match err {
        SessionError::ModelServer { error, logged } => {
            let explained = explain(error, front);
            match logged {
                Some(Logged { base_url, model }) => format!(
                    "{explained}\n  this conversation worked with {model} on {base_url}; wright does not take a server from a log: pass --base-url {base_url} to use it again"
                ),
                None => explained,
            }
        }
        SessionError::NoneAnswered { tried } => {
            let lines: Vec<String> = tried
                .iter()
                .map(|t| tried_line(t, &explain(&t.error, front)))
                .collect();
            format!("no profile's server answered:\n  {}", lines.join("\n  "))
        }
        SessionError::FallbackUnusable {
            profile,
            error,
            tried,
        } => {
            let lines: Vec<String> = tried
                .iter()
                .map(|t| tried_line(t, &explain(&t.error, front)))
                .collect();
            format!(
                "the fallback profile '{profile}' cannot be used: {}\n  tried before it:\n  {}",
                explain(error, front),
                lines.join("\n  ")
            )
        }
        SessionError::Workspace(workspace) => workspace_words(workspace),
        SessionError::Settings(_) | SessionError::Other(_) => format!("{err:#}"),
    }
}

/// An error of the command line, each cause in its chain said as `{err:#}` says it, but a
/// session's error (or a model server's) worded with its remedy for `front`.
pub fn worded(err: &anyhow::Error, front: Audience) -> String {
    let mut parts = Vec::new();
    for cause in err.chain() {
        if let Some(session) = cause.downcast_ref::<SessionError>() {
            parts.push(session_error(session, front));
            // Its own words say all of what it holds.
            break;
        }
        if let Some(workspace) = cause.downcast_ref::<WorkspaceError>() {
            parts.push(workspace_words(workspace));
            break;
        }
        if let Some(llm) = cause.downcast_ref::<LlmError>() {
            parts.push(explain(llm, front));
            break;
        }
        parts.push(cause.to_string());
    }
    parts.join(": ")
}

/// Why the workspace cannot be worked on, with what to do on the command line.
fn workspace_words(err: &WorkspaceError) -> String {
    match err {
        WorkspaceError::NoCommit { .. } => format!("{err}; commit once, or use --in-place"),
    }
}
