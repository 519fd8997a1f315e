//! The scripted forge's Gitea (and Forgejo) and GitLab shapes, each request checked
//! against that forge's documented REST API and answered as it answers:
//!
//! - Gitea, under `/api/v1` (`Authorization: token TOKEN`): `GET
//!   /repos/{owner}/{repo}/pulls?state=open`, `POST …/pulls` (`head`, `base`, `title`
//!   required; 409 when one of the branch is open), `PATCH …/pulls/{index}` (answered
//!   201), `POST …/issues/{index}/comments` (`body`).
//! - GitLab, under `/api/v4` (`PRIVATE-TOKEN: TOKEN`; the project's id is its path,
//!   URL-encoded): `GET /projects/{id}/merge_requests?source_branch=…&state=opened`, `POST
//!   …/merge_requests` (`source_branch`, `target_branch`, `title` required; 409 when one of
//!   the branch is open), `PUT …/merge_requests/{iid}`, `POST …/issues/{iid}/notes`
//!   (`body`).

use super::ForgeRequest;
use super::Inner;
use super::Shared;
use axum::body::Bytes;
use axum::extract::Path;
use axum::extract::RawQuery;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::StatusCode;
use axum::routing::get;
use axum::routing::post;
use axum::Json;
use axum::Router;
use serde_json::json;
use serde_json::Value;

type Answer = (StatusCode, Json<Value>);

pub(super) fn routes(router: Router<Shared>) -> Router<Shared> {
    router
        .route(
            "/api/v1/repos/{owner}/{repo}/pulls",
            get(gitea_list).post(gitea_create),
        )
        .route(
            "/api/v1/repos/{owner}/{repo}/pulls/{number}",
            axum::routing::patch(gitea_update),
        )
        .route(
            "/api/v1/repos/{owner}/{repo}/issues/{number}/comments",
            post(gitea_comment),
        )
        .route(
            "/api/v4/projects/{id}/merge_requests",
            get(gitlab_list).post(gitlab_create),
        )
        .route(
            "/api/v4/projects/{id}/merge_requests/{iid}",
            axum::routing::put(gitlab_update),
        )
        .route(
            "/api/v4/projects/{id}/issues/{iid}/notes",
            post(gitlab_note),
        )
}

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, Inner> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

fn header(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

/// Which forge's API a request was made to (how it authenticates).
#[derive(Clone, Copy)]
enum Shape {
    Gitea,
    Gitlab,
}

/// Records the request and checks its authentication (`Err`: the forge's 401) and, for
/// a body, its content type.
fn check(
    inner: &mut Inner,
    shape: Shape,
    method: &str,
    path: &str,
    query: &str,
    headers: &HeaderMap,
    body: &Value,
) -> Result<(), Answer> {
    let authenticated = match shape {
        Shape::Gitea => gitea_auth(inner, headers),
        Shape::Gitlab => gitlab_auth(inner, headers),
    };
    inner.requests.push(ForgeRequest {
        method: method.to_string(),
        path: path.to_string(),
        query: query.to_string(),
        body: body.clone(),
    });
    if !body.is_null() && !header(headers, "content-type").starts_with("application/json") {
        inner
            .violations
            .push(format!("{method} {path}: the body is not sent as JSON"));
    }
    if !authenticated {
        return Err((
            StatusCode::UNAUTHORIZED,
            Json(json!({"message": "401 Unauthorized"})),
        ));
    }
    Ok(())
}

fn parse(body: &Bytes) -> Value {
    serde_json::from_slice(body).unwrap_or(Value::Null)
}

/// A violation of the documented body: kept, and answered 422.
fn invalid(inner: &mut Inner, what: String) -> Answer {
    inner.violations.push(what);
    (
        StatusCode::UNPROCESSABLE_ENTITY,
        Json(json!({"message": "Validation Failed"})),
    )
}

/// Whether `body`'s fields are among `allowed` with `required` there, all strings.
fn strings(body: &Value, required: &[&str], allowed: &[&str]) -> bool {
    let Some(fields) = body.as_object() else {
        return false;
    };
    required.iter().all(|f| body[*f].is_string())
        && fields
            .iter()
            .all(|(k, v)| allowed.contains(&k.as_str()) && v.is_string())
}

fn param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == name).then(|| v.replace("%2F", "/").replace("%3A", ":"))
    })
}

fn gitea_auth(inner: &Inner, headers: &HeaderMap) -> bool {
    header(headers, "authorization") == format!("token {}", inner.token)
}

async fn gitea_list(
    State(shared): State<Shared>,
    Path((owner, repo)): Path<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Answer {
    let mut inner = lock(&shared);
    let query = query.unwrap_or_default();
    let path = format!("/api/v1/repos/{owner}/{repo}/pulls");
    if let Err(answer) = check(
        &mut inner,
        Shape::Gitea,
        "GET",
        &path,
        &query,
        &headers,
        &Value::Null,
    ) {
        return answer;
    }
    let state = param(&query, "state").unwrap_or_else(|| "open".into());
    let found: Vec<Value> = inner
        .pulls
        .iter()
        .filter(|p| p["shape"] == "gitea" && (state == "all" || p["state"] == state.as_str()))
        .cloned()
        .collect();
    (StatusCode::OK, Json(Value::Array(found)))
}

async fn gitea_create(
    State(shared): State<Shared>,
    Path((owner, repo)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Answer {
    let mut inner = lock(&shared);
    let body = parse(&body);
    let path = format!("/api/v1/repos/{owner}/{repo}/pulls");
    if let Err(answer) = check(&mut inner, Shape::Gitea, "POST", &path, "", &headers, &body) {
        return answer;
    }
    if !strings(
        &body,
        &["head", "base", "title"],
        &["head", "base", "title", "body"],
    ) {
        return invalid(
            &mut inner,
            format!("POST {path}: not Gitea's CreatePullRequestOption: {body}"),
        );
    }
    let head = body["head"].as_str().unwrap_or_default().to_string();
    let open = inner.pulls.iter().any(|p| {
        p["shape"] == "gitea" && p["head"]["ref"] == head.as_str() && p["state"] == "open"
    });
    if open {
        return (
            StatusCode::CONFLICT,
            Json(json!({"message": "pull request already exists for these targets"})),
        );
    }
    let number = inner.pulls.len() as u64 + 1;
    let pull = json!({
        "shape": "gitea",
        "number": number,
        "state": "open",
        "html_url": format!("https://gitea.example/{owner}/{repo}/pulls/{number}"),
        "title": body["title"],
        "body": body["body"],
        "head": {"ref": head},
        "base": {"ref": body["base"]},
    });
    inner.pulls.push(pull.clone());
    (StatusCode::CREATED, Json(pull))
}

async fn gitea_update(
    State(shared): State<Shared>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    headers: HeaderMap,
    body: Bytes,
) -> Answer {
    let mut inner = lock(&shared);
    let body = parse(&body);
    let path = format!("/api/v1/repos/{owner}/{repo}/pulls/{number}");
    if let Err(answer) = check(
        &mut inner,
        Shape::Gitea,
        "PATCH",
        &path,
        "",
        &headers,
        &body,
    ) {
        return answer;
    }
    if !strings(&body, &[], &["title", "body", "base", "state"]) {
        return invalid(
            &mut inner,
            format!("PATCH {path}: not Gitea's EditPullRequestOption: {body}"),
        );
    }
    let Some(pull) = inner
        .pulls
        .iter_mut()
        .find(|p| p["shape"] == "gitea" && p["number"] == number)
    else {
        return (StatusCode::NOT_FOUND, Json(json!({"message": "not found"})));
    };
    for field in ["title", "body"] {
        if body[field].is_string() {
            pull[field] = body[field].clone();
        }
    }
    // Gitea documents 201 for an edit.
    (StatusCode::CREATED, Json(pull.clone()))
}

async fn gitea_comment(
    State(shared): State<Shared>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    headers: HeaderMap,
    body: Bytes,
) -> Answer {
    let mut inner = lock(&shared);
    let body = parse(&body);
    let path = format!("/api/v1/repos/{owner}/{repo}/issues/{number}/comments");
    if let Err(answer) = check(&mut inner, Shape::Gitea, "POST", &path, "", &headers, &body) {
        return answer;
    }
    if !strings(&body, &["body"], &["body"]) {
        return invalid(
            &mut inner,
            format!("POST {path}: not Gitea's CreateIssueCommentOption: {body}"),
        );
    }
    let id = 2000 + inner.comments.len() as u64;
    let comment = json!({
        "id": id,
        "issue": number,
        "html_url": format!("https://gitea.example/{owner}/{repo}/issues/{number}#issuecomment-{id}"),
        "body": body["body"],
    });
    inner.comments.push(comment.clone());
    (StatusCode::CREATED, Json(comment))
}

fn gitlab_auth(inner: &Inner, headers: &HeaderMap) -> bool {
    header(headers, "private-token") == inner.token
}

/// GitLab's path of a project whose id is `id` (as the client encoded it).
fn project(id: &str) -> String {
    format!("/api/v4/projects/{}", id.replace('/', "%2F"))
}

async fn gitlab_list(
    State(shared): State<Shared>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Answer {
    let mut inner = lock(&shared);
    let query = query.unwrap_or_default();
    let path = format!("{}/merge_requests", project(&id));
    if let Err(answer) = check(
        &mut inner,
        Shape::Gitlab,
        "GET",
        &path,
        &query,
        &headers,
        &Value::Null,
    ) {
        return answer;
    }
    let state = param(&query, "state").unwrap_or_else(|| "all".into());
    let source = param(&query, "source_branch");
    let found: Vec<Value> = inner
        .pulls
        .iter()
        .filter(|p| {
            p["shape"] == "gitlab"
                && (state == "all" || p["state"] == state.as_str())
                && source.as_deref().is_none_or(|s| p["source_branch"] == s)
        })
        .cloned()
        .collect();
    (StatusCode::OK, Json(Value::Array(found)))
}

async fn gitlab_create(
    State(shared): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Answer {
    let mut inner = lock(&shared);
    let body = parse(&body);
    let path = format!("{}/merge_requests", project(&id));
    if let Err(answer) = check(
        &mut inner,
        Shape::Gitlab,
        "POST",
        &path,
        "",
        &headers,
        &body,
    ) {
        return answer;
    }
    let allowed = ["source_branch", "target_branch", "title", "description"];
    if !strings(
        &body,
        &["source_branch", "target_branch", "title"],
        &allowed,
    ) {
        return invalid(
            &mut inner,
            format!("POST {path}: not GitLab's merge request attributes: {body}"),
        );
    }
    let source = body["source_branch"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let open = inner.pulls.iter().any(|p| {
        p["shape"] == "gitlab" && p["source_branch"] == source.as_str() && p["state"] == "opened"
    });
    if open {
        return (
            StatusCode::CONFLICT,
            Json(
                json!({"message": ["Another open merge request already exists for this source branch"]}),
            ),
        );
    }
    let iid = inner.pulls.len() as u64 + 1;
    let merge = json!({
        "shape": "gitlab",
        "iid": iid,
        "state": "opened",
        "web_url": format!("https://gitlab.example/{id}/-/merge_requests/{iid}"),
        "title": body["title"],
        "description": body["description"],
        "source_branch": source,
        "target_branch": body["target_branch"],
    });
    inner.pulls.push(merge.clone());
    (StatusCode::CREATED, Json(merge))
}

async fn gitlab_update(
    State(shared): State<Shared>,
    Path((id, iid)): Path<(String, u64)>,
    headers: HeaderMap,
    body: Bytes,
) -> Answer {
    let mut inner = lock(&shared);
    let body = parse(&body);
    let path = format!("{}/merge_requests/{iid}", project(&id));
    if let Err(answer) = check(&mut inner, Shape::Gitlab, "PUT", &path, "", &headers, &body) {
        return answer;
    }
    if !strings(
        &body,
        &[],
        &["title", "description", "target_branch", "state_event"],
    ) {
        return invalid(
            &mut inner,
            format!("PUT {path}: not GitLab's merge request attributes: {body}"),
        );
    }
    let Some(merge) = inner
        .pulls
        .iter_mut()
        .find(|p| p["shape"] == "gitlab" && p["iid"] == iid)
    else {
        return (
            StatusCode::NOT_FOUND,
            Json(json!({"message": "404 Not found"})),
        );
    };
    for field in ["title", "description"] {
        if body[field].is_string() {
            merge[field] = body[field].clone();
        }
    }
    (StatusCode::OK, Json(merge.clone()))
}

async fn gitlab_note(
    State(shared): State<Shared>,
    Path((id, iid)): Path<(String, u64)>,
    headers: HeaderMap,
    body: Bytes,
) -> Answer {
    let mut inner = lock(&shared);
    let body = parse(&body);
    let path = format!("{}/issues/{iid}/notes", project(&id));
    if let Err(answer) = check(
        &mut inner,
        Shape::Gitlab,
        "POST",
        &path,
        "",
        &headers,
        &body,
    ) {
        return answer;
    }
    if !strings(&body, &["body"], &["body", "internal"]) {
        return invalid(
            &mut inner,
            format!("POST {path}: not GitLab's note attributes: {body}"),
        );
    }
    let note_id = 3000 + inner.comments.len() as u64;
    // GitLab's note: no address of its own.
    let note = json!({
        "id": note_id,
        "issue": iid,
        "body": body["body"],
        "noteable_type": "Issue",
        "noteable_iid": iid,
    });
    inner.comments.push(note.clone());
    (StatusCode::CREATED, Json(note))
}
