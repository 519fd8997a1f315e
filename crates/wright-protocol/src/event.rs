//! The event types. Field names are the documented log format (docs/event-log.md):
//! renaming one is a format change and needs `LOG_FORMAT_VERSION` bumped.

use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;
use std::time::SystemTime;

/// Version of the JSONL format, written in every log's first (`start`) event. Version 2
/// added where each model request went (`destination` on `start` and `usage`,
/// `summary_destination` on `condensation`) and its cost (`cost` on `usage`); version 3
/// added the kinds `retry` (a model request sent again) and `changes` (what the run left,
/// after the working copy was handed over). Logs of older versions read as they are,
/// without them; a wright that knows only version 2 refuses a version-3 log with a
/// sentence instead of stumbling on a kind it does not know. Version 4 added `plan` (the
/// agent's plan, whole, after each change) and `together` (the calls of one reply that
/// ran at the same time). Version 5 added each action's `risk` and `risk_reason`, the
/// pending action's `call_id` and a run's `confirm` mode on `state`, and the kinds
/// `confirmation` (the user's answer about a pending action) and `flagged` (a possible
/// prompt injection); and `skill` (a skill added to the history) and `hook` (a hook's
/// run and what it decided). Version 6 added `second_look` (a second agent's verdict on
/// the change, `--review`) and a conversation's `group` on `start` (`--parallel`), `model_switch`
/// (fallback to the next profile), `route` (how the profile was chosen) and
/// `side_question` (a question asked beside the task) and `network` (a connection
/// through wright's proxy or by `fetch`: host, port, verdict, bytes) and `reading` (the
/// model's answer, asked apart, about a failure). Version 7 added `check` (the first
/// look's failing command run again by wright, after an edit and before a `finish`).
/// Version 8 added `last_change` on `start` (what the start commit changed, shown after
/// a failing first look). Version 9 added `candidate` (a version of the failing code's
/// function the model wrote, asked apart, and whether the failing command passed with it).
/// Version 10 added the candidate outcome `fails_further` (a version kept while the next
/// function the command failed in was tried). Version 11 added `assist` (help for the
/// model turned on during a run, and why). Version 12 added `account` (wright's own
/// account of the change at a `finish`: the files the diff touches, the versions wright
/// kept, and what of the model's words they contradict). Version 13 added `agent` on
/// `start` (an external agent drives the conversation), the tool `reported` (what such an
/// agent reported of its own tools, which wright did not run), and `handed_back` (what
/// the server did with the result for the automation that started the run: a push, a
/// pull request, a comment on the issue, or why one failed). Version 14 added the
/// candidate outcome `unverified` (a whole file's version kept with the tests passing but
/// no check of the task confirming it).
pub const LOG_FORMAT_VERSION: u32 = 15;

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Dense sequence number within the conversation, from 0.
    pub id: u64,
    /// RFC 3339 UTC time with milliseconds.
    pub ts: String,
    pub source: Source,
    #[serde(flatten)]
    pub body: EventBody,
}

impl Event {
    pub fn new(id: u64, source: Source, body: EventBody) -> Self {
        let ts = humantime::format_rfc3339_millis(SystemTime::now()).to_string();
        Self {
            id,
            ts,
            source,
            body,
        }
    }

    /// The event as one log line, newline included.
    pub fn to_line(&self) -> Result<String, serde_json::Error> {
        // Inert when a person `cat`s the log: C1 controls and bidi marks as \u escapes.
        let mut line = crate::printable::escape_for_json_line(serde_json::to_string(self)?);
        line.push('\n');
        Ok(line)
    }
}

/// Who caused the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    User,
    Agent,
    Environment,
}

/// What happened. Serialized with a `kind` tag next to the common fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventBody {
    /// First event of every log: what the conversation was started with.
    Start(Start),
    /// Text from the user (the task, a follow-up) or from the agent (its reply text).
    Message {
        text: String,
        /// The model step this text belongs to (agent messages only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<u32>,
        /// Reasoning the model returned apart from its answer; shown, never sent back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
        /// The reply exactly as the model wrote it, when it held tool calls as text: sent
        /// back verbatim in text mode, so the model sees its own words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw: Option<String>,
    },
    /// A tool call the model made, logged before it runs.
    Action {
        step: u32,
        call_id: String,
        tool: String,
        /// The parsed arguments, or the raw text as a JSON string when they did not parse.
        arguments: Value,
        /// How risky the call is: the higher of wright's reading and the model's own
        /// `security_risk` (version 5 on).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        risk: Option<crate::Risk>,
        /// Why, in words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        risk_reason: Option<String>,
    },
    /// What a tool call produced, logged after it ran.
    Observation {
        call_id: String,
        tool: String,
        output: String,
        is_error: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
    },
    /// Something went wrong outside a tool (model server, limits, internal).
    Error { message: String },
    /// The agent's state changed.
    State {
        state: AgentState,
        /// Why, in words (what people and older readers read).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// Why, typed (absent in older logs, and when this wright does not know it).
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "crate::stop::lenient"
        )]
        stop: Option<crate::StopReason>,
        /// With `awaiting_confirmation`: the action waiting for the user's answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// With `running`: when this run asks before an action (version 5 on).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        confirm: Option<crate::ConfirmMode>,
    },
    /// Token use and timing of one model request.
    Usage(Usage),
    /// The history was condensed to fit the context window. From here on the model sees:
    /// the system prompt, the task, `summary` (if any), then the events from `keep_from`
    /// on, with the outputs of the `masked` observations cut to their first and last lines.
    Condensation(Condensation),
    /// What wright found reviewing the agent's own changes before accepting `finish`:
    /// "the tests pass" is not the same as "the change is right".
    Review(Review),
    /// A model request failed in a way that may pass and is sent again (version 3 on).
    Retry {
        step: u32,
        /// 1 for the first retry.
        attempt: u32,
        /// What went wrong with the previous try.
        reason: String,
    },
    /// What the run left, once the working copy was handed over (version 3 on): the last
    /// event of a run.
    Changes(crate::Changes),
    /// The agent's plan after the `task_tracker` call of `call_id` changed it, whole
    /// (version 4 on): the last one is the current plan.
    Plan {
        step: u32,
        call_id: String,
        tasks: Vec<crate::PlanTask>,
    },
    /// These calls of one reply, all read-only, ran at the same time (version 4 on);
    /// logged after their actions, before their observations.
    Together { step: u32, call_ids: Vec<String> },
    /// The user's answer about the pending action `call_id` (version 5 on), logged before
    /// it runs or is answered as rejected.
    Confirmation {
        call_id: String,
        tool: String,
        decision: crate::Decision,
        /// Why, when the user said (a rejection's reason goes to the model).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Something wright flags about the action `call_id` (version 5 on), logged after it.
    Flagged { call_id: String, flag: crate::Flag },
    /// A skill came into the history (version 5 on): its text is shown to the model
    /// after what made it come (the user message, the step's results).
    Skill {
        name: String,
        /// Where it was read (see `SkillEntry::path`).
        path: String,
        cause: crate::SkillCause,
        text: String,
    },
    /// A hook ran (version 5 on): what it decided, and what it adds for the model.
    Hook(crate::HookRun),
    /// A second agent's verdict on the change at a `finish` (version 6 on), logged before
    /// the finish is taken or sent back with the findings.
    SecondLook(crate::SecondLook),
    /// The conversation went on with the next model of its fallback list (version 6 on).
    ModelSwitch(crate::ModelSwitch),
    /// How the conversation's profile was chosen (version 6 on), after its start.
    Route(crate::Route),
    /// A question asked beside the task and its answer (version 6 on): never part of the
    /// history the model is sent.
    SideQuestion(crate::SideQuestion),
    /// The model's answer, asked apart, about which line causes a failure (version 6 on):
    /// shown to it after the observation it reads.
    Reading(crate::Reading),
    /// The first look's failing command, run again by wright after an edit or before a
    /// `finish` (version 7 on).
    Check(crate::Check),
    /// A version of the failing code's function the model wrote, asked apart, tried by
    /// wright with the first look's command (version 9 on).
    Candidate(crate::Candidate),
    /// Help for the model turned on during the run, because it showed it needs it
    /// (version 11 on); logged before the help runs, never sent to the model.
    Assist(crate::AssistDecision),
    /// wright's own account of the change at a `finish` (version 12 on): logged before
    /// the finish is taken or sent back, never sent to the model.
    Account(crate::Account),
    /// A connection to the network through wright's proxy or by `fetch` (version 6 on),
    /// logged after the call during which it ended: never shown to the model.
    Network(crate::NetConnection),
    /// What the server did with the result for the automation that started the run
    /// (version 13 on), appended after the run ended: never shown to the model.
    HandedBack(crate::HandedBack),
}

impl EventBody {
    /// The conversation is running (again): with a run's first one, the confirmation
    /// mode it runs with.
    pub fn running(confirm: Option<crate::ConfirmMode>) -> Self {
        EventBody::State {
            state: crate::AgentState::Running,
            reason: None,
            stop: None,
            call_id: None,
            confirm,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Review {
    /// Test files the agent changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub test_files_changed: Vec<String>,
    /// Tests or assertions removed: "file: line".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests_removed: Vec<String>,
    /// Tests marked as skipped: "file: line".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests_skipped: Vec<String>,
    /// Changed files the task never mentioned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmentioned_files: Vec<String>,
}

impl Review {
    /// Whether the agent must account for its changes before finishing.
    pub fn is_suspicious(&self) -> bool {
        !self.test_files_changed.is_empty()
            || !self.tests_removed.is_empty()
            || !self.tests_skipped.is_empty()
    }

    pub fn is_empty(&self) -> bool {
        !self.is_suspicious() && self.unmentioned_files.is_empty()
    }

    /// The findings, one per line.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if !self.test_files_changed.is_empty() {
            lines.push(format!(
                "test files changed: {}",
                self.test_files_changed.join(", ")
            ));
        }
        for removed in &self.tests_removed {
            lines.push(format!("test or assertion removed: {removed}"));
        }
        for skipped in &self.tests_skipped {
            lines.push(format!("test skipped: {skipped}"));
        }
        if !self.unmentioned_files.is_empty() {
            lines.push(format!(
                "files changed that the task does not mention: {}",
                self.unmentioned_files.join(", ")
            ));
        }
        lines
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Condensation {
    /// First event still shown verbatim (the start of a step).
    pub keep_from: u64,
    /// Observations (event ids) shown cut to their first and last lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub masked: Vec<u64>,
    /// The model's structured summary of everything before `keep_from`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Estimated tokens of the next request before and after.
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// Tokens the summary request cost, when one was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_prompt_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_completion_tokens: Option<u64>,
    /// Where the summary request went (version 2 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_destination: Option<Destination>,
}

/// The conversation's fixed frame: everything the model sees before the first user turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Start {
    pub version: u32,
    pub conversation: String,
    pub workspace: String,
    pub model: String,
    pub base_url: String,
    pub system_prompt: String,
    /// Tool schemas (sent in each request's `tools` field in native mode).
    pub tools: Vec<Value>,
    /// How tool calls travel: the server's native function calling, or text.
    #[serde(default)]
    pub tool_calling: ToolCalling,
    /// For a fork: the conversation and event it was taken from ("ID@EVENT").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<String>,
    /// Where the model's requests go (version 2 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination: Option<Destination>,
    /// The workspace map made before the first step, sent at the head of the first user
    /// message (absent with `--map off`, and in logs before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_map: Option<String>,
    /// What the start commit changed, shown right after wright's first look at the tests
    /// when it fails (absent with `--last-change off`, outside git, for a first commit,
    /// and before version 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_change: Option<String>,
    /// The names of the secrets the conversation's shell was given (never their values).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
    /// The repository's instructions (`AGENTS.md` and its kin) in the system prompt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instructions: Vec<crate::InstructionFile>,
    /// The skills the conversation may draw on, texts included.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<crate::SkillEntry>,
    /// The group of conversations started together on one task (`wright run --parallel`;
    /// version 6 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The external agent (`[agents.NAME]`, over ACP) that takes the conversation's
    /// steps instead of wright's own loop (version 13 on): what it reports of its own
    /// tools is logged as actions of the tool `reported`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// What a model's tokens cost, per million, for a spending cap.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub prompt: f64,
    pub completion: f64,
}

impl Price {
    pub fn of(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.prompt + completion_tokens as f64 * self.completion) / 1e6
    }
}

/// Where a model request goes, as far as this repository's code is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Destination {
    /// A server on this machine (a loopback address or `localhost`).
    Loopback,
    /// A private address of the local network (10/8, 172.16/12, 192.168/16, link-local,
    /// IPv6 unique-local).
    LocalNetwork,
    /// Anything else: a named host or a public address.
    Remote,
    /// The engine inside wright's own process.
    Embedded,
}

impl Destination {
    pub fn as_str(self) -> &'static str {
        match self {
            Destination::Loopback => "loopback",
            Destination::LocalNetwork => "local_network",
            Destination::Remote => "remote",
            Destination::Embedded => "embedded",
        }
    }

    /// Whether the code stays on this machine.
    pub fn is_local(self) -> bool {
        matches!(self, Destination::Loopback | Destination::Embedded)
    }
}

/// How the model calls tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCalling {
    /// The request carries `tools` and the reply carries `tool_calls` (text calls are
    /// still read from replies that have none).
    #[default]
    Native,
    /// Tools are described in the system prompt and calls are read from the reply text.
    Text,
}

impl ToolCalling {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolCalling::Native => "native",
            ToolCalling::Text => "text",
        }
    }
}

/// Lifecycle of the agent. `Stopped` covers limits and interruptions: resumable, not failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentState {
    Running,
    AwaitingConfirmation,
    Finished,
    Stopped,
    Stuck,
    Failed,
}

impl AgentState {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentState::Running => "running",
            AgentState::AwaitingConfirmation => "awaiting_confirmation",
            AgentState::Finished => "finished",
            AgentState::Stopped => "stopped",
            AgentState::Stuck => "stuck",
            AgentState::Failed => "failed",
        }
    }
}

/// One model request's cost, as the server reported it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub step: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt tokens the server served from its cache, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// Wall time from sending the request to the first streamed byte of the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_ms: Option<f64>,
    /// Wall time from the first streamed byte to the end of the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation_ms: Option<f64>,
    /// Where the request went (version 2 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination: Option<Destination>,
    /// What the request cost by the profile's prices, when it has them (version 2 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn action_serializes_flat_with_kind_tag() {
        let event = Event {
            id: 3,
            ts: "2026-11-30T18:00:00.000Z".into(),
            source: Source::Agent,
            body: EventBody::Action {
                step: 1,
                call_id: "call_1".into(),
                tool: "terminal".into(),
                arguments: json!({"command": "ls"}),
                risk: None,
                risk_reason: None,
            },
        };
        let value: Value = serde_json::from_str(&event.to_line().unwrap()).unwrap();
        assert_eq!(
            value,
            json!({"id": 3, "ts": "2026-11-30T18:00:00.000Z", "source": "agent", "kind": "action",
                   "step": 1, "call_id": "call_1", "tool": "terminal", "arguments": {"command": "ls"}})
        );
        let back: Event = serde_json::from_value(value).unwrap();
        assert_eq!(back, event);
    }

    #[test]
    fn version_5_fields_read_back_and_older_lines_still_read() {
        let older = r#"{"id":3,"ts":"2026-01-01T00:00:00.000Z","source":"agent","kind":"action","step":1,"call_id":"c","tool":"terminal","arguments":{"command":"ls"}}"#;
        let read: Event = serde_json::from_str(older).unwrap();
        assert!(matches!(
            read.body,
            EventBody::Action {
                risk: None,
                risk_reason: None,
                ..
            }
        ));
        let older = r#"{"id":4,"ts":"2026-01-01T00:00:00.000Z","source":"environment","kind":"state","state":"running"}"#;
        let read: Event = serde_json::from_str(older).unwrap();
        assert!(matches!(
            read.body,
            EventBody::State {
                call_id: None,
                confirm: None,
                ..
            }
        ));
        for body in [
            EventBody::State {
                state: AgentState::AwaitingConfirmation,
                reason: None,
                stop: None,
                call_id: Some("c".into()),
                confirm: None,
            },
            EventBody::Confirmation {
                call_id: "c".into(),
                tool: "terminal".into(),
                decision: crate::Decision::Rejected,
                reason: Some("not today".into()),
            },
            EventBody::Flagged {
                call_id: "c".into(),
                flag: crate::Flag::PromptInjection {
                    source: 2,
                    excerpt: "ignore all previous instructions".into(),
                },
            },
        ] {
            let event = Event::new(5, Source::User, body);
            let back: Event = serde_json::from_str(&event.to_line().unwrap()).unwrap();
            assert_eq!(back, event);
        }
        let line = Event::new(
            6,
            Source::User,
            EventBody::Confirmation {
                call_id: "c".into(),
                tool: "terminal".into(),
                decision: crate::Decision::Always,
                reason: None,
            },
        )
        .to_line()
        .unwrap();
        assert!(
            line.contains(
                r#""kind":"confirmation","call_id":"c","tool":"terminal","decision":"always"}"#
            ),
            "{line}"
        );
    }
}
