//! The larger takeover: three replicas on one database, six conversations
//! started through each, several scripted steps apiece; one replica killed with SIGKILL
//! in the middle, then a second once the first one's runs were taken over. Every
//! conversation finishes exactly once on the last replica standing, its event ids run
//! 0, 1, 2… without a gap or a repeat, each step's command ran once (a call cut off is
//! never run again), and the database's events are each log file byte for byte.

use super::database::database;
use super::replicas::assert_contiguous;
use super::replicas::assert_database_holds_the_log;
use super::replicas::finished;
use super::Served;
use crate::common::Harness;
use serde_json::json;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use wright_testkit::failing_python_repo;
use wright_testkit::postgres::PASSWORD;
use wright_testkit::reply;
use wright_testkit::Reaction;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

const REPLICAS: usize = 3;
const PER_REPLICA: usize = 6;
const STEPS: usize = 4;

/// Step `k`'s command: marks that it ran, takes a while (a replica is killed in it),
/// then says it is done.
fn step(k: usize) -> String {
    format!("echo {k} >> steps.txt; sleep 1.5; echo DONE-{k}")
}

/// What the model does next, from the last message (a function of the prompt, as a real
/// model is: a run cut off after the model answered and before the call was logged asks
/// again and gets the same answer — an ordered script would hand it the next reply).
/// After a step: the next, or finish. After the task or a call cut off: a look at which
/// steps ran, which says where to go on.
fn next(last: &str) -> wright_testkit::Reply {
    let done = last.rfind("DONE-").and_then(|at| {
        let digits: String = last[at + 5..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse::<usize>().ok()
    });
    match done {
        Some(k) if k >= STEPS => reply().call("finish", json!({"message": "all steps"})),
        Some(k) => reply().call("terminal", json!({ "command": step(k + 1) })),
        None => reply().call(
            "terminal",
            json!({"command": "echo DONE-$(tail -n 1 steps.txt 2>/dev/null || echo 0)"}),
        ),
    }
}

/// A terminal call's answer that does not say `DONE-`: the call did not get to its end.
fn is_cut_off(event: &Value) -> bool {
    let output = event["output"].as_str();
    event["kind"] == "observation"
        && ((event["tool"] == "terminal" && output.is_some_and(|o| !o.contains("DONE-")))
            // Any other call cut off too: a `finish` a replica was killed in is answered
            // so, and the model looks again before finishing.
            || output.is_some_and(|o| o.starts_with("interrupted: wright stopped while this call ran")))
}

/// Waits until every conversation of `ids` has more events than `before` says, or
/// finished.
async fn gone_on(served: &Served, ids: &[String], before: &[usize]) {
    let mut last = Vec::new();
    for _ in 0..600 {
        last.clear();
        for (id, before) in ids.iter().zip(before) {
            let (_, body) = served.get(&format!("/api/conversations/{id}")).await;
            let now = served.events(id, 1000).await.len();
            if now <= *before && body["state"] != "finished" {
                let events = served.events(id, 1000).await;
                let tail: Vec<&Value> = events.iter().rev().take(3).collect();
                last.push(format!(
                    "{id}: {before} → {now} events, {body}, last {tail:#?}"
                ));
            }
        }
        if last.is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the killed replica's conversations were not taken over: {last:#?}");
}

/// Waits until conversation `id` logged its first call.
async fn started(served: &Served, id: &str) {
    for _ in 0..1200 {
        let events = served.events(id, 1000).await;
        if events.iter().any(|e| e["kind"] == "action") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, body) = served.get(&format!("/api/conversations/{id}")).await;
    let events = served.events(id, 1000).await;
    panic!("conversation {id} never logged a call: {body}\n{events:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_two_killed_every_conversation_finishes_once() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = [("PGPASSWORD", PASSWORD)];
    let h = Harness::new();
    failing_python_repo(h.repo());
    // Room for every run at once: a conversation accepted and still queued holds no
    // lease (see docs/replicas.md).
    let max_runs = (REPLICAS * PER_REPLICA).to_string();
    let args = [
        "--database",
        url.as_str(),
        // Short, for a takeover within seconds; not so short that a run's renewal
        // misses it on a machine busy with 18 runs' sandboxes (a lease of 2 s did).
        "--lease-seconds",
        "5",
        "--max-runs",
        max_runs.as_str(),
    ];
    let mut replicas = Vec::new();
    for _ in 0..REPLICAS {
        replicas.push(Served::start(&h, &args, &env).await);
    }
    let mut models = Vec::new();
    let mut ids: Vec<Vec<String>> = vec![Vec::new(); REPLICAS];
    for n in 0..REPLICAS * PER_REPLICA {
        // Enough answers for every step, each cut off once, and a look after each.
        let script = (0..3 * STEPS + 4)
            .map(|_| Reply::Reacting(Reaction(Arc::new(next))))
            .collect();
        let model = ScriptedServer::start(script).await.unwrap();
        let replica = n % REPLICAS;
        let id = replicas[replica]
            .create(h.repo(), &format!("conversation {n}"), &model.url())
            .await;
        ids[replica].push(id);
        models.push((model, replica, ids[replica].len() - 1));
    }
    // Every run holds its lease (its first call logged) before the first kill.
    for (replica, owned) in ids.iter().enumerate() {
        for id in owned {
            started(&replicas[replica], id).await;
        }
    }
    let last = replicas.pop().unwrap();
    let mut dead = replicas;
    for (replica, killed) in dead.iter_mut().enumerate() {
        let before: Vec<usize> = {
            let mut counts = Vec::new();
            for id in &ids[replica] {
                counts.push(last.events(id, 1000).await.len());
            }
            counts
        };
        killed.child.start_kill().unwrap();
        killed.child.wait().await.unwrap();
        // Taken over (by the replicas left) before the next one is killed.
        gone_on(&last, &ids[replica], &before).await;
    }

    for (model, replica, index) in &models {
        let id = &ids[*replica][*index];
        finished(&last, id).await;
        let events = last.events(id, 1000).await;
        assert_contiguous(&events);
        let ends = events
            .iter()
            .filter(|e| e["kind"] == "state" && e["state"] == "finished")
            .count();
        assert_eq!(ends, 1, "{id} finished {ends} times");
        // Each step's command ran once: a call cut off was never run again, and the
        // model went on from the steps that ran.
        let clone = h.data.path().join("wright/workspaces").join(id);
        let marks = std::fs::read_to_string(clone.join("steps.txt")).unwrap_or_default();
        let expected: String = (1..=STEPS).map(|k| format!("{k}\n")).collect();
        assert_eq!(marks, expected, "{id}: {events:#?}");
        // Calls cut off: answered without getting to their end (their replica killed,
        // or stopped for a lease it could not renew in time on this busy machine).
        let cut_off = events.iter().filter(|e| is_cut_off(e)).count();
        let looks = events
            .iter()
            .filter(|e| {
                e["kind"] == "action"
                    && e["arguments"]["command"]
                        .as_str()
                        .is_some_and(|c| c.starts_with("echo DONE-$"))
            })
            .count();
        // One look at the start, one after each call cut off.
        assert_eq!(looks, 1 + cut_off, "{id}: {events:#?}");
        let _ = model;
        assert_database_holds_the_log(&h, &url, id).await;
    }
}
