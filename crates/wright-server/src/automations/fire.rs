//! One firing of an automation: its conversation created through the server's runs (as
//! any client's, with the automation's own settings and an unattended confirmer), waited
//! for, and its result handed back — the branch pushed from wright's own copy of the
//! repository, a pull request opened or updated — each step logged in the automation's
//! record, a failure with what failed and why.
//!
//! What it guarantees: the push runs on the host, from the clone wright made of the
//! automation's URL (the conversation's branch is handed over into it), never from the
//! agent's clone, to the URL of the automation's definition; the forge's token is read
//! from the secrets store here, on the host, and given to git's environment and the API
//! request only, never to the conversation; only a conversation that finished with a
//! branch is pushed.

use super::event::IssueEvent;
use super::forge;
use super::store::Step;
use super::store::StepKind;
use super::task;
use super::Defined;
use crate::api;
use crate::runs::Runs;
use std::sync::Arc;
use wright_config::automations::WhenBusy;
use wright_sandbox::git::RemoteUrl;
use wright_sandbox::git::UserRepo;

/// How long a push may take.
const PUSH_DEADLINE: std::time::Duration = std::time::Duration::from_secs(300);

/// A new firing's id: its time and a random part.
pub fn firing_id() -> String {
    wright_session::stored::new_id()
}

/// Fires `defined` for `event` (none: a schedule's time), to its end.
pub async fn fire(
    runs: Arc<Runs>,
    defined: Arc<Defined>,
    firing: String,
    event: Option<IssueEvent>,
) {
    let automation = &defined.automation;
    let store = &defined.store;
    let issue = event.as_ref().map(|e| e.number);
    let step = |kind: StepKind| {
        let mut step = Step::new(&firing, kind);
        step.issue = issue;
        step
    };
    let _permit = match automation.when_busy {
        WhenBusy::Skip => match defined.slots.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                let mut skipped = step(StepKind::Skipped);
                skipped.detail = Some(format!(
                    "{} firing(s) of it were running (max_running); when_busy = \"skip\"",
                    automation.max_running
                ));
                let _ = store.log(&skipped);
                return;
            }
        },
        WhenBusy::Queue => match defined.slots.clone().acquire_owned().await {
            Ok(permit) => permit,
            Err(_) => return,
        },
    };
    let failed = |what: String, conversation: Option<&str>| {
        let mut failure = step(StepKind::Failed);
        failure.detail = Some(what);
        failure.conversation = conversation.map(str::to_string);
        let _ = store.log(&failure);
    };
    let remote = automation.repository.contains("://") || automation.repository.contains('@');
    let request = api::NewConversation {
        workspace: (!remote).then(|| automation.repository.clone()),
        repository_url: remote.then(|| automation.repository.clone()),
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
            return failed(
                format!("the conversation could not start: {}", err.message),
                None,
            )
        }
    };
    let mut started = step(StepKind::Started);
    started.conversation = Some(id.clone());
    let _ = store.log(&started);
    runs.wait_until_ended(&id).await;
    let Some(info) = runs.info(&id) else {
        return failed("the conversation is gone".into(), Some(&id));
    };
    let mut ended = step(StepKind::Ended);
    ended.conversation = Some(id.clone());
    ended.url = info.branch.clone();
    let state = serde_json::to_value(info.state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    ended.detail = Some(match (&info.error, &info.branch) {
        (Some(error), _) => format!("{state}: {error}"),
        (None, Some(branch)) => format!("{state}, on branch {branch}"),
        (None, None) => format!("{state}, with no change"),
    });
    let _ = store.log(&ended);
    let (api::State::Finished, Some(branch)) = (info.state, info.branch.clone()) else {
        if automation.result.push {
            failed(
                format!(
                    "nothing pushed: the conversation ended {state}{}",
                    if info.branch.is_none() {
                        " with no branch"
                    } else {
                        ""
                    }
                ),
                Some(&id),
            );
        }
        return;
    };
    if !automation.result.push {
        return;
    }
    let token = match &automation.result.token_secret {
        None => None,
        Some(name) => {
            let store = wright_config::secrets::SecretStore::default_location();
            match store.values(std::slice::from_ref(name)) {
                Ok(values) => values.into_iter().next().map(|(_, v)| v),
                Err(err) => return failed(format!("the forge's token: {err}"), Some(&id)),
            }
        }
    };
    let remote_branch = match &event {
        Some(e) => format!("wright/{}-{}", automation.name, e.number),
        None => format!("wright/{}-{id}", automation.name),
    };
    let copy = wright_session::stored::repositories_root().join(&id);
    let url = automation.repository.clone();
    let pushed = {
        let (branch, remote_branch, token) = (branch.clone(), remote_branch.clone(), token.clone());
        tokio::task::spawn_blocking(move || {
            let url = RemoteUrl::parse(&url).map_err(|e| e.to_string())?;
            UserRepo::at(&copy)
                .push_branch(
                    &url,
                    &branch,
                    &remote_branch,
                    token.as_deref(),
                    PUSH_DEADLINE,
                )
                .map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r)
    };
    if let Err(why) = pushed {
        return failed(format!("the push of {branch} failed: {why}"), Some(&id));
    }
    let mut step_pushed = step(StepKind::Pushed);
    step_pushed.conversation = Some(id.clone());
    step_pushed.url = Some(remote_branch.clone());
    step_pushed.detail = Some(format!("{branch} pushed as {remote_branch}"));
    let _ = store.log(&step_pushed);
    if !automation.result.pull_request {
        return;
    }
    let Some(repository) = automation.result.api_repository.as_deref() else {
        return failed(
            "no api_repository to open the pull request in".into(),
            Some(&id),
        );
    };
    let summary = summary_of(&id);
    let (title, body) = pull_text(&automation.name, &id, event.as_ref(), &summary);
    let opened = forge::Api {
        base: &automation.result.api_url,
        repository,
        token: token.as_deref(),
    }
    .open_or_update(&remote_branch, &automation.result.base, &title, &body)
    .await;
    match opened {
        Ok(pull) => {
            let mut done = step(match pull.updated {
                true => StepKind::PullRequestUpdated,
                false => StepKind::PullRequestOpened,
            });
            done.conversation = Some(id.clone());
            done.url = Some(pull.url.clone());
            done.detail = Some(format!("pull request #{}", pull.number));
            let _ = store.log(&done);
        }
        Err(err) => failed(format!("the pull request: {err}"), Some(&id)),
    }
}

/// The summary the agent gave with `finish` (else its last words).
fn summary_of(id: &str) -> String {
    let Ok(parsed) = wright_protocol::read_log(&crate::runs::log_path(id)) else {
        return String::new();
    };
    let finish = parsed.events.iter().rev().find_map(|e| match &e.body {
        wright_protocol::EventBody::Action {
            tool, arguments, ..
        } if tool == "finish" => arguments["message"].as_str().map(str::to_string),
        _ => None,
    });
    finish
        .or_else(|| {
            parsed
                .events
                .iter()
                .rev()
                .find_map(|e| match (&e.body, e.source) {
                    (
                        wright_protocol::EventBody::Message { text, .. },
                        wright_protocol::Source::Agent,
                    ) => Some(text.clone()),
                    _ => None,
                })
        })
        .unwrap_or_default()
}

/// A pull request's title and body.
fn pull_text(
    automation: &str,
    conversation: &str,
    event: Option<&IssueEvent>,
    summary: &str,
) -> (String, String) {
    let title = match event {
        Some(e) => {
            let title: String = forge::clean(&e.title)
                .chars()
                .filter(|c| !c.is_control())
                .take(120)
                .collect();
            format!("wright: {title}")
        }
        None => format!("wright: automation {automation}"),
    };
    let about = match event {
        Some(e) => format!(" for issue #{}", e.number),
        None => String::new(),
    };
    let body = format!(
        "Made by wright's automation `{automation}`{about}, in conversation `{conversation}`.\n\n## Summary\n\n{}\n",
        forge::clean(summary)
    );
    (title, body)
}
