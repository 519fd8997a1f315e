//! The summary must be true (`[assist]` piece `account`): at each `finish`, wright reads
//! the workspace's change itself — `git status` in the sandbox, from the workspace's root
//! — and sets it beside the model's closing words. A `finish` whose words claim a change
//! ("added the --limit option") while no file changed is sent back once; the next such
//! one ends the run as stopped (`NothingChanged`), never as finished, so a run that did
//! nothing cannot look like success (exit 3, as when the checks still fail). Words that
//! name a file the change does not touch, or a run in which wright itself kept a version
//! (asked apart), get wright's own account in the report next to the model's words: the
//! files changed, from the diff, and what wright did.
//!
//! Why send back rather than only warn: a model that believes it made the change usually
//! made it against text that was not there (a failed `str_replace` it did not read), and
//! one more turn told "no file changed" is where it makes it; a second empty claim is not
//! worth more steps.
//!
//! Guarantees: each decision is an `account` event, logged before the `finish` is taken
//! or sent back; what the strategy decides from (the finishes sent back this run, the
//! versions kept, the last account) is a fold over the log, so a resumed run counts the
//! same. Where git cannot read the workspace (not a repository, no terminal) nothing is
//! decided and nothing is logged. A change the model committed itself is not seen by
//! `git status`: such a run is taken as having changed nothing only if it also claims a
//! change, and is sent back once with the reason.

use wright_core::strategy::starts_a_run;
use wright_core::strategy::AtFinish;
use wright_core::strategy::Context;
use wright_core::strategy::Finish;
use wright_core::strategy::Strategy;
use wright_core::Outcome;
use wright_core::StoreError;
use wright_protocol::Account;
use wright_protocol::CandidateOutcome;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_protocol::StopReason;
use wright_tools::Workspace;

/// How many `finish` calls claiming a change that is not there are sent back in a run;
/// the one after ends it.
const FINISHES_SENT_BACK: u32 = 1;

/// What wright runs to read the change: every file git sees changed, new ones included.
/// Run in the sandbox; the repository's own fsmonitor hook is not asked.
pub const STATUS: &str = "git -c core.fsmonitor=false status --porcelain=v1 --untracked-files=all";

/// The words of a closing message that say a change was made (past forms, as models word
/// it; a few of the languages tasks are given in).
const CLAIMS: &[&str] = &[
    "added",
    "changed",
    "updated",
    "fixed",
    "modified",
    "replaced",
    "created",
    "implemented",
    "corrected",
    "removed",
    "renamed",
    "edited",
    "introduced",
    "refactored",
    "wrote",
    "ajouté",
    "modifié",
    "corrigé",
    "añadido",
    "añadí",
    "corregido",
    "hinzugefügt",
    "geändert",
    "aggiunto",
    "modificato",
];

/// Words that make a closing message say there was nothing to change.
const NEGATIONS: &[&str] = &["no change", "nothing", "not ", "n't", "no file", "none"];

/// wright's account of the change at `finish`, checked against the model's words.
#[derive(Debug)]
pub struct AccountAtFinish {
    on: bool,
    /// The `finish` calls of this run sent back because a change was claimed and none made.
    sent_back: u32,
    /// What wright itself kept, in words (the passing versions of the log).
    kept: Vec<String>,
    /// The last account of this run, and whether a call of the agent followed it.
    last: Option<(Account, bool)>,
    /// The message of the last `finish` the agent called: what the account answers.
    said: String,
}

impl Default for AccountAtFinish {
    fn default() -> Self {
        Self {
            on: true,
            sent_back: 0,
            kept: Vec::new(),
            last: None,
            said: String::new(),
        }
    }
}

impl AccountAtFinish {
    pub const NAME: &'static str = "account";

    /// In its place, reading nothing.
    pub fn off() -> Self {
        Self {
            on: false,
            ..Self::default()
        }
    }

    /// Reads the change as git sees it: the paths, `None` when git could not say.
    async fn changed(cx: &mut Context<'_>) -> Option<Vec<String>> {
        let (output, exit_code) = cx.run_in_root(STATUS).await?;
        (exit_code == Some(0)).then(|| status_paths(&output))
    }
}

#[async_trait::async_trait]
impl Strategy for AccountAtFinish {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn absorb(&mut self, event: &Event) {
        match &event.body {
            EventBody::Account(account) => {
                self.sent_back += u32::from(account.sent_back);
                self.last = Some((account.clone(), false));
            }
            EventBody::Candidate(candidate)
                if candidate.outcome == CandidateOutcome::Passed && candidate.name.is_empty() =>
            {
                let check = candidate.check.as_deref().unwrap_or_default();
                let check = match &candidate.check_file {
                    // A test file is too long for a line: where it was is what says it.
                    Some(file) => format!("a test written at {file} for the run and removed"),
                    None => format!("`{}`", check.lines().collect::<Vec<_>>().join("; ")),
                };
                self.kept.push(format!(
                    "wright wrote {} anew with the model's version, asked apart: `{}` passes with it, and so does wright's own check of the task (not the repository's tests, not committed: {check})",
                    candidate.path, candidate.command,
                ));
            }
            EventBody::Candidate(candidate)
                if candidate.outcome == CandidateOutcome::Unverified =>
            {
                self.kept.push(format!(
                    "wright wrote {} anew with the model's version, asked apart: `{}` still passes with it, but no check confirmed that it does what the task asks",
                    candidate.path, candidate.command,
                ));
            }
            EventBody::Candidate(candidate) if candidate.outcome == CandidateOutcome::Passed => {
                self.kept.push(format!(
                    "wright put in place a version of `{}` in {} that the model wrote when asked apart, and `{}` passes with it",
                    candidate.name, candidate.path, candidate.command
                ));
            }
            EventBody::Action {
                tool, arguments, ..
            } if event.source == Source::Agent => {
                if let Some((_, followed)) = &mut self.last {
                    *followed = true;
                }
                if tool == "finish" {
                    self.said = arguments
                        .get("message")
                        .and_then(|m| m.as_str())
                        .unwrap_or_default()
                        .to_string();
                }
            }
            _ if starts_a_run(event) => {
                self.sent_back = 0;
                self.last = None;
            }
            _ => {}
        }
    }

    async fn at_finish(
        &mut self,
        cx: &mut Context<'_>,
        finish: &Finish,
    ) -> Result<AtFinish, StoreError> {
        if !self.on {
            return Ok(AtFinish::Continue);
        }
        let message = finish_message(cx.view().events(), &finish.call_id);
        let Some(changed) = Self::changed(cx).await else {
            return Ok(AtFinish::Continue);
        };
        let claims_change = claims_change(&message);
        // Files named in words that claim no change (an answer) are no claim about it.
        let named_unchanged = match cx.view().workspace() {
            Some(workspace) if claims_change => named_unchanged(&message, &changed, workspace),
            _ => Vec::new(),
        };
        let empty_claim = claims_change && changed.is_empty();
        let sent_back = empty_claim && self.sent_back < FINISHES_SENT_BACK;
        let account = Account {
            call_id: finish.call_id.clone(),
            changed,
            kept: self.kept.clone(),
            claims_change,
            named_unchanged,
            sent_back,
        };
        cx.log(Source::Environment, EventBody::Account(account.clone()))?;
        self.last = Some((account, false));
        if !empty_claim {
            return Ok(AtFinish::Continue);
        }
        let said = "No file has changed: wright read the workspace with `git status` and it shows no change, but your message says you made one.";
        if sent_back {
            return Ok(AtFinish::SendBack(format!(
                "{said} The task is not done. Make the change with the file_editor (view the file first), then call finish."
            )));
        }
        Ok(AtFinish::End {
            said: format!("{said} The run stops here, not finished."),
            stop: StopReason::NothingChanged {
                finishes: self.sent_back + 1,
            },
        })
    }

    /// The report gets wright's account next to the model's words when they disagree
    /// with the change, when no change was claimed wrongly but wright kept a version, or
    /// in place of them when a change was claimed and none made.
    fn add_to_outcome(&self, outcome: &mut Outcome) {
        let Some((account, false)) = &self.last else {
            return;
        };
        if !matches!(
            outcome.stop,
            StopReason::Finished | StopReason::NothingChanged { .. }
        ) {
            return;
        }
        if !account.contradicts() && account.kept.is_empty() {
            return;
        }
        let words = format!("[wright's account: {}.]", account.words());
        let said = outcome.summary.as_deref().unwrap_or(&self.said).trim();
        let empty_claim = account.claims_change && account.changed.is_empty();
        outcome.summary = Some(match (said.is_empty(), empty_claim) {
            (true, _) => words,
            (false, false) => format!("{said}\n{words}"),
            // A change claimed and none made: wright's account first, the words as said.
            (false, true) => format!("{words}\n(The model said: {said})"),
        });
    }
}

/// The message of the `finish` call `call_id`, as the log has it.
fn finish_message(events: &[Event], call_id: &str) -> String {
    events
        .iter()
        .rev()
        .find_map(|event| match &event.body {
            EventBody::Action {
                call_id: id,
                arguments,
                ..
            } if id == call_id => Some(
                arguments
                    .get("message")
                    .and_then(|m| m.as_str())
                    .unwrap_or_default()
                    .to_string(),
            ),
            _ => None,
        })
        .unwrap_or_default()
}

/// Whether `message` says a change was made: a word of `CLAIMS`, and none that says there
/// was nothing to change.
pub fn claims_change(message: &str) -> bool {
    let lower = message.to_lowercase();
    if NEGATIONS.iter().any(|negation| lower.contains(negation)) {
        return false;
    }
    lower
        .split(|c: char| !c.is_alphanumeric())
        .any(|word| CLAIMS.contains(&word))
}

/// The paths of `git status --porcelain=v1` output (a rename's new path).
fn status_paths(output: &str) -> Vec<String> {
    let mut paths: Vec<String> = output
        .lines()
        .filter(|line| line.len() > 3 && line.as_bytes().get(2) == Some(&b' '))
        .map(|line| {
            let path = &line[3..];
            let path = path.rsplit_once(" -> ").map_or(path, |(_, new)| new);
            path.trim_matches('"').to_string()
        })
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// The files of the workspace that `message` names and the change does not touch.
fn named_unchanged(message: &str, changed: &[String], workspace: &Workspace) -> Vec<String> {
    let mut named: Vec<String> = Vec::new();
    for word in message.split(|c: char| c.is_whitespace() || "`'\"(),;:*".contains(c)) {
        let word = word.trim_end_matches(['.', '!', '?']);
        let Some((stem, extension)) = word.rsplit_once('.') else {
            continue;
        };
        let looks_like_file = !extension.is_empty()
            && extension.len() <= 5
            && extension.chars().all(|c| c.is_ascii_alphanumeric())
            && stem
                .chars()
                .all(|c| c.is_alphanumeric() || "_-./".contains(c));
        if !looks_like_file || named.iter().any(|n| n == word) {
            continue;
        }
        let touched = changed
            .iter()
            .any(|path| path == word || path.ends_with(&format!("/{word}")));
        if !touched && is_file(workspace, word) {
            named.push(word.to_string());
        }
    }
    named
}

fn is_file(workspace: &Workspace, path: &str) -> bool {
    workspace
        .relative(path)
        .ok()
        .and_then(|relative| workspace.dir().metadata(relative).ok())
        .is_some_and(|metadata| metadata.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_is_a_past_form_of_a_change_without_a_negation() {
        assert!(claims_change("We have added the --limit argument."));
        assert!(claims_change("Fixed the rounding in money.py"));
        assert!(claims_change("J'ai ajouté l'option."));
        assert!(!claims_change("No change was needed: the tests pass."));
        assert!(!claims_change("The function was not changed."));
        assert!(!claims_change("The answer is 42."));
        assert!(!claims_change("done"));
    }

    #[test]
    fn the_status_gives_each_path_once_a_rename_by_its_new_name() {
        let output = " M app.py\n?? config/.env\nR  old.py -> new.py\n M app.py\n";
        assert_eq!(
            status_paths(output),
            vec!["app.py", "config/.env", "new.py"]
        );
        assert!(status_paths("").is_empty());
    }
}
