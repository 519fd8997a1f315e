//! A session's conversation whose steps an external agent takes (`wright_acp::client`
//! drives it), through the session's own types: what the agent says is logged, what it
//! asks wright to do runs as the loop runs the model's calls (`serve`: logged before it
//! runs, rated, asked about, hooked), its permission requests go through the
//! confirmation flow (`permit`), and the run ends with the state its stop reason maps
//! to. The guarantees are the loop's (`wright_core`'s `external`); this only keeps the
//! loop's types behind the session, as for every front end.

use crate::running::Relay;
use crate::Observer;
use crate::Running;
use crate::Session;
use anyhow::Result;
use tokio_util::sync::CancellationToken;
use wright_llm::ToolCall;
use wright_protocol::AgentState;
use wright_protocol::Decision;
use wright_protocol::EventBody;
use wright_protocol::Pending;
use wright_protocol::Source;
use wright_protocol::StopReason;

/// How an external agent's run ended (the loop's outcome, kept whole for the report).
pub struct Ended(Box<wright_core::Outcome>);

impl Ended {
    pub fn state(&self) -> AgentState {
        self.0.state
    }
    pub fn stop(&self) -> &StopReason {
        &self.0.stop
    }
    pub fn summary(&self) -> Option<&str> {
        self.0.summary.as_deref()
    }
    /// The loop's outcome, for a report (the CLI's).
    pub fn into_outcome(self) -> wright_core::Outcome {
        *self.0
    }
}

/// What a call the agent asked for came to.
pub enum Served {
    /// Its observation as logged (it ran, or was answered without running).
    Observed {
        output: String,
        is_error: bool,
        exit_code: Option<i32>,
    },
    /// The run ended with it.
    Ended(Ended),
}

/// What the person answered about a permission the agent asked for its own tool.
pub enum Permitted {
    Decided(Decision),
    /// The run ended while it waited, or nobody could answer.
    Ended(Ended),
}

impl Running {
    /// Opens the agent's run: `message` logged as the user's, the run's `running` state;
    /// `Some` when a hook refused the message and the run ended there.
    pub async fn begin_external(
        &mut self,
        observer: &mut dyn Observer,
        message: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Option<Ended>> {
        let refused = self
            .conversation
            .begin_external(&mut Relay(observer), message, cancel)
            .await?;
        Ok(refused.map(|outcome| Ended(Box::new(outcome))))
    }

    /// The next step of the agent's (one turn of its output).
    pub fn next_external_step(&mut self) -> u32 {
        self.conversation.next_external_step()
    }

    /// Logs what the agent said or reported; the event's id.
    pub fn log_external(
        &mut self,
        observer: &mut dyn Observer,
        source: Source,
        body: EventBody,
    ) -> Result<u64> {
        self.conversation
            .log_external(&mut Relay(observer), source, body)?;
        Ok(self.conversation.last_external_event())
    }

    /// Runs a call the agent asked wright to make, as the loop runs a model's call.
    pub async fn serve_external(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        call: &ToolCall,
    ) -> Result<Served> {
        let served = self
            .conversation
            .serve_external(&mut Relay(observer), cancel, call)
            .await?;
        Ok(match served {
            wright_core::Served::Observed {
                output,
                is_error,
                exit_code,
            } => Served::Observed {
                output,
                is_error,
                exit_code,
            },
            wright_core::Served::Ended(outcome) => Served::Ended(Ended(outcome)),
        })
    }

    /// Asks about a call of the agent's own (its action logged as `pending` names it)
    /// through the confirmation flow, as the conversation's mode says.
    pub async fn permit_external(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        pending: &Pending,
    ) -> Result<Permitted> {
        let permitted = self
            .conversation
            .permit_external(&mut Relay(observer), cancel, pending)
            .await?;
        Ok(match permitted {
            wright_core::Permitted::Decided(decision) => Permitted::Decided(decision),
            wright_core::Permitted::Ended(outcome) => Permitted::Ended(Ended(outcome)),
        })
    }

    /// Ends the agent's run with `state` and `stop`, everything on disk.
    pub async fn end_external(
        &mut self,
        observer: &mut dyn Observer,
        state: AgentState,
        stop: StopReason,
        summary: Option<String>,
    ) -> Result<Ended> {
        let outcome = self
            .conversation
            .end_external(&mut Relay(observer), state, stop, summary)
            .await?;
        Ok(Ended(Box::new(outcome)))
    }

    /// Why the run stopped when it was cancelled (the user's reason, or the time budget).
    pub fn external_cancel_reason(&self) -> StopReason {
        self.conversation.external_cancel_reason()
    }
}

impl Session {
    /// Ends the session with the external agent's conversation, as `finish` does for
    /// every front end: the tools stopped, the working copy handed over, a `changes`
    /// event last. `summary`: the agent's last words, when it finished.
    pub async fn finish_external(
        self,
        running: Running,
        title: &str,
        summary: Option<&str>,
        observer: &mut dyn Observer,
    ) -> Result<crate::Finished> {
        let ending = crate::Ending {
            title,
            summary,
            locks: Vec::new(),
        };
        self.finish(running.conversation, ending, &mut Relay(observer))
            .await
    }
}
