//! A scripted forge REST API in GitHub's shape, for the pull requests and comments of
//! automations: `GET /repos/{owner}/{repo}/pulls?head=OWNER:BRANCH&state=open`, `POST
//! /repos/{owner}/{repo}/pulls`, `PATCH /repos/{owner}/{repo}/pulls/{number}` and `POST
//! /repos/{owner}/{repo}/issues/{number}/comments`, each
//! request checked against GitHub's documentation (method, path, the `Accept`,
//! `X-GitHub-Api-Version`, `User-Agent` and `Authorization: Bearer` headers, the body's
//! fields and types), answered as GitHub answers (201 with the pull request, 401 `Bad
//! credentials`, 422 when one of the branch is open already), and recorded; what did
//! not match the documentation is kept in `violations`. Gitea's (and Forgejo's) and
//! GitLab's shapes are served beside it, under `/api/v1` and `/api/v4` (`others`).
//!
//! Issues are opened (`POST /repos/{owner}/{repo}/issues`: `title` a string, required;
//! `body` a string) and read (`GET /repos/{owner}/{repo}/issues/{number}`, 404 for one
//! it has not), numbered after the pull requests as GitHub numbers both in one series.
//!
//! A job's log (`GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs`) is answered as
//! GitHub does: `302 Found` with a `Location` of a short-lived download URL (here
//! `/download/jobs/{job_id}`, whose request must carry no `Authorization`: GitHub's URL
//! is signed, and the token is not for its host), or 404 for a job it has no log of.

mod others;

use axum::body::Bytes;
use axum::extract::Path;
use axum::extract::RawQuery;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::Method;
use axum::http::StatusCode;
use axum::routing::get;
use axum::routing::patch;
use axum::Json;
use axum::Router;
use serde_json::json;
use serde_json::Value;
use std::sync::Arc;
use std::sync::Mutex;

/// One request the forge received.
#[derive(Debug, Clone)]
pub struct ForgeRequest {
    pub method: String,
    pub path: String,
    pub query: String,
    pub body: Value,
}

#[derive(Default)]
struct Inner {
    token: String,
    pulls: Vec<Value>,
    comments: Vec<Value>,
    requests: Vec<ForgeRequest>,
    violations: Vec<String>,
    /// The issues opened.
    issues: Vec<Value>,
    /// The jobs' logs, by job id.
    logs: std::collections::HashMap<u64, String>,
}

type Shared = Arc<Mutex<Inner>>;

pub struct ScriptedForge {
    inner: Shared,
    port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl ScriptedForge {
    /// Starts on an ephemeral loopback port; requests must carry `token`.
    pub async fn start(token: &str) -> std::io::Result<Self> {
        let inner: Shared = Arc::new(Mutex::new(Inner {
            token: token.to_string(),
            ..Inner::default()
        }));
        let app = others::routes(Router::new())
            .route("/repos/{owner}/{repo}/pulls", get(list).post(create))
            .route(
                "/repos/{owner}/{repo}/pulls/{number}",
                patch(update).get(get_pull),
            )
            .route(
                "/repos/{owner}/{repo}/issues/{number}/comments",
                axum::routing::post(comment),
            )
            .route(
                "/repos/{owner}/{repo}/actions/jobs/{job}/logs",
                get(job_log),
            )
            .route("/download/jobs/{job}", get(download))
            .route(
                "/repos/{owner}/{repo}/issues",
                axum::routing::post(open_issue),
            )
            .route("/repos/{owner}/{repo}/issues/{number}", get(issue))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { inner, port, task })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn requests(&self) -> Vec<ForgeRequest> {
        self.lock().requests.clone()
    }

    pub fn pulls(&self) -> Vec<Value> {
        self.lock().pulls.clone()
    }

    /// The comments made, each with its `issue` number.
    pub fn comments(&self) -> Vec<Value> {
        self.lock().comments.clone()
    }

    /// The issues opened (`POST /repos/{owner}/{repo}/issues`).
    pub fn issues(&self) -> Vec<Value> {
        self.lock().issues.clone()
    }

    /// Closes issue `number`, as a person would.
    pub fn close_issue(&self, number: u64) {
        for issue in &mut self.lock().issues {
            if issue["number"] == number {
                issue["state"] = json!("closed");
            }
        }
    }

    /// Adds an open pull request of `head` into `base`, from `head_repository` (another
    /// `OWNER/NAME` than the request's path: a fork's); its number comes back.
    pub fn add_pull(
        &self,
        owner: &str,
        repo: &str,
        head: &str,
        base: &str,
        head_repository: &str,
    ) -> u64 {
        let mut inner = self.lock();
        let number = (inner.pulls.len() + inner.issues.len()) as u64 + 1;
        inner.pulls.push(json!({
            "number": number,
            "state": "open",
            "html_url": format!("https://github.com/{owner}/{repo}/pull/{number}"),
            "title": format!("Work on {head}"),
            "body": null,
            "head": {"ref": head, "repo": {"full_name": head_repository}},
            "base": {"ref": base},
        }));
        number
    }

    /// Serves `log` as job `job`'s.
    pub fn set_job_log(&self, job: u64, log: &str) {
        self.lock().logs.insert(job, log.to_string());
    }

    pub fn violations(&self) -> Vec<String> {
        self.lock().violations.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for ScriptedForge {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Checks the headers GitHub's REST documentation asks for; `Err` is the answer.
fn check(
    inner: &mut Inner,
    method: &Method,
    path: &str,
    query: &str,
    headers: &HeaderMap,
    body: &Value,
) -> Result<(), (StatusCode, Json<Value>)> {
    inner.requests.push(ForgeRequest {
        method: method.to_string(),
        path: path.to_string(),
        query: query.to_string(),
        body: body.clone(),
    });
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    if header("accept") != "application/vnd.github+json" {
        inner
            .violations
            .push(format!("{method} {path}: Accept is '{}'", header("accept")));
    }
    if header("x-github-api-version") != "2022-11-28" {
        inner
            .violations
            .push(format!("{method} {path}: no X-GitHub-Api-Version"));
    }
    if header("user-agent").is_empty() {
        // GitHub refuses a request without one.
        inner
            .violations
            .push(format!("{method} {path}: no User-Agent"));
    }
    if header("authorization") != format!("Bearer {}", inner.token) {
        return Err((
            StatusCode::UNAUTHORIZED,
            Json(
                json!({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}),
            ),
        ));
    }
    Ok(())
}

fn parse(body: &Bytes) -> Value {
    serde_json::from_slice(body).unwrap_or(Value::Null)
}

async fn list(
    State(inner): State<Shared>,
    Path((owner, repo)): Path<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> (StatusCode, Json<Value>) {
    let mut inner = inner.lock().unwrap_or_else(|e| e.into_inner());
    let query = query.unwrap_or_default();
    let path = format!("/repos/{owner}/{repo}/pulls");
    if let Err(answer) = check(
        &mut inner,
        &Method::GET,
        &path,
        &query,
        &headers,
        &Value::Null,
    ) {
        return answer;
    }
    let param = |name: &str| {
        query.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            (k == name).then(|| v.replace("%3A", ":").replace("%2F", "/"))
        })
    };
    let head = param("head").unwrap_or_default();
    let state = param("state").unwrap_or_else(|| "open".into());
    let found: Vec<Value> = inner
        .pulls
        .iter()
        .filter(|p| {
            p["shape"].is_null()
                && p["state"] == state.as_str()
                && format!("{owner}:{}", p["head"]["ref"].as_str().unwrap_or_default()) == head
        })
        .cloned()
        .collect();
    (StatusCode::OK, Json(Value::Array(found)))
}

async fn create(
    State(inner): State<Shared>,
    Path((owner, repo)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, Json<Value>) {
    let mut inner = inner.lock().unwrap_or_else(|e| e.into_inner());
    let body = parse(&body);
    let path = format!("/repos/{owner}/{repo}/pulls");
    if let Err(answer) = check(&mut inner, &Method::POST, &path, "", &headers, &body) {
        return answer;
    }
    for field in ["title", "head", "base"] {
        if !body[field].is_string() {
            inner
                .violations
                .push(format!("POST {path}: {field} is not a string"));
            return (
                StatusCode::UNPROCESSABLE_ENTITY,
                Json(json!({"message": "Validation Failed"})),
            );
        }
    }
    if !(body["body"].is_string() || body["body"].is_null()) {
        inner
            .violations
            .push(format!("POST {path}: body is not a string"));
    }
    let head = body["head"].as_str().unwrap_or_default().to_string();
    let open = inner
        .pulls
        .iter()
        .any(|p| p["shape"].is_null() && p["head"]["ref"] == head.as_str() && p["state"] == "open");
    if open {
        return (
            StatusCode::UNPROCESSABLE_ENTITY,
            Json(json!({"message": "Validation Failed",
                        "errors": [{"message": format!("A pull request already exists for {owner}:{head}.")}]})),
        );
    }
    let number = inner.pulls.len() as u64 + 1;
    let pull = json!({
        "number": number,
        "state": "open",
        "html_url": format!("https://github.com/{owner}/{repo}/pull/{number}"),
        "title": body["title"],
        "body": body["body"],
        "head": {"ref": head, "repo": {"full_name": format!("{owner}/{repo}")}},
        "base": {"ref": body["base"]},
    });
    inner.pulls.push(pull.clone());
    (StatusCode::CREATED, Json(pull))
}

async fn update(
    State(inner): State<Shared>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, Json<Value>) {
    let mut inner = inner.lock().unwrap_or_else(|e| e.into_inner());
    let body = parse(&body);
    let path = format!("/repos/{owner}/{repo}/pulls/{number}");
    if let Err(answer) = check(&mut inner, &Method::PATCH, &path, "", &headers, &body) {
        return answer;
    }
    let Some(pull) = inner
        .pulls
        .iter_mut()
        .find(|p| p["shape"].is_null() && p["number"] == number)
    else {
        return (StatusCode::NOT_FOUND, Json(json!({"message": "Not Found"})));
    };
    for field in ["title", "body"] {
        if body[field].is_string() {
            pull[field] = body[field].clone();
        }
    }
    let pull = pull.clone();
    (StatusCode::OK, Json(pull))
}

async fn comment(
    State(inner): State<Shared>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, Json<Value>) {
    let mut inner = inner.lock().unwrap_or_else(|e| e.into_inner());
    let body = parse(&body);
    let path = format!("/repos/{owner}/{repo}/issues/{number}/comments");
    if let Err(answer) = check(&mut inner, &Method::POST, &path, "", &headers, &body) {
        return answer;
    }
    // The documented body: `body`, a string, required; nothing else.
    let fields: Vec<&String> = body
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    if !body["body"].is_string() || fields.len() != 1 {
        inner.violations.push(format!(
            "POST {path}: the body is not {{\"body\": string}}: {body}"
        ));
        return (
            StatusCode::UNPROCESSABLE_ENTITY,
            Json(json!({"message": "Validation Failed"})),
        );
    }
    let id = 1000 + inner.comments.len() as u64;
    let comment = json!({
        "id": id,
        "issue": number,
        "html_url": format!("https://github.com/{owner}/{repo}/issues/{number}#issuecomment-{id}"),
        "body": body["body"],
    });
    inner.comments.push(comment.clone());
    (StatusCode::CREATED, Json(comment))
}

async fn job_log(
    State(inner): State<Shared>,
    Path((owner, repo, job)): Path<(String, String, u64)>,
    headers: HeaderMap,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let mut inner = inner.lock().unwrap_or_else(|e| e.into_inner());
    let path = format!("/repos/{owner}/{repo}/actions/jobs/{job}/logs");
    if let Err(answer) = check(&mut inner, &Method::GET, &path, "", &headers, &Value::Null) {
        return answer.into_response();
    }
    if !inner.logs.contains_key(&job) {
        return (
            StatusCode::NOT_FOUND,
            Json(json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest/actions/workflow-jobs#download-job-logs-for-a-workflow-run"})),
        )
            .into_response();
    }
    (
        StatusCode::FOUND,
        [(
            axum::http::header::LOCATION,
            format!("/download/jobs/{job}?sig=short-lived"),
        )],
    )
        .into_response()
}

async fn download(
    State(inner): State<Shared>,
    Path(job): Path<u64>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> (StatusCode, String) {
    let mut inner = inner.lock().unwrap_or_else(|e| e.into_inner());
    let path = format!("/download/jobs/{job}");
    inner.requests.push(ForgeRequest {
        method: "GET".into(),
        path: path.clone(),
        query: query.clone().unwrap_or_default(),
        body: Value::Null,
    });
    if headers.contains_key("authorization") {
        inner.violations.push(format!(
            "GET {path}: the token was sent to the download URL"
        ));
    }
    if query.as_deref() != Some("sig=short-lived") {
        return (StatusCode::FORBIDDEN, "no signature".into());
    }
    match inner.logs.get(&job) {
        Some(log) => (StatusCode::OK, log.clone()),
        None => (StatusCode::NOT_FOUND, String::new()),
    }
}

async fn open_issue(
    State(inner): State<Shared>,
    Path((owner, repo)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, Json<Value>) {
    let mut inner = inner.lock().unwrap_or_else(|e| e.into_inner());
    let body = parse(&body);
    let path = format!("/repos/{owner}/{repo}/issues");
    if let Err(answer) = check(&mut inner, &Method::POST, &path, "", &headers, &body) {
        return answer;
    }
    let documented = [
        "title",
        "body",
        "assignee",
        "milestone",
        "labels",
        "assignees",
        "type",
    ];
    let unknown: Vec<&String> = body
        .as_object()
        .map(|o| {
            o.keys()
                .filter(|k| !documented.contains(&k.as_str()))
                .collect()
        })
        .unwrap_or_default();
    if !body["title"].is_string()
        || !(body["body"].is_string() || body["body"].is_null())
        || !unknown.is_empty()
    {
        inner
            .violations
            .push(format!("POST {path}: not the documented body: {body}"));
        return (
            StatusCode::UNPROCESSABLE_ENTITY,
            Json(json!({"message": "Validation Failed"})),
        );
    }
    // One series of numbers for issues and pull requests, as GitHub's.
    let number = (inner.pulls.len() + inner.issues.len()) as u64 + 1;
    let issue = json!({
        "number": number,
        "state": "open",
        "html_url": format!("https://github.com/{owner}/{repo}/issues/{number}"),
        "title": body["title"],
        "body": body["body"],
    });
    inner.issues.push(issue.clone());
    (StatusCode::CREATED, Json(issue))
}

async fn issue(
    State(inner): State<Shared>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    headers: HeaderMap,
) -> (StatusCode, Json<Value>) {
    let mut inner = inner.lock().unwrap_or_else(|e| e.into_inner());
    let path = format!("/repos/{owner}/{repo}/issues/{number}");
    if let Err(answer) = check(&mut inner, &Method::GET, &path, "", &headers, &Value::Null) {
        return answer;
    }
    match inner.issues.iter().find(|i| i["number"] == number) {
        Some(issue) => (StatusCode::OK, Json(issue.clone())),
        None => (StatusCode::NOT_FOUND, Json(json!({"message": "Not Found"}))),
    }
}

async fn get_pull(
    State(inner): State<Shared>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    headers: HeaderMap,
) -> (StatusCode, Json<Value>) {
    let mut inner = inner.lock().unwrap_or_else(|e| e.into_inner());
    let path = format!("/repos/{owner}/{repo}/pulls/{number}");
    if let Err(answer) = check(&mut inner, &Method::GET, &path, "", &headers, &Value::Null) {
        return answer;
    }
    match inner
        .pulls
        .iter()
        .find(|p| p["shape"].is_null() && p["number"] == number)
    {
        Some(pull) => (StatusCode::OK, Json(pull.clone())),
        None => (StatusCode::NOT_FOUND, Json(json!({"message": "Not Found"}))),
    }
}
