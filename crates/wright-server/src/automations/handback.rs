//! What a firing hands back once its conversation ended: the branch pushed from wright's
//! own copy of the repository, a pull request opened or updated, a comment on the issue
//! that fired it, an issue opened (or commented on) when its test command failed — each in the automation's record and, as a `handed_back` event, in the
//! conversation's log; a failure with what failed and why.
//!
//! What it guarantees: the push runs on the host, from the clone wright made of the
//! automation's URL (the conversation's branch is handed over into it), never from the
//! agent's clone, to the URL of the automation's definition; only a conversation that
//! finished with a branch is pushed, and not one whose branch changes a file that
//! configures git or wright; the forge's token is read from the secrets store here, on
//! the host, and given to git's environment and the API requests only; what the agent
//! wrote reaches the forge cleaned (`clean`: no mention, no closing keyword).

use super::clean::clean;
use super::event::Event;
use super::fire::Record;
use super::forge;
use super::outcome::Left;
use super::outcome::Outcome;
use super::store::StepKind;
use wright_config::automations::EventKind;
use wright_protocol::EventBody;
use wright_protocol::HandBack;
use wright_protocol::HandedBack;
use wright_protocol::Source;
use wright_sandbox::git::RemoteUrl;
use wright_sandbox::git::UserRepo;

/// How long a push may take.
const PUSH_DEADLINE: std::time::Duration = std::time::Duration::from_secs(300);

impl Record<'_> {
    /// Logs what was handed back in the automation's record and the conversation's log.
    fn handed(&self, what: HandBack, url: Option<String>, detail: String) {
        let kind = match what {
            HandBack::Pushed => StepKind::Pushed,
            HandBack::PullRequestOpened => StepKind::PullRequestOpened,
            HandBack::PullRequestUpdated => StepKind::PullRequestUpdated,
            HandBack::Commented => StepKind::Commented,
            HandBack::IssueOpened => StepKind::IssueOpened,
            HandBack::Failed => StepKind::Failed,
        };
        self.log(kind, url.clone(), Some(detail.clone()));
        self.in_log(what, url, detail);
    }

    /// Appends what was handed back to the conversation's log.
    fn in_log(&self, what: HandBack, url: Option<String>, detail: String) {
        let Some(conversation) = &self.conversation else {
            return;
        };
        let body = EventBody::HandedBack(HandedBack {
            automation: self.defined.automation.name.clone(),
            firing: self.firing.to_string(),
            what,
            url,
            detail,
        });
        if let Err(err) =
            wright_session::stored::append_after_run(conversation, Source::Environment, body)
        {
            self.log(
                StepKind::Failed,
                None,
                Some(format!("the conversation's log: {err:#}")),
            );
        }
    }
}

/// What the issue's comment says happened.
enum Said {
    Nothing(String),
    Pushed(String),
    Pull { url: String, updated: bool },
}

/// Hands back the result of `record`'s conversation: `finished` is its branch, or how it
/// ended without one.
pub async fn hand_back(
    record: &Record<'_>,
    event: Option<&Event>,
    outcome: &Outcome,
    finished: Result<String, String>,
) {
    let result = &record.defined.automation.result;
    let token = match token(result) {
        Ok(token) => token,
        Err(why) => return record.handed(HandBack::Failed, None, why),
    };
    if result.issue {
        report_tests(record, outcome, token.as_deref()).await;
    }
    let said = push_and_pull(record, event, outcome, finished, token.as_deref()).await;
    if let (true, Some(event)) = (result.comment, event) {
        comment(record, event, outcome, &said, token.as_deref()).await;
    }
}

/// The forge's token, from the secrets store (none when the automation names none).
pub(super) fn token(
    result: &wright_config::automations::ResultPolicy,
) -> Result<Option<String>, String> {
    let Some(name) = &result.token_secret else {
        return Ok(None);
    };
    let store = wright_config::secrets::SecretStore::default_location();
    store
        .values(std::slice::from_ref(name))
        .map(|values| values.into_iter().next().map(|(_, v)| v))
        .map_err(|err| format!("the forge's token: {err}"))
}

async fn push_and_pull(
    record: &Record<'_>,
    event: Option<&Event>,
    outcome: &Outcome,
    finished: Result<String, String>,
    token: Option<&str>,
) -> Said {
    let automation = &record.defined.automation;
    let id = record.conversation.clone().unwrap_or_default();
    let branch = match finished {
        Ok(branch) => branch,
        Err(why) => {
            if automation.result.push {
                record.handed(HandBack::Failed, None, format!("nothing pushed: {why}"));
            }
            return Said::Nothing(why);
        }
    };
    if !automation.result.push {
        return Said::Nothing(format!("its branch {branch} stays on the server"));
    }
    // Nobody reads an unattended run's branch before it leaves: one that changes what
    // configures git or wright (`wright apply` asks first) is not pushed.
    let refusal = match outcome.left() {
        Left::Branch { configuring } if configuring.is_empty() => None,
        Left::Branch { configuring } => Some(format!(
            "nothing pushed: {branch} changes {}, which configure git or wright; an unattended run's branch may not (it stays in wright's copy: read it before taking it, `POST /api/conversations/{id}/apply` with `with_git_config`)",
            configuring.join(", ")
        )),
        Left::Nothing => Some("nothing pushed: the run changed nothing".to_string()),
        Left::Unknown => Some(format!(
            "nothing pushed: the log of {id} does not say what {branch} changes"
        )),
    };
    if let Some(why) = refusal {
        record.handed(HandBack::Failed, None, why.clone());
        return Said::Nothing(why);
    }
    // One branch (and so one pull request) per issue, pull request or failing branch: a
    // second firing updates it.
    let remote_branch = match event {
        Some(e) if e.event.on_branch() => {
            format!("wright/{}-{}", automation.name, e.branch.replace('/', "-"))
        }
        Some(e) => format!("wright/{}-{}", automation.name, e.number),
        None => format!("wright/{}-{id}", automation.name),
    };
    // A fix of a branch (a check's, a push's, a commented pull request's) asks to merge
    // into that branch.
    let base = match event {
        Some(e) if !e.branch.is_empty() => e.branch.clone(),
        _ => automation.result.base.clone(),
    };
    let copy = wright_session::stored::repositories_root().join(&id);
    let url = automation.repository.clone();
    let pushed = {
        let (branch, remote_branch, token) = (
            branch.clone(),
            remote_branch.clone(),
            token.map(str::to_string),
        );
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
        let why = format!("the push of {branch} failed: {why}");
        record.handed(HandBack::Failed, None, why.clone());
        return Said::Nothing(why);
    }
    record.handed(
        HandBack::Pushed,
        Some(remote_branch.clone()),
        format!("{branch} pushed as {remote_branch}"),
    );
    if !automation.result.pull_request {
        return Said::Pushed(remote_branch);
    }
    let Some(repository) = automation.result.api_repository.as_deref() else {
        record.handed(
            HandBack::Failed,
            None,
            "no api_repository to open the pull request in".into(),
        );
        return Said::Pushed(remote_branch);
    };
    let (title, body) = pull_text(&automation.name, &id, event, &outcome.summary());
    let opened = forge::Api {
        forge: record.defined.api_shape(),
        base: &automation.result.api_url,
        repository,
        token,
    }
    .open_or_update(&remote_branch, &base, &title, &body)
    .await;
    match opened {
        Ok(pull) => {
            record.handed(
                match pull.updated {
                    true => HandBack::PullRequestUpdated,
                    false => HandBack::PullRequestOpened,
                },
                Some(pull.url.clone()),
                format!("pull request #{}", pull.number),
            );
            Said::Pull {
                url: pull.url,
                updated: pull.updated,
            }
        }
        Err(err) => {
            record.handed(HandBack::Failed, None, format!("the pull request: {err}"));
            Said::Pushed(remote_branch)
        }
    }
}

/// Opens an issue when the conversation's last run of the automation's `tests` failed,
/// or comments on the issue it opened before while that one is open; a passing run
/// opens nothing.
async fn report_tests(record: &Record<'_>, outcome: &Outcome, token: Option<&str>) {
    let automation = &record.defined.automation;
    let (Some(command), Some(repository)) = (
        automation.tests.as_deref(),
        automation.result.api_repository.as_deref(),
    ) else {
        return;
    };
    let id = record.conversation.clone().unwrap_or_default();
    let Some(run) = outcome.last_run(command) else {
        return record.handed(
            HandBack::Failed,
            None,
            format!("no issue: conversation {id} never ran `{command}`, so whether the tests fail is not known"),
        );
    };
    if run.passed {
        return record.log(
            StepKind::TestsPassed,
            None,
            Some(format!("`{command}` passed in conversation {id}: no issue")),
        );
    }
    let api = forge::Api {
        forge: record.defined.api_shape(),
        base: &automation.result.api_url,
        repository,
        token,
    };
    let exited = match run.exit_code {
        Some(code) => format!("exited {code}"),
        None => "did not finish".to_string(),
    };
    // The output is the sandbox's: made inert (`clean`), fenced so it cannot end the
    // fence, its end kept (where a failure is said).
    let output: Vec<char> = clean(&run.output).replace("~~~", "~ ~ ~").chars().collect();
    let output: String = output[output.len().saturating_sub(6000)..].iter().collect();
    let said = format!(
        "wright's automation `{}` ran `{command}` in conversation `{id}`: it {exited}.\n\n~~~~\n{}\n~~~~\n",
        automation.name,
        output.trim_end()
    );
    let before = record
        .defined
        .store
        .steps()
        .into_iter()
        .rev()
        .find(|s| s.kind == StepKind::IssueOpened)
        .and_then(|s| s.issue);
    if let Some(number) = before {
        match api.issue_open(number).await {
            Ok((true, issue_url)) => {
                let commented = api.comment(number, false, &said, &issue_url).await;
                return match commented {
                    Ok(url) => record.handed(
                        HandBack::Commented,
                        Some(url),
                        format!("the tests still fail: commented on issue #{number}"),
                    ),
                    Err(err) => {
                        record.handed(HandBack::Failed, None, format!("the comment: {err}"))
                    }
                };
            }
            // Closed since: a new one is opened.
            Ok((false, _)) => {}
            Err(err) => {
                return record.handed(
                    HandBack::Failed,
                    None,
                    format!("issue #{number}, opened before: {err}"),
                )
            }
        }
    }
    let title = format!("wright: the tests fail ({})", automation.name);
    match api.open_issue(&title, &said).await {
        Ok((number, url)) => {
            let mut step = super::store::Step::new(record.firing, StepKind::IssueOpened);
            step.issue = Some(number);
            step.conversation = record.conversation.clone();
            step.url = Some(url.clone());
            step.detail = Some(format!("issue #{number}: `{command}` {exited}"));
            let _ = record.defined.store.log(&step);
            record.in_log(HandBack::IssueOpened, Some(url), format!("issue #{number}"));
        }
        Err(err) => record.handed(HandBack::Failed, None, format!("the issue: {err}")),
    }
}

/// Comments on the issue that fired the automation, saying what came of it.
async fn comment(
    record: &Record<'_>,
    event: &Event,
    outcome: &Outcome,
    said: &Said,
    token: Option<&str>,
) {
    let automation = &record.defined.automation;
    let Some(repository) = automation.result.api_repository.as_deref() else {
        return record.handed(
            HandBack::Failed,
            None,
            "no api_repository to comment in".into(),
        );
    };
    let id = record.conversation.clone().unwrap_or_default();
    let what = match said {
        Said::Pull {
            url,
            updated: false,
        } => format!("opened {url}"),
        Said::Pull { url, updated: true } => format!("updated {url}"),
        Said::Pushed(branch) => format!("pushed the branch `{branch}`"),
        Said::Nothing(why) => format!("handed nothing back: {}", clean(why)),
    };
    let mut body = format!(
        "wright's automation `{}` worked on this {} in conversation `{id}` and {what}.\n",
        automation.name,
        if event.on_pull {
            "pull request"
        } else {
            "issue"
        }
    );
    // A pull request carries the summary; without one, the comment does.
    let summary = outcome.summary();
    if !matches!(said, Said::Pull { .. }) && !summary.trim().is_empty() {
        body.push_str(&format!("\n## Summary\n\n{}\n", clean(&summary)));
    }
    let commented = forge::Api {
        forge: record.defined.api_shape(),
        base: &automation.result.api_url,
        repository,
        token,
    }
    .comment(event.number, event.on_pull, &body, &event.url)
    .await;
    match commented {
        Ok(url) => record.handed(
            HandBack::Commented,
            Some(url),
            format!("commented on issue #{}", event.number),
        ),
        Err(err) => record.handed(HandBack::Failed, None, format!("the comment: {err}")),
    }
}

/// A pull request's title and body.
fn pull_text(
    automation: &str,
    conversation: &str,
    event: Option<&Event>,
    summary: &str,
) -> (String, String) {
    let line = |text: &str| -> String {
        clean(text)
            .chars()
            .filter(|c| !c.is_control())
            .take(120)
            .collect()
    };
    let title = match event {
        Some(e) if e.event == EventKind::CheckRun => format!(
            "wright: fix the failing check {} on {}",
            line(&e.check.name),
            line(&e.branch)
        ),
        Some(e) if e.event == EventKind::Push => {
            format!("wright: automation {automation} on {}", line(&e.branch))
        }
        Some(e) => format!("wright: {}", line(&e.title)),
        None => format!("wright: automation {automation}"),
    };
    let about = match event {
        Some(e) if e.event == EventKind::CheckRun => format!(
            " for the failing check `{}` on `{}` ({})",
            line(&e.check.name).replace('`', "'"),
            line(&e.branch),
            line(&e.check.url)
        ),
        Some(e) if e.event == EventKind::Push => format!(" for the push to `{}`", line(&e.branch)),
        Some(e) if e.event == EventKind::Comment => {
            format!(" for the comment on pull request #{}", e.number)
        }
        Some(e) => format!(" for issue #{}", e.number),
        None => String::new(),
    };
    let body = format!(
        "Made by wright's automation `{automation}`{about}, in conversation `{conversation}`.\n\n## Summary\n\n{}\n",
        clean(summary)
    );
    (title, body)
}
