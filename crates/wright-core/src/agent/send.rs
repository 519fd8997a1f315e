//! Sending one step's request: each retry logged as it starts, and a constrained request
//! the server refuses sent again without its constraint. That changes the request once,
//! said once (a retry event), and holds for the rest of the conversation: every later
//! request extends the unconstrained one byte for byte.

use super::*;

/// A step's reply (None when cancelled) and the size of the body that got it.
type Sent = (Option<Result<Response, LlmError>>, usize);

impl Conversation {
    pub(super) async fn send(
        &mut self,
        body: Vec<u8>,
        step: u32,
        cancel: &CancellationToken,
        observer: &mut dyn Observer,
    ) -> Result<Sent, StoreError> {
        let first_len = body.len();
        let reply = self.send_once(body, step, cancel, observer).await?;
        let constraint = self.client.config().constraint.as_ref().map(|c| c.kind);
        let refused = match (&reply, constraint) {
            (Some(Err(err)), Some(kind)) => err.refusal().map(|message| (kind, message)),
            _ => None,
        };
        let Some((kind, message)) = refused else {
            return Ok((reply, first_len));
        };
        let reason = format!(
            "the server refused the request with {} ({message}); it is sent again without it, as is every request of this conversation",
            kind.describe()
        );
        self.client.set_constraint(None);
        self.append(
            observer,
            Source::Environment,
            EventBody::Retry {
                step,
                attempt: 1,
                reason: reason.clone(),
            },
        )?;
        observer.delta(&StreamDelta::Retrying { attempt: 1, reason });
        let messages = render_history(self.log.events());
        let body = self.client.request_body(&messages, &self.request_tools);
        let len = body.len();
        let reply = self.send_once(body, step, cancel, observer).await?;
        Ok((reply, len))
    }

    async fn send_once(
        &mut self,
        body: Vec<u8>,
        step: u32,
        cancel: &CancellationToken,
        observer: &mut dyn Observer,
    ) -> Result<Option<Result<Response, LlmError>>, StoreError> {
        let mut unlogged: Option<StoreError> = None;
        // What the model writes is shown as it comes: masked as its log will be.
        let mut text = wright_tools::MaskStream::new(self.masker.clone());
        let mut reasoning = wright_tools::MaskStream::new(self.masker.clone());
        let mut arguments = wright_tools::MaskStream::new(self.masker.clone());
        let reply: Option<Result<Response, LlmError>> = {
            let log = &mut self.log;
            // Each retry is an event too, logged when it starts (`--json` shows it).
            let mut on_delta = |delta: StreamDelta| {
                if let StreamDelta::Retrying { attempt, reason } = &delta {
                    let retry = EventBody::Retry {
                        step,
                        attempt: *attempt,
                        reason: reason.clone(),
                    };
                    match log.append(Source::Environment, retry) {
                        Ok(event) => observer.event(event),
                        Err(err) => unlogged = unlogged.take().or(Some(err)),
                    }
                }
                let delta = match delta {
                    StreamDelta::Text(piece) => StreamDelta::Text(text.push_text(&piece)),
                    StreamDelta::Reasoning(piece) => {
                        StreamDelta::Reasoning(reasoning.push_text(&piece))
                    }
                    StreamDelta::ToolCallArguments(piece) => {
                        StreamDelta::ToolCallArguments(arguments.push_text(&piece))
                    }
                    other @ (StreamDelta::ToolCallStarted { .. }
                    | StreamDelta::PromptProgress(_)
                    | StreamDelta::Retrying { .. }) => other,
                };
                // A piece held back whole (it may begin a secret) comes with the next.
                let held = matches!(
                    &delta,
                    StreamDelta::Text(piece)
                        | StreamDelta::Reasoning(piece)
                        | StreamDelta::ToolCallArguments(piece) if piece.is_empty()
                );
                if !held {
                    observer.delta(&delta);
                }
            };
            let tag = step.to_string();
            tokio::select! {
                result = self.client.complete_body(body, &tag, &mut on_delta) => Some(result),
                _ = cancel.cancelled() => None,
            }
        };
        for (rest, wrap) in [
            (
                reasoning.finish_text(),
                StreamDelta::Reasoning as fn(String) -> StreamDelta,
            ),
            (text.finish_text(), StreamDelta::Text),
            (arguments.finish_text(), StreamDelta::ToolCallArguments),
        ] {
            if !rest.is_empty() {
                observer.delta(&wrap(rest));
            }
        }
        match unlogged {
            Some(err) => Err(err),
            None => Ok(reply),
        }
    }
}
