//! What a front end holds of a conversation: `Running`, the session's handle on one
//! (started by `Session::begin`, reopened with `Reopened`, run by `Session::run`), and
//! the few things a front end gives or takes while it runs — who answers risky actions
//! (`Confirmer`), who watches the events (`Observer`), side questions (`Asides`), the
//! interrupt's reason. The loop itself stays behind it: a front end names no type of
//! `wright_core`, so the loop can change without touching the server or the editor's
//! agent. What is the log's (events, the waiting action and its answer) is
//! `wright_protocol`'s.

use crate::end::Finished;
use crate::Session;
use anyhow::Result;
use std::sync::Arc;
use std::sync::Mutex;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use wright_llm::StreamDelta;
use wright_protocol::AgentState;
use wright_protocol::Answer;
use wright_protocol::Event;
use wright_protocol::Pending;
use wright_protocol::StopReason;

/// Sees the conversation as it happens: each event once it is logged, the pieces of the
/// model's reply as they stream.
pub trait Observer: Send {
    fn event(&mut self, event: &Event);
    fn delta(&mut self, delta: &StreamDelta) {
        let _ = delta;
    }
}

/// Who answers when an action waits for confirmation (a server's client, the person in
/// an editor).
#[async_trait::async_trait]
pub trait Confirmer: Send + Sync {
    /// Whether someone can answer now. When nobody can, the run stops with the action
    /// waiting, logged, for the next run to ask again.
    fn can_answer(&self) -> bool;
    /// Shows `pending` and waits for the answer. The run drops this future when it is
    /// cancelled: an implementation must then stop waiting.
    async fn ask(&self, pending: &Pending) -> Answer;
}

/// A conversation of a session, ready to run: the session's own handle on the loop.
pub struct Running {
    pub(crate) conversation: wright_core::Conversation,
}

impl From<wright_core::Conversation> for Running {
    /// A conversation read back from its log (`Session::reopen`), to go on with.
    fn from(conversation: wright_core::Conversation) -> Self {
        Running { conversation }
    }
}

/// A conversation read back from its log, with the session it runs in.
pub struct Reopened {
    pub session: Session,
    pub conversation: Running,
    /// The line of the log cut off because it was torn (a crash mid-write), if any: the
    /// events before it are intact.
    pub torn_line: Option<usize>,
}

/// How a run ended, and what became of the session's working copy.
pub struct RunEnd {
    pub state: AgentState,
    /// Why it stopped.
    pub stop: StopReason,
    /// When the model server failed it: what the user can do, for the front end to word.
    pub remedy: Option<wright_llm::Remedy>,
    pub finished: Finished,
}

/// Where a front end hands side questions to a running conversation: each is answered
/// between two steps, from the conversation's context, without entering its history.
#[derive(Clone)]
pub struct Asides(wright_core::AsideSender);

/// The answer to a side question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AsideReply {
    Answered(String),
    /// The model could not answer: why.
    Unanswered(String),
    /// The conversation stopped first.
    Stopped,
}

impl Asides {
    /// Hands `question` to the run; `None` when the run has ended and takes none. The
    /// answer comes on the receiver (dropped when the run ends before it took it).
    pub fn ask(&self, question: &str) -> Option<oneshot::Receiver<Result<String, String>>> {
        let (reply, answer) = oneshot::channel();
        let aside = wright_core::Aside {
            question: question.to_string(),
            reply,
        };
        self.0.send(aside).ok().map(|()| answer)
    }
}

impl Running {
    /// The events logged so far.
    pub fn events(&self) -> &[Event] {
        self.conversation.events()
    }

    /// The history is condensed before the next request.
    /// Tells the model `text` before its next step (see `Conversation::tell_model`).
    pub fn tell(&mut self, text: String) -> Result<()> {
        Ok(self.conversation.tell_model(text)?)
    }

    pub fn condense_first(&mut self) {
        self.conversation.condense_first();
    }

    /// Who answers this conversation's risky actions.
    pub fn set_confirmer(&mut self, confirmer: Arc<dyn Confirmer>) {
        self.conversation.set_confirmer(Arc::new(Asking(confirmer)));
    }

    /// The inbox of side questions for the runs of this conversation.
    pub fn asides(&mut self) -> Asides {
        Asides(self.conversation.aside_inbox())
    }

    /// Where the reason of an interrupt goes: set it, then cancel the run, and the run
    /// logs it as its stop reason.
    pub fn interrupt_reason(&self) -> Arc<Mutex<Option<String>>> {
        self.conversation.interrupt_reason()
    }

    /// Answers `question` from the conversation's current context without a run (it is
    /// logged as a side question, and `observer` sees that event).
    pub async fn ask_aside(
        &mut self,
        question: &str,
        cancel: &CancellationToken,
        observer: &mut dyn Observer,
    ) -> Result<AsideReply> {
        if let Some(agent) = self.conversation.agent() {
            return Ok(AsideReply::Unanswered(external_refusal(agent, "/ask")));
        }
        let asked = self
            .conversation
            .ask_aside(question, cancel, &mut Relay(observer))
            .await?;
        Ok(match asked {
            Some(Ok(answer)) => AsideReply::Answered(answer),
            Some(Err(err)) => AsideReply::Unanswered(err.to_string()),
            None => AsideReply::Stopped,
        })
    }
}

impl Session {
    /// A new conversation of this session: the workspace map first when the settings
    /// want one, and the first look (with its reading and candidates) as they say.
    /// A new conversation of this session whose steps an external agent takes
    /// (`session.agent` names it on the start event): no workspace map, no first look,
    /// which are for wright's own model.
    pub fn begin_external(&self) -> Result<Running> {
        Ok(Running {
            conversation: self.start_conversation(None)?,
        })
    }

    pub fn begin(&self) -> Result<Running> {
        let mut conversation = self.start_conversation(self.workspace_map())?;
        self.begin_with_first_look(&mut conversation);
        Ok(Running { conversation })
    }

    /// Runs `running` (after `message`, if any) to its end within the session's limits,
    /// then finishes the session: the working copy handed over, the locks released.
    /// `observer` sees the events logged so far first. `title` names the commit when the
    /// log holds no task.
    pub async fn run(
        self,
        running: Running,
        message: Option<&str>,
        cancel: &CancellationToken,
        observer: &mut dyn Observer,
        title: &str,
    ) -> Result<RunEnd> {
        let limits = crate::limits(&self.settings);
        let (outcome, finished) = self
            .run_to_end(
                running.conversation,
                message,
                limits,
                cancel,
                &mut Relay(observer),
                title,
            )
            .await?;
        Ok(RunEnd {
            state: outcome.state,
            stop: outcome.stop,
            remedy: outcome.remedy,
            finished,
        })
    }
}

/// A front end's observer as the loop's.
pub(crate) struct Relay<'a>(pub(crate) &'a mut dyn Observer);

impl wright_core::Observer for Relay<'_> {
    fn event(&mut self, event: &Event) {
        self.0.event(event);
    }
    fn delta(&mut self, delta: &StreamDelta) {
        self.0.delta(delta);
    }
}

/// A front end's confirmer as the loop's.
struct Asking(Arc<dyn Confirmer>);

#[async_trait::async_trait]
impl wright_core::confirm::Confirmer for Asking {
    fn can_answer(&self) -> bool {
        self.0.can_answer()
    }
    async fn ask(&self, pending: &Pending) -> Answer {
        self.0.ask(pending).await
    }
}

/// Why wright cannot do `what` on a conversation an external agent ran: no model of
/// wright's holds its history, and the agent's own session is not wright's to drive
/// apart from its prompt.
pub fn external_refusal(agent: &str, what: &str) -> String {
    format!(
        "this conversation was run by the external agent {agent} (over ACP), not by wright's own loop: {what} is not possible on it — wright holds no model and no history of its own for it; start a new conversation (`wright run --agent {agent} TASK`), or one of wright's own"
    )
}
