//! The fix for a model server's error, worded for where the user is: on the command line
//! (`run`, `resume`, `fork`, `doctor`, or the start of a chat) a flag, inside a chat a
//! slash command; and what to do after each reason a run stops for. The libraries carry
//! only a typed `Remedy` and `StopReason`; they never name a flag or a command.

use wright_llm::LlmError;
use wright_llm::Remedy;
use wright_protocol::StopReason;

/// Where the user will act on the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Front {
    /// A command line about to be typed again.
    CommandLine,
    /// A chat going on: the next line typed.
    Chat,
}

/// The error's sentence, then what to do about it here.
pub fn explain(err: &LlmError, front: Front) -> String {
    with_remedy(&err.to_string(), err.remedy(), front)
}

/// The sentence that says what to do.
pub fn hint(remedy: Remedy, front: Front) -> &'static str {
    match (remedy, front) {
        (Remedy::NameServer, Front::CommandLine) => {
            "Or name a running server with --base-url URL (and --model NAME)"
        }
        (Remedy::NameServer, Front::Chat) => {
            "Once it runs, type your message again, or switch with /profile NAME"
        }
        (Remedy::GetModel, Front::CommandLine) => {
            "Let wright run a model itself: rerun with --pull to download qwen2.5-coder-1.5b, or `wright model pull NAME` (`wright model ls` lists them); offline, import a GGUF file with `wright model add FILE.gguf`. Or start a server (`ollama serve`, LM Studio's server, or `llama-server -m MODEL.gguf --port 8080`), or name one with --base-url URL (and --model NAME)"
        }
        (Remedy::GetModel, Front::Chat) => {
            "Get a model with `wright model pull qwen2.5-coder-1.5b` (or `wright model add FILE.gguf` offline) or start a server, then type your message again"
        }
        (Remedy::ChooseModelFile, Front::CommandLine) => {
            "Choose one with --model-file NAME (or set model_file in your configuration)"
        }
        (Remedy::ChooseModelFile, Front::Chat) => {
            "Leave and start again with --model-file NAME (or set model_file in your configuration)"
        }
        (Remedy::ChooseModel, Front::CommandLine) => "Choose one with --model NAME",
        (Remedy::ChooseModel, Front::Chat) => "Choose one with /model NAME",
        (Remedy::GiveApiKey, Front::CommandLine) => {
            "Give the key with --api-key KEY or OPENAI_API_KEY (or a profile's api_key_env)"
        }
        (Remedy::GiveApiKey, Front::Chat) => {
            "Switch to a profile that has the key with /profile NAME, or leave and start again with --api-key KEY or OPENAI_API_KEY"
        }
        (Remedy::AllowLongerSilence, Front::CommandLine) => {
            "Allow a longer silence with --idle-timeout SECS (or run.idle_timeout in the configuration)"
        }
        (Remedy::AllowLongerSilence, Front::Chat) => {
            "Type your message again to retry; for a longer silence, start the chat with --idle-timeout SECS (or set run.idle_timeout)"
        }
    }
}

/// A failed run's reason with the fix, when the model server's error has one.
pub fn with_remedy(reason: &str, remedy: Option<Remedy>, front: Front) -> String {
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

/// What to do when the window is too small for the work.
const LARGER_WINDOW: &str = "Give the model a larger window: start the model server with a larger context (and raise --context-window if you set it lower), or use a model made for a larger window";

/// Why conversation `id` stopped, in words, with what to do about it: the budget's flag,
/// the command to go on, the model server's remedy.
pub fn stop_words(stop: &StopReason, remedy: Option<Remedy>, front: Front, id: &str) -> String {
    let fact = stop.to_string();
    let words = match stop {
        StopReason::MaxSteps { .. } => format!("{fact}; raise it with --max-steps"),
        StopReason::MaxTokens { .. } => format!("{fact}; raise it with --max-tokens"),
        StopReason::MaxCost { .. } => format!("{fact}; raise max_cost or pass --max-cost"),
        StopReason::MaxTime { .. } => format!("{fact}; raise it with --max-time"),
        StopReason::MaxDisk { .. } => format!("{fact}; raise it with --max-disk"),
        StopReason::NoToolCall => format!(
            "{fact}. Go on with `wright resume {id} \"…\"`, or ask questions in `wright chat`"
        ),
        StopReason::Stuck { .. } | StopReason::ChecksFail { .. } => {
            format!("{fact}. Resume with a hint: wright resume {id} \"…\"")
        }
        StopReason::WindowTooSmall { .. } => format!("{fact}. {LARGER_WINDOW}"),
        StopReason::NobodyToConfirm { .. } => format!(
            "{fact}. Answer it in a terminal with `wright resume {id}` (it asks again, and runs it only on your yes), or start runs with --confirm never to run such actions unasked"
        ),
        // Nothing is lost: the conversation goes on from where it stopped (in a chat,
        // with the next message).
        StopReason::Interrupted { .. }
        | StopReason::ModelError { .. }
        | StopReason::ToolFailed { .. }
            if front == Front::CommandLine =>
        {
            // The server's fix first (it is about why it stopped), then how to go on.
            let fixed = with_remedy(&fact, remedy, front);
            let stop = if fixed.ends_with(['.', '?', '!']) {
                ""
            } else {
                "."
            };
            return format!("{fixed}{stop} Go on with `wright resume {id}`");
        }
        StopReason::Finished
        | StopReason::Answered
        | StopReason::Interrupted { .. }
        | StopReason::CondensingEveryStep
        | StopReason::ModelError { .. }
        | StopReason::ToolFailed { .. }
        | StopReason::PromptRefused { .. }
        | StopReason::Other { .. } => fact,
    };
    with_remedy(&words, remedy, front)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_or_interrupted_run_says_how_to_go_on() {
        let stops = [
            StopReason::Interrupted { why: None },
            StopReason::ModelError {
                message: "HTTP 500".into(),
            },
            StopReason::ToolFailed {
                tool: "terminal".into(),
                message: "gone".into(),
            },
        ];
        for stop in &stops {
            let words = stop_words(stop, None, Front::CommandLine, "c-1");
            assert!(words.ends_with("Go on with `wright resume c-1`"), "{words}");
            // In a chat, the next message goes on.
            assert!(!stop_words(stop, None, Front::Chat, "c-1").contains("resume"));
        }
    }

    #[test]
    fn the_hints_name_the_default_model_wright_pulls() {
        for front in [Front::CommandLine, Front::Chat] {
            assert!(
                hint(Remedy::GetModel, front).contains(wright_models::DEFAULT_MODEL),
                "{front:?}"
            );
        }
    }
}
