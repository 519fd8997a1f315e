//! Several `wright serve` replicas on one database (a real PostgreSQL cluster of the
//! test's own) and one data directory: a replica killed with SIGKILL in the middle of a
//! call loses its lease, and another replica takes the conversation over from its log —
//! the cut-off call reported to the model, never run again; every event once, in the
//! database as in the log. A WebSocket on one replica streams, in order, every event of a
//! conversation another replica runs.

use super::database::database;
use super::read_until;
use super::shape;
use super::Served;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use serde_json::Value;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use wright_testkit::failing_python_repo;
use wright_testkit::postgres::PASSWORD;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;
use wright_testkit::BUG;
use wright_testkit::FIX;

/// The files named `name` under `dir`, however deep.
fn found(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut all = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return all;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            all.extend(found(&path, name));
        } else if path.file_name().is_some_and(|n| n == name) {
            all.push(path);
        }
    }
    all
}

/// Waits until a file named `name` exists under one of `dirs`; its path.
async fn appears(dirs: &[&Path], name: &str) -> PathBuf {
    for _ in 0..1200 {
        if let Some(path) = dirs.iter().flat_map(|dir| found(dir, name)).next() {
            return path;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no {name} appeared");
}

/// Waits until `served` says the conversation finished, whatever it said before.
pub(super) async fn finished(served: &Served, id: &str) {
    let mut last = Value::Null;
    for _ in 0..1200 {
        let (status, body) = served.get(&format!("/api/conversations/{id}")).await;
        assert_eq!(status, 200, "{body}");
        if body["state"] == "finished" {
            return;
        }
        last = body;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("conversation {id} never finished: {last}");
}

pub(super) fn ids(events: &[Value]) -> Vec<u64> {
    events.iter().map(|e| e["id"].as_u64().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_call_is_taken_over_and_the_call_is_not_run_again() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = [("PGPASSWORD", PASSWORD)];
    let h = Harness::new();
    failing_python_repo(h.repo());
    // The first call marks that it ran, then outlives its replica; the replica that takes
    // over fixes the bug.
    let model = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": "echo ran >> ran-once.txt; sleep 600"}),
        ),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": FIX}),
        ),
        reply().call("terminal", json!({"command": "python3 -m unittest"})),
        reply().call("finish", json!({"message": "fixed after the takeover"})),
    ])
    .await
    .unwrap();
    let args = ["--database", url.as_str(), "--lease-seconds", "2"];
    let mut a = Served::start(&h, &args, &env).await;
    let b = Served::start(&h, &args, &env).await;
    let id = a.create(h.repo(), "count the runs", &model.url()).await;
    let marker = appears(&[h.data.path(), h.repo()], "ran-once.txt").await;
    a.child.start_kill().unwrap();
    a.child.wait().await.unwrap();

    // B notices the lease expire and goes on from the log (until then, the log says
    // the run was cut off).
    finished(&b, &id).await;
    let events = b.events(&id, 1000).await;
    assert_eq!(
        ids(&events),
        (0..events.len() as u64).collect::<Vec<_>>(),
        "every event once, no gap"
    );
    // The call cut off is reported as such, once, and was never run again.
    let first = events
        .iter()
        .position(|e| e["kind"] == "action" && e["tool"] == "terminal")
        .expect("the terminal call is logged");
    let answer = events[first..]
        .iter()
        .find(|e| e["kind"] == "observation" && e["call_id"] == events[first]["call_id"])
        .expect("the cut-off call is answered");
    assert!(
        answer["output"]
            .as_str()
            .unwrap()
            .starts_with("interrupted"),
        "{answer:#}"
    );
    let interrupted = events
        .iter()
        .filter(|e| e["kind"] == "observation")
        .filter(|e| {
            e["output"]
                .as_str()
                .unwrap_or("")
                .starts_with("interrupted")
        })
        .count();
    assert_eq!(interrupted, 1);
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap(),
        "ran\n",
        "the cut-off call ran again"
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| e["kind"] == "action" && e["tool"] == "terminal")
            .count(),
        2
    );
    assert_eq!(
        model.remaining(),
        0,
        "the model was not asked for every reply"
    );

    // The database holds the log, byte for byte.
    assert_database_holds_the_log(&h, &url, &id).await;
}

/// The database's events of `id`, exported into another data home, are `h`'s log file
/// byte for byte.
pub(super) async fn assert_database_holds_the_log(h: &Harness, url: &str, id: &str) {
    let elsewhere = tempfile::tempdir().unwrap();
    let exported = h
        .wright(
            &["database", "export", id, "--database", url],
            &[
                ("PGPASSWORD", PASSWORD),
                ("XDG_DATA_HOME", elsewhere.path().to_str().unwrap()),
            ],
        )
        .await;
    assert!(exported.status.success(), "{}", stderr(&exported));
    let relative = Path::new("wright/conversations")
        .join(id)
        .join("events.jsonl");
    assert_eq!(
        std::fs::read_to_string(elsewhere.path().join(&relative)).unwrap(),
        std::fs::read_to_string(h.data.path().join(&relative)).unwrap(),
        "the database's events of {id} are not its log file"
    );
}

/// The event ids of `events` are 0, 1, 2… without a gap or a repeat.
pub(super) fn assert_contiguous(events: &[Value]) {
    assert_eq!(
        ids(events),
        (0..events.len() as u64).collect::<Vec<_>>(),
        "every event once, no gap"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_stopped_with_sigterm_hands_its_runs_over_and_what_waits_stays_waiting() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = [("PGPASSWORD", PASSWORD)];
    // A run of several steps; the test stops its replica in the second.
    let h = Harness::new();
    failing_python_repo(h.repo());
    let steps = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo one >> steps.txt"})),
        reply().call(
            "terminal",
            json!({"command": "echo two >> steps.txt; sleep 2"}),
        ),
        reply().call("terminal", json!({"command": "echo three >> steps.txt"})),
        reply().call("finish", json!({"message": "three steps"})),
    ])
    .await
    .unwrap();
    // And a conversation that waits for a confirmation as its replica stops.
    let (_, risky, asking) = super::confirm::risky_chmod("RAN-ONCE", "executable").await;
    // Leases far longer than the test: B takes the run over because A handed it over,
    // never because its lease expired.
    let args = ["--database", url.as_str(), "--lease-seconds", "3000"];
    let a = Served::start(&h, &args, &env).await;
    let b = Served::start(&h, &args, &env).await;
    let waiting = a
        .create(h.repo(), "make it executable", &asking.url())
        .await;
    super::confirm::waiting_for(&a, &waiting, &risky).await;
    let id = a.create(h.repo(), "three steps", &steps.url()).await;
    let marks = appears(&[h.data.path()], "steps.txt").await;
    for _ in 0..1200 {
        if std::fs::read_to_string(&marks).unwrap().contains("two") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pid = nix::unistd::Pid::from_raw(a.child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let Served { child, .. } = a;
    let output = child.wait_with_output().await.unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    // B goes on with the run A stopped, to its end.
    finished(&b, &id).await;
    let events = b.events(&id, 1000).await;
    assert_contiguous(&events);
    let stopped = events
        .iter()
        .filter(|e| {
            e["kind"] == "state"
                && e["reason"] == "stopped: the server was stopping (a message goes on)"
        })
        .count();
    assert_eq!(stopped, 1, "{events:#?}");
    assert_eq!(
        std::fs::read_to_string(&marks).unwrap(),
        "one\ntwo\nthree\n",
        "a step ran twice, or not at all"
    );
    assert_eq!(
        steps.remaining(),
        0,
        "the model was not asked for every reply"
    );
    assert_database_holds_the_log(&h, &url, &id).await;

    // The conversation that waited still waits, on B, for its answer: not run meanwhile.
    let (status, body) = b.get(&format!("/api/conversations/{waiting}")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["state"], "awaiting_confirmation", "{body}");
    assert_eq!(asking.chat_requests().len(), 1);
    let (status, body) = b
        .post(
            &format!("/api/conversations/{waiting}/confirm"),
            json!({"approve": true}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    finished(&b, &waiting).await;
    let events = b.events(&waiting, 1000).await;
    assert_contiguous(&events);
    let ran = events
        .iter()
        .filter(|e| {
            e["kind"] == "observation" && e["output"].as_str().unwrap().contains("RAN-ONCE")
        })
        .count();
    assert_eq!(ran, 1, "{events:#?}");
    assert_database_holds_the_log(&h, &url, &waiting).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_on_one_replica_streams_a_conversation_another_runs() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = [("PGPASSWORD", PASSWORD)];
    let h = Harness::new();
    failing_python_repo(h.repo());
    // A pause before the fix: the socket is open long before the run ends.
    let model = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": "python3 -m unittest 2>&1 | tail -n 3"}),
        ),
        Reply::Delayed(
            Duration::from_secs(3),
            Box::new(reply().call(
                "file_editor",
                json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": FIX}),
            )),
        ),
        reply().call("terminal", json!({"command": "python3 -m unittest"})),
        reply().call("finish", json!({"message": "fixed"})),
    ])
    .await
    .unwrap();
    let args = ["--database", url.as_str()];
    let a = Served::start(&h, &args, &env).await;
    let b = Served::start(&h, &args, &env).await;
    let id = b
        .create(h.repo(), "the tests fail, fix it", &model.url())
        .await;
    b.wait_for_event(&id, "start").await;
    let mut request = a
        .ws_url(&format!("/sockets/events/{id}"))
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("X-Session-API-Key", a.key.parse().unwrap());
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    let streamed = read_until(&mut socket, "changes").await;
    // Every event B logged, in order, each once — and A never ran it.
    finished(&b, &id).await;
    let logged = b.events(&id, 1000).await;
    assert_eq!(shape(&streamed), shape(&logged));
    assert_eq!(ids(&streamed), (0..logged.len() as u64).collect::<Vec<_>>());
    let (status, on_a) = a.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(status, 200, "{on_a}");
    assert_eq!(on_a["state"], "finished", "{on_a}");
}
