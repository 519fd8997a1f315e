//! The first look: before the model's first step, wright itself runs the project's test
//! command (the one the workspace map found) in the sandbox, so the first thing a small
//! model reads is what fails and where, instead of guessing paths. It is logged as an
//! action and observation of the environment (never of the agent: it does not count as
//! the agent having acted, nor towards a loop), and rendered into the first user message,
//! so the prefix every later request extends is fixed before step 1.

use super::calls::run_watched;
use super::*;

/// The call id of the first look, distinct from every id a model or wright gives a call.
pub(crate) const FIRST_LOOK_CALL: &str = "first-look";
/// The first look gets at most this long: a slow suite must not eat the run's time.
pub(super) const FIRST_LOOK_TIMEOUT_SECS: u64 = 60;

impl Conversation {
    /// Runs `command` in the terminal before the first step of the next `run`.
    pub fn look_first(&mut self, command: String) {
        self.first_look = Some(command);
    }

    /// Whether the model is asked apart which line causes the first look's failure.
    pub fn read_first_failure(&mut self, on: bool) {
        self.read_first_failure = on;
    }

    /// Runs the first look, if one is asked for and the terminal is there. A cancelled
    /// look is logged as such and the run goes on to its own end.
    pub(super) async fn run_first_look(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
    ) -> Result<(), StoreError> {
        let Some(command) = self.first_look.take() else {
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
            && self.try_candidates
            && self
                .try_versions(FIRST_LOOK_CALL, &output, &command, observer, cancel)
                .await?;
        if failed && !passed && self.read_first_failure {
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
}
