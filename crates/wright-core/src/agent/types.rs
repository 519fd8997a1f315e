//! What the loop shares with its front ends: the observer that sees each event as it
//! happens, the limits a run is given, the checks made between steps, what a run ends
//! with and its totals, and what opens a new conversation.

use wright_llm::StreamDelta;
use wright_protocol::AgentState;
use wright_protocol::Event;
use wright_protocol::Review;

/// Sees the conversation as it happens (front ends print from here).
pub trait Observer: Send {
    fn event(&mut self, event: &Event);
    fn delta(&mut self, delta: &StreamDelta);

    /// The request of step `step` went to the model; its reply is awaited (a CPU may
    /// read the prompt for minutes before the first piece arrives).
    fn model_request(&mut self, step: u32) {
        let _ = step;
    }

    /// What the running command prints, as it comes: raw bytes, for display only (the
    /// observation holds the output the model sees).
    fn command_output(&mut self, bytes: &[u8]) {
        let _ = bytes;
    }
}

/// Budgets of one run (a resumed run gets its own): each stops the run cleanly, with
/// the reason, when reached.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Model steps in this run.
    pub max_steps: u32,
    /// Prompt plus completion tokens over the whole conversation.
    pub max_tokens: Option<u64>,
    /// Wall time of this run; a step in flight at the deadline is interrupted.
    pub max_time: Option<std::time::Duration>,
    /// Money over the whole conversation, by the prices given with `set_price`.
    pub max_cost: Option<f64>,
}

/// A check the front end makes before each step (the agent's disk use, say): a reason
/// stops the run, as a budget does.
pub trait StepGuard: Send + Sync {
    fn stop_reason(&self) -> Option<wright_protocol::StopReason>;
}

/// Token use and time over the whole run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    pub steps: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    pub model_ms: f64,
    /// Time the server spent on prompts and on generating (its own timings when it
    /// reports them, else wall time).
    pub prefill_ms: f64,
    pub generation_ms: f64,
    /// How many times the history was condensed to fit the window.
    pub condensations: u32,
    /// What the requests cost, when the model's prices are known.
    pub cost: f64,
}

impl Totals {
    /// Prompt tokens processed (not served from cache) per second of prefill.
    pub fn prefill_rate(&self) -> Option<f64> {
        let processed = self.prompt_tokens.saturating_sub(self.cached_tokens);
        (self.prefill_ms > 0.0 && processed > 0)
            .then(|| processed as f64 * 1000.0 / self.prefill_ms)
    }

    pub fn generation_rate(&self) -> Option<f64> {
        (self.generation_ms > 0.0 && self.completion_tokens > 0)
            .then(|| self.completion_tokens as f64 * 1000.0 / self.generation_ms)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub state: AgentState,
    /// Why it stopped (its words: `stop.to_string()`).
    pub stop: wright_protocol::StopReason,
    /// What the review of the agent's changes found (shown to the user first).
    pub review: Option<Review>,
    /// The model's closing message (from `finish`, or its last reply).
    pub summary: Option<String>,
    pub totals: Totals,
    /// When the model server failed: what the user can do, for the front end to word.
    pub remedy: Option<wright_llm::Remedy>,
    /// What wright flagged during the run (a risky action after text that looks like
    /// instructions to the agent).
    pub flags: Vec<wright_protocol::Flag>,
    /// The reviewer's last verdict (`--review`), shown before the diff.
    pub second_look: Option<wright_protocol::SecondLook>,
}

/// What a new conversation starts with before the user's first message: the system
/// prompt, and the workspace map that heads the first user message.
#[derive(Debug, Clone, Default)]
pub struct Opening {
    pub system_prompt: String,
    pub workspace_map: Option<String>,
    /// What the start commit changed, shown after a failing first look.
    pub last_change: Option<String>,
    /// The names of the secrets granted to the shell, for the log's start.
    pub secrets: Vec<String>,
    /// The repository's instructions in the system prompt (its text holds them).
    pub instructions: Vec<wright_protocol::InstructionFile>,
    /// The skills the conversation may draw on.
    pub skills: Vec<wright_protocol::SkillEntry>,
    /// The group of conversations started together (`wright run --parallel`), if any.
    pub group: Option<String>,
}

/// What the loop knows of the context window and how full the history makes it.
pub(super) struct Window {
    /// The effective context window in tokens, when known.
    pub(super) context_window: Option<u64>,
    /// Tokens per byte of request body, calibrated on the server's `prompt_tokens`.
    pub(super) tokens_per_byte: f64,
    /// Condense when a request would pass this share of the window.
    pub(super) condense_at: f64,
    /// Steps at which the history was condensed.
    pub(super) condensed_at_steps: Vec<u32>,
    /// The user asked for the history to be condensed before the next request.
    pub(super) condense_requested: bool,
}

/// The user's own cancellation, and why, to tell it from the time budget's.
#[derive(Default)]
pub(super) struct Interrupt {
    /// The user's own cancellation (Ctrl-C), to tell it from the time budget's.
    pub(super) user_cancel: Option<tokio_util::sync::CancellationToken>,
    /// Why the user's token was cancelled, when the front end says (a signal's name).
    pub(super) interrupt_reason: std::sync::Arc<std::sync::Mutex<Option<String>>>,
}

/// When and how the user is asked before an action runs (see `confirming`).
pub(super) struct Confirmation {
    /// When the user is asked before an action runs (see `confirming`).
    pub(super) confirm: wright_protocol::ConfirmMode,
    /// Who answers; without one, nobody can.
    pub(super) confirmer: Option<std::sync::Arc<dyn crate::confirm::Confirmer>>,
    /// The tools the user approved for good in this conversation.
    pub(super) always: std::collections::BTreeSet<String>,
    /// An action an earlier run left waiting for the user's answer.
    pub(super) pending: Option<crate::confirm::Pending>,
}

/// What the repository teaches the agent: its instructions, hooks and setup script (see `teach`).
#[derive(Default)]
pub(super) struct Teaching {
    /// The last text the agent read that looks like instructions to it: (event, words).
    pub(super) read_instructions: Option<(u64, String)>,
    /// The hooks and what runs them (see `teach`).
    pub(super) hooks: Option<super::teach::Hooks>,
    /// Whether the `SessionStart` hooks ran in this process.
    pub(super) session_started: bool,
    /// The repository's setup script (its path, its approved text), due before the first
    /// step.
    pub(super) setup_script: Option<(String, String)>,
}

impl Default for Window {
    fn default() -> Self {
        Self {
            context_window: None,
            tokens_per_byte: super::INITIAL_TOKENS_PER_BYTE,
            condense_at: super::DEFAULT_CONDENSE_AT,
            condensed_at_steps: Vec::new(),
            condense_requested: false,
        }
    }
}

impl Default for Confirmation {
    fn default() -> Self {
        Self {
            confirm: wright_protocol::ConfirmMode::Never,
            confirmer: None,
            always: std::collections::BTreeSet::new(),
            pending: None,
        }
    }
}
