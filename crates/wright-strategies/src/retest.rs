//! The work checked by wright, not taken on the model's word (`--retest`, key
//! `run.retest`): when the first look's command failed, wright runs it again in the
//! sandbox after each edit of the code (a file the model edited that is not a test) and
//! when the model calls `finish`. After an edit, the verdict follows the edit's result —
//! it passes now, or still fails with its first failure — so a small model that made the
//! fix learns it without a step of its own, and one that did not sees what is left. A
//! `finish` while it still fails is sent back with the failure (`FINISHES_SENT_BACK`
//! times in a run); the next one ends the run as stopped (`ChecksFail`), never as
//! finished.
//!
//! When the first look passed (a task with no failing test), the repository's tests are
//! what must keep passing: a `finish` while they fail is sent back the same way, and once
//! wright kept a version of a file for the task (see `file_versions`), they run after each
//! edit of the code too, and an edit that makes them fail is undone. The 1.5B, handed a
//! settings module that did the task, renamed its constant in place, broke the module
//! that read it, and went in circles until it was stuck with the tests failing. Before a
//! version is kept, edits are not followed: a change may break the tests on its way
//! (a function renamed before its callers).
//!
//! Guarantees: each run of the check is logged as a `check` event, and everything the
//! strategy decides from is a fold over the log (the command: the first look's, when it
//! failed; the `finish` calls sent back since the run started; whether the check passes
//! now), so a resumed or forked conversation checks the same command and counts the same
//! finishes, and its user's new words earn the model as many tries again. The only state
//! kept apart is the file's text before an `undo_edit`, from just before the call runs to
//! just after, to put back what the undo took if it breaks a passing check.

use crate::FIRST_LOOK_CALL;
use serde_json::Value;
use wright_core::strategy::starts_a_run;
use wright_core::strategy::AtFinish;
use wright_core::strategy::Call;
use wright_core::strategy::Context;
use wright_core::strategy::Finish;
use wright_core::strategy::Strategy;
use wright_core::strategy::View;
use wright_core::StoreError;
use wright_protocol::Check;
use wright_protocol::CheckMoment;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::StopReason;

/// How many `finish` calls are sent back while the check fails; the one after ends the
/// run. Two, because a model that was told once often "finishes" again unchanged, and a
/// second telling with the failure quoted is where it fixes it, if ever.
const FINISHES_SENT_BACK: u32 = 2;

/// The first look's failing command, run again after edits of the code and at `finish`.
#[derive(Debug)]
pub struct Retest {
    /// Off: nothing is run again (`--retest off`), in its place among the strategies.
    on: bool,
    /// The `finish` calls of this run sent back (or refused) because the check failed.
    failed_finishes: u32,
    /// The call about to run and the text of the file its `undo_edit` changes, while the
    /// check passes: what wright puts back if the undo makes it fail.
    before_undo: Option<(String, String)>,
}

impl Default for Retest {
    fn default() -> Self {
        Self {
            on: true,
            failed_finishes: 0,
            before_undo: None,
        }
    }
}

impl Retest {
    pub const NAME: &'static str = "retest";

    /// In its place, running nothing.
    pub fn off() -> Self {
        Self {
            on: false,
            ..Self::default()
        }
    }

    /// Whether it runs the check at all.
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// The command checked at `finish`, when one is: the first look's.
    fn command(&self, events: &[Event]) -> Option<String> {
        self.on
            .then(|| first_look(events))
            .flatten()
            .map(|(command, _)| command)
    }

    /// The command run again after each edit of the code: the first look's when it
    /// failed, or when it passed and wright has kept a version for the task since.
    fn command_after_edits(&self, events: &[Event]) -> Option<String> {
        let (command, failed) = self.on.then(|| first_look(events)).flatten()?;
        (failed || kept_a_version(events)).then_some(command)
    }

    /// Runs the check and logs it; `None` when there is none to run, or it was cancelled
    /// (the run is ending: nothing is logged).
    async fn run_check(
        &self,
        cx: &mut Context<'_>,
        call_id: &str,
        moment: CheckMoment,
    ) -> Result<Option<Check>, StoreError> {
        let Some(command) = self.command(cx.view().events()) else {
            return Ok(None);
        };
        let Some((output, exit_code)) = cx.run_in_root(&command).await else {
            return Ok(None);
        };
        let shown = verdict(&cx.view(), &command, moment, exit_code, &output);
        let check = Check {
            call_id: call_id.to_string(),
            moment,
            command,
            exit_code,
            output,
            shown,
            undone: false,
        };
        cx.log(Source::Environment, EventBody::Check(check.clone()))?;
        Ok(Some(check))
    }

    /// Puts `before` back in `path` after an undo that made `command` fail where it passed
    /// (a whole-file `str_replace`, so the `file_editor` writes it, and may undo it), and
    /// runs `command` again: what the model is told of it; `None` when it could not.
    async fn redo(cx: &mut Context<'_>, path: &str, before: &str, command: &str) -> Option<String> {
        let (editor, now) = {
            let view = cx.view();
            let editor = view.tools().get("file_editor").cloned()?;
            let now = wright_tools::editable_text(view.workspace()?, path)
                .filter(|now| !now.is_empty())?;
            (editor, now)
        };
        let put_back = serde_json::json!({
            "command": "str_replace",
            "path": path,
            "old_str": now,
            "new_str": before,
        });
        editor.run(&put_back).await.ok()?;
        let again = run_again(cx, command).await;
        Some(format!(
            "\n[It passed before this undo_edit, so wright put back what it took: {path} is as it was before it, and {again}]"
        ))
    }

    /// Undoes the last edit of `path`, which made `command` fail where it passed — a small
    /// model that had the fix, from a version wright tried or its own edit, went on editing
    /// and broke it, then ran out of steps — and runs `command` again: what the model is
    /// told of it; `None` when the edit could not be undone (nothing changed then).
    async fn undo_regression(cx: &mut Context<'_>, path: &str, command: &str) -> Option<String> {
        let editor = cx.view().tools().get("file_editor").cloned()?;
        let undo = serde_json::json!({"command": "undo_edit", "path": path});
        editor.run(&undo).await.ok()?;
        let again = run_again(cx, command).await;
        Some(format!(
            "\n[It passed before this edit, so wright undid the edit: {path} is back as it was, and {again}]"
        ))
    }
}

#[async_trait::async_trait]
impl Strategy for Retest {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn checks_work(&self) -> bool {
        self.is_on()
    }

    fn absorb(&mut self, event: &Event) {
        match &event.body {
            EventBody::Check(check)
                if check.moment == CheckMoment::BeforeFinish && !check.passed() =>
            {
                self.failed_finishes += 1;
            }
            _ if starts_a_run(event) => self.failed_finishes = 0,
            _ => {}
        }
    }

    fn before_run(&mut self, view: &View<'_>, call: &Call<'_>) {
        // The text of the file an `undo_edit` of the code is about to change, while the
        // check passes. The 1.5B, told wright had undone its edit that broke a kept
        // version, called `undo_edit` itself — which took the version back — then edited
        // and undid in turn until it was stuck.
        self.before_undo = None;
        let undo = call.arguments["command"].as_str() == Some("undo_edit");
        if !undo || !edits_code(call.tool, call.arguments) || !passes_now(view.events()) {
            return;
        }
        if self.command_after_edits(view.events()).is_none() {
            return;
        }
        let text = view.workspace().and_then(|workspace| {
            wright_tools::editable_text(workspace, call.arguments["path"].as_str()?)
        });
        self.before_undo = text.map(|text| (call.call_id.to_string(), text));
    }

    async fn after_call(
        &mut self,
        cx: &mut Context<'_>,
        call: &Call<'_>,
    ) -> Result<(), StoreError> {
        let before_undo = self
            .before_undo
            .take()
            .filter(|(id, _)| id == call.call_id)
            .map(|(_, text)| text);
        if !edits_code(call.tool, call.arguments) {
            return Ok(());
        }
        let was_passing = passes_now(cx.view().events());
        let Some(command) = self.command_after_edits(cx.view().events()) else {
            return Ok(());
        };
        let Some((output, exit_code)) = cx.run_in_root(&command).await else {
            return Ok(());
        };
        let mut shown = verdict(
            &cx.view(),
            &command,
            CheckMoment::AfterEdit,
            exit_code,
            &output,
        );
        let regressed = was_passing && exit_code.is_some_and(|code| code != 0);
        let mut undone = false;
        if let (true, Some(path)) = (regressed, call.arguments["path"].as_str()) {
            let said = match before_undo {
                Some(before) => Self::redo(cx, path, &before, &command).await,
                None if call.arguments["command"].as_str() != Some("undo_edit") => {
                    Self::undo_regression(cx, path, &command).await
                }
                None => None,
            };
            if let Some(said) = said {
                shown.push_str(&said);
                undone = true;
            }
        }
        let check = Check {
            call_id: call.call_id.to_string(),
            moment: CheckMoment::AfterEdit,
            command,
            exit_code,
            output,
            shown,
            undone,
        };
        cx.log(Source::Environment, EventBody::Check(check))
    }

    async fn at_finish(
        &mut self,
        cx: &mut Context<'_>,
        finish: &Finish,
    ) -> Result<AtFinish, StoreError> {
        let Some(check) = self
            .run_check(cx, &finish.call_id, CheckMoment::BeforeFinish)
            .await?
        else {
            return Ok(AtFinish::Continue);
        };
        if check.passed() {
            return Ok(AtFinish::Continue);
        }
        // `absorb` counts it once it is read back from the log; counted here for this
        // decision.
        let finishes = self.failed_finishes + 1;
        if finishes > FINISHES_SENT_BACK {
            let stop = StopReason::ChecksFail {
                command: check.command.clone(),
                finishes,
            };
            return Ok(AtFinish::End {
                said: format!(
                    "{}\nThe run stops here, not finished: the work so far is kept.",
                    check.shown
                ),
                stop,
            });
        }
        let fix = match failed_first_look(cx.view().events()) {
            Some(_) => "The task is not done: fix the code so that it passes (do not weaken the tests), then call finish.",
            None => "The tests passed when the work began: the task is not done while they fail. Fix the code so that they pass again (do not weaken the tests), then call finish.",
        };
        Ok(AtFinish::SendBack(format!("{}\n{fix}", check.shown)))
    }
}

/// That the check passes now and what is left to do; `None` when there is no check (the
/// first look did not fail) or it does not pass.
/// That wright's own check passes now and what is left to do, when the check is on and
/// it passes.
pub fn check_passes_note(view: &View<'_>) -> Option<String> {
    view.checks()
        .then(|| passes_now_note(view.events()))
        .flatten()
}

fn passes_now_note(events: &[Event]) -> Option<String> {
    let command = failed_first_look(events)?;
    passes_now(events).then(|| {
        format!(
            "`{command}` passes now (its last run): the failure is fixed, nothing needs to change for it. If the task asks for nothing more, call finish."
        )
    })
}

/// Whether the check passed last: its last run passed, or, since it last ran, a version
/// wright tried passed and stayed. Before either, whether the first look passed.
fn passes_now(events: &[Event]) -> bool {
    events
        .iter()
        .rev()
        .find_map(|event| match &event.body {
            EventBody::Check(check) => Some(check.passed() || check.undone),
            EventBody::Candidate(candidate) => candidate.outcome.stays().then_some(true),
            _ => None,
        })
        .unwrap_or_else(|| first_look(events).is_some_and(|(_, failed)| !failed))
}

/// Whether wright kept a version for the task (it passed, or stayed unverified).
fn kept_a_version(events: &[Event]) -> bool {
    events.iter().any(
        |event| matches!(&event.body, EventBody::Candidate(candidate) if candidate.outcome.stays()),
    )
}

/// `command` run again after wright put a file back: what came of it, in words.
async fn run_again(cx: &mut Context<'_>, command: &str) -> String {
    match cx.run_in_root(command).await {
        Some((_, Some(0))) => {
            format!("`{command}` passes again. If the task asks for nothing more, call finish.")
        }
        Some((_, Some(code))) => format!("`{command}` still fails (exit {code})."),
        _ => format!("`{command}` did not finish."),
    }
}

/// What the model is shown of a check.
fn verdict(
    view: &View<'_>,
    command: &str,
    moment: CheckMoment,
    exit_code: Option<i32>,
    output: &str,
) -> String {
    let when = match moment {
        CheckMoment::AfterEdit => "again after this edit",
        CheckMoment::BeforeFinish => "before taking this finish",
    };
    match exit_code {
        Some(0) => {
            let count = wright_tools::failure::last_line(output)
                .map(|line| format!(" ({})", clip(line, 200)))
                .unwrap_or_default();
            format!("[wright ran `{command}` {when}: it passes now{count}. If the task asked for nothing more, call finish.]")
        }
        Some(code) => {
            let excerpt = match view.workspace() {
                Some(workspace) => wright_tools::failure::excerpt(output, workspace),
                None => clip(output, 2000),
            };
            // Tests that passed when the work began do not "still" fail.
            let fails = match failed_first_look(view.events()) {
                Some(_) => "it still fails",
                None => "it fails",
            };
            format!("[wright ran `{command}` {when}: {fails} (exit {code}):]\n{excerpt}")
        }
        None => format!(
            "[wright ran `{command}` {when}: it did not finish:]\n{}",
            clip(output, 500)
        ),
    }
}

/// The first look's command, when it ran and failed (exit code not 0).
fn failed_first_look(events: &[Event]) -> Option<String> {
    first_look(events)
        .filter(|(_, failed)| *failed)
        .map(|(command, _)| command)
}

/// The first look's command, when it ran to an end, and whether it failed.
fn first_look(events: &[Event]) -> Option<(String, bool)> {
    let command = events.iter().find_map(|e| match &e.body {
        EventBody::Action {
            call_id, arguments, ..
        } if e.source == Source::Environment && call_id == FIRST_LOOK_CALL => {
            arguments["command"].as_str().map(str::to_string)
        }
        _ => None,
    })?;
    let exit_code = events.iter().find_map(|e| match &e.body {
        EventBody::Observation {
            call_id, exit_code, ..
        } if call_id == FIRST_LOOK_CALL => Some(*exit_code),
        _ => None,
    })?;
    // One that did not finish (a timeout) shows neither a failure to fix nor tests to
    // keep passing.
    exit_code.map(|code| (command, code != 0))
}

/// Whether a call of `tool` with `arguments` changes a file of the code: an edit (not a
/// view) of a file that is not a test.
pub fn edits_code(tool: &str, arguments: &Value) -> bool {
    let edits = matches!(tool, "file_editor" | "str_replace_editor")
        && matches!(
            arguments["command"].as_str(),
            Some("str_replace" | "insert" | "create" | "undo_edit")
        );
    edits
        && arguments["path"]
            .as_str()
            .is_some_and(|path| !wright_tools::is_test_file(path))
}

/// `text` cut to `chars` characters.
fn clip(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_edits_of_the_code_are_checked() {
        let edit = |command: &str, path: &str| json!({"command": command, "path": path});
        assert!(edits_code("file_editor", &edit("str_replace", "export.py")));
        assert!(edits_code("file_editor", &edit("undo_edit", "src/lib.rs")));
        assert!(!edits_code("file_editor", &edit("view", "export.py")));
        assert!(!edits_code(
            "file_editor",
            &edit("str_replace", "test_export.py")
        ));
        assert!(!edits_code(
            "terminal",
            &json!({"command": "sed -i s/a/b/ x.py"})
        ));
    }
}
