//! The fix for a model server's error, worded for where the user is: on the command line
//! (`run`, `resume`, `fork`, `doctor`, the start of a chat, and the settings the server
//! and an editor's agent take, which are the same keys) a flag, inside a chat a slash
//! command. The session's own errors carry only a typed `Remedy`; these are the words
//! every front end shares, kept here so that each words a failure the same way.

use wright_llm::LlmError;
use wright_llm::Remedy;

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

/// A session error with the model server's remedy worded for the command line, when one
/// is in its chain (the library keeps the error typed and names no flag).
pub fn error_with_remedy(err: anyhow::Error) -> anyhow::Error {
    let Some(llm) = err.downcast_ref::<LlmError>() else {
        return err;
    };
    let explained = explain(llm, Audience::CommandLine);
    if err.chain().count() == 1 {
        return anyhow::anyhow!("{explained}");
    }
    anyhow::anyhow!("{err}: {explained}")
}
