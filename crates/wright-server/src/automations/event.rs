//! A forge's webhook body, once its signature holds: the event it carries — an issue
//! (GitHub's `issues`, Gitea's and Forgejo's `issues`/`issue_label`, GitLab's `Issue
//! Hook`), a failed check, a comment on a pull request, a push (`payloads`) — read into
//! the few fields an automation uses, and whether the automation fires for it.
//!
//! What it guarantees: everything read here is text of whoever could open the issue,
//! comment, push a branch or write a workflow; it only fills the task's fields (see
//! `task`) and, for a check run or a push, names the branch the firing clones (a plain
//! branch name, of the automation's own repository), and never chooses anything else of
//! the automation (its repository, profile, limits, sandbox or network are its
//! definition's).

use axum::http::HeaderMap;
use serde_json::Value;
use wright_config::automations::Association;
use wright_config::automations::Automation;
use wright_config::automations::EventKind;
use wright_config::automations::Forge;

/// The fields of an event an automation uses (those its kind lacks stay empty).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Event {
    /// Which of the automation's kinds of event it is.
    pub event: EventKind,
    /// The forge's kind of event (`issues`, `Issue Hook`, `check_run`).
    pub kind: String,
    /// What happened (`labeled`, `opened`, `completed`, `created`).
    pub action: String,
    /// The issue's (or the commented pull request's) number; 0 for a check or a push.
    pub number: u64,
    pub title: String,
    pub body: String,
    pub url: String,
    /// The labels this event added.
    pub labels_added: Vec<String>,
    /// Who wrote the issue or comment, as the forge relates them to the repository.
    pub association: Option<Association>,
    pub sender: String,
    /// `OWNER/NAME` on the forge.
    pub repository: String,
    /// A comment's: whether it is on a pull (merge) request.
    pub on_pull: bool,
    /// A check run's or push's branch.
    pub branch: String,
    /// The commit it is about (the check's head, the push's new tip).
    pub commit: String,
    pub check: CheckRun,
    pub comment: Comment,
    /// A push's commit messages.
    pub commits: Vec<String>,
}

/// A failed check (GitHub's check run; GitLab's failed pipeline, by its first failed job).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckRun {
    /// The check run's id (for GitHub Actions, its job's); GitLab's failed job's.
    pub id: u64,
    pub name: String,
    /// `failure`, `success`, … (GitLab's pipeline status `failed` reads `failure`).
    pub conclusion: String,
    pub url: String,
    /// What the check said of itself (GitHub's output title, summary and text).
    pub output: String,
    /// The failing job's log, fetched through the forge's API (`log`).
    pub log: JobLog,
}

/// The failing job's log, as the firing got it.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum JobLog {
    /// Not asked for (the task does not name `{check_run.log}`).
    #[default]
    NotAsked,
    /// Its end, at most `log::LOG_LIMIT` bytes.
    Fetched(String),
    /// Why it could not be had.
    Missing(String),
}

/// A comment's words.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comment {
    pub body: String,
    pub url: String,
}

/// Why a delivery starts nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ignored {
    /// Not an event of the automation's kind (a ping, another event).
    OtherEvent { wanted: EventKind, got: String },
    /// Not JSON, or not of the documented shape.
    Unreadable(String),
    /// The label asked for was not added by this event.
    NotLabelled(String),
    /// Its author is not among those the automation fires for.
    Author(String),
    /// A check that did not fail (or has not completed).
    NotFailed(String),
    /// Another branch than the automation's.
    OtherBranch(String),
    /// A comment not on a pull request.
    NotOnPull,
    /// A comment that does not mention the bot.
    NotMentioned(String),
    /// A comment edited or deleted, not written.
    NotCreated(String),
    /// A push that deletes a branch, or of a tag.
    NotABranchPush(String),
}

impl Ignored {
    pub fn words(&self) -> String {
        match self {
            Ignored::OtherEvent { wanted, got } => format!(
                "not a {} event ({got})",
                serde_json::to_value(wanted)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            ),
            Ignored::Unreadable(why) => format!("the body is not the event's shape: {why}"),
            Ignored::NotLabelled(label) => format!("the event does not add the label {label}"),
            Ignored::Author(who) => {
                format!("its author ({who}) is not among the authors the automation fires for")
            }
            Ignored::NotFailed(what) => format!("the check did not fail ({what})"),
            Ignored::OtherBranch(branch) => {
                format!("the event is on another branch than the automation's ({branch})")
            }
            Ignored::NotOnPull => "the comment is not on a pull request".to_string(),
            Ignored::NotMentioned(name) => format!("the comment does not mention @{name}"),
            Ignored::NotCreated(action) => {
                format!("the comment was not written but {action}")
            }
            Ignored::NotABranchPush(what) => format!("not a push to a branch ({what})"),
        }
    }
}

/// The delivery's id, as the forge names it (a redelivery keeps it).
pub fn delivery_id(forge: Forge, headers: &HeaderMap) -> Option<String> {
    let names: &[&str] = match forge {
        Forge::Github => &["x-github-delivery"],
        Forge::Gitea => &["x-forgejo-delivery", "x-gitea-delivery"],
        Forge::Gitlab => &["x-gitlab-event-uuid", "idempotency-key"],
    };
    names.iter().find_map(|name| {
        headers
            .get(*name)
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty() && v.len() <= 200)
            .map(str::to_string)
    })
}

pub(super) fn text(value: &Value, path: &[&str]) -> String {
    let mut at = value;
    for key in path {
        at = &at[*key];
    }
    at.as_str().unwrap_or_default().to_string()
}

pub(super) fn names(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l[field].as_str().map(str::to_string))
        .collect()
}

/// The forge's name of a delivery's event (its event header).
fn event_header(forge: Forge, headers: &HeaderMap) -> String {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    match forge {
        Forge::Github => header("x-github-event"),
        Forge::Gitea => {
            let forgejo = header("x-forgejo-event");
            if forgejo.is_empty() {
                header("x-gitea-event")
            } else {
                forgejo
            }
        }
        Forge::Gitlab => header("x-gitlab-event"),
    }
}

/// The event of a delivery whose signature held, when it is of the kind `wanted`.
pub fn read(
    forge: Forge,
    wanted: EventKind,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Event, Ignored> {
    let kind = event_header(forge, headers);
    let is = match (wanted, forge) {
        (EventKind::Issue, Forge::Github) => kind == "issues",
        (EventKind::Issue, Forge::Gitea) => kind == "issues" || kind == "issue_label",
        (EventKind::Issue, Forge::Gitlab) => kind == "Issue Hook",
        (EventKind::CheckRun, Forge::Github) => kind == "check_run",
        // Gitea and Forgejo document no check run event.
        (EventKind::CheckRun, Forge::Gitea) => false,
        (EventKind::CheckRun, Forge::Gitlab) => kind == "Pipeline Hook",
        (EventKind::Comment, Forge::Github) => kind == "issue_comment",
        (EventKind::Comment, Forge::Gitea) => {
            kind == "issue_comment" || kind == "pull_request_comment"
        }
        (EventKind::Comment, Forge::Gitlab) => kind == "Note Hook",
        (EventKind::Push, Forge::Github | Forge::Gitea) => kind == "push",
        (EventKind::Push, Forge::Gitlab) => kind == "Push Hook",
    };
    if !is {
        return Err(Ignored::OtherEvent { wanted, got: kind });
    }
    let payload: Value =
        serde_json::from_slice(body).map_err(|err| Ignored::Unreadable(err.to_string()))?;
    match wanted {
        EventKind::Issue => issue(forge, kind, &payload),
        EventKind::CheckRun => super::payloads::check_run(forge, kind, &payload),
        EventKind::Comment => super::payloads::comment(forge, kind, &payload),
        EventKind::Push => super::payloads::push(forge, kind, &payload),
    }
}

fn issue(forge: Forge, kind: String, payload: &Value) -> Result<Event, Ignored> {
    let payload = payload.clone();
    let event = match forge {
        Forge::Github => {
            let issue = &payload["issue"];
            let action = text(&payload, &["action"]);
            Event {
                kind,
                labels_added: match action.as_str() {
                    "labeled" => payload["label"]["name"]
                        .as_str()
                        .map(|l| vec![l.to_string()])
                        .unwrap_or_default(),
                    // An issue opened with labels already on.
                    "opened" => names(&issue["labels"], "name"),
                    _ => Vec::new(),
                },
                action,
                number: issue["number"].as_u64().unwrap_or_default(),
                title: text(issue, &["title"]),
                body: text(issue, &["body"]),
                url: text(issue, &["html_url"]),
                association: issue["author_association"]
                    .as_str()
                    .and_then(Association::parse),
                sender: text(&payload, &["sender", "login"]),
                repository: text(&payload, &["repository", "full_name"]),
                ..Event::default()
            }
        }
        Forge::Gitea => {
            let issue = &payload["issue"];
            let action = text(&payload, &["action"]);
            Event {
                kind,
                // Gitea says which labels an issue has now, not which were added.
                labels_added: match action.as_str() {
                    "label_updated" | "opened" => names(&issue["labels"], "name"),
                    _ => Vec::new(),
                },
                action,
                number: issue["number"].as_u64().unwrap_or_default(),
                title: text(issue, &["title"]),
                body: text(issue, &["body"]),
                url: text(issue, &["html_url"]),
                association: None,
                sender: text(&payload, &["sender", "login"]),
                repository: text(&payload, &["repository", "full_name"]),
                ..Event::default()
            }
        }
        Forge::Gitlab => {
            let attributes = &payload["object_attributes"];
            let previous = names(&payload["changes"]["labels"]["previous"], "title");
            let current = names(&payload["changes"]["labels"]["current"], "title");
            let action = text(attributes, &["action"]);
            Event {
                kind,
                labels_added: match action.as_str() {
                    "open" => names(&payload["labels"], "title"),
                    _ => current
                        .into_iter()
                        .filter(|l| !previous.contains(l))
                        .collect(),
                },
                action,
                number: attributes["iid"].as_u64().unwrap_or_default(),
                title: text(attributes, &["title"]),
                body: text(attributes, &["description"]),
                url: text(attributes, &["url"]),
                association: None,
                sender: text(&payload, &["user", "username"]),
                repository: text(&payload, &["project", "path_with_namespace"]),
                ..Event::default()
            }
        }
    };
    if event.number == 0 {
        return Err(Ignored::Unreadable("it names no issue number".into()));
    }
    Ok(event)
}

/// Whether `automation` fires for `event`.
pub fn fires(automation: &Automation, event: &Event) -> Result<(), Ignored> {
    match event.event {
        EventKind::Issue => {
            if let Some(label) = &automation.label {
                if !event.labels_added.iter().any(|l| l == label) {
                    return Err(Ignored::NotLabelled(label.clone()));
                }
            }
            // GitHub says who wrote the issue; Gitea and GitLab do not, and there only
            // someone with write (Gitea) or reporter (GitLab) access can put a label on.
            if let Some(association) = event.association {
                author(automation, association)?;
            }
        }
        EventKind::Comment => {
            if !event.on_pull {
                return Err(Ignored::NotOnPull);
            }
            if !matches!(event.action.as_str(), "created" | "") {
                return Err(Ignored::NotCreated(event.action.clone()));
            }
            if !mentions(&event.comment.body, &automation.mention) {
                return Err(Ignored::NotMentioned(automation.mention.clone()));
            }
            // Anyone may comment: a forge that does not say how the author relates to
            // the repository is taken as saying `none`.
            author(automation, event.association.unwrap_or(Association::None))?;
        }
        EventKind::CheckRun => {
            if event.action != "completed" || event.check.conclusion != "failure" {
                return Err(Ignored::NotFailed(format!(
                    "{}, {}",
                    event.action,
                    if event.check.conclusion.is_empty() {
                        "no conclusion"
                    } else {
                        &event.check.conclusion
                    }
                )));
            }
            branch(automation, event)?;
        }
        EventKind::Push => branch(automation, event)?,
    }
    Ok(())
}

fn author(automation: &Automation, association: Association) -> Result<(), Ignored> {
    if automation.authors.contains(&association) {
        return Ok(());
    }
    Err(Ignored::Author(
        serde_json::to_value(association)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
    ))
}

/// The event's branch is the automation's (when it names one), and one wright clones.
fn branch(automation: &Automation, event: &Event) -> Result<(), Ignored> {
    if !wright_sandbox::git::safe_branch_name(&event.branch) {
        return Err(Ignored::Unreadable(format!(
            "the branch '{}' is not a plain branch name",
            event.branch.escape_debug()
        )));
    }
    match &automation.branch {
        Some(wanted) if *wanted != event.branch => Err(Ignored::OtherBranch(event.branch.clone())),
        _ => Ok(()),
    }
}

/// Whether `text` mentions `@name` (as a whole name: not `@name-x`, not `a@name`).
pub fn mentions(text: &str, name: &str) -> bool {
    let wanted = format!("@{}", name.to_ascii_lowercase());
    let lower = text.to_ascii_lowercase();
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    lower.match_indices(&wanted).any(|(at, _)| {
        let before = lower[..at].chars().next_back();
        let after = lower[at + wanted.len()..].chars().next();
        !before.is_some_and(|c| is_name(c) || c == '@' || c == '.') && !after.is_some_and(is_name)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// GitHub's `issues` event, `labeled`, in the documented shape (fields trimmed).
    pub(crate) fn github_labeled(label: &str, association: &str) -> Value {
        serde_json::json!({
            "action": "labeled",
            "issue": {
                "url": "https://api.github.com/repos/octocat/Hello-World/issues/1347",
                "html_url": "https://github.com/octocat/Hello-World/issues/1347",
                "number": 1347,
                "state": "open",
                "title": "Found a bug",
                "body": "I'm having a problem with this.",
                "user": {"login": "octocat", "id": 1},
                "labels": [{"id": 208045946, "name": label, "color": "f29513", "default": true}],
                "author_association": association
            },
            "label": {"id": 208045946, "name": label, "color": "f29513"},
            "repository": {"id": 1296269, "full_name": "octocat/Hello-World",
                           "clone_url": "https://github.com/octocat/Hello-World.git"},
            "sender": {"login": "octocat", "id": 1}
        })
    }

    pub(crate) fn github_headers(event: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("x-github-event", event.parse().unwrap());
        headers.insert(
            "x-github-delivery",
            "72d3162e-cc78-11e3-81ab-4c9367dc0958".parse().unwrap(),
        );
        headers
    }

    pub(crate) fn automation(text: &str) -> Automation {
        wright_config::automations::parse(text, "c.toml")
            .unwrap()
            .remove(0)
    }

    const FIX: &str = "[automations.fix]\non = \"webhook\"\nforge = \"github\"\nsecret_env = \"S\"\nrepository = \"https://h/r.git\"\ntask = \"{issue.title}\"\nlabel = \"wright\"\n";

    #[test]
    fn a_labeled_issue_by_a_member_fires_and_others_do_not() {
        let headers = github_headers("issues");
        assert_eq!(
            delivery_id(Forge::Github, &headers).as_deref(),
            Some("72d3162e-cc78-11e3-81ab-4c9367dc0958")
        );
        let body = github_labeled("wright", "MEMBER").to_string();
        let event = read(Forge::Github, EventKind::Issue, &headers, body.as_bytes()).unwrap();
        assert_eq!(event.number, 1347);
        assert_eq!(event.title, "Found a bug");
        assert_eq!(event.labels_added, vec!["wright".to_string()]);
        assert_eq!(event.association, Some(Association::Member));
        assert_eq!(event.repository, "octocat/Hello-World");
        let fix = automation(FIX);
        assert_eq!(fires(&fix, &event), Ok(()));

        let other_label = github_labeled("bug", "OWNER").to_string();
        let event = read(
            Forge::Github,
            EventKind::Issue,
            &headers,
            other_label.as_bytes(),
        )
        .unwrap();
        assert_eq!(
            fires(&fix, &event),
            Err(Ignored::NotLabelled("wright".into()))
        );
        let stranger = github_labeled("wright", "NONE").to_string();
        let event = read(
            Forge::Github,
            EventKind::Issue,
            &headers,
            stranger.as_bytes(),
        )
        .unwrap();
        assert!(matches!(fires(&fix, &event), Err(Ignored::Author(_))));
        let open = automation(&format!("{FIX}authors = [\"none\", \"owner\"]\n"));
        assert_eq!(fires(&open, &event), Ok(()));

        assert!(matches!(
            read(Forge::Github, EventKind::Issue, &github_headers("ping"), b"{}"),
            Err(Ignored::OtherEvent { got, .. }) if got == "ping"
        ));
        assert!(matches!(
            read(Forge::Github, EventKind::Issue, &headers, b"not json"),
            Err(Ignored::Unreadable(_))
        ));
    }

    #[test]
    fn gitlab_and_gitea_issue_events() {
        let mut headers = HeaderMap::new();
        headers.insert("x-gitlab-event", "Issue Hook".parse().unwrap());
        let body = serde_json::json!({
            "object_kind": "issue",
            "user": {"username": "root"},
            "project": {"path_with_namespace": "gitlabhq/gitlab-test"},
            "object_attributes": {"iid": 23, "title": "New API: create/update/delete file",
                                  "description": "Create new API for manipulations with repository",
                                  "url": "http://example.com/diaspora/issues/23", "action": "update"},
            "labels": [{"title": "API"}, {"title": "wright"}],
            "changes": {"labels": {"previous": [{"title": "API"}],
                                   "current": [{"title": "API"}, {"title": "wright"}]}}
        })
        .to_string();
        let event = read(Forge::Gitlab, EventKind::Issue, &headers, body.as_bytes()).unwrap();
        assert_eq!(event.number, 23);
        assert_eq!(event.labels_added, vec!["wright".to_string()]);
        assert_eq!(event.association, None);

        let mut headers = HeaderMap::new();
        headers.insert("x-gitea-event", "issues".parse().unwrap());
        let body = serde_json::json!({
            "action": "label_updated", "number": 5,
            "issue": {"number": 5, "title": "t", "body": "b", "html_url": "http://g/o/r/issues/5",
                      "labels": [{"name": "wright"}]},
            "repository": {"full_name": "o/r"}, "sender": {"login": "u"}
        })
        .to_string();
        let event = read(Forge::Gitea, EventKind::Issue, &headers, body.as_bytes()).unwrap();
        assert_eq!((event.number, event.repository.as_str()), (5, "o/r"));
        assert_eq!(event.labels_added, vec!["wright".to_string()]);
    }
}
