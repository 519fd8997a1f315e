//! A scripted forge REST API in GitHub's shape, for the pull requests of automations:
//! `GET /repos/{owner}/{repo}/pulls?head=OWNER:BRANCH&state=open`, `POST
//! /repos/{owner}/{repo}/pulls` and `PATCH /repos/{owner}/{repo}/pulls/{number}`, each
//! request checked against GitHub's documentation (method, path, the `Accept`,
//! `X-GitHub-Api-Version`, `User-Agent` and `Authorization: Bearer` headers, the body's
//! fields and types), answered as GitHub answers (201 with the pull request, 401 `Bad
//! credentials`, 422 when one of the branch is open already), and recorded; what did
//! not match the documentation is kept in `violations`.

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
    requests: Vec<ForgeRequest>,
    violations: Vec<String>,
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
        let app = Router::new()
            .route("/repos/{owner}/{repo}/pulls", get(list).post(create))
            .route("/repos/{owner}/{repo}/pulls/{number}", patch(update))
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
            p["state"] == state.as_str()
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
        .any(|p| p["head"]["ref"] == head.as_str() && p["state"] == "open");
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
        "head": {"ref": head},
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
    let Some(pull) = inner.pulls.iter_mut().find(|p| p["number"] == number) else {
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
