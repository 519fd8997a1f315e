//! How the loop asks its strategies (see `crate::strategy`): each hook goes to every
//! strategy in order, each caught up with the log first, until one decides. The
//! strategies are taken out of the conversation while they are asked, so that they can
//! be given a narrow view of it.

use super::types::run_watched;
use super::Conversation;
use super::Observer;
use super::StepEnd;
use crate::store::StoreError;
use crate::strategy::AfterStep;
use crate::strategy::AtFinish;
use crate::strategy::BeforeCall;
use crate::strategy::Call;
use crate::strategy::Context;
use crate::strategy::Finish;
use crate::strategy::Ran;
use crate::strategy::Strategies;
use crate::strategy::Strategy;
use crate::strategy::Unanswered;
use crate::strategy::View;
use tokio_util::sync::CancellationToken;
use wright_tools::ToolError;

impl Conversation {
    /// Asks `strategy` too, after those already registered (one of the same name is
    /// replaced in its place). It reads the whole log before it is first asked.
    pub fn add_strategy(&mut self, strategy: Box<dyn Strategy>) {
        self.strategies.add(strategy);
    }

    /// Stops asking the strategy named `name`.
    pub fn remove_strategy(&mut self, name: &str) {
        self.strategies.remove(name);
    }

    /// The strategy named `name`, if it is registered and of type `T` (caught up with the
    /// log).
    pub fn strategy_mut<T: 'static>(&mut self, name: &str) -> Option<&mut T> {
        self.strategies
            .named(name, self.log.events())?
            .as_any_mut()?
            .downcast_mut::<T>()
    }

    /// What the strategies add to the report of a run that ended.
    pub(super) fn add_to_outcome(&self, outcome: &mut super::Outcome) {
        self.strategies.add_to_outcome(outcome);
    }

    /// The first answer a strategy gives to a hook that only reads.
    fn ask_strategies<R>(
        &mut self,
        mut hook: impl FnMut(&mut dyn Strategy, &View<'_>) -> Option<R>,
    ) -> Option<R> {
        let mut strategies = std::mem::take(&mut self.strategies);
        let mut answer = None;
        {
            let checks = strategies.checks();
            let view = View {
                conversation: self,
                checks,
            };
            for at in 0..strategies.len() {
                let strategy = strategies.caught_up_at(at, self.log.events());
                answer = hook(strategy, &view);
                if answer.is_some() {
                    break;
                }
            }
        }
        self.strategies = strategies;
        answer
    }

    /// The constraint this step's request is held to instead of the client's, if a
    /// strategy narrows it.
    pub(super) fn shaped_constraint(&mut self) -> Option<wright_llm::constrain::ActiveConstraint> {
        self.ask_strategies(|strategy, view| strategy.shape_request(view))
    }

    /// What a reply without any tool call comes to (`Pass`: the loop's own way).
    pub(super) fn without_call(&mut self, text: &str) -> Unanswered {
        self.ask_strategies(|strategy, view| match strategy.without_call(view, text) {
            Unanswered::Pass => None,
            decided => Some(decided),
        })
        .unwrap_or(Unanswered::Pass)
    }

    /// The call `call` runs as instead, if a strategy reroutes it.
    pub(super) fn rerouted(&mut self, call: &Call<'_>) -> Option<crate::strategy::Rerouted> {
        self.ask_strategies(|strategy, view| strategy.reroute(view, call))
    }

    /// Why a call's checked arguments are not run, if they are not.
    pub(super) fn arguments_refused(&mut self, call: &Call<'_>) -> Option<String> {
        self.ask_strategies(|strategy, view| strategy.check_arguments(view, call))
    }

    /// Why a call is refused before it runs, if it is.
    pub(super) fn refused(&mut self, call: &Call<'_>) -> Option<String> {
        self.ask_strategies(|strategy, view| match strategy.before_call(view, call) {
            BeforeCall::Run => None,
            BeforeCall::Refuse(words) => Some(words),
        })
    }

    /// Tells the strategies a call is about to run.
    pub(super) fn before_run(&mut self, call: &Call<'_>) {
        self.ask_strategies(|strategy, view| {
            strategy.before_run(view, call);
            None::<()>
        });
    }

    /// The notes for the result of a call that ran, each on a line of its own.
    pub(super) fn annotations(&mut self, call: &Call<'_>, ran: Ran) -> Vec<String> {
        let mut notes = Vec::new();
        self.ask_strategies(|strategy, view| {
            notes.extend(strategy.annotate(view, call, ran));
            None::<()>
        });
        notes
    }

    /// What the strategies make of a `finish`: the first that does not let it through.
    /// Those after wright's own check are told whether it ran and passed.
    pub(super) async fn strategies_at_finish(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        call_id: &str,
    ) -> Result<AtFinish, StoreError> {
        let mut finish = Finish {
            call_id: call_id.to_string(),
            check_passed: false,
        };
        let mut strategies = std::mem::take(&mut self.strategies);
        let checks = strategies.checks();
        let mut decision = Ok(AtFinish::Continue);
        for at in 0..strategies.len() {
            let strategy = strategies.caught_up_at(at, self.log.events());
            let before = self.log.events().len();
            let mut cx = Context {
                conversation: self,
                observer,
                cancel,
                checks,
            };
            decision = strategy.at_finish(&mut cx, &finish).await;
            if !matches!(decision, Ok(AtFinish::Continue)) {
                break;
            }
            let logged = self.log.events().get(before..).unwrap_or_default();
            finish.check_passed |= crate::strategy::passed_before_finish(logged);
        }
        self.strategies = strategies;
        decision
    }

    /// Before the run's first step: what the strategies run and log first (the first
    /// look), each in turn.
    pub(super) async fn before_first_step(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        run: &crate::strategy::RunStart,
    ) -> Result<(), StoreError> {
        let mut strategies = std::mem::take(&mut self.strategies);
        let checks = strategies.checks();
        let mut done = Ok(());
        for at in 0..strategies.len() {
            let strategy = strategies.caught_up_at(at, self.log.events());
            let mut cx = Context {
                conversation: self,
                observer,
                cancel,
                checks,
            };
            done = strategy.before_first_step(&mut cx, run).await;
            if done.is_err() {
                break;
            }
        }
        self.strategies = strategies;
        done
    }

    /// After a call that ran without error and did not end the run: what the strategies
    /// run and log (the check after an edit).
    pub(super) async fn after_call(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &CancellationToken,
        call: &Call<'_>,
    ) -> Result<(), StoreError> {
        let mut strategies = std::mem::take(&mut self.strategies);
        let checks = strategies.checks();
        let mut done = Ok(());
        for at in 0..strategies.len() {
            let strategy = strategies.caught_up_at(at, self.log.events());
            let mut cx = Context {
                conversation: self,
                observer,
                cancel,
                checks,
            };
            done = strategy.after_call(&mut cx, call).await;
            if done.is_err() {
                break;
            }
        }
        self.strategies = strategies;
        done
    }

    /// After a step: what the strategies say, logged, or the run given up (see
    /// `AfterStep`).
    pub(super) fn after_step(
        &mut self,
        observer: &mut dyn Observer,
        step: u32,
    ) -> Result<StepEnd, StoreError> {
        let decided = self.ask_strategies(|strategy, view| match strategy.after_step(view, step) {
            AfterStep::Continue => None,
            decided => Some(decided),
        });
        match decided {
            None | Some(AfterStep::Continue) => Ok(StepEnd::Continue),
            Some(AfterStep::Say(text)) => {
                self.tell(observer, step, text)?;
                Ok(StepEnd::Continue)
            }
            Some(AfterStep::GiveUp {
                reason,
                detail,
                state,
                stop,
            }) => {
                // The next model, if there is one, goes on.
                if self.can_switch() {
                    self.switch_model(observer, step + 1, reason, detail)?;
                    return Ok(StepEnd::Continue);
                }
                self.end(observer, state, stop, None).map(StepEnd::done)
            }
        }
    }
}

impl Conversation {
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
            "timeout": CHECK_TIMEOUT_SECS,
        });
        let ran = run_watched(
            terminal.as_ref(),
            &arguments,
            cancel,
            observer,
            self.log.masker().cloned(),
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

/// A command run for a strategy (`Context::run_in_root`) gets at most this long: a slow
/// suite must not eat the run's time.
const CHECK_TIMEOUT_SECS: u64 = 60;

/// The strategies every conversation starts with: the user's `Stop` hooks alone (the
/// help is registered by whoever builds the conversation, in its place among them).
pub(super) fn defaults() -> Strategies {
    let mut strategies = Strategies::default();
    strategies.add(Box::new(crate::strategy::StopHooks));
    strategies
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
