//! A side question (`/ask`): answered from the conversation's current context in a
//! request of its own — the history as the next step would send it, then the question —
//! and logged as a `side_question` event, which the history never renders. So the next
//! main request is byte for byte what it would have been without the question, and the
//! running task's prefix and plan are untouched.
//!
//! A front end that cannot wait for the run to end (the server) hands questions in
//! through an inbox (`aside_inbox`); the run answers them between two steps, so the
//! question never interrupts a request or a tool.

use super::Conversation;
use super::Observer;
use crate::history::render_history;
use crate::store::StoreError;
use tokio_util::sync::CancellationToken;
use wright_llm::ChatMessage;
use wright_llm::LlmError;
use wright_llm::StreamDelta;
use wright_protocol::EventBody;
use wright_protocol::SideQuestion;
use wright_protocol::Source;

/// What the question is wrapped in: the model answers in words, about its own work.
pub const ASIDE: &str = "A side question from the user about your work so far. Answer it briefly in words, from what you know now; do not call a tool, and do not change your plan because of it. The task goes on afterwards as before.\n\nQuestion: ";

/// A question handed to a running conversation, and where its answer goes (the model's
/// words, or why it could not answer).
pub struct Aside {
    pub question: String,
    pub reply: tokio::sync::oneshot::Sender<Result<String, String>>,
}

/// Where a front end hands questions to a running conversation.
pub type AsideSender = tokio::sync::mpsc::UnboundedSender<Aside>;

impl Conversation {
    /// The inbox of side questions for the runs of this conversation: each is answered
    /// between two steps.
    pub fn aside_inbox(&mut self) -> AsideSender {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        self.asides = Some(receiver);
        sender
    }

    /// Answers the questions waiting in the inbox, one by one.
    pub(super) async fn answer_asides(
        &mut self,
        cancel: &CancellationToken,
        observer: &mut dyn Observer,
    ) -> Result<(), StoreError> {
        while let Some(aside) = self.asides.as_mut().and_then(|inbox| inbox.try_recv().ok()) {
            let answer = match self.ask_aside(&aside.question, cancel, observer).await? {
                Some(Ok(answer)) => Ok(answer),
                Some(Err(err)) => Err(err.to_string()),
                None => Err("the run was stopped before the question was answered".into()),
            };
            // The asker may have gone: the answer is in the log all the same.
            let _ = aside.reply.send(answer);
        }
        Ok(())
    }

    /// Answers `question` beside the task: the answer, or why the model could not answer,
    /// or `None` when `cancel` came first (only a failure to write the log is an `Err`).
    pub async fn ask_aside(
        &mut self,
        question: &str,
        cancel: &CancellationToken,
        observer: &mut dyn Observer,
    ) -> Result<Option<Result<String, LlmError>>, StoreError> {
        let mut messages = render_history(self.log.events());
        messages.push(ChatMessage::User {
            content: format!("{ASIDE}{}", question.trim()),
        });
        // Words are wanted: no constraint holds this reply to a tool call.
        let mut client = self.client.clone();
        client.set_constraint(None);
        let body = client.request_body(&messages, &self.request_tools);
        let mut ignore = |_: StreamDelta| {};
        let reply = tokio::select! {
            reply = client.complete_body(body, "aside", &mut ignore) => Some(reply),
            _ = cancel.cancelled() => None,
        };
        let response = match reply {
            None => return Ok(None),
            Some(Ok(response)) => response,
            Some(Err(err)) => return Ok(Some(Err(err))),
        };
        let mut answer = response.text.trim().to_string();
        if answer.is_empty() && !response.tool_calls.is_empty() {
            let names: Vec<&str> = response
                .tool_calls
                .iter()
                .map(|call| call.function.name.as_str())
                .collect();
            answer = format!(
                "(the model answered with a tool call, {}, not in words; nothing was run)",
                names.join(", ")
            );
        }
        if let Some(masker) = &self.masker {
            answer = masker.mask(&answer);
        }
        let usage = response.usage.unwrap_or_default();
        self.add_to_totals(&usage);
        self.append(
            observer,
            Source::Environment,
            EventBody::SideQuestion(SideQuestion {
                question: question.trim().to_string(),
                answer: answer.clone(),
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
                cached_tokens: usage.cached_tokens,
                destination: wright_llm::destination(&client.config().base_url),
            }),
        )?;
        self.log.wait_sync().await?;
        Ok(Some(Ok(answer)))
    }
}
