//! A request asked apart from the conversation (no tools, no history but the messages
//! given): a version of a function or of a file, a check of a task. Its tokens count in
//! the run's usage; a failed request is an answer saying why, not an error, so the try
//! it was for is logged as not tried.

use wright_core::strategy::Context;
use wright_llm::ChatMessage;
use wright_llm::StreamDelta;

/// One answer to a request asked apart.
pub(crate) struct Apart {
    pub text: String,
    pub usage: wright_llm::TokenUsage,
    /// Why the request failed, when it did (then `text` is empty).
    pub failed: Option<String>,
}

/// Sends `messages` apart through `client`; `None` when the run is cancelled meanwhile.
pub(crate) async fn ask_apart(
    cx: &mut Context<'_>,
    client: &wright_llm::Client,
    messages: &[ChatMessage],
) -> Option<Apart> {
    let body = client.request_body(messages, &[]);
    let mut ignore = |_: StreamDelta| {};
    let cancel = cx.run_token().clone();
    let reply = tokio::select! {
        reply = client.complete_body(body, "candidate", &mut ignore) => reply,
        _ = cancel.cancelled() => return None,
    };
    let answer = match reply {
        Ok(response) => Apart {
            text: response.text,
            usage: response.usage.unwrap_or_default(),
            failed: None,
        },
        Err(err) => Apart {
            text: String::new(),
            usage: Default::default(),
            failed: Some(err.to_string()),
        },
    };
    cx.count_usage(&answer.usage);
    Some(answer)
}
