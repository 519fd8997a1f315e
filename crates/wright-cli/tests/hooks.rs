//! Hooks end to end: the user's own (`hooks.json` beside their configuration) run as the
//! user at each event — a PreToolUse hook blocks `rm -rf` and the model adapts, a Stop
//! hook refuses a finish while the tests fail, PostToolUse and UserPromptSubmit add
//! context, SessionStart and SessionEnd run — and the repository's (`.claude/settings.json`,
//! a setup script) run only with the user's consent for their exact content, and then in
//! the sandbox.

use crate::common::first_user_message;
use crate::common::observations;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use wright_protocol::EventBody;
use wright_protocol::HookEvent;
use wright_protocol::HookOrigin;
use wright_protocol::HookOutcome;
use wright_protocol::HookRun;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

fn write(root: &std::path::Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn committed_repo(h: &Harness) {
    write(h.repo(), "build/out.txt", "built\n");
    git(h.repo(), &["init", "-q"]);
    git(h.repo(), &["add", "-A"]);
    git(h.repo(), &["commit", "-qm", "Start"]);
}

fn hook_runs(h: &Harness) -> Vec<HookRun> {
    h.events()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::Hook(run) => Some(run),
            _ => None,
        })
        .collect()
}

/// The user's hooks file, in OpenHands' shape, with a log of every event outside the
/// workspace (`seen`).
fn user_hooks(h: &Harness, seen: &std::path::Path) {
    let log = |event: &str| {
        json!({"hooks": [{"type": "command",
            "command": format!("echo {event} $WRIGHT_TOOL_NAME >> {}", seen.display())}]})
    };
    let hooks = json!({"hooks": {
        "SessionStart": [log("SessionStart"), {"hooks": [{"command": "echo 'The build directory is generated.'"}]}],
        "UserPromptSubmit": [{"hooks": [{"command": "jq -r .prompt >/dev/null 2>&1; echo '{\"additionalContext\": \"Current branch: main\"}'"}]}],
        "PreToolUse": [
            log("PreToolUse"),
            {"matcher": "Bash", "hooks": [{"type": "command", "timeout": 10,
              "command": "input=$(cat); case \"$input\" in *'rm -rf'*) echo 'rm -rf is not allowed here: remove files one by one' >&2; exit 2;; esac"}]}
        ],
        "PostToolUse": [{"matcher": "terminal", "hooks": [{"command":
            "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\", \"additionalContext\": \"lint: clean\"}}'"}]}],
        "Stop": [{"hooks": [{"command":
            "test -f \"$WRIGHT_PROJECT_DIR/tests_pass\" || echo '{\"decision\": \"block\", \"reason\": \"the tests do not pass\"}'"}]}],
        "SessionEnd": [log("SessionEnd")]
    }});
    write(
        &h.data.path().join("config/wright"),
        "hooks.json",
        &hooks.to_string(),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_hooks_block_refuse_and_add_context() {
    let h = Harness::new();
    committed_repo(&h);
    let seen_dir = tempfile::tempdir().unwrap();
    let seen = seen_dir.path().join("seen.txt");
    user_hooks(&h, &seen);
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "rm -rf build"})),
        reply().call("terminal", json!({"command": "rm build/out.txt"})),
        reply().call("finish", json!({"message": "cleaned"})),
        reply().call("terminal", json!({"command": "touch tests_pass"})),
        reply().call("finish", json!({"message": "cleaned, tests pass"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "clean the build", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(said.contains("hooks yours: 8 hooks"), "{said}");
    assert!(
        said.contains("blocked it: rm -rf is not allowed here: remove files one by one"),
        "{said}"
    );

    let requests = server.chat_requests();
    // SessionStart's words and UserPromptSubmit's context follow the task.
    let first = first_user_message(&requests[0].json());
    assert!(
        first.contains("clean the build\n\n[From a SessionStart hook:]\nThe build directory is generated.\n\n[From a UserPromptSubmit hook:]\nCurrent branch: main"),
        "{first}"
    );
    let outputs = observations(&h.events());
    // Blocked: not run, the model told why; then it adapts.
    assert_eq!(outputs[0]["is_error"], true);
    assert_eq!(
        outputs[0]["output"],
        "A hook blocked this call: rm -rf is not allowed here: remove files one by one"
    );
    assert_eq!(outputs[1]["is_error"], false, "{}", outputs[1]);
    // PostToolUse's context after the result it is about.
    let third = requests[2].json().to_string();
    assert!(
        third.contains("[From a PostToolUse hook:]\\nlint: clean"),
        "{third}"
    );
    // The first finish is refused while the tests fail; the second is taken.
    assert_eq!(outputs[2]["tool"], "finish");
    assert!(
        outputs[2]["output"]
            .as_str()
            .unwrap()
            .starts_with("A hook refused the finish: the tests do not pass."),
        "{}",
        outputs[2]
    );
    // The file was removed one by one, and the directory's removal never ran.
    let id = h.conversation_id();
    let tree = git(
        h.repo(),
        &["ls-tree", "-r", "--name-only", &format!("wright/{id}")],
    );
    assert_eq!(tree.trim(), "tests_pass");

    let runs = hook_runs(&h);
    let decided: Vec<(HookEvent, HookOutcome)> = runs
        .iter()
        .filter(|run| run.outcome != HookOutcome::Allowed)
        .map(|run| (run.event, run.outcome))
        .collect();
    assert_eq!(
        decided,
        [
            (HookEvent::PreToolUse, HookOutcome::Blocked),
            (HookEvent::Stop, HookOutcome::Blocked)
        ]
    );
    assert!(runs.iter().all(|run| run.origin == HookOrigin::User));
    // The user's hooks ran as the user, on the host: they wrote outside the workspace.
    let seen = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(
        seen,
        "SessionStart\nPreToolUse terminal\nPreToolUse terminal\nPreToolUse terminal\nSessionEnd\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_fails_or_hangs_is_reported_not_fatal() {
    let h = Harness::new();
    committed_repo(&h);
    let hooks = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"command": "echo broken >&2; exit 7"},
        {"command": "sleep 30", "timeout": 1}
    ]}]}});
    write(
        &h.data.path().join("config/wright"),
        "hooks.json",
        &hooks.to_string(),
    );
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo ran"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let started = std::time::Instant::now();
    let output = h.run(&server.url(), "run it", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(started.elapsed() < std::time::Duration::from_secs(25));
    let outcomes: Vec<(HookOutcome, Option<String>)> = hook_runs(&h)
        .into_iter()
        .map(|run| (run.outcome, run.reason))
        .collect();
    assert_eq!(
        outcomes,
        [
            (
                HookOutcome::Failed,
                Some("it failed (exit 7): broken".into())
            ),
            (
                HookOutcome::TimedOut,
                Some("it ran past its timeout and was stopped".into())
            ),
        ]
    );
    assert_eq!(observations(&h.events())[0]["output"], "ran");
    assert!(
        stderr(&output).contains("it failed (exit 7): broken"),
        "{}",
        stderr(&output)
    );
}

/// A repository whose `.claude/settings.json` has a PreToolUse hook that tries to write
/// outside the workspace and inside it, and blocks `curl`; and a setup script.
fn repo_with_hooks(h: &Harness, outside: &std::path::Path) {
    let settings = json!({"permissions": {"allow": []}, "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": format!(
            "{{ echo planted > {}; }} 2>/dev/null; echo ran >> hook-ran.txt; grep -q curl && {{ echo 'no network tools' >&2; exit 2; }}; exit 0",
            outside.display()
        )}]}]
    }});
    write(h.repo(), ".claude/settings.json", &settings.to_string());
    write(
        h.repo(),
        ".wright/setup.sh",
        "echo set up > setup-ran.txt\n",
    );
    git(h.repo(), &["init", "-q"]);
    git(h.repo(), &["add", "-A"]);
    git(h.repo(), &["commit", "-qm", "Hooks"]);
}

fn curl_then_finish() -> Vec<wright_testkit::Reply> {
    vec![
        // Harmless here; the repository's hook refuses anything that names curl.
        reply().call("terminal", json!({"command": "echo curl is not run"})),
        reply().call("terminal", json!({"command": "echo fine"})),
        reply().call("finish", json!({"message": "done"})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repositorys_hooks_run_only_with_consent_and_in_the_sandbox() {
    let h = Harness::new();
    let outside_dir = tempfile::tempdir().unwrap();
    let outside = outside_dir.path().join("planted.txt");
    repo_with_hooks(&h, &outside);

    // Not allowed: nothing of them runs, and the header says so.
    let server = ScriptedServer::start(curl_then_finish()).await.unwrap();
    let output = h.run(&server.url(), "fetch it", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("hooks the repository's (.claude/settings.json, .wright/setup.sh) do not run: you have not allowed their content"),
        "{}",
        stderr(&output)
    );
    assert!(hook_runs(&h).is_empty());
    // Neither the hook nor the setup script wrote a file: the run changed nothing.
    let changes = h.events().into_iter().find_map(|e| match e.body {
        EventBody::Changes(changes) => Some(changes.outcome),
        _ => None,
    });
    assert_eq!(changes, Some(wright_protocol::ChangesOutcome::None));
    assert!(!outside.exists());
    std::fs::remove_dir_all(h.data.path().join("wright/conversations")).unwrap();

    // Allowed for good with `wright allow repo-hooks`: they run, in the sandbox.
    let allowed = h.wright(&["allow", "repo-hooks"], &[]).await;
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
    assert!(String::from_utf8_lossy(&allowed.stdout).contains("echo set up > setup-ran.txt"));
    let server = ScriptedServer::start(curl_then_finish()).await.unwrap();
    let output = h.run(&server.url(), "fetch it", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("hooks the repository's: 1 hook (PreToolUse) (.claude/settings.json, .wright/setup.sh), run in the sandbox"),
        "{}",
        stderr(&output)
    );
    let runs = hook_runs(&h);
    let shape: Vec<(HookEvent, HookOrigin, HookOutcome)> = runs
        .iter()
        .map(|run| (run.event, run.origin, run.outcome))
        .collect();
    assert_eq!(
        shape,
        [
            (
                HookEvent::Setup,
                HookOrigin::Repository,
                HookOutcome::Allowed
            ),
            (
                HookEvent::PreToolUse,
                HookOrigin::Repository,
                HookOutcome::Blocked
            ),
            (
                HookEvent::PreToolUse,
                HookOrigin::Repository,
                HookOutcome::Allowed
            ),
        ]
    );
    assert_eq!(runs[1].reason.as_deref(), Some("no network tools"));
    let id = h.conversation_id();
    let tree = git(
        h.repo(),
        &["ls-tree", "-r", "--name-only", &format!("wright/{id}")],
    );
    assert!(
        tree.contains("hook-ran.txt") && tree.contains("setup-ran.txt"),
        "{tree}"
    );
    // In the sandbox: nothing outside the workspace was written.
    assert!(
        !outside.exists(),
        "a repository's hook wrote outside the sandbox"
    );

    // A changed hooks file asks again: without a terminal, it does not run.
    write(
        h.repo(),
        ".wright/setup.sh",
        "echo changed > setup-ran.txt\n",
    );
    git(h.repo(), &["commit", "-qam", "Change the setup"]);
    git(h.repo(), &["branch", "-D", &format!("wright/{id}")]);
    std::fs::remove_dir_all(h.data.path().join("wright/conversations")).unwrap();
    let server = ScriptedServer::start(curl_then_finish()).await.unwrap();
    let output = h.run(&server.url(), "fetch it", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(hook_runs(&h).is_empty());
    // --allow-repo-hooks takes them for one run.
    std::fs::remove_dir_all(h.data.path().join("wright/conversations")).unwrap();
    let server = ScriptedServer::start(curl_then_finish()).await.unwrap();
    let output = h
        .run(&server.url(), "fetch it", &["--allow-repo-hooks"])
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(hook_runs(&h).len(), 3);
    assert!(!outside.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_hook_of_yours_in_the_sandbox_refuses_a_finish_while_the_tests_fail() {
    let h = Harness::new();
    wright_testkit::failing_python_repo(h.repo());
    // Your hook, run in the sandbox since it runs the project's (the agent's) code.
    let hooks = json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "sandbox": true,
        "command": "python3 -m unittest -q >/dev/null 2>&1 || echo '{\"decision\": \"block\", \"reason\": \"the tests do not pass\"}'"}]}]}});
    write(
        &h.data.path().join("config/wright"),
        "hooks.json",
        &hooks.to_string(),
    );
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "ls"})),
        reply().call("finish", json!({"message": "looks fine"})),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": "row[:-1]", "new_str": "row"}),
        ),
        reply().call("finish", json!({"message": "fixed the slice"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "the test fails, fix it", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let outputs = observations(&h.events());
    let finishes: Vec<(bool, String)> = outputs
        .iter()
        .filter(|o| o["tool"] == "finish")
        .map(|o| {
            (
                o["is_error"] == true,
                o["output"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(finishes.len(), 2, "{outputs:?}");
    assert!(
        finishes[0].0
            && finishes[0]
                .1
                .starts_with("A hook refused the finish: the tests do not pass.")
    );
    assert!(!finishes[1].0, "{finishes:?}");
    let stops: Vec<HookOutcome> = hook_runs(&h).iter().map(|run| run.outcome).collect();
    assert_eq!(stops, [HookOutcome::Blocked, HookOutcome::Allowed]);
}
