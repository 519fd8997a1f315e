//! `wright run --agent NAME`: an external agent that speaks the Agent Client Protocol —
//! here `wright acp` itself, a real ACP agent driven by the scripted model server — runs
//! the task instead of wright's own loop, inside the conversation's sandbox and clone,
//! reaching its model only through wright's allow-list proxy (`allow_hosts`). Its updates
//! are in wright's log (a `start` naming it, its own tool calls as `reported` actions),
//! its change is in the diff, its permission requests go through wright's confirmation
//! flow, and what it runs is confined as wright's own commands are.

use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use wright_protocol::AgentState;
use wright_protocol::EventBody;
use wright_testkit::failing_python_repo;
use wright_testkit::reply;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;
use wright_testkit::BUG;
use wright_testkit::FIX;

/// Writes `[agents.inner]`: `wright acp` working in place in the clone (the outer
/// sandbox confines it), its model reached as `model.test` through the proxy.
pub(crate) fn configure(h: &Harness, port: u16, extra: &[&str]) {
    let dir = h.data.path().join("config/wright");
    std::fs::create_dir_all(&dir).unwrap();
    let mut command = vec![
        env!("CARGO_BIN_EXE_wright").to_string(),
        "acp".into(),
        "--in-place".into(),
        "--sandbox".into(),
        "none".into(),
        "--base-url".into(),
        format!("http://model.test:{port}/v1"),
        "--model".into(),
        "test-model".into(),
        "--allow-remote".into(),
    ];
    command.extend(extra.iter().map(|s| s.to_string()));
    let text = format!(
        "[agents.inner]\ncommand = {}\nallow_hosts = [\"model.test:{port}\"]\n",
        serde_json::to_string(&command).unwrap()
    );
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

pub(crate) fn port(server: &ScriptedServer) -> u16 {
    let url = server.url();
    let tail = url.rsplit(':').next().unwrap();
    tail.trim_end_matches("/v1")
        .trim_end_matches('/')
        .parse()
        .unwrap()
}

async fn run_external(
    h: &Harness,
    server: &ScriptedServer,
    flags: &[&str],
) -> std::process::Output {
    let url = server.url();
    let mut args = vec![
        "run",
        "--agent",
        "inner",
        "--base-url",
        &url,
        "--model",
        "test-model",
    ];
    args.extend(flags);
    args.push("the test test_export_csv fails, fix it");
    h.wright(&args, &[("WRIGHT_PROXY_RESOLVE", "model.test=127.0.0.1")])
        .await
}

pub(crate) fn fix_script() -> Vec<Reply> {
    vec![
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": FIX}),
        ),
        reply().call("terminal", json!({"command": "python3 -m unittest"})),
        reply().call(
            "finish",
            json!({"message": "row_to_csv now joins the whole row."}),
        ),
    ]
}

/// Whether this machine gives the sandbox a network namespace (the proxy needs one).
pub(crate) fn no_namespace(output: &std::process::Output) -> bool {
    let said = stderr(output);
    if said.contains("need a network namespace") || said.contains("needs a network namespace") {
        eprintln!("!!! no network namespace here: the external agent cannot reach its model through the proxy; NOT CHECKED !!!");
        return true;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_agent_fixes_a_failing_test_in_the_clone() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let server = ScriptedServer::start(fix_script()).await.unwrap();
    configure(&h, port(&server), &[]);
    let output = run_external(&h, &server, &[]).await;
    if no_namespace(&output) {
        return;
    }
    let events = h.events();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}\n{events:#?}",
        stderr(&output)
    );
    let start = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::Start(start) => Some(start.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(start.agent.as_deref(), Some("inner"));
    // Its own tool calls, as it reported them.
    let reported = events
        .iter()
        .filter(|e| matches!(&e.body, EventBody::Action { tool, .. } if tool == "reported"))
        .count();
    assert!(reported >= 2, "{events:#?}");
    let diff = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::Changes(changes) => changes.diff.clone(),
            _ => None,
        })
        .unwrap_or_default();
    assert!(
        diff.contains("+    return \",\".join(str(v) for v in row)"),
        "{diff}"
    );
    assert_eq!(crate::common::last_state(&events), "state:finished");
    // The user's checkout is untouched: the fix is on the branch, which apply takes.
    let text = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    assert!(text.contains(BUG));
    let id = h.conversation_id();
    // No model of wright's goes on with its history: a fork is refused, why said (a
    // resume goes on in the agent's own session: external_agent_resume.rs).
    let url = server.url();
    let args = [
        "fork",
        id.as_str(),
        "--base-url",
        &url,
        "--model",
        "test-model",
    ];
    let refused = h.wright(&args, &[]).await;
    assert_ne!(refused.status.code(), Some(0), "{args:?}");
    assert!(
        stderr(&refused).contains("run by the external agent inner"),
        "{args:?}: {}",
        stderr(&refused)
    );
    let applied = h.wright(&["apply", id.as_str()], &[]).await;
    assert_eq!(applied.status.code(), Some(0), "{}", stderr(&applied));
    let text = std::fs::read_to_string(h.repo().join("export.py")).unwrap();
    assert!(text.contains(FIX), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_permission_request_goes_through_wrights_confirmation() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let server = ScriptedServer::start(fix_script()).await.unwrap();
    // The inner agent asks before every action; wright asks before every one too, and
    // nobody is at a terminal: the action waits, logged, and nothing runs.
    configure(&h, port(&server), &["--confirm", "always"]);
    let output = run_external(&h, &server, &["--confirm", "always"]).await;
    if no_namespace(&output) {
        return;
    }
    let events = h.events();
    let waiting = events.iter().find_map(|e| match &e.body {
        EventBody::State {
            state: AgentState::AwaitingConfirmation,
            call_id: Some(id),
            ..
        } => Some(id.clone()),
        _ => None,
    });
    let id = waiting.unwrap_or_else(|| panic!("{}\n{events:#?}", stderr(&output)));
    assert!(
        events.iter().any(|e| matches!(&e.body,
            EventBody::Action { call_id, tool, .. } if *call_id == id && tool == "reported")),
        "{events:#?}"
    );
    // Nothing was allowed: the file is as it was, on the branch too.
    let diff = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::Changes(changes) => changes.diff.clone(),
            _ => None,
        })
        .unwrap_or_default();
    assert!(!diff.contains("row)"), "{diff}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_is_confined_by_the_sandbox() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let outside = h.data.path().join("escaped");
    let script = vec![
        reply().call(
            "terminal",
            json!({"command": format!("echo x > {} ; echo done", outside.display())}),
        ),
        reply().call("finish", json!({"message": "tried"})),
    ];
    let server = ScriptedServer::start(script).await.unwrap();
    configure(&h, port(&server), &[]);
    let output = run_external(&h, &server, &[]).await;
    if no_namespace(&output) {
        return;
    }
    let events = h.events();
    // It ran (the inner agent reported its command) and could not write outside its clone.
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.body, EventBody::Action { tool, .. } if tool == "reported")),
        "{}\n{events:#?}",
        stderr(&output)
    );
    // Its command ran (`echo done` after the write) and the write was refused.
    let ran = events.iter().any(|e| {
        matches!(&e.body, EventBody::Observation { tool, output, .. }
            if tool == "reported" && output.contains("done")
                && (output.contains("denied") || output.contains("Read-only")))
    });
    assert!(ran, "{events:#?}");
    assert!(!outside.exists(), "the agent wrote outside its clone");
}

/// A scripted ACP agent (Python, run inside the sandbox) that does its work through
/// wright's client capabilities: reads a file, writes the fix, runs the tests in a
/// terminal, then tries to read a file outside the workspace.
const SCRIPTED_AGENT: &str = r#"
import json, sys
n = 0
def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n"); sys.stdout.flush()
def ask(method, params):
    global n
    n += 1
    send({"jsonrpc": "2.0", "id": 1000 + n, "method": method, "params": params})
    while True:
        msg = json.loads(sys.stdin.readline())
        if msg.get("id") == 1000 + n and "method" not in msg:
            return msg
def say(sid, text):
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid,
      "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}})
cwd = None
for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        caps = msg["params"]["clientCapabilities"]
        assert caps["fs"]["readTextFile"] and caps["fs"]["writeTextFile"] and caps["terminal"], caps
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    elif method == "session/new":
        cwd = msg["params"]["cwd"]
        send({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        text = ask("fs/read_text_file", {"sessionId": "s1", "path": cwd + "/export.py"})["result"]["content"]
        fixed = text.replace("row[:-1]", "row")
        ask("fs/write_text_file", {"sessionId": "s1", "path": cwd + "/export.py", "content": fixed})
        term = ask("terminal/create", {"sessionId": "s1", "command": "python3", "args": ["-m", "unittest"]})["result"]["terminalId"]
        status = ask("terminal/wait_for_exit", {"sessionId": "s1", "terminalId": term})["result"]
        out = ask("terminal/output", {"sessionId": "s1", "terminalId": term})["result"]
        outside = ask("fs/read_text_file", {"sessionId": "s1", "path": "/etc/hostname"})
        say("s1", "tests exited %s; outside: %s; %s" % (status.get("exitCode"),
            "refused" if "error" in outside else "READ", "OK" if "OK" in out["output"] else "no OK"))
        send({"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}})
"#;

/// Writes `[agents.scripted]`: the scripted agent above.
pub(crate) fn configure_scripted(h: &Harness) {
    let dir = h.data.path().join("config/wright");
    std::fs::create_dir_all(&dir).unwrap();
    let command = serde_json::to_string(&["python3", "-c", SCRIPTED_AGENT]).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!("[agents.scripted]\ncommand = {command}\n"),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_agent_asks_wright_to_do_runs_through_wrights_tools() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let server = ScriptedServer::start(vec![]).await.unwrap();
    configure_scripted(&h);
    let url = server.url();
    let output = h
        .wright(
            &[
                "run",
                "--agent",
                "scripted",
                "--base-url",
                &url,
                "--model",
                "test-model",
                "fix the test",
            ],
            &[],
        )
        .await;
    let events = h.events();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}\n{events:#?}",
        stderr(&output)
    );
    // Each request was a call of wright's own tools, logged before its observation.
    let actions: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Action {
                tool, arguments, ..
            } => Some((
                tool.clone(),
                arguments["command"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("file_editor".to_string(), "view".to_string()),
            ("file_editor".to_string(), "str_replace".to_string()),
            ("terminal".to_string(), "python3 -m unittest".to_string()),
        ],
        "{events:#?}"
    );
    let said = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Message { text, .. } if e.source == wright_protocol::Source::Agent => {
                Some(text.clone())
            }
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("");
    assert_eq!(said, "tests exited 0; outside: refused; OK");
    let diff = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::Changes(changes) => changes.diff.clone(),
            _ => None,
        })
        .unwrap_or_default();
    assert!(
        diff.contains("+    return \",\".join(str(v) for v in row)"),
        "{diff}"
    );
    assert_eq!(crate::common::last_state(&events), "state:finished");
}

/// An agent that dies in the middle of its turn: the run ends (no wait for an answer
/// that cannot come), failed, its log saying why with what the agent said on stderr,
/// and the clone is still handed over (a `changes` event last).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_dies_mid_turn_fails_the_run_with_its_words() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let model = ScriptedServer::start(vec![]).await.unwrap();
    let dying = r#"
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": 1}}), flush=True)
    elif msg.get("method") == "session/new":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"sessionId": "s"}}), flush=True)
    elif msg.get("method") == "session/prompt":
        sys.stderr.write("out of cheese\n")
        sys.exit(3)
"#;
    let dir = h.data.path().join("config/wright");
    std::fs::create_dir_all(&dir).unwrap();
    let command = serde_json::to_string(&["python3", "-c", dying]).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!("[agents.dying]\ncommand = {command}\n"),
    )
    .unwrap();
    let url = model.url();
    let output = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        h.wright(
            &[
                "run",
                "--agent",
                "dying",
                "--base-url",
                &url,
                "--model",
                "test-model",
                "fix it",
            ],
            &[],
        ),
    )
    .await
    .expect("wright waited for an agent that is gone");
    assert_ne!(output.status.code(), Some(0));
    let events = h.events();
    let failed = events.iter().find_map(|e| match &e.body {
        EventBody::Error { message } => Some(message.clone()),
        _ => None,
    });
    let failed = failed.unwrap_or_else(|| panic!("{}\n{events:#?}", stderr(&output)));
    assert!(failed.contains("the agent dying failed"), "{failed}");
    assert!(failed.contains("out of cheese"), "{failed}");
    let shape = crate::common::shape(&events);
    assert_eq!(
        shape[shape.len() - 2..],
        ["state:failed".to_string(), "changes".to_string()],
        "{shape:?}"
    );
}
