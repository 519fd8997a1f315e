//! What a client does with a conversation besides running it, through the server: fork
//! it at an event and go on, read its files (never out of its workspace, never blocking
//! on what the agent planted), take its changes, drop them; and doctor's report.

use super::*;
use tokio::io::AsyncBufReadExt;
use wright_testkit::ServerOptions;

/// The workspace a conversation logged in its start event (its clone).
async fn workspace_of(served: &Served, id: &str) -> std::path::PathBuf {
    let events = served.events(id, 10).await;
    std::path::PathBuf::from(events[0]["workspace"].as_str().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_is_forked_read_applied_and_its_fork_discarded() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let model = ScriptedServer::start(fixing_script()).await.unwrap();
    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    let id = served.create(h.repo(), "fix the tests", &model.url()).await;
    served.wait_for(&id, &["finished"]).await;

    // Its files, as downloads.
    let file = |path: &str| {
        served
            .http
            .get(served.url(&format!("/api/conversations/{id}/file")))
            .query(&[("path", path)])
            .bearer_auth(&served.key)
    };
    let response = file("export.py").send().await.unwrap();
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    assert_eq!(
        headers["content-disposition"],
        "attachment; filename=\"export.py\""
    );
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(headers["content-type"], "application/octet-stream");
    assert!(response.text().await.unwrap().contains(FIX));
    // What leads out, or is not a plain file, is refused; nothing blocks.
    let clone = workspace_of(&served, &id).await;
    std::os::unix::fs::symlink("/etc/hostname", clone.join("leak")).unwrap();
    nix::unistd::mkfifo(&clone.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    for (path, status, code) in [
        ("../../../../etc/hostname", 400, "bad_request"),
        ("/etc/hostname", 400, "bad_request"),
        ("leak", 400, "bad_request"),
        ("pipe", 400, "bad_request"),
        (".", 400, "bad_request"),
        ("nothing-here.txt", 404, "no_file"),
    ] {
        let (got, body) = served.send(file(path)).await;
        assert_eq!(
            (got, body["error"].as_str()),
            (status, Some(code)),
            "{path}: {body}"
        );
    }

    // A fork from before the edit goes on with another approach, on its own branch.
    let events = served.events(&id, 1000).await;
    let at = events.iter().find(|e| e["kind"] == "observation").unwrap()["id"]
        .as_u64()
        .unwrap();
    let second = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": "sed -i 's/row\\[:-1\\]/list(row)/' export.py && python3 -m unittest 2>&1 | tail -n 1"}),
        ),
        reply().call("finish", json!({"message": "second approach"})),
    ])
    .await
    .unwrap();
    for (body, status) in [
        (json!({"at": 9999}), 400),
        (json!({"at": "x"}), 400),
        (json!({"message": "  "}), 400),
        (json!({"bogus": 1}), 400),
    ] {
        let (got, answer) = served
            .post(&format!("/api/conversations/{id}/fork"), body.clone())
            .await;
        assert_eq!(got, status, "{body}: {answer}");
    }
    let (status, _) = served
        .post("/api/conversations/19700101-nothing/fork", json!({}))
        .await;
    assert_eq!(status, 404);
    let (status, fork) = served
        .post(
            &format!("/api/conversations/{id}/fork"),
            json!({"at": at, "message": "try sed instead",
                   "settings": {"base_url": second.url(), "model": "test-model"}}),
        )
        .await;
    assert_eq!(status, 202, "{fork}");
    let fork_id = fork["id"].as_str().unwrap().to_string();
    assert_ne!(fork_id, id);
    let done = served.wait_for(&fork_id, &["finished"]).await;
    let fork_branch = format!("wright/{fork_id}");
    assert_eq!(done["branch"], fork_branch.as_str(), "{done}");
    let fork_events = served.events(&fork_id, 1000).await;
    assert_eq!(
        fork_events[0]["forked_from"],
        format!("{id}@{at}").as_str(),
        "{:#}",
        fork_events[0]
    );
    let on_fork = git(h.repo(), &["show", &format!("{fork_branch}:export.py")]);
    assert!(on_fork.contains("list(row)"), "{on_fork}");
    // The original is untouched by its fork.
    let original = git(h.repo(), &["show", &format!("wright/{id}:export.py")]);
    assert!(original.contains(FIX), "{original}");

    // Taking the original's changes: refused over the user's uncommitted work, then done.
    std::fs::write(h.repo().join("notes.txt"), "mine\n").unwrap();
    git(h.repo(), &["add", "notes.txt"]);
    let (status, body) = served
        .post(&format!("/api/conversations/{id}/apply"), json!({}))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("conflict")),
        "{body}"
    );
    assert!(
        body["message"].as_str().unwrap().contains("uncommitted"),
        "{body}"
    );
    git(h.repo(), &["commit", "-qm", "my notes"]);
    // The user's branch moved on: taking the agent's is a merge commit, made with the
    // user's identity (CI's user has no global one).
    git(h.repo(), &["config", "user.name", "A User"]);
    git(h.repo(), &["config", "user.email", "user@example.invalid"]);
    let (status, body) = served
        .post(&format!("/api/conversations/{id}/apply"), json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["branch"], format!("wright/{id}").as_str());
    assert_eq!(
        std::path::Path::new(body["into"].as_str().unwrap()),
        h.repo().canonicalize().unwrap()
    );
    let mine = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    assert!(mine.contains(FIX), "{mine}");

    // The fork is dropped: its branch and clone go; a second discard finds nothing.
    let fork_clone = workspace_of(&served, &fork_id).await;
    assert!(fork_clone.exists());
    let (status, body) = served
        .post(&format!("/api/conversations/{fork_id}/discard"), json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"outcome": "removed", "branch": fork_branch.as_str()})
    );
    assert!(git(h.repo(), &["branch", "--list", &fork_branch]).is_empty());
    assert!(!fork_clone.exists());
    let (status, body) = served
        .post(&format!("/api/conversations/{fork_id}/discard"), json!({}))
        .await;
    assert_eq!(
        (status, body["outcome"].as_str()),
        (200, Some("already_gone"))
    );
    let (status, body) = served
        .post(&format!("/api/conversations/{fork_id}/apply"), json!({}))
        .await;
    assert_eq!(status, 409, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_conversation_is_not_applied_paused_run_on_and_doctor_reports() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let model = ScriptedServer::start(held()).await.unwrap();
    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    let id = served.create(h.repo(), "hold on", &model.url()).await;
    served.wait_for_event(&id, "observation").await;
    for route in ["apply", "discard"] {
        let (status, body) = served
            .post(&format!("/api/conversations/{id}/{route}"), json!({}))
            .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (409, Some("conflict")),
            "{route}: {body}"
        );
        assert!(
            body["message"].as_str().unwrap().contains("running"),
            "{body}"
        );
    }
    // Paused (OpenHands' name for an interrupt), then run on from where its log ends,
    // without a message; a finished one wants a message.
    let (status, _) = served
        .post(&format!("/api/conversations/{id}/pause"), json!({}))
        .await;
    assert_eq!(status, 202);
    served.wait_for(&id, &["stopped"]).await;
    let (status, body) = served
        .post(
            &format!("/api/conversations/{id}/run"),
            json!({"settings": {"bogus": 1}}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = served
        .send(
            served
                .http
                .post(served.url(&format!("/api/conversations/{id}/run")))
                .bearer_auth(&served.key),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let done = served.wait_for(&id, &["finished"]).await;
    assert_eq!(done["error"], Value::Null, "{done}");
    let events = served.events(&id, 1000).await;
    let users = events
        .iter()
        .filter(|e| e["kind"] == "message" && e["source"] == "user")
        .count();
    assert_eq!(users, 1, "no message was added: {events:#?}");
    let (status, body) = served
        .post(&format!("/api/conversations/{id}/run"), json!({}))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("conflict")),
        "{body}"
    );
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("send it a message"),
        "{body}"
    );

    // Doctor's report on another server, as `wright doctor --json` gives it.
    let options = ServerOptions {
        llama_cpp_context: Some(32768),
        native_tools: false,
        ..ServerOptions::default()
    };
    let probed = ScriptedServer::start_with(vec![reply().text("1 2 3 4 5")], options)
        .await
        .unwrap();
    let url = probed.url();
    let (status, report) = served
        .send(
            served
                .http
                .get(served.url("/api/doctor"))
                .query(&[("base_url", url.as_str()), ("model", "test-model")])
                .bearer_auth(&served.key),
        )
        .await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["model"], "test-model", "{report:#}");
    assert_eq!(report["context_window"]["tokens"], 32768, "{report:#}");
    assert_eq!(report["tool_calling"], "text", "{report:#}");
    assert_eq!(
        (report["ok"].clone(), report["problems"].clone()),
        (json!(true), json!([])),
        "{report:#}"
    );
    let (status, body) = served
        .send(
            served
                .http
                .get(served.url("/api/doctor"))
                .query(&[("sandbox", "sideways")])
                .bearer_auth(&served.key),
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("bad_settings")),
        "{body}"
    );
}

/// A bare copy of `repo` served over git's plain ("dumb") HTTP by Python's file server;
/// returns the server (killed on drop) and the repository's URL.
async fn served_over_http(
    repo: &std::path::Path,
    root: &std::path::Path,
) -> (tokio::process::Child, String) {
    let bare = root.join("r.git");
    git(
        root,
        &[
            "clone",
            "--quiet",
            "--bare",
            repo.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    git(&bare, &["update-server-info"]);
    let mut child = tokio::process::Command::new("python3")
        .args(["-u", "-m", "http.server", "--bind", "127.0.0.1", "0"])
        .current_dir(root)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
    let port = line
        .split(" port ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, format!("http://127.0.0.1:{port}/r.git"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_on_a_repository_url_works_on_a_clone_of_its_own() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let root = tempfile::tempdir().unwrap();
    let (_http, url) = served_over_http(h.repo(), root.path()).await;
    let model = ScriptedServer::start(fixing_script()).await.unwrap();
    let served = Served::start(
        &h,
        &["--base-url", &model.url(), "--model", "test-model"],
        &[],
    )
    .await;

    // What is not a network repository, or is two places at once, is refused at once.
    for body in [
        json!({"repository_url": "file:///etc", "task": "t"}),
        json!({"repository_url": h.repo(), "task": "t"}),
        json!({"repository_url": "ext::sh -c id", "task": "t"}),
        json!({"repository_url": "--upload-pack=id", "task": "t"}),
        json!({"repository_url": url, "workspace": h.repo(), "task": "t"}),
        json!({"task": "t"}),
    ] {
        let (status, answer) = served.post("/api/conversations", body.clone()).await;
        assert_eq!(
            (status, answer["error"].as_str()),
            (400, Some("bad_request")),
            "{body}: {answer}"
        );
    }
    let (status, list) = served.get("/api/conversations").await;
    assert_eq!((status, list), (200, json!({"conversations": []})));

    // A repository nothing answers for: the conversation fails, saying why.
    let failed = served
        .accepted(json!({"repository_url": "http://127.0.0.1:9/nothing.git", "task": "t"}))
        .await;
    for _ in 0..600 {
        let (_, body) = served.get(&format!("/api/conversations/{failed}")).await;
        if body["state"] == "failed" {
            assert!(
                body["error"]
                    .as_str()
                    .unwrap()
                    .contains("cannot clone http://127.0.0.1:9/nothing.git"),
                "{body}"
            );
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, body) = served.get(&format!("/api/conversations/{failed}")).await;
    assert_eq!(body["state"], "failed", "{body}");

    // The one served: cloned, fixed on a branch of that clone, taken there.
    let id = served
        .accepted(json!({"repository_url": url, "task": "the tests fail, fix it"}))
        .await;
    let done = served.wait_for(&id, &["finished"]).await;
    let cloned = h.data.path().join("wright-repositories").join(&id);
    assert_eq!(
        std::path::Path::new(done["repository"].as_str().unwrap()),
        cloned.canonicalize().unwrap(),
        "{done}"
    );
    let branch = format!("wright/{id}");
    assert!(git(&cloned, &["show", &format!("{branch}:export.py")]).contains(FIX));
    // The repository served is untouched.
    let mine = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    assert!(mine.contains(BUG), "{mine}");
    let (status, diff) = served.get(&format!("/api/conversations/{id}/diff")).await;
    assert_eq!(
        (status, diff["files"].clone()),
        (200, json!(["export.py"])),
        "{diff}"
    );
    let (status, body) = served
        .post(&format!("/api/conversations/{id}/apply"), json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(std::fs::read_to_string(cloned.join("export.py"))
        .unwrap()
        .contains(FIX));
    // Removing the conversation removes its clone of the repository.
    let (status, body) = served
        .send(
            served
                .http
                .delete(served.url(&format!("/api/conversations/{id}")))
                .bearer_auth(&served.key),
        )
        .await;
    assert_eq!(status, 204, "{body}");
    assert!(!cloned.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn condense_shrinks_the_history_then_goes_on() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let model = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "seq 1 3000"})),
        reply().call("terminal", json!({"command": "seq 1 2000"})),
        reply().call("terminal", json!({"command": "echo three"})),
        reply().call("terminal", json!({"command": "echo four"})),
        Reply::Delayed(
            Duration::from_secs(120),
            Box::new(reply().call("finish", json!({"message": "too late"}))),
        ),
        reply().call("finish", json!({"message": "done after condensing"})),
    ])
    .await
    .unwrap();
    let served = Served::start(&h, &["--base-url", &model.url()], &[]).await;
    let id = served.create(h.repo(), "count", &model.url()).await;
    for _ in 0..600 {
        let observations = served
            .events(&id, 1000)
            .await
            .iter()
            .filter(|e| e["kind"] == "observation")
            .count();
        if observations == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, _) = served
        .post(&format!("/api/conversations/{id}/interrupt"), json!({}))
        .await;
    assert_eq!(status, 202);
    served.wait_for(&id, &["stopped"]).await;
    let (status, body) = served
        .post(
            &format!("/api/conversations/{id}/condense"),
            json!({"message": "go on"}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    served.wait_for(&id, &["finished"]).await;
    let events = served.events(&id, 1000).await;
    let go_on = events
        .iter()
        .position(|e| e["kind"] == "message" && e["text"] == "go on")
        .unwrap();
    let condensed = events
        .iter()
        .position(|e| e["kind"] == "condensation")
        .unwrap_or_else(|| panic!("no condensation: {events:#?}"));
    assert!(condensed > go_on, "{events:#?}");
    let condensation = &events[condensed];
    assert!(
        condensation["tokens_after"].as_u64().unwrap()
            <= condensation["tokens_before"].as_u64().unwrap() / 2,
        "{condensation}"
    );
    // Only once: what follows is append-only again.
    assert_eq!(
        events
            .iter()
            .filter(|e| e["kind"] == "condensation")
            .count(),
        1
    );
}
