//! Tasks with no failing test (`[assist]` piece `file-versions`): "add an option
//! --limit", "the default port must be 3000, overridable by PORT". When the first look
//! found the repository's tests passing, a small model cannot drive the long view-edit
//! loop such a task takes, but it can often write a short file anew (Aider's "whole"
//! format) and a small check of what the task asks (Agentless's reproduction test). So,
//! before the first step, wright finds the file(s) the task is about (`localise`: names
//! and identifiers of the task in the files' names and texts; configuration files —
//! JSON, TOML, YAML, `.env`, config modules — are files like others), asks apart for a
//! check of the requested behaviour (a short shell script) and, in requests of their
//! own, for the file changed, whole. A check that already passes before any change is
//! discarded. Each version is put in place through the `file_editor`, the repository's
//! tests and the check are run in the sandbox, and the first version with which both pass
//! stays; the others are taken out again. When no check is left, or none passes with any
//! version, the first version that changed the file and kept the tests passing stays,
//! `unverified`: said so to the model and in the report.
//!
//! The check is wright's own: shown in the report as such (see `AccountAtFinish`), never
//! counted as the repository's tests, and never written into the workspace, so never
//! committed.
//!
//! Guarantees: every decision is a `candidate` event (a version of the whole file: an
//! empty `name`, the check in `check`), so the history shows a kept version as it shows
//! one of a failing function, and a resumed run asks nothing again (the log holds a
//! candidate or a step). A file is recorded before a version goes in (see
//! `first_look::version_try`), so a wright killed meanwhile has it put back on resume.

mod blocks;
mod check;
mod imports;
mod localise;
mod tries;
mod words;

use crate::first_look::version_try::put_back;
use crate::first_look::version_try::record_absent;
use crate::first_look::version_try::remove_check_file;
use crate::first_look::version_try::settled;
use crate::first_look::version_try::Before;
use crate::FIRST_LOOK_CALL;
use blocks::fenced;
use blocks::fenced_as;
use blocks::lang;
use blocks::with_ending;
use check::Check;
use localise::localise;
use std::time::Instant;
use wright_core::strategy::Context;
use wright_core::strategy::RunStart;
use wright_core::strategy::Strategy;
use wright_core::StoreError;
use wright_llm::ChatMessage;
use wright_protocol::Candidate;
use wright_protocol::CandidateOutcome;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_tools::Tool;
use wright_tools::Workspace;

/// Versions asked for of each file; checks asked for at most.
const TRIES_PER_FILE: usize = 2;
const CHECK_TRIES: usize = 2;
/// A file written whole must be short (the whole format is for small files).
const MAX_LINES: usize = 200;
const MAX_BYTES: usize = 12_000;
/// An answer's tokens: a file of up to 200 short lines.
const TOKENS: u32 = 2_000;
const TEMPERATURE: f32 = 0.7;

#[derive(Debug)]
pub struct FileVersions {
    on: bool,
    /// The log holds a candidate or a step of the agent: it is too late, or done.
    engaged: bool,
}

impl Default for FileVersions {
    fn default() -> Self {
        Self {
            on: true,
            engaged: false,
        }
    }
}

impl FileVersions {
    pub const NAME: &'static str = "file-versions";

    pub fn off() -> Self {
        Self {
            on: false,
            ..Self::default()
        }
    }
}

#[async_trait::async_trait]
impl Strategy for FileVersions {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn absorb(&mut self, event: &Event) {
        match &event.body {
            EventBody::Candidate(_) => self.engaged = true,
            EventBody::Action { .. } if event.source == Source::Agent => self.engaged = true,
            _ => {}
        }
    }

    async fn before_first_step(
        &mut self,
        cx: &mut Context<'_>,
        run: &RunStart,
    ) -> Result<(), StoreError> {
        if !self.on || self.engaged {
            return Ok(());
        }
        let Some(tests) = passing_first_look(cx.view().events()) else {
            return Ok(());
        };
        let (workspace, editor, task, client) = {
            let view = cx.view();
            let client = view.client().for_samples(TOKENS, TEMPERATURE);
            let editor = view.tools().get("file_editor").cloned();
            (view.workspace().cloned(), editor, view.task(), client)
        };
        let (Some(workspace), Some(editor)) = (workspace, editor) else {
            return Ok(());
        };
        let localised = localise(&workspace, &task);
        let files = localised.files;
        if files.is_empty() {
            return Ok(());
        }
        self.engaged = true;
        let asking = Asking {
            tests: &tests,
            client: &client,
            editor: editor.as_ref(),
            task: &task,
            until: run.max_time.map(|max_time| run.started + max_time / 2),
            new_words: localised.new_words,
        };
        let mut placing = Placing {
            workspace: workspace.clone(),
            record: cx.log_path().to_path_buf(),
            before: Vec::new(),
        };
        let checks = asking.checks(cx, &files[0], &mut placing).await?;
        tries::try_versions(cx, &asking, &files, &checks, &mut placing).await?;
        if !placing.before.is_empty() {
            settled(&placing.record);
        }
        Ok(())
    }
}

/// The first look's command, when it ran and passed: the repository's tests.
fn passing_first_look(events: &[Event]) -> Option<String> {
    let passed = events.iter().any(|event| {
        matches!(&event.body, EventBody::Observation { call_id, exit_code: Some(0), .. }
            if call_id == FIRST_LOOK_CALL)
    });
    if !passed {
        return None;
    }
    events.iter().find_map(|event| match &event.body {
        EventBody::Action {
            call_id, arguments, ..
        } if call_id == FIRST_LOOK_CALL && event.source == Source::Environment => arguments
            .get("command")
            .and_then(|c| c.as_str())
            .map(str::to_string),
        _ => None,
    })
}

/// What every request and try shares.
struct Asking<'a> {
    tests: &'a str,
    client: &'a wright_llm::Client,
    editor: &'a dyn Tool,
    task: &'a str,
    until: Option<Instant>,
    /// What the task names that the code lacks: a version that leaves it out most
    /// likely does not do the task (see `words`).
    new_words: words::NewWords,
}

/// One answer to a request asked apart.
type Answer = crate::apart::Apart;

impl Asking<'_> {
    fn out_of_time(&self, cx: &Context<'_>) -> bool {
        cx.run_token().is_cancelled() || self.until.is_some_and(|until| Instant::now() >= until)
    }

    /// Asks `question` apart (no tools, no history); `None` when cancelled meanwhile.
    async fn ask(&self, cx: &mut Context<'_>, question: &str) -> Option<Answer> {
        let messages = [ChatMessage::User {
            content: question.to_string(),
        }];
        crate::apart::ask_apart(cx, self.client, &messages).await
    }

    /// The checks of the task that fail before any change: up to `CHECK_TRIES` asked
    /// for, a test file in the repository's style first where there is one to follow,
    /// then a script (see `check`); each discarded one logged as a `not_tried` candidate
    /// saying why. A check file written meanwhile is in `placing`'s record first.
    async fn checks(
        &self,
        cx: &mut Context<'_>,
        (path, text): &(String, String),
        placing: &mut Placing,
    ) -> Result<Vec<Check>, StoreError> {
        let workspace = placing.workspace.clone();
        let files = crate::map::from_directory(&workspace).files;
        let example = check::test_example(&workspace, &files, path);
        let file_check = example.as_ref().and_then(|(example, example_text)| {
            let new = check::check_path(&workspace, example)?;
            let question =
                check::test_file_question(self.task, (path, text), (example, example_text), &new);
            Some((new, question, lang(example), example_text.clone()))
        });
        let script_question = check::script_question(
            self.task,
            (path, text),
            example.as_ref().map(|(p, t)| (p.as_str(), t.as_str())),
        );
        let mut kept = Vec::new();
        for n in 0..CHECK_TRIES {
            if self.out_of_time(cx) {
                break;
            }
            let as_file = match (n, &file_check) {
                (0, Some(file_check)) => Some(file_check),
                _ => None,
            };
            let question = as_file.map_or(script_question.as_str(), |(_, q, ..)| q.as_str());
            let Some(answer) = self.ask(cx, question).await else {
                break;
            };
            let written = match as_file {
                Some((new, _, lang, example)) => {
                    fenced_as(&answer.text, lang).map(|text| Check::TestFile {
                        text: with_ending(
                            imports::with_std_imports(
                                new,
                                &check::without_clashes(new, &text, example),
                            ),
                            "\n",
                        ),
                        path: new.clone(),
                    })
                }
                None => {
                    fenced(&answer.text, &["sh", "bash", "shell", "console"]).map(Check::Script)
                }
            };
            let why = match (&answer.failed, &written) {
                (Some(why), _) => why.clone(),
                (None, None) => "the answer wrote no check".to_string(),
                (None, Some(check)) => match self.run_check(cx, check, placing).await? {
                    Ran::Cancelled => break,
                    Ran::Exited(code) if code != 0 => {
                        kept.push(check.clone());
                        continue;
                    }
                    Ran::Exited(_) => {
                        "the check passes before any change, so it shows nothing: discarded"
                            .to_string()
                    }
                    Ran::Unfinished => "the check did not finish: discarded".to_string(),
                    Ran::NotRemoved(why) => {
                        let mut event = self.event(path, text, question, &answer, Some(check));
                        event.outcome = CandidateOutcome::NotTried { why };
                        cx.log(Source::Environment, EventBody::Candidate(event))?;
                        return Ok(Vec::new());
                    }
                },
            };
            let mut event = self.event(path, text, question, &answer, written.as_ref());
            event.outcome = CandidateOutcome::NotTried { why };
            cx.log(Source::Environment, EventBody::Candidate(event))?;
        }
        Ok(kept)
    }

    /// Runs `check`: a script as it is; a test file written in place (recorded first),
    /// the repository's tests run with it, and the file removed again.
    async fn run_check(
        &self,
        cx: &mut Context<'_>,
        check: &Check,
        placing: &mut Placing,
    ) -> Result<Ran, StoreError> {
        let ran = match check {
            Check::Script(script) => cx.run_in_root(&without_input(script)).await,
            Check::TestFile { path, text } => {
                let event = Candidate {
                    check: Some(text.clone()),
                    check_file: Some(path.clone()),
                    ..self.untried(path)
                };
                if !record_absent(&placing.record, &mut placing.before, &event) {
                    return Ok(Ran::NotRemoved(format!(
                        "{path} could not be recorded before it was written, so no check file went in"
                    )));
                }
                let create =
                    serde_json::json!({"command": "create", "path": path, "file_text": text});
                if let Err(err) = self.editor.run(&create).await {
                    return Ok(Ran::NotRemoved(format!(
                        "the check file {path} could not be written: {err}"
                    )));
                }
                let ran = cx.run_in_root(&without_input(self.tests)).await;
                if let Err(why) = remove_check_file(cx, path).await {
                    return Ok(Ran::NotRemoved(format!(
                        "wright's check file {path} could not be removed ({why}): no more tries"
                    )));
                }
                ran
            }
        };
        Ok(match ran {
            None => Ran::Cancelled,
            Some((_, Some(code))) => Ran::Exited(code),
            Some((_, None)) => Ran::Unfinished,
        })
    }

    /// Puts `new` in place of `old` in `path`, runs the tests, then the checks until one
    /// passes. It stays `Passed`, with that check, when the tests and a check pass and it
    /// leaves out no needed word of the task; `Unverified` when the tests pass, no check
    /// does and `keep.unchecked` says it may; else it is put back (`LeavesOut` when the
    /// tests passed but the task's words kept it from staying).
    async fn try_in_place<'c>(
        &self,
        cx: &mut Context<'_>,
        (path, old, new): (&str, &str, &str),
        checks: &'c [Check],
        placing: &mut Placing,
        keep: &Keep,
    ) -> Result<Tried<'c>, StoreError> {
        let edit = match old.is_empty() {
            true => serde_json::json!({"command": "create", "path": path, "file_text": new}),
            false => serde_json::json!({
                "command": "str_replace", "path": path, "old_str": old, "new_str": new,
            }),
        };
        if let Err(err) = self.editor.run(&edit).await {
            let why = format!("it could not be put in place: {err}");
            return Ok(Tried::just(CandidateOutcome::NotTried { why }));
        }
        let mut exit_code = match cx.run_in_root(self.tests).await {
            Some((_, Some(0))) => Some(0),
            Some((_, code)) => code.or(Some(-1)),
            None => None,
        };
        let tests_passed = exit_code == Some(0);
        let mut passed_by = None;
        if tests_passed {
            for check in checks {
                match self.run_check(cx, check, placing).await? {
                    Ran::Exited(0) => {
                        passed_by = Some(check);
                        break;
                    }
                    Ran::Exited(code) => exit_code = Some(code),
                    Ran::Unfinished | Ran::Cancelled => exit_code = None,
                    Ran::NotRemoved(why) => {
                        let outcome = put_back(self.editor, path, 1)
                            .await
                            .unwrap_or(CandidateOutcome::NotTried { why });
                        return Ok(Tried {
                            outcome,
                            by: Some(check),
                            tests_passed: false,
                        });
                    }
                }
            }
        }
        let stays = match (tests_passed, passed_by) {
            (true, Some(_)) if keep.coverage.missing_needed.is_empty() => {
                Some(CandidateOutcome::Passed)
            }
            (true, None) if keep.unchecked => Some(CandidateOutcome::Unverified),
            _ => None,
        };
        if let Some(outcome) = stays {
            return Ok(Tried {
                outcome,
                by: passed_by,
                tests_passed,
            });
        }
        if let Some(could_not) = put_back(self.editor, path, 1).await {
            return Ok(Tried::just(could_not));
        }
        let outcome = match (tests_passed, passed_by) {
            (true, Some(_)) => CandidateOutcome::LeavesOut {
                words: keep.coverage.missing_needed.clone(),
            },
            (true, None) if checks.is_empty() => CandidateOutcome::LeavesOut {
                words: keep.coverage.missing_needed.clone(),
            },
            _ => CandidateOutcome::Failed {
                exit_code: exit_code.filter(|code| *code != -1),
            },
        };
        Ok(Tried {
            outcome,
            by: passed_by,
            tests_passed,
        })
    }

    /// A try at `path` with nothing asked yet.
    fn untried(&self, path: &str) -> Candidate {
        Candidate {
            call_id: FIRST_LOOK_CALL.to_string(),
            path: path.to_string(),
            name: String::new(),
            command: self.tests.to_string(),
            question: String::new(),
            answer: String::new(),
            old_str: String::new(),
            new_str: None,
            imports: None,
            outcome: CandidateOutcome::NotTried { why: String::new() },
            prompt_tokens: 0,
            completion_tokens: 0,
            cached_tokens: None,
            destination: wright_llm::destination(&self.client.config().base_url),
            check: None,
            check_file: None,
        }
    }

    /// The event of a try at `path`, before what came of it.
    fn event(
        &self,
        path: &str,
        text: &str,
        question: &str,
        answer: &Answer,
        check: Option<&Check>,
    ) -> Candidate {
        Candidate {
            question: question.to_string(),
            answer: answer.text.clone(),
            old_str: text.to_string(),
            prompt_tokens: answer.usage.prompt_tokens,
            completion_tokens: answer.usage.completion_tokens,
            cached_tokens: answer.usage.cached_tokens,
            check: check.map(|check| check.text().to_string()),
            check_file: check.and_then(Check::path).map(str::to_string),
            ..self.untried(path)
        }
    }
}

/// What a version needs to stay besides the tests passing (see `try_in_place`).
struct Keep {
    /// What the files hold of the task's new words with it in place.
    coverage: words::Coverage,
    /// It stays, unverified, when the tests pass and no check does.
    unchecked: bool,
}

/// What came of a version put in place.
struct Tried<'c> {
    outcome: CandidateOutcome,
    /// The check it passed, or the one whose file could not be removed.
    by: Option<&'c Check>,
    /// The repository's tests passed with it (whatever the checks said).
    tests_passed: bool,
}

impl Tried<'_> {
    fn just(outcome: CandidateOutcome) -> Self {
        Self {
            outcome,
            by: None,
            tests_passed: false,
        }
    }
}

/// What came of running a check.
enum Ran {
    Exited(i32),
    /// It ran past its time.
    Unfinished,
    /// The run was cancelled meanwhile.
    Cancelled,
    /// A check file could not be recorded, written or removed: no more tries.
    NotRemoved(String),
}

/// The files the tries change and the check files they write, recorded beside the log
/// before they are (see `version_try`).
struct Placing {
    workspace: Workspace,
    record: std::path::PathBuf,
    before: Vec<Before>,
}

/// The request for a version of `path` (now `text`), whole; `earlier`, a file already
/// changed for the task (its path and new text), shown first so the version does the
/// rest of the task.
fn version_question(task: &str, path: &str, text: &str, earlier: Option<(&str, &str)>) -> String {
    let done = match earlier {
        Some((earlier, new)) => format!(
            "{earlier} is already changed for the task:\n```{}\n{new}\n```\n\n",
            lang(earlier)
        ),
        None => String::new(),
    };
    let rest = match earlier {
        Some(_) => "what the task still needs",
        None => "as the task asks",
    };
    let lang = lang(path);
    format!(
        "Task: {task}\n\n{done}{path}:\n```{lang}\n{text}\n```\n\nWrite {path} changed {rest}, whole, in one ```{lang} block. Change nothing else."
    )
}

/// The model's check as it is run: its input closed, so a line that reads it (a bare
/// `sh`, a `cat`, a program waiting for a file on its input) ends at once instead of
/// waiting until the terminal gives up. What is logged and shown is the check as written.
fn without_input(script: &str) -> String {
    format!("{{\n{script}\n}} < /dev/null")
}
