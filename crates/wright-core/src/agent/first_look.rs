//! The first look: before the model's first step, wright itself runs the project's test
//! command (the one the workspace map found) in the sandbox, so the first thing a small
//! model reads is what fails and where, instead of guessing paths. It is logged as an
//! action and observation of the environment (never of the agent: it does not count as
//! the agent having acted, nor towards a loop), and rendered into the first user message,
//! so the prefix every later request extends is fixed before step 1. Its command is run
//! again the same way later (`run_in_root`: from the workspace's root, in a bash of its
//! own) by the versions tried and by the check of the work (`Retest` in `wright-strategies`).
//!
//! A failure read apart (`--reading`): a small model that sees a failing test with the code
//! under test in front of it still rarely names the wrong line while it must answer with
//! a tool call, yet names it when asked plainly. So, when the first look fails and its
//! first failure's line calls code in another file of the workspace, wright asks the
//! model in a request of its own — no tools, no history, no constraint, greedy, a short
//! answer — "which line of that file causes this failure?", logs the question and the
//! answer as a `reading` event, and the history shows the answer right after the failure,
//! in the first message. It is made once, before the first step, so the prefix every
//! later request extends is fixed; a resumed run renders it from the log and asks nothing.

use super::calls::run_watched;
use super::Conversation;
use super::Observer;
use crate::store::StoreError;
use tokio_util::sync::CancellationToken;
use wright_llm::ChatMessage;
use wright_llm::StreamDelta;
use wright_protocol::EventBody;
use wright_protocol::Reading;
use wright_protocol::Source;
use wright_tools::ToolError;

/// The call id of the first look, distinct from every id a model or wright gives a call.
pub const FIRST_LOOK_CALL: &str = "first-look";
/// The first look gets at most this long: a slow suite must not eat the run's time.
pub(super) const FIRST_LOOK_TIMEOUT_SECS: u64 = 60;

impl Conversation {
    /// Runs `command` in the terminal before the first step of the next `run`.
    pub fn look_first(&mut self, command: String) {
        self.first_look_plan.first_look = Some(command);
    }

    /// Whether the model is asked apart which line causes the first look's failure.
    pub fn read_first_failure(&mut self, on: bool) {
        self.first_look_plan.read_first_failure = on;
    }

    /// Runs the first look, if one is asked for and the terminal is there. A cancelled
    /// look is logged as such and the run goes on to its own end.
    pub(super) async fn run_first_look(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
    ) -> Result<(), StoreError> {
        let Some(command) = self.first_look_plan.first_look.take() else {
            return Ok(());
        };
        let Some(terminal) = self.tools.get("terminal").cloned() else {
            return Ok(());
        };
        let arguments = serde_json::json!({
            "command": command,
            "timeout": FIRST_LOOK_TIMEOUT_SECS,
        });
        self.append(
            observer,
            Source::Environment,
            EventBody::Action {
                step: 0,
                call_id: FIRST_LOOK_CALL.to_string(),
                tool: terminal.name().to_string(),
                arguments: arguments.clone(),
                // wright's own command, run before the model's first step: never asked.
                risk: None,
                risk_reason: None,
            },
        )?;
        let (output, is_error, exit_code) = match run_watched(
            terminal.as_ref(),
            &arguments,
            cancel,
            observer,
            self.masker.clone(),
        )
        .await
        {
            Some(Ok(output)) => (output.text, output.is_error, output.exit_code),
            Some(Err(ToolError::Model(message) | ToolError::Fatal(message))) => {
                (message, true, None)
            }
            None => (
                format!("This call did not finish: {}.", self.cancel_cause()),
                true,
                None,
            ),
        };
        let failed = exit_code.is_some_and(|code| code != 0);
        self.append(
            observer,
            Source::Environment,
            EventBody::Observation {
                call_id: FIRST_LOOK_CALL.to_string(),
                tool: terminal.name().to_string(),
                output: output.clone(),
                is_error,
                exit_code,
            },
        )?;
        // A version checked to pass says more than a reading: then none is asked for.
        let passed = failed
            && self.first_look_plan.try_candidates
            && self
                .try_versions(FIRST_LOOK_CALL, &output, &command, observer, cancel)
                .await?;
        if failed && !passed && self.first_look_plan.read_first_failure {
            self.read_failure(FIRST_LOOK_CALL, &output, &command, observer, cancel)
                .await?;
        }
        Ok(())
    }

    /// Runs `command` in the terminal, from the workspace's root: its output (the exit
    /// note taken off) and exit code; `None` when there is no terminal or it was cancelled.
    pub(crate) async fn run_in_root(
        &self,
        command: &str,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
    ) -> Option<(String, Option<i32>)> {
        let terminal = self.tools.get("terminal").cloned()?;
        let arguments = serde_json::json!({
            "command": in_root(command, &self.workspace_root()),
            "timeout": FIRST_LOOK_TIMEOUT_SECS,
        });
        let ran = run_watched(
            terminal.as_ref(),
            &arguments,
            cancel,
            observer,
            self.masker.clone(),
        )
        .await?;
        Some(match ran {
            Ok(output) => (
                without_exit_note(&output.text, output.exit_code),
                output.exit_code,
            ),
            Err(ToolError::Model(message) | ToolError::Fatal(message)) => (message, None),
        })
    }
}

/// `output` without the terminal's note of a non-zero exit code at its end: the exit code
/// is logged apart, and the runner's own last line ("FAILED (failures=1)") is what says
/// most.
fn without_exit_note(output: &str, exit_code: Option<i32>) -> String {
    let text = output.trim_end();
    exit_code
        .and_then(|code| text.strip_suffix(&format!("[exit code {code}]")))
        .unwrap_or(text)
        .trim_end()
        .to_string()
}

/// The check as the terminal runs it: in a bash of its own, so the aliases and functions
/// of the model's shell do not apply (its exported variables, a virtualenv's, do), and in
/// the workspace's root, whatever directory the model's shell is in — where the first look
/// ran it.
fn in_root(command: &str, root: &std::path::Path) -> String {
    let script = format!(
        "cd -- {} && {command}",
        wright_tools::shell_quote(&root.display().to_string())
    );
    format!(
        "bash --noprofile --norc -c {}",
        wright_tools::shell_quote(&script)
    )
}

/// The answer's tokens at most: a line quoted and a sentence about it.
const READING_TOKENS: u32 = 200;
/// The answer's characters kept, at most (a model may ramble past its sentence).
const READING_CHARS: usize = 600;

impl Conversation {
    /// Asks the model apart about the failing output of `call_id` (a run of `command`), and
    /// logs what it answered, or why it could not. Nothing is asked when the output does
    /// not point at code under test in another file, or there is no workspace to read it
    /// from; only a failure to write the log is an `Err`.
    pub(super) async fn read_failure(
        &mut self,
        call_id: &str,
        output: &str,
        command: &str,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
    ) -> Result<(), StoreError> {
        let Some(workspace) = &self.workspace else {
            return Ok(());
        };
        let last_change = self
            .start_event()
            .and_then(|start| start.last_change.clone());
        let Some(question) =
            wright_tools::failure::question(output, workspace, command, last_change.as_deref())
        else {
            return Ok(());
        };
        let client = self.client.for_words(READING_TOKENS);
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
        let answer = match &self.masker {
            Some(masker) => masker.mask(&answer),
            None => answer,
        };
        self.add_to_totals(&usage);
        self.append(
            observer,
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
        )?;
        Ok(())
    }
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
    fn the_check_runs_in_the_root_in_a_shell_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("it's a \"root\"");
        std::fs::create_dir(&root).unwrap();
        let root = root.canonicalize().unwrap();
        let ran = std::process::Command::new("bash")
            .args([
                "-c",
                &format!(
                    "shopt -s expand_aliases; alias pwd='echo fake'; cd /; {}",
                    in_root("pwd", &root)
                ),
            ])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&ran.stdout).trim_end(),
            root.display().to_string()
        );
    }
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
