//! How a run's end answers the editor's `session/prompt`: wright's typed `StopReason`
//! mapped onto ACP's stop reasons. ACP has five; wright has more reasons, so several
//! share one, and the words of the reason are told to the editor beside it
//! (`Notifier::say`). Only a run that did what it was asked (`finish`, a chat's answer)
//! answers `end_turn`: a client reads `end_turn` as success. A budget of the turn (its
//! steps, time, disk, or the stuck detector's bound on steps going nowhere) is
//! `max_turn_requests`; one of tokens `max_tokens`; every other way wright stopped short
//! of the task (a check that fails at `finish`, nothing changed, no tool call, a hook that
//! refused the prompt, an action nobody could confirm) is `refusal` — the agent declined
//! to go on. wright keeps the turn in its log all the same: the next prompt goes on from
//! it. A model server or a tool that broke is not a way for a turn to end: it answers the
//! prompt with an error.

use agent_client_protocol::v1::schema::StopReason as AcpStop;
use wright_protocol::StopReason;

/// What a prompt answers when its run ended with a reason.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    Stop(AcpStop),
    /// The run failed: a JSON-RPC error with these words.
    Failed(String),
}

pub(crate) fn answer(stop: &StopReason) -> Answer {
    match stop {
        StopReason::Finished | StopReason::Answered => Answer::Stop(AcpStop::EndTurn),
        // A budget of the turn: its steps, its time, the disk, or steps going nowhere.
        StopReason::MaxSteps { .. }
        | StopReason::MaxTime { .. }
        | StopReason::MaxDisk { .. }
        | StopReason::Stuck { .. } => Answer::Stop(AcpStop::MaxTurnRequests),
        // A budget of tokens (or the money they cost), or a window too small for them.
        StopReason::MaxTokens { .. }
        | StopReason::MaxCost { .. }
        | StopReason::WindowTooSmall { .. }
        | StopReason::CondensingEveryStep => Answer::Stop(AcpStop::MaxTokens),
        StopReason::Interrupted { .. } => Answer::Stop(AcpStop::Cancelled),
        // Stopped short of the task, the words say why; the next prompt goes on from here.
        StopReason::NoToolCall
        | StopReason::ChecksFail { .. }
        | StopReason::NothingChanged { .. }
        // Only where nobody can be asked (never from an editor, which answers permission
        // requests): the words say which action waits.
        | StopReason::NobodyToConfirm { .. }
        // A hook refused the prompt.
        | StopReason::PromptRefused { .. }
        | StopReason::Other { .. } => Answer::Stop(AcpStop::Refusal),
        StopReason::ModelError { .. } | StopReason::ToolFailed { .. } => {
            Answer::Failed(stop.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn each_reason_answers_as_its_kind() {
        let cases = [
            (StopReason::Finished, Answer::Stop(AcpStop::EndTurn)),
            (
                StopReason::MaxSteps { limit: 3 },
                Answer::Stop(AcpStop::MaxTurnRequests),
            ),
            (
                StopReason::MaxTokens {
                    limit: 10,
                    used: 12,
                },
                Answer::Stop(AcpStop::MaxTokens),
            ),
            (
                StopReason::WindowTooSmall { what: "x".into() },
                Answer::Stop(AcpStop::MaxTokens),
            ),
            (
                StopReason::Interrupted { why: None },
                Answer::Stop(AcpStop::Cancelled),
            ),
            (StopReason::NoToolCall, Answer::Stop(AcpStop::Refusal)),
            (StopReason::Answered, Answer::Stop(AcpStop::EndTurn)),
            (
                StopReason::Stuck {
                    pattern: "the same command again".into(),
                },
                Answer::Stop(AcpStop::MaxTurnRequests),
            ),
            (
                StopReason::PromptRefused {
                    reason: "no".into(),
                },
                Answer::Stop(AcpStop::Refusal),
            ),
            (
                StopReason::MaxTime { secs: Some(60) },
                Answer::Stop(AcpStop::MaxTurnRequests),
            ),
            (
                StopReason::ModelError {
                    message: "the server answered 500".into(),
                },
                Answer::Failed("the server answered 500".into()),
            ),
            (
                StopReason::ToolFailed {
                    tool: "terminal".into(),
                    message: "the sandbox broke".into(),
                },
                Answer::Failed("terminal failed: the sandbox broke".into()),
            ),
        ];
        for (stop, expected) in cases {
            assert_eq!(answer(&stop), expected, "{stop:?}");
        }
    }

    #[test]
    fn the_wire_names_are_acps() {
        let names: Vec<String> = [
            AcpStop::EndTurn,
            AcpStop::MaxTokens,
            AcpStop::MaxTurnRequests,
            AcpStop::Cancelled,
        ]
        .iter()
        .map(|stop| serde_json::to_string(stop).unwrap())
        .collect();
        assert_eq!(
            names,
            [
                "\"end_turn\"",
                "\"max_tokens\"",
                "\"max_turn_requests\"",
                "\"cancelled\""
            ]
        );
    }
}
