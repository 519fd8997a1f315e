//! Conversations through the server: created, streamed (and streamed again after a
//! reconnect), handed over, deleted; interrupted, messaged, run side by side and queued;
//! a server killed with SIGKILL or stopped with SIGTERM loses nothing.

use super::*;

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
    // Listed by state, or by a text of the task.
    let (_, only) = served.get("/api/conversations?state=interrupted").await;
    let only: Vec<&str> = only["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(only, vec![first.as_str()]);
    let (_, found) = served.get("/api/conversations?q=QUEUE").await;
    assert_eq!(found["conversations"][0]["id"], second.as_str(), "{found}");
    assert_eq!(found["conversations"].as_array().unwrap().len(), 1);
    let (status, body) = served.get("/api/conversations?state=sleeping").await;
    assert_eq!((status, body["error"].as_str()), (400, Some("bad_query")));
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_run_ending_leaves_the_others_commands_running() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    // B's command waits for a file the test makes in its clone, its shell holding a
    // variable; A runs and ends meanwhile (and stops what it left running).
    let b_model = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": "export MARK=kept; while [ ! -e go ]; do sleep 0.1; done; echo \"mark $MARK\""}),
        ),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let a_model = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo a"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let served = Served::start(&h, &[], &[]).await;
    let b = served.create(h.repo(), "b", &b_model.url()).await;
    served.wait_for_event(&b, "action").await;
    let a = served.create(h.repo(), "a", &a_model.url()).await;
    served.wait_for(&a, &["finished"]).await;
    let clone = h.data.path().join("wright/workspaces").join(&b);
    std::fs::write(clone.join("go"), "").unwrap();
    served.wait_for(&b, &["finished"]).await;
    let events = served.events(&b, 1000).await;
    let observation = events.iter().find(|e| e["kind"] == "observation").unwrap();
    assert_eq!(observation["exit_code"], 0, "{observation}");
    assert!(
        observation["output"]
            .as_str()
            .unwrap()
            .contains("mark kept"),
        "{observation}"
    );
}
