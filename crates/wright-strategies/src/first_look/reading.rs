//! A failure read apart (`--reading`): a small model that sees a failing test with the code
//! under test in front of it still rarely names the wrong line while it must answer with
//! a tool call, yet names it when asked plainly. So, when the first look fails and its
//! first failure's line calls code in another file of the workspace, wright asks the
//! model in a request of its own — no tools, no history, no constraint, greedy, a short
//! answer — "which line of that file causes this failure?", logs the question and the
//! answer as a `reading` event, and the history shows the answer right after the failure,
//! in the first message. It is made once, before the first step, so the prefix every
//! later request extends is fixed; a resumed run renders it from the log and asks nothing.

use wright_core::strategy::Context;
use wright_core::StoreError;
use wright_llm::ChatMessage;
use wright_llm::StreamDelta;
use wright_protocol::EventBody;
use wright_protocol::Reading;
use wright_protocol::Source;

/// The answer's tokens at most: a line quoted and a sentence about it.
const READING_TOKENS: u32 = 200;
/// The answer's characters kept, at most (a model may ramble past its sentence).
const READING_CHARS: usize = 600;

/// Asks the model apart about the failing output of `call_id` (a run of `command`), and
/// logs what it answered, or why it could not. Nothing is asked when the output does not
/// point at code under test in another file, or there is no workspace to read it from;
/// only a failure to write the log is an `Err`.
pub(super) async fn read_failure(
    cx: &mut Context<'_>,
    call_id: &str,
    output: &str,
    command: &str,
) -> Result<(), StoreError> {
    let asked = {
        let view = cx.view();
        let last_change = view.events().iter().find_map(|event| match &event.body {
            EventBody::Start(start) => start.last_change.as_deref(),
            _ => None,
        });
        view.workspace()
            .and_then(|workspace| {
                wright_tools::failure::question(output, workspace, command, last_change)
            })
            .map(|question| (question, view.client().for_words(READING_TOKENS)))
    };
    let Some((question, client)) = asked else {
        return Ok(());
    };
    let cancel = cx.run_token().clone();
    let messages = [ChatMessage::User {
        content: question.text.clone(),
    }];
    let body = client.request_body(&messages, &[]);
    let mut ignore = |_: StreamDelta| {};
    let reply = tokio::select! {
        reply = client.complete_body(body, "reading", &mut ignore) => reply,
        // Stopped before the first step: the run's own loop says why.
        _ = cancel.cancelled() => return Ok(()),
    };
    let (answer, failed, usage) = match reply {
        Ok(response) => {
            let answer = clipped(response.text.trim());
            let failed = answer
                .is_empty()
                .then(|| "the model answered nothing in words".to_string());
            (answer, failed, response.usage.unwrap_or_default())
        }
        Err(err) => (String::new(), Some(err.to_string()), Default::default()),
    };
    let answer = cx.mask(&answer);
    cx.count_usage(&usage);
    cx.log(
        Source::Environment,
        EventBody::Reading(Reading {
            call_id: call_id.to_string(),
            path: question.path,
            question: question.text,
            answer,
            failed,
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            cached_tokens: usage.cached_tokens,
            destination: wright_llm::destination(&client.config().base_url),
        }),
    )
}

/// `answer` cut to `READING_CHARS` at a sentence's or word's end, marked when cut, on one
/// paragraph (the history shows it inside brackets).
fn clipped(answer: &str) -> String {
    let flat = answer.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= READING_CHARS {
        return flat;
    }
    let cut: String = flat.chars().take(READING_CHARS).collect();
    let end = cut
        .rfind(". ")
        .map(|at| at + 1)
        .or_else(|| cut.rfind(' '))
        .unwrap_or(cut.len());
    format!("{} …", &cut[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_answer_is_cut_at_a_sentence_and_put_on_one_line() {
        assert_eq!(
            clipped("The line is\n`x = 1`.\n\nIt is wrong."),
            "The line is `x = 1`. It is wrong."
        );
        let long = format!(
            "{} Second sentence goes on and on.",
            "word ".repeat(130).trim()
        );
        let cut = clipped(&format!("First. {long}"));
        assert!(cut.ends_with(" …"), "{cut}");
        assert!(cut.chars().count() <= READING_CHARS + 2, "{cut}");
    }
}
