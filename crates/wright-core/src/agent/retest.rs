//! The work checked by wright, not taken on the model's word (`--retest`, key
//! `run.retest`): when the first look's command failed, wright runs it again in the
//! sandbox after each edit of the code (a file the model edited that is not a test) and
//! when the model calls `finish`. After an edit, the verdict follows the edit's result —
//! it passes now, or still fails with its first failure — so a small model that made the
//! fix learns it without a step of its own, and one that did not sees what is left. A
//! `finish` while it still fails is sent back with the failure (`FINISHES_SENT_BACK`
//! times in a run); the next one ends the run as stopped (`ChecksFail`), never as
//! finished. Each run is logged as a `check` event, so a resumed run renders the same
//! history; a resumed run checks again (the command is found in the log), and its user's
//! new words earn the model as many tries again.

use super::calls::run_watched;
use super::first_look::FIRST_LOOK_CALL;
use super::first_look::FIRST_LOOK_TIMEOUT_SECS;
use super::*;
use wright_protocol::Check;
use wright_protocol::CheckMoment;

/// How many `finish` calls are sent back while the check fails; the one after ends the
/// run. Two, because a model that was told once often "finishes" again unchanged, and a
/// second telling with the failure quoted is where it fixes it, if ever.
const FINISHES_SENT_BACK: u32 = 2;

/// A call that ran without error, as the check after it needs it.
pub(super) struct Edit<'a> {
    pub call_id: &'a str,
    pub tool: &'a str,
    pub arguments: &'a Value,
    /// For an `undo_edit` while the check passed: the file's text before it.
    pub before_undo: Option<String>,
}

/// What a `finish` comes to once the check ran.
pub(super) enum FinishCheck {
    /// Nothing to check: no failing first look, or retest off.
    Unchecked,
    /// It passes now.
    Passed,
    /// It still fails: the finish is sent back with these words.
    SentBack(String),
    /// It still fails after `FINISHES_SENT_BACK` finishes: the run ends, not finished.
    Ends(String, StopReason),
}

impl Conversation {
    /// Whether the first look's failing command is run again after edits and before
    /// `finish` (on unless turned off).
    pub fn retest(&mut self, on: bool) {
        self.retest = on;
    }

    /// The command checked, when one is: the first look's, when it failed.
    pub(super) fn check_command(&self) -> Option<String> {
        if !self.retest {
            return None;
        }
        failed_first_look(self.log.events())
    }

    /// After a call that changed a file of the code (not a test) without error: the
    /// check, its verdict logged for the model to read after the call's result. An edit
    /// that makes it fail where it passed before is undone (see `undo_regression`).
    pub(super) async fn check_after_edit(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        edit: Edit<'_>,
    ) -> Result<(), StoreError> {
        let Edit {
            call_id,
            tool,
            arguments,
            before_undo,
        } = edit;
        if !edits_code(tool, arguments) {
            return Ok(());
        }
        let was_passing = self.check_passes_now();
        let Some(command) = self.check_command() else {
            return Ok(());
        };
        let Some((output, exit_code)) = self.run_in_root(&command, observer, cancel).await else {
            return Ok(());
        };
        let mut shown = self.verdict(&command, CheckMoment::AfterEdit, exit_code, &output);
        let regressed = was_passing && exit_code.is_some_and(|code| code != 0);
        let mut undone = false;
        if let (true, Some(path)) = (regressed, arguments["path"].as_str()) {
            let said = match before_undo {
                Some(before) => self.redo(path, &before, &command, observer, cancel).await,
                None if arguments["command"].as_str() != Some("undo_edit") => {
                    self.undo_regression(path, &command, observer, cancel).await
                }
                None => None,
            };
            if let Some(said) = said {
                shown.push_str(&said);
                undone = true;
            }
        }
        let check = Check {
            call_id: call_id.to_string(),
            moment: CheckMoment::AfterEdit,
            command,
            exit_code,
            output,
            shown,
            undone,
        };
        self.append(observer, Source::Environment, EventBody::Check(check))?;
        Ok(())
    }

    /// Whether the check passed last: its last run passed, or, since it last ran, a
    /// version wright tried passed and stayed. False before either (the first look failed).
    fn check_passes_now(&self) -> bool {
        self.log
            .events()
            .iter()
            .rev()
            .find_map(|event| match &event.body {
                EventBody::Check(check) => Some(check.passed() || check.undone),
                EventBody::Candidate(candidate) => {
                    (candidate.outcome == wright_protocol::CandidateOutcome::Passed).then_some(true)
                }
                _ => None,
            })
            .unwrap_or(false)
    }

    /// That the check passes now and what is left to do; `None` when there is no check or
    /// it does not pass.
    pub(crate) fn passes_now_note(&self) -> Option<String> {
        let command = self.check_command()?;
        self.check_passes_now().then(|| {
            format!(
                "`{command}` passes now (its last run): the failure is fixed, nothing needs to change for it. If the task asks for nothing more, call finish."
            )
        })
    }

    /// The text of the file an `undo_edit` of the code is about to change, while the check
    /// passes: what wright puts back if the undo makes it fail. The 1.5B, told wright had
    /// undone its edit that broke a kept version, called `undo_edit` itself — which took
    /// the version back — then edited and undid in turn until it was stuck.
    pub(super) fn text_before_undo(&self, tool: &str, arguments: &Value) -> Option<String> {
        let undo = arguments["command"].as_str() == Some("undo_edit");
        if !undo || !edits_code(tool, arguments) || !self.check_passes_now() {
            return None;
        }
        self.check_command()?;
        let workspace = self.workspace.as_ref()?;
        wright_tools::editable_text(workspace, arguments["path"].as_str()?)
    }

    /// Puts `before` back in `path` after an undo that made `command` fail where it passed
    /// (a whole-file `str_replace`, so the `file_editor` writes it, and may undo it), and
    /// runs `command` again: what the model is told of it; `None` when it could not.
    async fn redo(
        &self,
        path: &str,
        before: &str,
        command: &str,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let editor = self.tools.get("file_editor").cloned()?;
        let workspace = self.workspace.as_ref()?;
        let now = wright_tools::editable_text(workspace, path).filter(|now| !now.is_empty())?;
        let put_back = serde_json::json!({
            "command": "str_replace",
            "path": path,
            "old_str": now,
            "new_str": before,
        });
        editor.run(&put_back).await.ok()?;
        let again = self.run_again(command, observer, cancel).await;
        Some(format!(
            "\n[It passed before this undo_edit, so wright put back what it took: {path} is as it was before it, and {again}]"
        ))
    }

    /// `command` run again after wright put a file back: what came of it, in words.
    async fn run_again(
        &self,
        command: &str,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
    ) -> String {
        match self.run_in_root(command, observer, cancel).await {
            Some((_, Some(0))) => {
                format!("`{command}` passes again. If the task asks for nothing more, call finish.")
            }
            Some((_, Some(code))) => format!("`{command}` still fails (exit {code})."),
            _ => format!("`{command}` did not finish."),
        }
    }

    /// Undoes the last edit of `path`, which made `command` fail where it passed — a small
    /// model that had the fix, from a version wright tried or its own edit, went on editing
    /// and broke it, then ran out of steps — and runs `command` again: what the model is
    /// told of it; `None` when the edit could not be undone (nothing changed then).
    async fn undo_regression(
        &self,
        path: &str,
        command: &str,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let editor = self.tools.get("file_editor").cloned()?;
        let undo = serde_json::json!({"command": "undo_edit", "path": path});
        editor.run(&undo).await.ok()?;
        let again = self.run_again(command, observer, cancel).await;
        Some(format!(
            "\n[It passed before this edit, so wright undid the edit: {path} is back as it was, and {again}]"
        ))
    }

    /// When `finish` is called: the check, and whether the finish is taken.
    pub(super) async fn check_before_finish(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        call_id: &str,
    ) -> Result<FinishCheck, StoreError> {
        let Some(check) = self
            .run_check(observer, cancel, call_id, CheckMoment::BeforeFinish)
            .await?
        else {
            return Ok(FinishCheck::Unchecked);
        };
        if check.passed() {
            return Ok(FinishCheck::Passed);
        }
        self.failed_finishes += 1;
        let finishes = self.failed_finishes;
        if finishes > FINISHES_SENT_BACK {
            let stop = StopReason::ChecksFail {
                command: check.command.clone(),
                finishes,
            };
            return Ok(FinishCheck::Ends(
                format!(
                    "{}\nThe run stops here, not finished: the work so far is kept.",
                    check.shown
                ),
                stop,
            ));
        }
        Ok(FinishCheck::SentBack(format!(
            "{}\nThe task is not done: fix the code so that it passes (do not weaken the tests), then call finish.",
            check.shown
        )))
    }

    /// Runs the check and logs it; `None` when there is none to run, or it was cancelled
    /// (the run is ending: nothing is logged).
    async fn run_check(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        call_id: &str,
        moment: CheckMoment,
    ) -> Result<Option<Check>, StoreError> {
        let Some(command) = self.check_command() else {
            return Ok(None);
        };
        let Some((output, exit_code)) = self.run_in_root(&command, observer, cancel).await else {
            return Ok(None);
        };
        let shown = self.verdict(&command, moment, exit_code, &output);
        let check = Check {
            call_id: call_id.to_string(),
            moment,
            command,
            exit_code,
            output,
            shown,
            undone: false,
        };
        self.append(
            observer,
            Source::Environment,
            EventBody::Check(check.clone()),
        )?;
        Ok(Some(check))
    }

    /// Runs `command` in the terminal, from the workspace's root: its output (the exit
    /// note taken off) and exit code; `None` when there is no terminal or it was cancelled.
    pub(super) async fn run_in_root(
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

    /// What the model is shown of a check.
    fn verdict(
        &self,
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
                let excerpt = match &self.workspace {
                    Some(workspace) => wright_tools::failure::excerpt(output, workspace),
                    None => clip(output, 2000),
                };
                format!("[wright ran `{command}` {when}: it still fails (exit {code}):]\n{excerpt}")
            }
            None => format!(
                "[wright ran `{command}` {when}: it did not finish:]\n{}",
                clip(output, 500)
            ),
        }
    }
}

/// The first look's command, when it ran and failed (exit code not 0).
fn failed_first_look(events: &[Event]) -> Option<String> {
    let command = events.iter().find_map(|e| match &e.body {
        EventBody::Action {
            call_id, arguments, ..
        } if e.source == Source::Environment && call_id == FIRST_LOOK_CALL => {
            arguments["command"].as_str().map(str::to_string)
        }
        _ => None,
    })?;
    let failed = events.iter().any(|e| {
        matches!(&e.body, EventBody::Observation { call_id, exit_code: Some(code), .. }
            if call_id == FIRST_LOOK_CALL && *code != 0)
    });
    failed.then_some(command)
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

/// Whether a call of `tool` with `arguments` changes a file of the code: an edit (not a
/// view) of a file that is not a test.
pub(crate) fn edits_code(tool: &str, arguments: &Value) -> bool {
    let edits = matches!(tool, "file_editor" | "str_replace_editor")
        && matches!(
            arguments["command"].as_str(),
            Some("str_replace" | "insert" | "create" | "undo_edit")
        );
    edits
        && arguments["path"]
            .as_str()
            .is_some_and(|path| !crate::review::is_test_file(path))
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
}
