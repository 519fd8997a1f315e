//! A side question (`/ask`): answered from the conversation's current context in a
//! request of its own — the history as the next step would send it, then the question —
//! and logged as a `side_question` event, which the history never renders. So the next
//! main request is byte for byte what it would have been without the question, and the
//! running task's prefix and plan are untouched.

use super::*;
use wright_llm::ChatMessage;
use wright_protocol::SideQuestion;

/// What the question is wrapped in: the model answers in words, about its own work.
pub const ASIDE: &str = "A side question from the user about your work so far. Answer it briefly in words, from what you know now; do not call a tool, and do not change your plan because of it. The task goes on afterwards as before.\n\nQuestion: ";

impl Conversation {
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
        self.totals.prompt_tokens += usage.prompt_tokens;
        self.totals.completion_tokens += usage.completion_tokens;
        self.totals.cached_tokens += usage.cached_tokens.unwrap_or(0);
        if let Some(price) = self.price {
            self.totals.cost += price.of(usage.prompt_tokens, usage.completion_tokens);
        }
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
