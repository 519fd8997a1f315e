//! `wright serve` through real HTTP and WebSocket: the real binary, the scripted model
//! server, real sandboxes, clones and branches. Conversations created, streamed (and
//! streamed again after a reconnect), interrupted, messaged, run side by side and queued;
//! a server killed with SIGKILL lists them all again; bad input and missing or wrong keys
//! answered with a clear 4xx and nothing changed.

use crate::common::Harness;

use futures_util::StreamExt;
use serde_json::json;
use serde_json::Value;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use wright_testkit::failing_python_repo;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;
use wright_testkit::BUG;
use wright_testkit::FIX;

/// A running `wright serve`, its address and key.
struct Served {
    child: tokio::process::Child,
    base: String,
    key: String,
    /// The address a browser opens once.
    browser: String,
    http: reqwest::Client,
}

impl Served {
    /// `wright serve --port 0 ARGS` in `h`'s data home; returns once it says where it
    /// listens.
    async fn start(h: &Harness, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut all = vec!["serve", "--port", "0"];
        all.extend_from_slice(args);
        let mut child = h.spawn_wright(&all, env);
        let stdout = child.stdout.take().unwrap();
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let mut base = String::new();
        let mut browser = String::new();
        let mut key = env
            .iter()
            .find(|(k, _)| *k == "WRIGHT_SERVER_KEY")
            .map(|(_, v)| v.to_string())
            .unwrap_or_default();
        let said = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(rest) = line.strip_prefix("wright serve: listening on ") {
                    base = rest.trim().to_string();
                }
                if let Some(rest) = line.trim().strip_prefix("key ") {
                    if !rest.starts_with("from") {
                        key = rest.split_whitespace().next().unwrap().to_string();
                    }
                }
                if let Some(rest) = line.trim().strip_prefix("in a browser, open once: ") {
                    browser = rest.to_string();
                    break;
                }
            }
        })
        .await;
        assert!(said.is_ok(), "wright serve said nothing within 60 s");
        assert!(base.starts_with("http://127.0.0.1:"), "{base}");
        // What it says later is not read: drained so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Self {
            child,
            base,
            key,
            browser,
            http: reqwest::Client::new(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn ws_url(&self, path: &str) -> String {
        format!("{}{path}", self.base.replacen("http://", "ws://", 1))
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> (u16, Value) {
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
        };
        (status, body)
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.send(self.http.get(self.url(path)).bearer_auth(&self.key))
            .await
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(
            self.http
                .post(self.url(path))
                .bearer_auth(&self.key)
                .json(&body),
        )
        .await
    }

    async fn create(&self, workspace: &std::path::Path, task: &str, url: &str) -> String {
        let (status, body) = self
            .post(
                "/api/conversations",
                json!({"workspace": workspace, "task": task,
                       "settings": {"base_url": url, "model": "test-model"}}),
            )
            .await;
        assert_eq!(status, 202, "{body}");
        body["id"].as_str().unwrap().to_string()
    }

    /// Waits until the conversation's state is one of `states`; returns the conversation.
    async fn wait_for(&self, id: &str, states: &[&str]) -> Value {
        let mut last = Value::Null;
        for _ in 0..1200 {
            let (status, body) = self.get(&format!("/api/conversations/{id}")).await;
            assert_eq!(status, 200, "{body}");
            let state = body["state"].as_str().unwrap();
            if states.contains(&state) {
                return body;
            }
            // An end that is not the one awaited: said at once, with the log.
            if ["finished", "stopped", "stuck", "failed", "interrupted"].contains(&state) {
                let events = self.events(id, 1000).await;
                panic!("conversation {id} ended {state}, not {states:?}: {body}\n{events:#?}");
            }
            last = body;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("conversation {id} never reached {states:?}: {last}");
    }

    /// Every event of the conversation, through the paged route (`limit` a page).
    async fn events(&self, id: &str, limit: usize) -> Vec<Value> {
        let mut all = Vec::new();
        let mut after: Option<u64> = None;
        loop {
            let query = match after {
                Some(after) => format!("?after={after}&limit={limit}"),
                None => format!("?limit={limit}"),
            };
            let (status, page) = self
                .get(&format!("/api/conversations/{id}/events{query}"))
                .await;
            assert_eq!(status, 200, "{page}");
            all.extend(page["events"].as_array().unwrap().iter().cloned());
            match page["next_after"].as_u64() {
                Some(next) => after = Some(next),
                None => return all,
            }
        }
    }

    /// Waits until the log has an event of `kind` (polling the events route).
    async fn wait_for_event(&self, id: &str, kind: &str) {
        for _ in 0..1200 {
            if self
                .events(id, 1000)
                .await
                .iter()
                .any(|e| e["kind"] == kind)
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("conversation {id} never logged a {kind}");
    }
}

/// Reads a socket's frames until an event of `kind` (deltas skipped); the events read.
async fn read_until(
    socket: &mut tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    kind: &str,
) -> Vec<Value> {
    let mut events = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(frame) = socket.next().await {
            let Message::Text(text) = frame.unwrap() else {
                continue;
            };
            let value: Value = serde_json::from_str(&text).unwrap();
            if value["kind"] == "delta" {
                continue;
            }
            let done = value["kind"] == kind;
            events.push(value);
            if done {
                return;
            }
        }
        panic!("the socket closed before a {kind} event");
    })
    .await;
    assert!(read.is_ok(), "no {kind} event within 120 s: {events:?}");
    events
}

/// Each event's id and kind: what the socket and the log are compared by (a float read
/// back from the log may differ in its last digit from the one the run held).
fn shape(events: &[Value]) -> Vec<(u64, String)> {
    events
        .iter()
        .map(|e| {
            (
                e["id"].as_u64().unwrap(),
                e["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn ids(events: &[Value]) -> Vec<u64> {
    events.iter().map(|e| e["id"].as_u64().unwrap()).collect()
}

fn fixing_script() -> Vec<Reply> {
    vec![
        reply().call(
            "terminal",
            json!({"command": "python3 -m unittest 2>&1 | tail -n 3"}),
        ),
        Reply::Delayed(
            Duration::from_millis(500),
            Box::new(reply().call(
                "file_editor",
                json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": FIX}),
            )),
        ),
        reply().call("terminal", json!({"command": "python3 -m unittest"})),
        reply().call("finish", json!({"message": "row_to_csv keeps the last column now."})),
    ]
}

/// A script whose second reply waits two minutes: a run that is live until stopped, then
/// finishes at the next message.
fn held() -> Vec<Reply> {
    vec![
        reply().call("terminal", json!({"command": "echo started"})),
        Reply::Delayed(
            Duration::from_secs(120),
            Box::new(reply().call("finish", json!({"message": "too late"}))),
        ),
        reply().call("finish", json!({"message": "done after the message"})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_runs_streams_and_hands_over_its_branch() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let model = ScriptedServer::start(fixing_script()).await.unwrap();
    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    let (status, models) = served.get("/api/models").await;
    assert_eq!(status, 200, "{models}");
    assert_eq!(models["models"], json!(["test-model"]), "{models}");
    assert!(
        models["base_url"]
            .as_str()
            .unwrap()
            .starts_with(&model.url()),
        "{models}"
    );
    let id = served
        .create(h.repo(), "the tests fail, fix it", &model.url())
        .await;

    // A socket from the start sees every event as it is logged; one dropped after the
    // first observation and opened again with after= sees the rest: nothing twice,
    // nothing lost.
    let path = format!("/sockets/events/{id}");
    let request = |url: String, key: Option<&str>| {
        let mut request = url.into_client_request().unwrap();
        if let Some(key) = key {
            request
                .headers_mut()
                .insert("X-Session-API-Key", key.parse().unwrap());
        }
        request
    };
    let (mut whole, _) =
        tokio_tungstenite::connect_async(request(served.ws_url(&path), Some(&served.key)))
            .await
            .unwrap();
    let (mut first, _) =
        tokio_tungstenite::connect_async(request(served.ws_url(&path), Some(&served.key)))
            .await
            .unwrap();
    let before = read_until(&mut first, "observation").await;
    first.close(None).await.unwrap();
    drop(first);
    let last_seen = before.last().unwrap()["id"].as_u64().unwrap();
    // The key in the query, as a browser gives it.
    let again = format!(
        "{}?after={last_seen}&session_api_key={}",
        served.ws_url(&path),
        served.key
    );
    let (mut second, _) = tokio_tungstenite::connect_async(request(again, None))
        .await
        .unwrap();
    let after = read_until(&mut second, "changes").await;
    let streamed = read_until(&mut whole, "changes").await;

    let done = served.wait_for(&id, &["finished"]).await;
    let branch = format!("wright/{id}");
    assert_eq!(done["branch"], branch.as_str(), "{done}");
    assert_eq!(done["steps"], 4, "{done}");
    let logged = served.events(&id, 3).await;
    let dense: Vec<u64> = (0..logged.len() as u64).collect();
    assert_eq!(ids(&logged), dense);
    assert_eq!(ids(&streamed), dense);
    let mut joined = ids(&before);
    joined.extend(ids(&after));
    assert_eq!(joined, dense);
    assert_eq!(shape(&streamed), shape(&logged));
    let changes = logged.last().unwrap();
    assert_eq!(changes["kind"], "changes", "{changes}");
    assert_eq!(changes["outcome"], "branch", "{changes}");
    assert_eq!(changes["branch"], branch.as_str(), "{changes}");
    // The fix is on the branch, the user's checkout untouched.
    let handed = git(h.repo(), &["show", &format!("{branch}:export.py")]);
    assert!(handed.contains(FIX), "{handed}");
    let mine = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    assert!(mine.contains(BUG), "{mine}");
    // The diff it handed over, read from the repository, and its files.
    let (status, diff) = served.get(&format!("/api/conversations/{id}/diff")).await;
    assert_eq!(status, 200, "{diff}");
    assert_eq!(diff["files"], json!(["export.py"]), "{diff}");
    assert!(
        diff["diff"].as_str().unwrap().contains(&format!("+{FIX}")),
        "{diff}"
    );
    assert_eq!(diff["none"], Value::Null);
    let (status, list) = served.get("/api/conversations").await;
    assert_eq!(status, 200);
    assert_eq!(list["conversations"][0]["id"], id.as_str(), "{list}");
    assert_eq!(list["conversations"][0]["task"], "the tests fail, fix it");

    // Its branch holds changes nobody took: removed only when forced, then gone.
    let one = format!("/api/conversations/{id}");
    let delete = |query: &str| {
        served
            .http
            .delete(served.url(&format!("{one}{query}")))
            .bearer_auth(&served.key)
    };
    let (status, body) = served.send(delete("")).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("conflict")),
        "{body}"
    );
    assert!(git(h.repo(), &["branch", "--list", &branch]).contains(&branch));
    let (status, body) = served.send(delete("?force=true")).await;
    assert_eq!(status, 204, "{body}");
    assert!(git(h.repo(), &["branch", "--list", &branch]).is_empty());
    let (status, _) = served.get(&one).await;
    assert_eq!(status, 404);
    let (status, list) = served.get("/api/conversations").await;
    assert_eq!((status, list), (200, json!({"conversations": []})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_run_lists_it_again_and_a_message_finishes_it() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let model = ScriptedServer::start(held()).await.unwrap();
    let mut served = Served::start(&h, &[], &[]).await;
    let id = served.create(h.repo(), "say hello", &model.url()).await;
    served.wait_for_event(&id, "observation").await;
    served.child.start_kill().unwrap();
    served.child.wait().await.unwrap();

    let served = Served::start(&h, &[], &[]).await;
    let (status, list) = served.get("/api/conversations").await;
    assert_eq!(status, 200, "{list}");
    let listed = &list["conversations"][0];
    assert_eq!(listed["id"], id.as_str(), "{list}");
    assert_eq!(listed["state"], "interrupted", "{list}");
    let logged = served.events(&id, 1000).await;
    assert!(logged.iter().any(|e| e["kind"] == "observation"));

    let (status, body) = served
        .post(
            &format!("/api/conversations/{id}/messages"),
            json!({"text": "go on", "settings": {"base_url": model.url()}}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let done = served.wait_for(&id, &["finished"]).await;
    assert_eq!(done["branch"], format!("wright/{id}").as_str(), "{done}");
    let events = served.events(&id, 1000).await;
    assert_eq!(
        ids(&events),
        (0..events.len() as u64).collect::<Vec<_>>(),
        "one log, no gap"
    );
    let said: Vec<&str> = events
        .iter()
        .filter(|e| e["kind"] == "message" && e["source"] == "user")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(said.last().unwrap().contains("go on"), "{said:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_run_side_by_side_a_third_waits_and_interrupt_stops_them() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let (a, b, c) = (
        ScriptedServer::start(held()).await.unwrap(),
        ScriptedServer::start(held()).await.unwrap(),
        ScriptedServer::start(held()).await.unwrap(),
    );
    let served = Served::start(&h, &["--max-runs", "2"], &[]).await;
    let first = served.create(h.repo(), "one", &a.url()).await;
    let second = served.create(h.repo(), "two", &b.url()).await;
    // Both are live at once: each has run its first command and waits for its model.
    served.wait_for_event(&first, "observation").await;
    served.wait_for_event(&second, "observation").await;
    let third = served.create(h.repo(), "three", &c.url()).await;
    let (_, queued) = served.get(&format!("/api/conversations/{third}")).await;
    assert_eq!(queued["state"], "queued", "{queued}");
    for id in [&first, &second] {
        let (_, running) = served.get(&format!("/api/conversations/{id}")).await;
        assert_eq!(running["state"], "running", "{running}");
    }

    // One waiting for its turn can be stopped before it starts; it never ran.
    let fourth = served.create(h.repo(), "four", &c.url()).await;
    let (status, body) = served
        .post(&format!("/api/conversations/{fourth}/interrupt"), json!({}))
        .await;
    assert_eq!(status, 202, "{body}");
    let never = served.wait_for(&fourth, &["stopped"]).await;
    assert_eq!(never["error"], "interrupted before it started", "{never}");
    let (status, body) = served
        .post(
            &format!("/api/conversations/{fourth}/messages"),
            json!({"text": "go"}),
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("conflict")),
        "{body}"
    );
    // A running one has no diff yet, takes no message, and is not removed.
    let (status, body) = served
        .get(&format!("/api/conversations/{second}/diff"))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("conflict")),
        "{body}"
    );
    let (status, body) = served
        .post(
            &format!("/api/conversations/{second}/messages"),
            json!({"text": "hi"}),
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("conflict")),
        "{body}"
    );
    let (status, _) = served
        .send(
            served
                .http
                .delete(served.url(&format!("/api/conversations/{second}")))
                .bearer_auth(&served.key),
        )
        .await;
    assert_eq!(status, 409);

    let (status, body) = served
        .post(&format!("/api/conversations/{first}/interrupt"), json!({}))
        .await;
    assert_eq!(status, 202, "{body}");
    served.wait_for(&first, &["stopped"]).await;
    let events = served.events(&first, 1000).await;
    let stop = events.iter().rev().find(|e| e["kind"] == "state").unwrap();
    assert_eq!(stop["state"], "stopped", "{stop}");
    assert_eq!(stop["reason"], "interrupted through the server", "{stop}");
    // Its slot went to the one waiting.
    served.wait_for_event(&third, "observation").await;
    // Interrupting what is not running is a conflict; a queued one would stop too.
    let (status, body) = served
        .post(&format!("/api/conversations/{first}/interrupt"), json!({}))
        .await;
    assert_eq!(status, 409, "{body}");
    for id in [&second, &third] {
        let (status, _) = served
            .post(&format!("/api/conversations/{id}/interrupt"), json!({}))
            .await;
        assert_eq!(status, 202);
        served.wait_for(id, &["stopped"]).await;
    }
    // Each log is its own: dense ids, its own task.
    for (id, task) in [(&first, "one"), (&second, "two"), (&third, "three")] {
        let events = served.events(id, 1000).await;
        assert_eq!(ids(&events), (0..events.len() as u64).collect::<Vec<_>>());
        let (_, body) = served.get(&format!("/api/conversations/{id}")).await;
        assert_eq!(body["task"], task, "{body}");
    }
    // A conversation that is not running takes a message and goes on to its end; a
    // socket open since before (it has sent every event so far, so it listens) gets the
    // new run's events and the pieces of the model's reply as they stream.
    let logged = served.events(&first, 1000).await;
    let (mut socket, _) = tokio_tungstenite::connect_async(format!(
        "{}?session_api_key={}",
        served.ws_url(&format!("/sockets/events/{first}")),
        served.key
    ))
    .await
    .unwrap();
    let mut frames = Vec::new();
    while frames.len() < logged.len() {
        if let Message::Text(text) = socket.next().await.unwrap().unwrap() {
            frames.push(serde_json::from_str::<Value>(&text).unwrap());
        }
    }
    assert_eq!(shape(&frames), shape(&logged));
    let (status, body) = served
        .post(
            &format!("/api/conversations/{first}/messages"),
            json!({"text": "finish now", "settings": {"base_url": a.url()}}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let mut deltas = Vec::new();
    let finished = tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            let Message::Text(text) = socket.next().await.unwrap().unwrap() else {
                continue;
            };
            let frame: Value = serde_json::from_str(&text).unwrap();
            match frame["kind"].as_str() {
                Some("delta") => deltas.push(frame),
                Some("changes") => return frame,
                _ => frames.push(frame),
            }
        }
    })
    .await
    .expect("no changes event within 120 s");
    frames.push(finished);
    assert!(
        deltas.iter().any(|d| d["tool_call"] == "finish"),
        "{deltas:?}"
    );
    served.wait_for(&first, &["finished"]).await;
    assert_eq!(shape(&frames), shape(&served.events(&first, 1000).await));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_a_clear_4xx_and_changes_nothing() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let served = Served::start(&h, &[], &[]).await;
    let unknown = "20260101-000000-abcd";
    for (path, method) in [
        (format!("/api/conversations/{unknown}"), "GET"),
        (format!("/api/conversations/{unknown}/events"), "GET"),
        (format!("/api/conversations/{unknown}/interrupt"), "POST"),
        (format!("/api/conversations/{unknown}/diff"), "GET"),
        (format!("/api/conversations/{unknown}"), "DELETE"),
    ] {
        let request = match method {
            "GET" => served.http.get(served.url(&path)),
            "POST" => served.http.post(served.url(&path)),
            _ => served.http.delete(served.url(&path)),
        };
        let (status, body) = served.send(request.bearer_auth(&served.key)).await;
        assert_eq!(status, 404, "{method} {path}: {body}");
        assert_eq!(body["error"], "not_found", "{body}");
    }
    let (status, body) = served
        .post(
            &format!("/api/conversations/{unknown}/messages"),
            json!({"text": "hi"}),
        )
        .await;
    assert_eq!((status, body["error"].as_str()), (404, Some("not_found")));
    // Ids that would leave the conversations' directory.
    for path in [
        "/api/conversations/..%2F..%2Fetc",
        "/api/conversations/..%5Cwindows",
        "/api/conversations/a.b/events",
    ] {
        let (status, body) = served.get(path).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body["error"], "bad_id", "{body}");
    }
    let (status, body) = served.get("/sockets/events/..%2Fx").await;
    assert_eq!((status, body["error"].as_str()), (400, Some("bad_id")));
    let post_raw = |body: String| {
        served
            .http
            .post(served.url("/api/conversations"))
            .bearer_auth(&served.key)
            .header("content-type", "application/json")
            .body(body)
    };
    let (status, body) = served.send(post_raw("{\"task\":".into())).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("bad_json")));
    let huge = json!({"workspace": h.repo(), "task": "x".repeat(300 * 1024)}).to_string();
    let (status, body) = served.send(post_raw(huge)).await;
    assert_eq!((status, body["error"].as_str()), (413, Some("too_large")));
    let workspace = h.repo().to_str().unwrap();
    for (request, why) in [
        (
            json!({"workspace": workspace, "task": "x", "colour": 1}),
            "unknown field",
        ),
        (json!({"workspace": workspace}), "no task"),
        (
            json!({"workspace": workspace, "task": "x", "settings": {"max_step": 3}}),
            "misspelt setting",
        ),
    ] {
        let (status, body) = served.post("/api/conversations", request).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("bad_json")),
            "{why}: {body}"
        );
    }
    for (request, why) in [
        (
            json!({"workspace": workspace, "task": "  "}),
            "the task is empty",
        ),
        (
            json!({"workspace": "relative/dir", "task": "x"}),
            "absolute path",
        ),
        (
            json!({"workspace": "/no/such/dir", "task": "x"}),
            "absolute path",
        ),
        (
            json!({"workspace": workspace, "task": "x", "settings": {"max_steps": -1}}),
            "max-steps",
        ),
    ] {
        let (status, body) = served.post("/api/conversations", request).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(body["error"], "bad_request", "{body}");
        assert!(
            body["message"].as_str().unwrap().contains(why),
            "{why}: {body}"
        );
    }
    let (status, body) = served.get("/api/conversations/x/events?limit=0").await;
    assert_eq!((status, body["error"].as_str()), (400, Some("bad_query")));
    let (status, body) = served.get("/api/conversations/x/events?after=no").await;
    assert_eq!((status, body["error"].as_str()), (400, Some("bad_query")));
    let (status, body) = served.get("/api/nothing").await;
    assert_eq!((status, body["error"].as_str()), (404, Some("not_found")));
    let (status, body) = served
        .send(
            served
                .http
                .put(served.url("/api/conversations"))
                .bearer_auth(&served.key),
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (405, Some("method_not_allowed"))
    );
    // A plain GET where a WebSocket is wanted.
    let (status, _) = served.get("/sockets/events/20260101-000000-abcd").await;
    assert!((400..500).contains(&status), "{status}");
    // Nothing of it made a conversation.
    let (status, list) = served.get("/api/conversations").await;
    assert_eq!((status, list), (200, json!({"conversations": []})));
    assert!(!h.data.path().join("wright/conversations").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_wants_the_key_and_the_right_host_and_origin() {
    let h = Harness::new();
    let key = "k".repeat(40);
    let served = Served::start(&h, &[], &[("WRIGHT_SERVER_KEY", &key)]).await;
    assert_eq!(served.key, key);
    let routes = [
        ("GET", "/api/conversations"),
        ("POST", "/api/conversations"),
        ("GET", "/api/conversations/20260101-000000-abcd"),
        ("GET", "/api/conversations/20260101-000000-abcd/events"),
        ("POST", "/api/conversations/20260101-000000-abcd/interrupt"),
        ("POST", "/api/conversations/20260101-000000-abcd/messages"),
        ("DELETE", "/api/conversations/20260101-000000-abcd"),
        ("GET", "/api/conversations/20260101-000000-abcd/diff"),
        ("GET", "/api/models"),
        ("GET", "/sockets/events/20260101-000000-abcd"),
        ("GET", "/openapi.json"),
        ("GET", "/"),
        ("GET", "/no/such/route"),
    ];
    let request = |method: &str, path: &str| {
        let url = served.url(path);
        match method {
            "GET" => served.http.get(url),
            "POST" => served.http.post(url).json(&json!({})),
            _ => served.http.delete(url),
        }
    };
    for (method, path) in routes {
        let (status, body) = served.send(request(method, path)).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (401, Some("missing_key")),
            "{method} {path}"
        );
        let wrong = request(method, path).bearer_auth("k".repeat(39));
        let (status, body) = served.send(wrong).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (401, Some("wrong_key")),
            "{method} {path}"
        );
        // The key in the query counts on the socket only.
        let query = request(method, &format!("{path}?session_api_key={key}"));
        let (status, _) = served.send(query).await;
        let expected = if path.starts_with("/sockets/") {
            404
        } else {
            401
        };
        assert_eq!(status, expected, "{method} {path}?session_api_key=");
    }
    let list = "/api/conversations";
    let (status, _) = served
        .send(
            served
                .http
                .get(served.url(list))
                .header("X-Session-API-Key", &key),
        )
        .await;
    assert_eq!(status, 200);
    let (status, _) = served
        .send(
            served
                .http
                .get(served.url(list))
                .header("Authorization", format!("bearer {key}")),
        )
        .await;
    assert_eq!(status, 200, "the scheme's case does not matter");
    let (status, _) = served
        .send(
            served
                .http
                .get(served.url(list))
                .header("Authorization", format!("Basic {key}")),
        )
        .await;
    assert_eq!(status, 401);
    // Both headers: both must be right.
    let both = |bearer: &str, header: &str| {
        served
            .http
            .get(served.url(list))
            .bearer_auth(bearer)
            .header("X-Session-API-Key", header)
    };
    assert_eq!(served.send(both(&key, &key)).await.0, 200);
    assert_eq!(served.send(both(&key, "nope")).await.0, 401);
    assert_eq!(served.send(both("nope", &key)).await.0, 401);
    // Another host's name (DNS rebinding) or another origin: refused, key or not.
    let port = served.base.rsplit(':').next().unwrap().to_string();
    for host in [
        format!("evil.example:{port}"),
        "localhost.evil.example".into(),
    ] {
        let (status, body) = served
            .send(
                served
                    .http
                    .get(served.url(list))
                    .bearer_auth(&key)
                    .header("Host", host.as_str()),
            )
            .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (403, Some("bad_host")),
            "{host}"
        );
    }
    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}")] {
        let (status, _) = served
            .send(
                served
                    .http
                    .get(served.url(list))
                    .bearer_auth(&key)
                    .header("Host", host.as_str()),
            )
            .await;
        assert_eq!(status, 200, "{host}");
    }
    // Another program's page on this machine (another port) is another origin too.
    let other_port = format!("http://localhost:{}", port.parse::<u16>().unwrap() ^ 1);
    for origin in [
        "http://evil.example",
        "null",
        "http://127.0.0.1.evil.example:80",
        "http://localhost",
        other_port.as_str(),
    ] {
        let (status, body) = served
            .send(
                served
                    .http
                    .get(served.url(list))
                    .bearer_auth(&key)
                    .header("Origin", origin),
            )
            .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (403, Some("bad_origin")),
            "{origin}"
        );
    }
    let own = format!("http://localhost:{port}");
    let response = served
        .http
        .get(served.url(list))
        .bearer_auth(&key)
        .header("Origin", own.as_str())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    // CORS stays closed: no header lets another page read an answer.
    assert!(response
        .headers()
        .keys()
        .all(|name| !name.as_str().starts_with("access-control-")));
    // The socket: refused without its key (the handshake fails), taken with it in the
    // query (here on a conversation that does not exist: 404, after the key was checked).
    let socket = served.ws_url("/sockets/events/20260101-000000-abcd");
    let refused = tokio_tungstenite::connect_async(socket.as_str()).await;
    match refused {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 401)
        }
        other => panic!("a socket without the key: {other:?}"),
    }
    let with_key = format!("{socket}?session_api_key={key}");
    match tokio_tungstenite::connect_async(with_key.as_str()).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 404)
        }
        other => panic!("a socket on no conversation: {other:?}"),
    }
    // The document is generated: every route is in it.
    let (status, document) = served.get("/openapi.json").await;
    assert_eq!(status, 200);
    for path in [
        "/api/conversations",
        "/api/conversations/{id}",
        "/api/conversations/{id}/events",
        "/api/conversations/{id}/interrupt",
        "/api/conversations/{id}/messages",
        "/api/conversations/{id}/diff",
        "/api/models",
        "/sockets/events/{id}",
    ] {
        assert!(document["paths"][path].is_object(), "{path} missing");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_reachable_from_elsewhere_needs_a_key_of_your_own() {
    let h = Harness::new();
    let refused = h
        .wright(&["serve", "--host", "0.0.0.0", "--port", "0"], &[])
        .await;
    assert_eq!(refused.status.code(), Some(2));
    let said = crate::common::stderr(&refused);
    assert!(said.contains("WRIGHT_SERVER_KEY"), "{said}");
    let weak = h
        .wright(&["serve", "--port", "0"], &[("WRIGHT_SERVER_KEY", "short")])
        .await;
    assert_eq!(weak.status.code(), Some(2));
    let said = crate::common::stderr(&weak);
    assert!(said.contains("at least 32 characters"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_trades_the_one_time_address_for_a_strict_cookie() {
    let h = Harness::new();
    let served = Served::start(&h, &[], &[]).await;
    let token_url = served.browser.clone();
    assert!(
        token_url.starts_with(&format!("{}/auth?token=", served.base)),
        "{token_url}"
    );
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let (status, body) = served
        .send(browser.get(served.url("/auth?token=0123")))
        .await;
    assert_eq!((status, body["error"].as_str()), (401, Some("wrong_token")));
    // Another site's page cannot spend it: the Origin is checked before the token.
    let (status, _) = served
        .send(
            browser
                .get(&token_url)
                .header("Origin", "http://evil.example"),
        )
        .await;
    assert_eq!(status, 403);
    let opened = browser.get(&token_url).send().await.unwrap();
    assert_eq!(opened.status(), 303);
    assert_eq!(opened.headers()["location"], "/");
    let cookie = opened.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    assert!(!cookie.contains(&served.key), "the cookie is not the key");
    let pair = cookie.split(';').next().unwrap().to_string();
    let with_cookie = |path: &str| {
        browser
            .get(served.url(path))
            .header("Cookie", pair.as_str())
    };
    let (status, _) = served.send(with_cookie("/api/conversations")).await;
    assert_eq!(status, 200);
    let (status, root) = served.send(with_cookie("/")).await;
    assert_eq!((status, root["server"].as_str()), (200, Some("wright")));
    let (status, _) = served
        .send(
            browser
                .get(served.url("/api/conversations"))
                .header("Cookie", "wright_session=forged"),
        )
        .await;
    assert_eq!(status, 401);
    // Once only.
    let (status, body) = served.send(browser.get(&token_url)).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("wrong_token")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_killed_server_had_queued_starts_when_it_starts_again() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let busy = ScriptedServer::start(held()).await.unwrap();
    let waiting = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo hello"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let mut served = Served::start(&h, &["--max-runs", "1"], &[]).await;
    let first = served.create(h.repo(), "busy", &busy.url()).await;
    served.wait_for_event(&first, "observation").await;
    let second = served.create(h.repo(), "queued", &waiting.url()).await;
    let (_, queued) = served.get(&format!("/api/conversations/{second}")).await;
    assert_eq!(queued["state"], "queued", "{queued}");
    served.child.start_kill().unwrap();
    served.child.wait().await.unwrap();

    let served = Served::start(&h, &["--max-runs", "1"], &[]).await;
    let done = served.wait_for(&second, &["finished"]).await;
    assert_eq!(done["task"], "queued", "{done}");
    let (_, list) = served.get("/api/conversations").await;
    // (Ids made in the same second sort by their salt, not by their order.)
    let listed: std::collections::BTreeSet<(&str, &str)> = list["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed,
        [
            (second.as_str(), "finished"),
            (first.as_str(), "interrupted")
        ]
        .into()
    );
    // Started once: its log has one start.
    let events = served.events(&second, 1000).await;
    assert_eq!(events.iter().filter(|e| e["kind"] == "start").count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_each_run_after_its_step_and_keeps_what_waits() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let busy = ScriptedServer::start(held()).await.unwrap();
    let waiting = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo hello"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let served = Served::start(&h, &["--max-runs", "1"], &[]).await;
    let first = served.create(h.repo(), "busy", &busy.url()).await;
    served.wait_for_event(&first, "observation").await;
    let second = served.create(h.repo(), "queued", &waiting.url()).await;
    let pid = nix::unistd::Pid::from_raw(served.child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let Served { child, .. } = served;
    let output = child.wait_with_output().await.unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&output)
    );

    // The run logged why it stopped and handed its work over; the one waiting did not
    // start, and starts with the server.
    let served = Served::start(&h, &["--max-runs", "1"], &[]).await;
    let stopped = served.wait_for(&first, &["stopped"]).await;
    assert_eq!(stopped["error"], Value::Null, "{stopped}");
    let events = served.events(&first, 1000).await;
    let state = events.iter().rev().find(|e| e["kind"] == "state").unwrap();
    assert_eq!(
        state["reason"], "stopped: the server was stopping (a message goes on)",
        "{state}"
    );
    assert_eq!(events.last().unwrap()["kind"], "changes");
    served.wait_for(&second, &["finished"]).await;
}
