//! A forge's webhook body, once its signature holds: the issue event it carries (GitHub's
//! `issues`, Gitea's and Forgejo's `issues`/`issue_label`, GitLab's `Issue Hook`), read
//! into the few fields an automation uses, and whether the automation fires for it.
//!
//! What it guarantees: everything read here is text of whoever could open the issue; it
//! only fills the task's fields (see `task`), and never chooses anything of the
//! automation (its repository, profile, limits, sandbox or network are its definition's).

use axum::http::HeaderMap;
use serde_json::Value;
use wright_config::automations::Association;
use wright_config::automations::Automation;
use wright_config::automations::Forge;

/// The fields of an issue event an automation uses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IssueEvent {
    /// The forge's kind of event (`issues`, `Issue Hook`).
    pub kind: String,
    /// What happened to the issue (`labeled`, `opened`, `label_updated`, `update`).
    pub action: String,
    pub number: u64,
    pub title: String,
    pub body: String,
    pub url: String,
    /// The labels this event added.
    pub labels_added: Vec<String>,
    /// Who wrote the issue, as the forge relates them to the repository (GitHub only).
    pub association: Option<Association>,
    pub sender: String,
    /// `OWNER/NAME` on the forge.
    pub repository: String,
}

/// Why a delivery starts nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ignored {
    /// Not an issue event (a ping, a push).
    NotAnIssue(String),
    /// Not JSON, or not of the documented shape.
    Unreadable(String),
    /// The label asked for was not added by this event.
    NotLabelled(String),
    /// Its author is not among those the automation fires for.
    Author(String),
}

impl Ignored {
    pub fn words(&self) -> String {
        match self {
            Ignored::NotAnIssue(kind) => format!("not an issue event ({kind})"),
            Ignored::Unreadable(why) => format!("the body is not an issue event: {why}"),
            Ignored::NotLabelled(label) => format!("the event does not add the label {label}"),
            Ignored::Author(who) => format!(
                "the issue's author ({who}) is not among the authors the automation fires for"
            ),
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

fn text(value: &Value, path: &[&str]) -> String {
    let mut at = value;
    for key in path {
        at = &at[*key];
    }
    at.as_str().unwrap_or_default().to_string()
}

fn names(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l[field].as_str().map(str::to_string))
        .collect()
}

/// The issue event of a delivery whose signature held.
pub fn read(forge: Forge, headers: &HeaderMap, body: &[u8]) -> Result<IssueEvent, Ignored> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let kind = match forge {
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
    };
    let is_issue = match forge {
        Forge::Github => kind == "issues",
        Forge::Gitea => kind == "issues" || kind == "issue_label",
        Forge::Gitlab => kind == "Issue Hook",
    };
    if !is_issue {
        return Err(Ignored::NotAnIssue(kind));
    }
    let payload: Value =
        serde_json::from_slice(body).map_err(|err| Ignored::Unreadable(err.to_string()))?;
    let event = match forge {
        Forge::Github => {
            let issue = &payload["issue"];
            let action = text(&payload, &["action"]);
            IssueEvent {
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
            }
        }
        Forge::Gitea => {
            let issue = &payload["issue"];
            let action = text(&payload, &["action"]);
            IssueEvent {
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
            }
        }
        Forge::Gitlab => {
            let attributes = &payload["object_attributes"];
            let previous = names(&payload["changes"]["labels"]["previous"], "title");
            let current = names(&payload["changes"]["labels"]["current"], "title");
            let action = text(attributes, &["action"]);
            IssueEvent {
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
            }
        }
    };
    if event.number == 0 {
        return Err(Ignored::Unreadable("it names no issue number".into()));
    }
    Ok(event)
}

/// Whether `automation` fires for `event`.
pub fn fires(automation: &Automation, event: &IssueEvent) -> Result<(), Ignored> {
    if let Some(label) = &automation.label {
        if !event.labels_added.iter().any(|l| l == label) {
            return Err(Ignored::NotLabelled(label.clone()));
        }
    }
    // GitHub says who wrote the issue; Gitea and GitLab do not, and there only someone
    // with write (Gitea) or reporter (GitLab) access can put a label on.
    if let Some(association) = event.association {
        if !automation.authors.contains(&association) {
            return Err(Ignored::Author(format!("{association:?}").to_lowercase()));
        }
    }
    Ok(())
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

    fn github_headers(event: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("x-github-event", event.parse().unwrap());
        headers.insert(
            "x-github-delivery",
            "72d3162e-cc78-11e3-81ab-4c9367dc0958".parse().unwrap(),
        );
        headers
    }

    fn automation(text: &str) -> Automation {
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
        let event = read(Forge::Github, &headers, body.as_bytes()).unwrap();
        assert_eq!(event.number, 1347);
        assert_eq!(event.title, "Found a bug");
        assert_eq!(event.labels_added, vec!["wright".to_string()]);
        assert_eq!(event.association, Some(Association::Member));
        assert_eq!(event.repository, "octocat/Hello-World");
        let fix = automation(FIX);
        assert_eq!(fires(&fix, &event), Ok(()));

        let other_label = github_labeled("bug", "OWNER").to_string();
        let event = read(Forge::Github, &headers, other_label.as_bytes()).unwrap();
        assert_eq!(
            fires(&fix, &event),
            Err(Ignored::NotLabelled("wright".into()))
        );
        let stranger = github_labeled("wright", "NONE").to_string();
        let event = read(Forge::Github, &headers, stranger.as_bytes()).unwrap();
        assert!(matches!(fires(&fix, &event), Err(Ignored::Author(_))));
        let open = automation(&format!("{FIX}authors = [\"none\", \"owner\"]\n"));
        assert_eq!(fires(&open, &event), Ok(()));

        assert!(matches!(
            read(Forge::Github, &github_headers("ping"), b"{}"),
            Err(Ignored::NotAnIssue(kind)) if kind == "ping"
        ));
        assert!(matches!(
            read(Forge::Github, &headers, b"not json"),
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
        let event = read(Forge::Gitlab, &headers, body.as_bytes()).unwrap();
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
        let event = read(Forge::Gitea, &headers, body.as_bytes()).unwrap();
        assert_eq!((event.number, event.repository.as_str()), (5, "o/r"));
        assert_eq!(event.labels_added, vec!["wright".to_string()]);
    }
}
