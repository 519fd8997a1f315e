//! The workspace follows the conversation across replicas (`--git-store`): two replicas on
//! one database (a real PostgreSQL cluster of the test's own) push each step's files to a
//! git store they share; the replica running a conversation is killed (SIGKILL) and its
//! clone taken away with it — a replica on another machine never had it — and the replica
//! that takes over makes the clone again with the files of the last step pushed. When the
//! last steps' files never reached the store, the takeover says which were lost and the
//! model is told. Programs the agent planted in its clone's git configuration never run on
//! the host, neither as the files are pushed nor as they come back. A run ends with its
//! last step in the store (`server.git_store` of the configuration file, no database).

use super::database::database;
use super::replicas::assert_contiguous;
use super::replicas::finished;
use super::Served;
use crate::common::Harness;
use crate::host_attacks::git::plant_programs;
use crate::host_attacks::Outside;
use serde_json::json;
use serde_json::Value;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;
use wright_testkit::failing_python_repo;
use wright_testkit::git;
use wright_testkit::postgres::PASSWORD;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// Leases long enough that a replica on a loaded machine keeps its own (a run taken over
/// before the test kills its replica would run on), short enough for a quick takeover.
const LEASE: &str = "6";

/// The content of `file` in the commit the store's `pushed.json` names for `id`, once
/// there is one.
fn pushed_file(store: &Path, id: &str, file: &str) -> Option<String> {
    let record = std::fs::read_to_string(store.join(id).join("pushed.json")).ok()?;
    let record: Value = serde_json::from_str(&record).ok()?;
    let commit = record["commit"].as_str()?;
    let output = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(store.join(id).join("steps.git"))
        .args(["show", &format!("{commit}:{file}")])
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Waits until the store holds `text` as `file` of `id`'s last step pushed.
async fn pushed(store: &Path, id: &str, file: &str, text: &str) {
    for _ in 0..1200 {
        if pushed_file(store, id, file).as_deref() == Some(text) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "the store never held {file} = {text:?} (it holds {:?})",
        pushed_file(store, id, file)
    );
}

/// Waits until `served` logged a call whose command contains `command`; its id.
async fn called(served: &Served, id: &str, command: &str) -> u64 {
    called_after(served, id, command, None).await
}

/// The same, for a call after event `after`.
async fn called_after(served: &Served, id: &str, command: &str, after: Option<u64>) -> u64 {
    for _ in 0..1200 {
        let events = served.events(id, 1000).await;
        let found = events.iter().find(|e| {
            e["kind"] == "action"
                && after.is_none_or(|after| e["id"].as_u64().unwrap() > after)
                && e["arguments"]["command"]
                    .as_str()
                    .is_some_and(|c| c.contains(command))
        });
        if let Some(event) = found {
            return event["id"].as_u64().unwrap();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no call of {command:?} was logged");
}

/// The agent's clone of `id` in `h`'s data home.
fn clone_of(h: &Harness, id: &str) -> PathBuf {
    h.data.path().join("wright/workspaces").join(id)
}

/// Kills `a` (SIGKILL) and takes its clone away: the replica that takes over has none.
async fn kill_and_lose_the_clone(a: &mut Served, h: &Harness, id: &str) {
    a.child.start_kill().unwrap();
    a.child.wait().await.unwrap();
    let clone = clone_of(h, id);
    assert!(clone.is_dir(), "no clone at {}", clone.display());
    // The killed replica's sandboxed processes die with it, but not in the same instant:
    // one may still be writing in the clone ("Directory not empty"); taken away again.
    let mut tries = 0;
    while let Err(err) = std::fs::remove_dir_all(&clone) {
        tries += 1;
        assert!(tries < 100, "cannot remove {}: {err}", clone.display());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The output of the observation answering the action `action`.
fn answer(events: &[Value], action: &Value) -> String {
    // Call ids may repeat from one step to the next: the first answer after it.
    events
        .iter()
        .skip_while(|e| e["id"] != action["id"])
        .find(|e| e["kind"] == "observation" && e["call_id"] == action["call_id"])
        .and_then(|e| e["output"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The messages of the environment (what a takeover tells the model).
fn told(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["kind"] == "message" && e["source"] == "environment")
        .map(|e| e["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeover_without_the_clone_brings_back_the_files_of_the_last_step_pushed() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = [("PGPASSWORD", PASSWORD)];
    let h = Harness::new();
    failing_python_repo(h.repo());
    let store = tempfile::tempdir().unwrap();
    let outside = Outside::new();
    // The agent plants every program git can be made to run in its clone, then edits a
    // file over two steps; the third call outlives its replica.
    let plant = format!(
        "{} && echo one > notes.txt && echo planted",
        plant_programs(&outside)
    );
    let model = ScriptedServer::start(vec![
        reply().call("terminal", json!({ "command": plant })),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "notes.txt", "old_str": "one", "new_str": "two"}),
        ),
        reply().call("terminal", json!({"command": "sleep 600"})),
        reply().call("terminal", json!({"command": "cat notes.txt"})),
        reply().call("finish", json!({"message": "the files came back"})),
    ])
    .await
    .unwrap();
    let store_arg = store.path().to_str().unwrap();
    let args = [
        "--database",
        url.as_str(),
        "--lease-seconds",
        LEASE,
        "--git-store",
        store_arg,
    ];
    let mut a = Served::start(&h, &args, &env).await;
    let b = Served::start(&h, &args, &env).await;
    // Planting programs is risky: nobody is asked here.
    let id = a
        .accepted(json!({"workspace": h.repo(), "task": "edit the notes",
                         "settings": {"base_url": model.url(), "model": "test-model", "confirm": "never"}}))
        .await;
    // The second step's files reached the store, and the third step runs.
    pushed(store.path(), &id, "notes.txt", "two\n").await;
    let cut_off = called(&a, &id, "sleep 600").await;
    kill_and_lose_the_clone(&mut a, &h, &id).await;

    finished(&b, &id).await;
    let events = b.events(&id, 1000).await;
    assert_contiguous(&events);
    let cat = events
        .iter()
        .find(|e| e["kind"] == "action" && e["arguments"]["command"] == "cat notes.txt")
        .expect("the call after the takeover is logged");
    assert_eq!(answer(&events, cat).trim(), "two", "{events:#?}");
    // The cut-off call is the only one whose files may have been lost.
    let told = told(&events);
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0].contains(&format!("terminal (event {cut_off})")),
        "{told:?}"
    );
    assert!(!told[0].contains("file_editor"), "{told:?}");
    // The run's work is handed over from the clone made again.
    assert_eq!(
        git(h.repo(), &["show", &format!("wright/{id}:notes.txt")]),
        "two\n"
    );
    assert!(clone_of(&h, &id).join("notes.txt").is_file());
    // Nothing planted in the clone's git configuration ran outside the sandbox.
    outside.assert_untouched();
    assert_eq!(
        model.remaining(),
        0,
        "the model was not asked for every reply"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_steps_whose_files_never_reached_the_store_are_said_lost_and_the_model_is_told() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = [("PGPASSWORD", PASSWORD)];
    let h = Harness::new();
    failing_python_repo(h.repo());
    let store = tempfile::tempdir().unwrap();
    // The second call waits for the test, which breaks the store meanwhile: the third
    // step's files never reach it.
    let model = ScriptedServer::start(vec![
        reply().call(
            "file_editor",
            json!({"command": "create", "path": "notes.txt", "file_text": "one\n"}),
        ),
        reply().call(
            "terminal",
            json!({"command": "while [ ! -e .git/go ]; do sleep 0.1; done"}),
        ),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "notes.txt", "old_str": "one", "new_str": "two"}),
        ),
        reply().call("terminal", json!({"command": "sleep 600"})),
        reply().call("terminal", json!({"command": "cat notes.txt"})),
        reply().call("finish", json!({"message": "redone"})),
    ])
    .await
    .unwrap();
    let store_arg = store.path().to_str().unwrap();
    let args = [
        "--database",
        url.as_str(),
        "--lease-seconds",
        LEASE,
        "--git-store",
        store_arg,
    ];
    let mut a = Served::start(&h, &args, &env).await;
    let b = Served::start(&h, &args, &env).await;
    let id = a.create(h.repo(), "edit the notes", &model.url()).await;
    pushed(store.path(), &id, "notes.txt", "one\n").await;
    called(&a, &id, ".git/go").await;
    // The store goes away (a share unmounted): in its place, a file.
    let kept = store.path().join(&id);
    let away = store.path().join(format!("{id}.away"));
    std::fs::rename(&kept, &away).unwrap();
    std::fs::write(&kept, "not a directory").unwrap();
    std::fs::write(clone_of(&h, &id).join(".git/go"), "").unwrap();
    let cut_off = called(&a, &id, "sleep 600").await;
    kill_and_lose_the_clone(&mut a, &h, &id).await;
    // Back before the lease expires: what it holds is the first step's files.
    std::fs::remove_file(&kept).unwrap();
    std::fs::rename(&away, &kept).unwrap();

    finished(&b, &id).await;
    let events = b.events(&id, 1000).await;
    assert_contiguous(&events);
    let edit = events
        .iter()
        .find(|e| e["kind"] == "action" && e["arguments"]["command"] == "str_replace")
        .expect("the edit is logged");
    let edited = edit["id"].as_u64().unwrap();
    let cat = events
        .iter()
        .find(|e| e["kind"] == "action" && e["arguments"]["command"] == "cat notes.txt")
        .expect("the call after the takeover is logged");
    assert_eq!(answer(&events, cat).trim(), "one", "{events:#?}");
    // The log says which calls' files were lost, and the model read it.
    let told = told(&events);
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0].contains(&format!("file_editor (event {edited})")),
        "{told:?}"
    );
    assert!(
        told[0].contains(&format!("terminal (event {cut_off})")),
        "{told:?}"
    );
    let asked = model.chat_requests();
    let after = String::from_utf8_lossy(&asked[asked.len() - 2].body).into_owned();
    assert!(
        after.contains(&format!("file_editor (event {edited})")),
        "the model was not told: {after}"
    );
    assert_eq!(
        model.remaining(),
        0,
        "the model was not asked for every reply"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clone_kept_from_an_earlier_run_is_made_again_when_the_store_is_ahead() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = [("PGPASSWORD", PASSWORD)];
    let h = Harness::new();
    failing_python_repo(h.repo());
    let store = tempfile::tempdir().unwrap();
    // A writes "one" and is killed; B goes on, writes "two" and is killed; A's machine
    // (its old clone) takes the conversation over again.
    let model = ScriptedServer::start(vec![
        reply().call(
            "file_editor",
            json!({"command": "create", "path": "notes.txt", "file_text": "one\n"}),
        ),
        reply().call("terminal", json!({"command": "sleep 600"})),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "notes.txt", "old_str": "one", "new_str": "two"}),
        ),
        reply().call("terminal", json!({"command": "sleep 600"})),
        reply().call("terminal", json!({"command": "cat notes.txt"})),
        reply().call("finish", json!({"message": "the newest files"})),
    ])
    .await
    .unwrap();
    let store_arg = store.path().to_str().unwrap();
    let args = [
        "--database",
        url.as_str(),
        "--lease-seconds",
        LEASE,
        "--git-store",
        store_arg,
    ];
    let mut a = Served::start(&h, &args, &env).await;
    let mut b = Served::start(&h, &args, &env).await;
    let id = a.create(h.repo(), "edit the notes", &model.url()).await;
    pushed(store.path(), &id, "notes.txt", "one\n").await;
    let first = called(&a, &id, "sleep 600").await;
    a.child.start_kill().unwrap();
    a.child.wait().await.unwrap();
    // A's machine keeps its clone (and what it says of it); B never sees them.
    let clone = clone_of(&h, &id);
    let step = clone.with_file_name(format!("{id}.step"));
    let kept = h.data.path().join("kept");
    std::fs::create_dir(&kept).unwrap();
    std::fs::rename(&clone, kept.join("clone")).unwrap();
    std::fs::rename(&step, kept.join("step")).unwrap();

    pushed(store.path(), &id, "notes.txt", "two\n").await;
    called_after(&b, &id, "sleep 600", Some(first)).await;
    b.child.start_kill().unwrap();
    b.child.wait().await.unwrap();
    std::fs::remove_dir_all(&clone).unwrap();
    std::fs::rename(kept.join("clone"), &clone).unwrap();
    std::fs::rename(kept.join("step"), &step).unwrap();
    assert_eq!(
        std::fs::read_to_string(clone.join("notes.txt")).unwrap(),
        "one\n"
    );

    let c = Served::start(&h, &args, &env).await;
    finished(&c, &id).await;
    let events = c.events(&id, 1000).await;
    assert_contiguous(&events);
    let cat = events
        .iter()
        .find(|e| e["kind"] == "action" && e["arguments"]["command"] == "cat notes.txt")
        .expect("the call after the second takeover is logged");
    assert_eq!(answer(&events, cat).trim(), "two", "{events:#?}");
    assert_eq!(
        model.remaining(),
        0,
        "the model was not asked for every reply"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_ends_with_its_last_step_in_the_store_the_configuration_names() {
    // One server, no database: `server.git_store` of the configuration file alone.
    let h = Harness::new();
    failing_python_repo(h.repo());
    let store = tempfile::tempdir().unwrap();
    let config = h.data.path().join("config/wright");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!("[server]\ngit_store = \"{}\"\n", store.path().display()),
    )
    .unwrap();
    let model = ScriptedServer::start(vec![
        reply().call(
            "file_editor",
            json!({"command": "create", "path": "notes.txt", "file_text": "one\n"}),
        ),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "notes.txt", "old_str": "one", "new_str": "two"}),
        ),
        reply().call("finish", json!({"message": "two steps"})),
    ])
    .await
    .unwrap();
    let served = Served::start(&h, &[], &[]).await;
    let id = served
        .create(h.repo(), "edit the notes", &model.url())
        .await;
    finished(&served, &id).await;
    // The end of the run waited for the last step's push.
    assert_eq!(
        pushed_file(store.path(), &id, "notes.txt").as_deref(),
        Some("two\n")
    );
    let events = served.events(&id, 1000).await;
    let edit = events
        .iter()
        .find(|e| e["kind"] == "action" && e["arguments"]["command"] == "str_replace")
        .unwrap();
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(store.path().join(&id).join("pushed.json")).unwrap(),
    )
    .unwrap();
    assert!(record["last"].as_u64().unwrap() > edit["id"].as_u64().unwrap());
}
