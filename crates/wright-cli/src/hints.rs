//! The fix for a model server's error, worded for where the user is: on the command line
//! (`run`, `resume`, `fork`, `doctor`, or the start of a chat) a flag, inside a chat a
//! slash command; and what to do after each reason a run stops for. The libraries carry
//! only a typed `Remedy` and `StopReason`; they never name a flag or a command.

pub use crate::wording::explain;
pub use crate::wording::with_remedy;
pub use crate::wording::Audience as Front;
use wright_llm::Remedy;
use wright_protocol::StopReason;

/// What to do when the window is too small for the work.
const LARGER_WINDOW: &str = "Give the model a larger window: start the model server with a larger context (and raise --context-window if you set it lower), or use a model made for a larger window";

/// Why conversation `id` stopped, in words, with what to do about it: the budget's flag,
/// the command to go on, the model server's remedy.
pub fn stop_words(stop: &StopReason, remedy: Option<Remedy>, front: Front, id: &str) -> String {
    let fact = stop.to_string();
    let words = match stop {
        // Its clone was never made: nothing to go on in (a new run makes a new one).
        StopReason::ToolFailed { tool, .. } if tool == StopReason::WORKSPACE => fact,
        StopReason::MaxSteps { .. } => format!("{fact}; raise it with --max-steps"),
        StopReason::MaxTokens { .. } => format!("{fact}; raise it with --max-tokens"),
        StopReason::MaxCost { .. } => format!("{fact}; raise max_cost or pass --max-cost"),
        StopReason::MaxTime { .. } => format!("{fact}; raise it with --max-time"),
        StopReason::MaxDisk { .. } => format!("{fact}; raise it with --max-disk"),
        StopReason::NoToolCall => format!(
            "{fact}. Go on with `wright resume {id} \"…\"`, or ask questions in `wright chat`"
        ),
        StopReason::Stuck { .. }
        | StopReason::ChecksFail { .. }
        | StopReason::NothingChanged { .. } => {
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
    use crate::wording::hint;

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
