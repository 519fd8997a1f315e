//! What the loop shares with its front ends: the observer that sees each event as it
//! happens, the limits a run is given, the checks made between steps, what a run ends
//! with and its totals, and what opens a new conversation.
//!
//! What a front end may change on a conversation between steps (model, window, review,
//! condensing threshold), and the bookkeeping of condensations.
//!
//! What a conversation shows of itself (its id, log, events, totals, client, tools) and
//! how events are appended to its log: each shown to the observer once it is on disk,
//! or kept quiet for resume's own bookkeeping.
//!
//! What a call printed while it ran, kept for when it does not finish (Ctrl-C, the time
//! limit): the observation of an interrupted call says what the command had printed, not
//! only that it stopped. Bounded: the first and the last bytes, with the whole counted.
//! A tool runs with what it prints shown as it comes (masked) and kept so.

use super::Conversation;
use crate::store::EventLog;
use crate::store::StoreError;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wright_llm::Client;
use wright_llm::StreamDelta;
use wright_protocol::count;
use wright_protocol::AgentState;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Review;
use wright_protocol::Source;
use wright_tools::ToolError;
use wright_tools::ToolOutput;

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
    /// The external agent that takes its steps instead of a model (`[agents.NAME]`).
    pub agent: Option<String>,
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

/// The user's side of a run in flight: their own cancellation, and why (to tell it from
/// the time budget's), and the side questions they hand in.
#[derive(Default)]
pub(super) struct Interrupt {
    /// The user's own cancellation (Ctrl-C), to tell it from the time budget's.
    pub(super) user_cancel: Option<tokio_util::sync::CancellationToken>,
    /// Why the user's token was cancelled, when the front end says (a signal's name).
    pub(super) interrupt_reason: std::sync::Arc<std::sync::Mutex<Option<String>>>,
    /// Side questions handed in while a run goes on (see `send`).
    pub(super) asides: Option<tokio::sync::mpsc::UnboundedReceiver<super::send::Aside>>,
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
    /// What this run flagged: a risky action after such a text.
    pub(super) flags: Vec<wright_protocol::Flag>,
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

impl Conversation {
    /// Talks to another model from the next step on (the history stays as it is).
    pub fn set_client(&mut self, client: Client) {
        self.client = client;
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Notes something the user did (in chat: an undo) so the model knows of it.
    pub fn note_from_user(
        &mut self,
        observer: &mut dyn Observer,
        text: &str,
    ) -> Result<(), StoreError> {
        self.append(
            observer,
            Source::User,
            EventBody::Message {
                text: text.to_string(),
                step: None,
                reasoning: None,
                raw: None,
            },
        )
    }

    /// Masks the secrets of `masker` out of every event from now on (before it is logged,
    /// shown or sent to the model) and out of what commands print as it is shown.
    pub fn set_masker(&mut self, masker: std::sync::Arc<wright_tools::Masker>) {
        let masker = Some(masker).filter(|m| !m.is_empty());
        self.log.set_masker(masker);
    }

    /// Commits every event to `sink` (a database) before it is logged, the sink first
    /// given the events logged so far.
    pub fn set_event_sink(
        &mut self,
        sink: Box<dyn crate::store::EventSink>,
    ) -> Result<(), crate::store::StoreError> {
        self.log.set_sink(sink)
    }

    /// The workspace whose files a failure names: a loop over a failure is then met with
    /// the lines it points at.
    pub fn set_workspace(&mut self, workspace: wright_tools::Workspace) {
        self.workspace = Some(workspace);
    }

    /// Counts what each request costs at `price` (and stops at `Limits::max_cost`).
    pub fn set_price(&mut self, price: Option<wright_protocol::Price>) {
        self.fallback.price = price;
    }

    /// The granted secrets, masked out of every event and of what commands print as it is
    /// shown (the log's).
    pub(crate) fn masker(&self) -> Option<std::sync::Arc<wright_tools::Masker>> {
        self.log.masker().cloned()
    }

    /// Where a front end writes why it cancels the run (say, "stopped by SIGTERM") before
    /// cancelling: the stop is logged with that reason instead of "interrupted by the user".
    pub fn interrupt_reason(&self) -> std::sync::Arc<std::sync::Mutex<Option<String>>> {
        self.interrupt.interrupt_reason.clone()
    }

    /// Checks `guard` before each step; its reason stops the run.
    pub fn add_step_guard(&mut self, guard: Box<dyn StepGuard>) {
        self.guards.push(guard);
    }

    /// Condenses the history before the next request, whatever its size (asked for by
    /// the user): aiming at half of it, masking first, else a summary; when it cannot
    /// shrink, the run goes on with it as it is.
    pub fn condense_first(&mut self) {
        self.window.condense_requested = true;
    }

    /// Condense when a request would pass `share` of the window (0.3 to 0.95).
    pub fn set_condense_at(&mut self, share: f64) {
        self.window.condense_at = share.clamp(0.3, 0.95);
    }

    /// Requests that would not fit in `tokens` (with room kept for the reply) are not
    /// sent: the run stops with the reason instead of being silently truncated. The tools
    /// are told too, so their outputs shrink with the window.
    pub fn set_context_window(&mut self, tokens: u64) {
        self.window.context_window = Some(tokens);
        self.tools.fit_window(tokens);
    }

    pub(crate) fn note_condensation(&mut self, condensation: &wright_protocol::Condensation) {
        self.totals.condensations += 1;
        self.totals.prompt_tokens += condensation.summary_prompt_tokens.unwrap_or(0);
        self.totals.completion_tokens += condensation.summary_completion_tokens.unwrap_or(0);
        if let Some(price) = self.fallback.price {
            self.totals.cost += price.of(
                condensation.summary_prompt_tokens.unwrap_or(0),
                condensation.summary_completion_tokens.unwrap_or(0),
            );
        }
        self.window.condensed_at_steps.push(self.step);
    }

    /// Three condensations on three steps in a row: condensing no longer helps.
    pub(super) fn condensation_loop(&self) -> bool {
        let steps = &self.window.condensed_at_steps;
        steps.len() >= 3 && {
            let last = &steps[steps.len() - 3..];
            last[2] == last[1] + 1 && last[1] == last[0] + 1
        }
    }
}

impl Conversation {
    pub(crate) fn client_ref(&self) -> &Client {
        &self.client
    }

    pub(crate) fn request_tools_ref(&self) -> &[Value] {
        self.calling.request_tools()
    }

    pub(crate) fn estimate(&self, bytes: usize) -> u64 {
        self.estimate_tokens(bytes)
    }

    pub(crate) fn append_event(
        &mut self,
        observer: &mut dyn Observer,
        source: Source,
        body: EventBody,
    ) -> Result<(), StoreError> {
        self.append(observer, source, body)
    }

    /// Tells the model something at `step`, as wright's own message (logged first, as
    /// every event).
    pub(super) fn tell(
        &mut self,
        observer: &mut dyn Observer,
        step: u32,
        text: String,
    ) -> Result<(), StoreError> {
        let body = EventBody::Message {
            text,
            step: Some(step),
            reasoning: None,
            raw: None,
        };
        self.append(observer, Source::Environment, body)
    }

    /// The token count of a request body of `bytes`, as best known.
    pub(super) fn estimate_tokens(&self, bytes: usize) -> u64 {
        (bytes as f64 * self.window.tokens_per_byte).ceil() as u64
    }

    /// Its id, as its log's start says.
    pub fn id(&self) -> &str {
        self.start_event()
            .map_or("", |start| start.conversation.as_str())
    }

    pub fn log_path(&self) -> &Path {
        self.log.path()
    }

    pub fn events(&self) -> &[Event] {
        self.log.events()
    }

    /// Ends the conversation and gives back its log, for what a front end records after
    /// the run (where the changes went); the model client and tools are dropped.
    pub fn into_log(self) -> EventLog {
        self.log
    }

    pub(super) fn append(
        &mut self,
        observer: &mut dyn Observer,
        source: Source,
        body: EventBody,
    ) -> Result<(), StoreError> {
        let event = self.log.append(source, body)?;
        observer.event(event);
        Ok(())
    }

    /// Tells the model, before its next step, what a resume found (a takeover's lost
    /// files): logged as the environment's message, which the model reads as the
    /// "interrupted" answer of a call cut off.
    pub fn tell_model(&mut self, text: String) -> Result<(), StoreError> {
        self.append_quietly(
            Source::Environment,
            EventBody::Message {
                text,
                step: None,
                reasoning: None,
                raw: None,
            },
        )
    }

    /// Appends an event no observer needs to see (resume's own bookkeeping).
    pub(crate) fn append_quietly(
        &mut self,
        source: Source,
        body: EventBody,
    ) -> Result<(), StoreError> {
        self.log.append(source, body).map(|_| ())
    }

    pub fn totals(&self) -> &Totals {
        &self.totals
    }
}

/// Bytes kept from the start of the output.
const HEAD: usize = 4 << 10;
/// Bytes kept from its end (where a command says how far it got).
const TAIL: usize = 12 << 10;

/// The printed bytes (already masked, as shown), its two ends kept.
#[derive(Debug, Default)]
pub(super) struct Printed {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    total: u64,
}

impl Printed {
    pub(super) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = HEAD - self.head.len();
        if room > 0 {
            let (first, rest) = bytes.split_at(room.min(bytes.len()));
            self.head.extend_from_slice(first);
            bytes = rest;
        }
        self.tail.extend(bytes);
        let over = self.tail.len().saturating_sub(TAIL);
        self.tail.drain(..over);
    }

    /// For the observation: nothing when nothing was printed.
    pub(super) fn text(&self) -> Option<String> {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let head = wright_tools::clean_terminal_output(&self.head);
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail = wright_tools::clean_terminal_output(&tail);
        let text = if kept < self.total {
            // The tail's first line is cut: from the next one.
            let tail = tail.split_once('\n').map_or("", |(_, rest)| rest);
            format!(
                "{}\n[... the middle is omitted; it printed {} in all ...]\n{}",
                head.trim_end(),
                count(self.total, "byte"),
                tail
            )
        } else {
            format!("{head}{tail}")
        };
        let text = text.trim_end();
        (!text.trim().is_empty()).then(|| text.to_string())
    }
}

/// Runs `tool`, handing what it prints to the observer as it comes; `None` when the run
/// was cancelled first.
pub(crate) async fn run_watched(
    tool: &dyn wright_tools::Tool,
    arguments: &Value,
    cancel: &CancellationToken,
    observer: &mut dyn Observer,
    masker: Option<Arc<wright_tools::Masker>>,
) -> Option<Result<ToolOutput, ToolError>> {
    run_kept(tool, arguments, cancel, observer, masker).await.0
}

/// `run_watched`, with what the tool printed (as shown) kept: the observation of a call
/// that does not finish says it.
pub(super) async fn run_kept(
    tool: &dyn wright_tools::Tool,
    arguments: &Value,
    cancel: &CancellationToken,
    observer: &mut dyn Observer,
    masker: Option<Arc<wright_tools::Masker>>,
) -> (Option<Result<ToolOutput, ToolError>>, Printed) {
    let mut kept = Printed::default();
    let mut pass = |bytes: &[u8], observer: &mut dyn Observer| {
        kept.push(bytes);
        show(bytes, observer);
    };
    let (sender, mut printed) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let sink = move |bytes: &[u8]| {
        let _ = sender.send(bytes.to_vec());
    };
    // What is shown as it comes is masked too, a secret split across chunks included.
    let mut stream = wright_tools::MaskStream::new(masker);
    let running = tool.run_watched(arguments, &sink);
    tokio::pin!(running);
    loop {
        tokio::select! {
            result = &mut running => {
                while let Ok(bytes) = printed.try_recv() {
                    pass(&stream.push(&bytes), observer);
                }
                pass(&stream.finish(), observer);
                return (Some(result), kept);
            }
            Some(bytes) = printed.recv() => pass(&stream.push(&bytes), observer),
            _ = cancel.cancelled() => {
                // What came before the interruption, shown and kept.
                while let Ok(bytes) = printed.try_recv() {
                    pass(&stream.push(&bytes), observer);
                }
                pass(&stream.finish(), observer);
                return (None, kept);
            }
        }
    }
}

fn show(bytes: &[u8], observer: &mut dyn Observer) {
    if !bytes.is_empty() {
        observer.command_output(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ends_are_kept_and_the_whole_counted() {
        let mut printed = Printed::default();
        assert_eq!(printed.text(), None);
        let first = b"\x1b[1mstep 1\x1b[0m\r\n";
        printed.push(first);
        assert_eq!(printed.text().as_deref(), Some("step 1"));
        let mut total = first.len();
        for n in 2..=5000 {
            let line = format!("step {n}\n");
            total += line.len();
            printed.push(line.as_bytes());
        }
        let text = printed.text().unwrap();
        assert!(text.starts_with("step 1\nstep 2\n"), "{text}");
        assert!(text.ends_with("step 4999\nstep 5000"), "{text}");
        assert!(
            text.contains(&format!(
                "[... the middle is omitted; it printed {total} bytes in all ...]"
            )),
            "{text}"
        );
        assert!(text.len() < HEAD + TAIL + 100);
    }
}
