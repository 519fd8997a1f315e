//! One firing of an automation: its conversation created through the server's runs (as
//! any client's, with the automation's own settings and an unattended confirmer), waited
//! for, and its result handed back (`handback`) — each step logged in the automation's
//! record, a failure with what failed and why.

use super::event::Event;
use super::event::JobLog;
use super::forge;
use super::handback;
use super::outcome::Outcome;
use super::store::Step;
use super::store::StepKind;
use super::task;
use super::Defined;
use crate::api;
use crate::runs::Runs;
use std::sync::Arc;
use wright_config::automations::EventKind;
use wright_config::automations::WhenBusy;

/// A new firing's id: its time and a random part.
pub fn firing_id() -> String {
    wright_session::stored::new_id()
}

/// Where a firing's steps are recorded: the automation's record, and, once it has one,
/// its conversation's log (what was handed back, as `handed_back` events).
pub struct Record<'a> {
    pub defined: &'a Defined,
    pub firing: &'a str,
    pub issue: Option<u64>,
    pub conversation: Option<String>,
}

impl Record<'_> {
    /// Logs a step in the automation's record (a failure to write is not fatal: the
    /// conversation's own log still says what it did).
    pub fn log(&self, kind: StepKind, url: Option<String>, detail: Option<String>) {
        let mut step = Step::new(self.firing, kind);
        step.issue = self.issue;
        step.conversation = self.conversation.clone();
        step.url = url;
        step.detail = detail;
        let _ = self.defined.store.log(&step);
    }

    pub fn failed(&self, why: String) {
        self.log(StepKind::Failed, None, Some(why));
    }
}

/// Fires `defined` for `event` (none: a schedule's time), to its end.
pub async fn fire(runs: Arc<Runs>, defined: Arc<Defined>, firing: String, event: Option<Event>) {
    let automation = &defined.automation;
    let mut record = Record {
        defined: &defined,
        firing: &firing,
        issue: event.as_ref().map(|e| e.number).filter(|n| *n != 0),
        conversation: None,
    };
    let _permit = match automation.when_busy {
        WhenBusy::Skip => match defined.slots.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                record.log(
                    StepKind::Skipped,
                    None,
                    Some(format!(
                        "{} firing(s) of it were running (max_running); when_busy = \"skip\"",
                        automation.max_running
                    )),
                );
                return;
            }
        },
        WhenBusy::Queue => match defined.slots.clone().acquire_owned().await {
            Ok(permit) => permit,
            Err(_) => return,
        },
    };
    let mut event = event;
    if let Some(event) = event.as_ref().filter(|e| e.event == EventKind::CheckRun) {
        if let Err(why) = at_the_branch_head(&automation.repository, event).await {
            return record.failed(why);
        }
    }
    if let Some(event) = event.as_mut().filter(|e| e.event == EventKind::Comment) {
        match pull_head(&defined, event.number).await {
            Ok(head) => event.branch = head,
            Err(why) => return record.failed(why),
        }
    }
    if let Some(event) = event.as_mut() {
        if event.event == EventKind::CheckRun && automation.task.contains("{check_run.log}") {
            event.check.log = job_log(&defined, event.check.id).await;
            if let JobLog::Missing(why) = &event.check.log {
                record.log(StepKind::LogMissing, None, Some(why.clone()));
            }
        }
    }
    let remote = automation.repository.contains("://") || automation.repository.contains('@');
    let request = api::NewConversation {
        workspace: (!remote).then(|| automation.repository.clone()),
        repository_url: remote.then(|| automation.repository.clone()),
        // A failed check, a push or a pull request's comment is worked on at its
        // branch's head (of the automation's repository: the event names the branch,
        // never where from).
        repository_branch: event
            .as_ref()
            .filter(|e| remote && !e.branch.is_empty())
            .map(|e| e.branch.clone()),
        task: task::render(&automation.task, &automation.name, event.as_ref()),
        settings: api::Settings {
            profile: automation.profile.clone(),
            max_steps: automation.max_steps,
            max_time: automation.max_time,
            max_tokens: automation.max_tokens,
            // Risky actions are asked about, and nobody answers: refused.
            confirm: Some("risky".into()),
            ..api::Settings::default()
        },
    };
    let id = match runs.create_unattended(request) {
        Ok(id) => id,
        Err(err) => {
            return record.failed(format!("the conversation could not start: {}", err.message))
        }
    };
    record.conversation = Some(id.clone());
    record.log(StepKind::Started, None, None);
    runs.wait_until_ended(&id).await;
    let Some(info) = runs.info(&id) else {
        return record.failed("the conversation is gone".into());
    };
    let state = serde_json::to_value(info.state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    record.log(
        StepKind::Ended,
        info.branch.clone(),
        Some(match (&info.error, &info.branch) {
            (Some(error), _) => format!("{state}: {error}"),
            (None, Some(branch)) => format!("{state}, on branch {branch}"),
            (None, None) => format!("{state}, with no change"),
        }),
    );
    let outcome = Outcome::read(&id);
    let refused = outcome.refused();
    if !refused.is_empty() {
        record.log(
            StepKind::Refused,
            None,
            Some(format!(
                "the unattended run refused {} action(s) its confirmation policy asks about: {}",
                refused.len(),
                refused.join("; ")
            )),
        );
    }
    let finished = match (info.state, info.branch) {
        (api::State::Finished, Some(branch)) => Ok(branch),
        (_, branch) => Err(format!(
            "the conversation ended {state}{}",
            if branch.is_none() {
                " with no branch"
            } else {
                ""
            }
        )),
    };
    handback::hand_back(&record, event.as_ref(), &outcome, finished).await;
}

/// The end of the failing job's log, or why it could not be had.
async fn job_log(defined: &Defined, job: u64) -> JobLog {
    let result = &defined.automation.result;
    let Some(repository) = result.api_repository.as_deref() else {
        return JobLog::Missing("no result.api_repository to fetch it through".into());
    };
    let token = match handback::token(result) {
        Ok(token) => token,
        Err(why) => return JobLog::Missing(why),
    };
    let api = forge::Api {
        forge: defined.api_shape(),
        base: &result.api_url,
        repository,
        token: token.as_deref(),
    };
    match api.job_log(job).await {
        Ok(log) => JobLog::Fetched(log),
        Err(err) => JobLog::Missing(format!("fetching job {job}'s log: {err}")),
    }
}

/// How long asking the remote where a branch is may take.
const LS_REMOTE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

/// A failed check is worked on only when it ran on the commit its branch is at in the
/// automation's repository: a pull request from a fork runs its checks with its own
/// branch's name, and is not the branch of that name here.
async fn at_the_branch_head(repository: &str, event: &Event) -> Result<(), String> {
    let (repository, branch) = (repository.to_string(), event.branch.clone());
    let remote = repository.contains("://") || repository.contains('@');
    let found = tokio::task::spawn_blocking(move || {
        if remote {
            let url =
                wright_sandbox::git::RemoteUrl::parse(&repository).map_err(|e| e.to_string())?;
            wright_sandbox::git::UserRepo::remote_branch_tip(&url, &branch, LS_REMOTE_DEADLINE)
                .map_err(|e| e.to_string())
        } else {
            Ok(
                wright_sandbox::git::UserRepo::at(std::path::Path::new(&repository))
                    .branch_tip(&branch)
                    .map(|oid| oid.as_str().to_string()),
            )
        }
    })
    .await
    .map_err(|e| e.to_string())
    .and_then(|r| r)
    .map_err(|why| format!("where {} is in the repository: {why}", event.branch))?;
    match found {
        Some(tip) if tip == event.commit => Ok(()),
        Some(tip) => Err(format!(
            "the check ran on commit {}, but {} is at {tip} in the repository (a fork's pull request's check, or the branch moved since): not worked on",
            event.commit, event.branch
        )),
        None => Err(format!(
            "the repository has no branch {} (a fork's pull request's check?): not worked on",
            event.branch
        )),
    }
}

/// The branch of the pull request a comment is on, when it is a branch of the
/// automation's repository: a fork's is not worked on (its branch is not here).
async fn pull_head(defined: &Defined, number: u64) -> Result<String, String> {
    let result = &defined.automation.result;
    let Some(repository) = result.api_repository.as_deref() else {
        return Err("no result.api_repository to read the pull request's branch through".into());
    };
    let token = handback::token(result)?;
    let api = forge::Api {
        forge: defined.api_shape(),
        base: &result.api_url,
        repository,
        token: token.as_deref(),
    };
    match api.pull_head(number).await {
        Ok((head, true)) if wright_sandbox::git::safe_branch_name(&head) => Ok(head),
        Ok((head, true)) => Err(format!(
            "pull request #{number}'s branch '{}' is not a plain branch name: not worked on",
            head.escape_debug()
        )),
        Ok((head, false)) => Err(format!(
            "pull request #{number} comes from a fork (its branch {}): not worked on",
            head.escape_debug()
        )),
        Err(err) => Err(format!("pull request #{number}'s branch: {err}")),
    }
}
