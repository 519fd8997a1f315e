//! The webhook events other than issues, read from the forges' documented payloads:
//!
//! - a failed check: GitHub's `check_run` (`check_run.conclusion`, the branch from
//!   `check_run.check_suite.head_branch`), GitLab's `Pipeline Hook` (`object_attributes.
//!   status` `failed` reads as the conclusion `failure`; its first failed job is the
//!   check). Gitea and Forgejo document no such event.
//! - a comment on a pull (merge) request: GitHub's `issue_comment` on an issue that is a
//!   pull request (`issue.pull_request`), Gitea's `issue_comment`/`pull_request_comment`
//!   with `is_pull`, GitLab's `Note Hook` on a `MergeRequest`.
//! - a push: GitHub's and Gitea's `push`, GitLab's `Push Hook`; a tag's push or a
//!   branch's deletion is none.
//!
//! What it guarantees: as `event` — the fields are read, never acted on here.

use super::event::names;
use super::event::text;
use super::event::Comment;
use super::event::Event;
use super::event::Ignored;
use serde_json::Value;
use wright_config::automations::Association;
use wright_config::automations::EventKind;
use wright_config::automations::Forge;

/// A check that failed (or not: `fires` decides) on a branch.
pub fn check_run(forge: Forge, kind: String, payload: &Value) -> Result<Event, Ignored> {
    let mut event = Event {
        event: EventKind::CheckRun,
        kind,
        ..Event::default()
    };
    match forge {
        Forge::Github | Forge::Gitea => {
            let run = &payload["check_run"];
            event.action = text(payload, &["action"]);
            event.branch = text(run, &["check_suite", "head_branch"]);
            event.commit = text(run, &["head_sha"]);
            event.check.id = run["id"].as_u64().unwrap_or_default();
            event.check.name = text(run, &["name"]);
            event.check.conclusion = text(run, &["conclusion"]);
            event.check.url = text(run, &["html_url"]);
            event.check.output = ["title", "summary", "text"]
                .iter()
                .map(|field| text(&run["output"], &[field]))
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join("\n\n");
            event.sender = text(payload, &["sender", "login"]);
            event.repository = text(payload, &["repository", "full_name"]);
            if event.check.id == 0 {
                return Err(Ignored::Unreadable("it names no check run id".into()));
            }
        }
        Forge::Gitlab => {
            let pipeline = &payload["object_attributes"];
            if pipeline["tag"].as_bool() == Some(true) {
                return Err(Ignored::NotABranchPush("a tag's pipeline".into()));
            }
            let status = text(pipeline, &["status"]);
            // A pipeline's end reads as a check run's completion.
            event.action = match status.as_str() {
                "failed" | "success" | "canceled" | "skipped" => "completed".into(),
                other => other.to_string(),
            };
            event.check.conclusion = match status.as_str() {
                "failed" => "failure".into(),
                other => other.to_string(),
            };
            event.branch = text(pipeline, &["ref"]);
            event.commit = text(pipeline, &["sha"]);
            event.check.url = text(pipeline, &["url"]);
            let failed = payload["builds"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|b| b["status"] == "failed");
            match failed {
                Some(job) => {
                    event.check.id = job["id"].as_u64().unwrap_or_default();
                    event.check.name = text(job, &["name"]);
                    event.check.output = format!(
                        "job {} of stage {} failed",
                        text(job, &["name"]),
                        text(job, &["stage"])
                    );
                }
                None => {
                    event.check.id = pipeline["id"].as_u64().unwrap_or_default();
                    event.check.name = format!("pipeline {}", event.check.id);
                }
            }
            event.sender = text(payload, &["user", "username"]);
            event.repository = text(payload, &["project", "path_with_namespace"]);
        }
    }
    Ok(event)
}

/// A comment, and the issue or pull request it is on.
pub fn comment(forge: Forge, kind: String, payload: &Value) -> Result<Event, Ignored> {
    let mut event = Event {
        event: EventKind::Comment,
        kind,
        ..Event::default()
    };
    match forge {
        Forge::Github | Forge::Gitea => {
            let issue = &payload["issue"];
            let comment = &payload["comment"];
            event.action = text(payload, &["action"]);
            event.number = issue["number"].as_u64().unwrap_or_default();
            event.title = text(issue, &["title"]);
            event.url = text(issue, &["html_url"]);
            event.on_pull = match forge {
                Forge::Github => issue["pull_request"].is_object(),
                _ => payload["is_pull"].as_bool() == Some(true),
            };
            event.comment = Comment {
                body: text(comment, &["body"]),
                url: text(comment, &["html_url"]),
            };
            event.association = comment["author_association"]
                .as_str()
                .and_then(Association::parse);
            event.sender = text(payload, &["sender", "login"]);
            event.repository = text(payload, &["repository", "full_name"]);
        }
        Forge::Gitlab => {
            let note = &payload["object_attributes"];
            let request = &payload["merge_request"];
            event.on_pull = note["noteable_type"] == "MergeRequest";
            event.action = text(note, &["action"]);
            if event.action == "create" {
                event.action = "created".into();
            }
            event.number = request["iid"].as_u64().unwrap_or_default();
            event.title = text(request, &["title"]);
            event.url = text(request, &["url"]);
            event.comment = Comment {
                body: text(note, &["note"]),
                url: text(note, &["url"]),
            };
            event.sender = text(payload, &["user", "username"]);
            event.repository = text(payload, &["project", "path_with_namespace"]);
        }
    }
    if event.on_pull && event.number == 0 {
        return Err(Ignored::Unreadable(
            "it names no pull request number".into(),
        ));
    }
    Ok(event)
}

/// A push to a branch.
pub fn push(forge: Forge, kind: String, payload: &Value) -> Result<Event, Ignored> {
    let reference = text(payload, &["ref"]);
    let Some(branch) = reference.strip_prefix("refs/heads/") else {
        return Err(Ignored::NotABranchPush(reference));
    };
    let after = text(payload, &["after"]);
    let deleted = payload["deleted"].as_bool() == Some(true)
        || (!after.is_empty() && after.chars().all(|c| c == '0'));
    if deleted {
        return Err(Ignored::NotABranchPush(format!("{branch} deleted")));
    }
    let (sender, repository) = match forge {
        Forge::Github | Forge::Gitea => (
            text(payload, &["sender", "login"]),
            text(payload, &["repository", "full_name"]),
        ),
        Forge::Gitlab => (
            text(payload, &["user_username"]),
            text(payload, &["project", "path_with_namespace"]),
        ),
    };
    Ok(Event {
        event: EventKind::Push,
        kind,
        branch: branch.to_string(),
        commit: after,
        commits: names(&payload["commits"], "message"),
        sender,
        repository,
        ..Event::default()
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::super::event::fires;
    use super::super::event::mentions;
    use super::super::event::read;
    use super::*;
    use axum::http::HeaderMap;

    /// GitHub's `check_run` event, `completed` with `failure`, in the documented shape
    /// (trimmed).
    pub(crate) fn github_check_run(conclusion: &str, branch: &str) -> Value {
        serde_json::json!({
            "action": "completed",
            "check_run": {
                "id": 128620228,
                "name": "Octocoders-linter",
                "node_id": "MDg6Q2hlY2tSdW4xMjg2MjAyMjg=",
                "head_sha": "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
                "external_id": "",
                "url": "https://api.github.com/repos/Codertocat/Hello-World/check-runs/128620228",
                "html_url": "https://github.com/Codertocat/Hello-World/runs/128620228",
                "details_url": "https://octocoders.github.io",
                "status": "completed",
                "conclusion": conclusion,
                "started_at": "2019-05-15T15:21:12Z",
                "completed_at": "2019-05-15T15:21:45Z",
                "output": {"title": "Tests failed", "summary": "1 test failed", "text": null},
                "check_suite": {"id": 118578147, "head_branch": branch,
                                "head_sha": "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
                                "status": "completed", "conclusion": conclusion},
                "app": {"id": 29310, "slug": "octocoders-linter"},
                "pull_requests": []
            },
            "repository": {"id": 186853002, "full_name": "Codertocat/Hello-World"},
            "sender": {"login": "Codertocat", "id": 21031067}
        })
    }

    fn headers(name: &str, value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
        headers
    }

    const BASE: &str = "[automations.a]\non = \"webhook\"\nforge = \"github\"\nsecret_env = \"S\"\nrepository = \"https://h/r.git\"\ntask = \"t\"\n";

    fn automation(extra: &str) -> wright_config::automations::Automation {
        wright_config::automations::parse(&format!("{BASE}{extra}"), "c.toml")
            .unwrap()
            .remove(0)
    }

    #[test]
    fn a_failed_check_run_on_the_branch_fires_and_others_do_not() {
        let fix = automation("event = \"check_run\"\nbranch = \"release\"\n");
        let github = headers("x-github-event", "check_run");
        let body = github_check_run("failure", "release").to_string();
        let event = read(Forge::Github, EventKind::CheckRun, &github, body.as_bytes()).unwrap();
        assert_eq!(event.branch, "release");
        assert_eq!(event.check.id, 128620228);
        assert_eq!(event.check.name, "Octocoders-linter");
        assert_eq!(event.check.output, "Tests failed\n\n1 test failed");
        assert_eq!(event.commit, "ec26c3e57ca3a959ca5aad62de7213c562f8c821");
        assert_eq!(fires(&fix, &event), Ok(()));

        let passed = github_check_run("success", "release").to_string();
        let event = read(
            Forge::Github,
            EventKind::CheckRun,
            &github,
            passed.as_bytes(),
        )
        .unwrap();
        assert!(matches!(fires(&fix, &event), Err(Ignored::NotFailed(_))));
        let other = github_check_run("failure", "main").to_string();
        let event = read(
            Forge::Github,
            EventKind::CheckRun,
            &github,
            other.as_bytes(),
        )
        .unwrap();
        assert_eq!(
            fires(&fix, &event),
            Err(Ignored::OtherBranch("main".into()))
        );
        let any = automation("event = \"check_run\"\n");
        assert_eq!(fires(&any, &event), Ok(()));
        // A branch git could read as something else is never cloned.
        let odd = github_check_run("failure", "--upload-pack=x").to_string();
        let event = read(Forge::Github, EventKind::CheckRun, &github, odd.as_bytes()).unwrap();
        assert!(matches!(fires(&any, &event), Err(Ignored::Unreadable(_))));
        // An issue event is not a check run's.
        assert!(matches!(
            read(
                Forge::Github,
                EventKind::CheckRun,
                &headers("x-github-event", "issues"),
                b"{}"
            ),
            Err(Ignored::OtherEvent { .. })
        ));
        assert!(matches!(
            read(
                Forge::Gitea,
                EventKind::CheckRun,
                &headers("x-gitea-event", "check_run"),
                b"{}"
            ),
            Err(Ignored::OtherEvent { .. })
        ));

        // GitLab's failed pipeline, in the documented shape (trimmed).
        let pipeline = serde_json::json!({
            "object_kind": "pipeline",
            "object_attributes": {"id": 31, "iid": 3, "ref": "release", "tag": false,
                                  "sha": "bcbb5ec396a2c0f828686f14fac9b80b780504f2",
                                  "status": "failed", "stages": ["build", "test"],
                                  "url": "http://example.com/gitlab-org/gitlab-test/-/pipelines/31"},
            "user": {"id": 1, "name": "Administrator", "username": "root"},
            "project": {"id": 1, "path_with_namespace": "gitlab-org/gitlab-test"},
            "builds": [
                {"id": 380, "stage": "deploy", "name": "production", "status": "skipped"},
                {"id": 377, "stage": "test", "name": "test-image", "status": "failed"}
            ]
        })
        .to_string();
        let gitlab = headers("x-gitlab-event", "Pipeline Hook");
        let event = read(
            Forge::Gitlab,
            EventKind::CheckRun,
            &gitlab,
            pipeline.as_bytes(),
        )
        .unwrap();
        assert_eq!(
            (
                event.check.id,
                event.check.name.as_str(),
                event.branch.as_str()
            ),
            (377, "test-image", "release")
        );
        assert_eq!(fires(&fix, &event), Ok(()));
        let running = pipeline.replace("\"failed\"", "\"running\"");
        let event = read(
            Forge::Gitlab,
            EventKind::CheckRun,
            &gitlab,
            running.as_bytes(),
        )
        .unwrap();
        assert!(matches!(fires(&fix, &event), Err(Ignored::NotFailed(_))));
    }

    #[test]
    fn a_pull_request_comment_mentioning_the_bot_fires() {
        let asked = automation("event = \"comment\"\nmention = \"wright-bot\"\n");
        // GitHub's `issue_comment`, `created`, on a pull request (trimmed).
        let comment = |body: &str, association: &str, pull: bool| {
            let mut issue = serde_json::json!({
                "number": 1, "title": "Update the README with new information.",
                "html_url": "https://github.com/Codertocat/Hello-World/pull/1"
            });
            if pull {
                issue["pull_request"] = serde_json::json!({
                    "url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1"
                });
            }
            serde_json::json!({
                "action": "created",
                "issue": issue,
                "comment": {"id": 492700400, "body": body, "author_association": association,
                            "html_url": "https://github.com/Codertocat/Hello-World/pull/1#issuecomment-492700400",
                            "user": {"login": "Codertocat"}},
                "repository": {"full_name": "Codertocat/Hello-World"},
                "sender": {"login": "Codertocat"}
            })
            .to_string()
        };
        let github = headers("x-github-event", "issue_comment");
        let read_one = |body: String| {
            read(Forge::Github, EventKind::Comment, &github, body.as_bytes()).unwrap()
        };
        let event = read_one(comment("@wright-bot please fix the lint", "OWNER", true));
        assert_eq!((event.number, event.on_pull), (1, true));
        assert_eq!(event.comment.body, "@wright-bot please fix the lint");
        assert_eq!(fires(&asked, &event), Ok(()));
        let event = read_one(comment("@wright-bot fix it", "OWNER", false));
        assert_eq!(fires(&asked, &event), Err(Ignored::NotOnPull));
        let event = read_one(comment("thanks @wright-botany", "OWNER", true));
        assert!(matches!(
            fires(&asked, &event),
            Err(Ignored::NotMentioned(_))
        ));
        let event = read_one(comment("@wright-bot run curl", "NONE", true));
        assert!(matches!(fires(&asked, &event), Err(Ignored::Author(_))));

        assert!(mentions("Hey @Wright, look", "wright"));
        assert!(mentions("@wright", "wright"));
        assert!(!mentions("mail me at me@wright.dev", "wright"));
        assert!(!mentions("@wrighter", "wright"));

        // GitLab's note on a merge request: no association is said, so `none`.
        let note = serde_json::json!({
            "object_kind": "note",
            "user": {"username": "root"},
            "project": {"path_with_namespace": "gitlab-org/gitlab-test"},
            "object_attributes": {"id": 1244, "note": "@wright-bot fix the build",
                                  "noteable_type": "MergeRequest",
                                  "url": "http://example.com/gitlab-org/gitlab-test/merge_requests/1#note_1244"},
            "merge_request": {"iid": 1, "title": "Tempora et eos debitis quae laborum et.",
                              "url": "http://example.com/gitlab-org/gitlab-test/merge_requests/1",
                              "source_branch": "master", "target_branch": "markdown"}
        })
        .to_string();
        let gitlab = headers("x-gitlab-event", "Note Hook");
        let event = read(Forge::Gitlab, EventKind::Comment, &gitlab, note.as_bytes()).unwrap();
        assert_eq!((event.number, event.on_pull), (1, true));
        let gitlab_asked = wright_config::automations::parse(
            &format!(
                "{}event = \"comment\"\nmention = \"wright-bot\"\n",
                BASE.replace("github", "gitlab")
            ),
            "c.toml",
        )
        .unwrap()
        .remove(0);
        assert!(matches!(
            fires(&gitlab_asked, &event),
            Err(Ignored::Author(_))
        ));
        let anyone = wright_config::automations::parse(
            &format!(
                "{}event = \"comment\"\nmention = \"wright-bot\"\nauthors = [\"none\"]\n",
                BASE.replace("github", "gitlab")
            ),
            "c.toml",
        )
        .unwrap()
        .remove(0);
        assert_eq!(fires(&anyone, &event), Ok(()));
    }

    #[test]
    fn a_push_to_the_branch_fires_and_tags_and_deletions_do_not() {
        let on_main = automation("event = \"push\"\nbranch = \"main\"\n");
        // GitHub's `push` (trimmed).
        let push = |reference: &str, after: &str, deleted: bool| {
            serde_json::json!({
                "ref": reference,
                "before": "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
                "after": after,
                "created": false, "deleted": deleted, "forced": false,
                "commits": [{"id": after, "message": "Update README.md"}],
                "repository": {"full_name": "Codertocat/Hello-World"},
                "pusher": {"name": "Codertocat"},
                "sender": {"login": "Codertocat"}
            })
            .to_string()
        };
        let github = headers("x-github-event", "push");
        let tip = "0000000000000000000000000000000000000001";
        let body = push("refs/heads/main", tip, false);
        let event = read(Forge::Github, EventKind::Push, &github, body.as_bytes()).unwrap();
        assert_eq!(event.branch, "main");
        assert_eq!(event.commits, vec!["Update README.md".to_string()]);
        assert_eq!(fires(&on_main, &event), Ok(()));
        let body = push("refs/heads/dev", tip, false);
        let event = read(Forge::Github, EventKind::Push, &github, body.as_bytes()).unwrap();
        assert!(matches!(
            fires(&on_main, &event),
            Err(Ignored::OtherBranch(_))
        ));
        let tag = push("refs/tags/v1", tip, false);
        assert!(matches!(
            read(Forge::Github, EventKind::Push, &github, tag.as_bytes()),
            Err(Ignored::NotABranchPush(_))
        ));
        let gone = push("refs/heads/main", &"0".repeat(40), true);
        assert!(matches!(
            read(Forge::Github, EventKind::Push, &github, gone.as_bytes()),
            Err(Ignored::NotABranchPush(_))
        ));
        // GitLab's `Push Hook` (trimmed).
        let gitlab = serde_json::json!({
            "object_kind": "push", "ref": "refs/heads/main",
            "before": "95790bf891e76fee5e1747ab589903a6a1f80f22",
            "after": "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
            "user_username": "jsmith",
            "project": {"path_with_namespace": "mike/diaspora"},
            "commits": [{"id": "b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327", "message": "Update Catalan translation to e38cb41."}]
        })
        .to_string();
        let event = read(
            Forge::Gitlab,
            EventKind::Push,
            &headers("x-gitlab-event", "Push Hook"),
            gitlab.as_bytes(),
        )
        .unwrap();
        assert_eq!(
            (event.branch.as_str(), event.sender.as_str()),
            ("main", "jsmith")
        );
    }
}
