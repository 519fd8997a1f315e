//! MCP servers end to end, against real servers: the reference "everything" server from
//! npm (`@modelcontextprotocol/server-everything`, installed by `.ci/run`) over stdio,
//! started in the sandbox, and over streamable HTTP on loopback; a server written here
//! that answers garbage, dies or hangs; and a repository's server, which runs only with
//! the user's consent. `wright mcp list` shows each server's state and tools.

use crate::common::observations;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use std::path::PathBuf;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

mod caches;
mod reach;

const MISBEHAVING: &str = include_str!("mcp/misbehaving_server.py");

/// The everything server's program, or `None` (said loudly) where it is not installed.
fn everything() -> Option<PathBuf> {
    let dir =
        std::env::var("WRIGHT_TEST_MCP_DIR").unwrap_or_else(|_| "/opt/wright-test-mcp".into());
    let path = PathBuf::from(dir)
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if path.is_file() {
        return Some(path);
    }
    missing(&format!(
        "{} is not installed (`.ci/run` installs it with npm)",
        path.display()
    ));
    None
}

/// Says, loudly, that a test skips for want of what `.ci/run` prepares; under CI
/// (`CI=true`), where it was prepared, fails instead.
fn missing(what: &str) {
    if std::env::var("CI").is_ok_and(|ci| ci == "true") {
        panic!("{what}, and CI prepares it: the preparation failed (see .ci/test-deps.sh)");
    }
    eprintln!("\n!!!!!!!! SKIPPED: {what} !!!!!!!!\n");
}

fn write(root: &std::path::Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn committed_repo(h: &Harness) {
    write(h.repo(), "README.md", "a project\n");
    write(h.repo(), "misbehaving_server.py", MISBEHAVING);
    git(h.repo(), &["init", "-q"]);
    git(h.repo(), &["add", "-A"]);
    git(h.repo(), &["commit", "-qm", "Start"]);
}

fn user_mcp(h: &Harness, servers: serde_json::Value) {
    write(
        &h.data.path().join("config/wright"),
        "mcp.json",
        &json!({"mcpServers": servers}).to_string(),
    );
}

fn tool_names(request: &serde_json::Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_runs_in_the_sandbox_and_its_tools_are_called() {
    let Some(program) = everything() else { return };
    let h = Harness::new();
    committed_repo(&h);
    user_mcp(
        &h,
        json!({"everything": {"command": "node", "args": [program, "stdio"], "env": {"FROM_CONFIG": "given"}}}),
    );
    let server = ScriptedServer::start(vec![
        reply().call("everything__echo", json!({"message": "hello over stdio"})),
        reply().call("everything__get-tiny-image", json!({})),
        reply().call("everything__get-env", json!({})),
        reply().call("finish", json!({"message": "done"})),
        // The resumed run.
        reply().call("everything__echo", json!({"message": "again"})),
        reply().call("finish", json!({"message": "done again"})),
    ])
    .await
    .unwrap();
    let args = [
        "run",
        "--base-url",
        &server.url(),
        "--model",
        "test-model",
        "use the echo tool",
    ];
    let output = h.wright(&args, &[("MY_SECRET", "must-not-leak")]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(said.contains("mcp everything (yours): "), "{said}");

    let requests = server.chat_requests();
    let first = requests[0].json();
    let names = tool_names(&first);
    assert!(names.contains(&"everything__echo".to_string()), "{names:?}");
    let echo = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "everything__echo")
        .unwrap();
    assert_eq!(
        echo["function"]["description"],
        "Echoes back the input string"
    );
    assert_eq!(
        echo["function"]["parameters"]["properties"]["message"]["type"],
        "string"
    );
    assert!(echo["function"]["parameters"].get("$schema").is_none());

    let outputs = observations(&h.events());
    assert_eq!(
        outputs[0]["output"],
        from_mcp("everything", "echo", "Echo: hello over stdio"),
        "{}",
        outputs[0]
    );
    assert_eq!(outputs[0]["is_error"], false);
    let image = outputs[1]["output"].as_str().unwrap();
    assert!(image.contains("[an image, image/png, about"), "{image}");
    // The sandbox's environment and the entry's own, never wright's whole one.
    let env = outputs[2]["output"].as_str().unwrap();
    assert!(env.contains("FROM_CONFIG"), "{env}");
    assert!(!env.contains("must-not-leak"), "{env}");

    // Resumed, it has the same tools, byte for byte, and calls the server again.
    let id = h.conversation_id();
    let resumed = h.resume(&server.url(), &id, "once more").await;
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let requests = server.chat_requests();
    let later = requests.last().unwrap().json();
    assert_eq!(later["tools"], first["tools"]);
    let outputs = observations(&h.events());
    assert_eq!(
        outputs[4]["output"],
        from_mcp("everything", "echo", "Echo: again"),
        "{outputs:?}"
    );
}

/// The everything server over streamable HTTP on a free loopback port, until dropped.
struct HttpServer {
    _child: tokio::process::Child,
    url: String,
}

async fn http_server(program: &std::path::Path) -> HttpServer {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = tokio::process::Command::new("node")
        .arg(program)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    HttpServer {
        _child: child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_is_called_in_text_mode_too() {
    let Some(program) = everything() else { return };
    let web = http_server(&program).await;
    let h = Harness::new();
    committed_repo(&h);
    user_mcp(&h, json!({"web": {"type": "http", "url": web.url}}));
    // A model without native tool calls: the MCP tool is offered and called as text.
    let server = ScriptedServer::start_text_only(vec![
        reply().text("<tool_call>{\"name\": \"web__get-sum\", \"arguments\": {\"a\": 2, \"b\": 3}}</tool_call>"),
        reply().text("<tool_call>{\"name\": \"finish\", \"arguments\": {\"message\": \"5\"}}</tool_call>"),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "add 2 and 3", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("tool calls text"),
        "{}",
        stderr(&output)
    );
    let requests = server.chat_requests();
    let prompt = requests.last().unwrap().json().to_string();
    assert!(prompt.contains("web__get-sum"), "{prompt}");
    let outputs = observations(&h.events());
    assert_eq!(outputs[0]["tool"], "web__get-sum");
    assert_eq!(
        outputs[0]["output"],
        from_mcp("web", "get-sum", "The sum of 2 and 3 is 5."),
        "{}",
        outputs[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_answers_garbage_dies_or_hangs_is_an_error_not_a_hung_run() {
    let h = Harness::new();
    committed_repo(&h);
    let entry = |timeout: u32| json!({"command": "python3", "args": ["misbehaving_server.py"], "timeout": timeout});
    user_mcp(
        &h,
        json!({"junk": entry(5), "crash": entry(5), "slow": entry(2)}),
    );
    let server = ScriptedServer::start(vec![
        reply().call("junk__garbage", json!({})),
        reply().call("crash__die", json!({})),
        reply().call("crash__die", json!({})),
        reply().call("slow__hang", json!({})),
        // A finish before anything worked is sent back: something works first.
        reply().call("terminal", json!({"command": "true"})),
        reply().call("finish", json!({"message": "the servers are broken"})),
    ])
    .await
    .unwrap();
    let started = std::time::Instant::now();
    let output = h.run(&server.url(), "try the tools", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let outputs = observations(&h.events());
    assert_eq!(outputs.len(), 6, "{outputs:?}");
    for output in &outputs[..4] {
        assert_eq!(output["is_error"], true, "{output}");
    }
    let died = outputs[1]["output"].as_str().unwrap();
    assert!(died.contains("the MCP server 'crash' stopped"), "{died}");
    assert!(died.contains("crashing on purpose"), "{died}");
    // Once gone, it is said at once.
    assert_eq!(outputs[2]["output"], outputs[1]["output"]);
    let hung = outputs[3]["output"].as_str().unwrap();
    assert_eq!(
        hung,
        "the MCP server 'slow' did not answer within 2 s; the call was abandoned"
    );
    // The user reads the sentence too.
    assert!(
        stderr(&output).contains("did not answer within 2 s"),
        "{}",
        stderr(&output)
    );
    // Garbage waits at most its server's deadline.
    assert!(started.elapsed() < std::time::Duration::from_secs(100));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repositorys_server_runs_only_with_consent() {
    let Some(program) = everything() else { return };
    let h = Harness::new();
    write(
        h.repo(),
        ".mcp.json",
        &json!({"mcpServers": {"everything": {"command": "node", "args": [program, "stdio"]}}})
            .to_string(),
    );
    committed_repo(&h);
    // A remote server of the user's is not reached where the code may not go.
    user_mcp(&h, json!({"far": {"url": "http://192.0.2.1/mcp"}}));
    let listed = h.wright(&["mcp", "list"], &[]).await;
    let shown = stdout(&listed);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    assert!(
        shown.contains("everything (the repository's, node "),
        "{shown}"
    );
    assert!(
        shown.contains("not allowed: `wright allow repo-mcp`"),
        "{shown}"
    );
    assert!(
        shown.contains("far (yours, http://192.0.2.1/mcp): not reached"),
        "{shown}"
    );

    let server = ScriptedServer::start(vec![
        reply().call("everything__echo", json!({"message": "hi"})),
        reply().call("terminal", json!({"command": "true"})),
        reply().call("finish", json!({"message": "no such tool"})),
        reply().call("everything__echo", json!({"message": "allowed"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    // Nobody to ask: it does not start.
    let output = h.run(&server.url(), "echo", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains("mcp everything (the repository's) does not run: you have not allowed its file's content"),
        "{said}"
    );
    let requests = server.chat_requests();
    assert!(!tool_names(&requests[0].json()).contains(&"everything__echo".to_string()));
    let outputs = observations(&h.events());
    assert_eq!(outputs[0]["is_error"], true);

    let refused_id = h.conversation_id();
    // Allowed for good with `wright allow repo-mcp`: it starts, in the sandbox.
    let allowed = h.wright(&["allow", "repo-mcp"], &[]).await;
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
    let listed = h.wright(&["mcp", "list"], &[]).await;
    let shown = stdout(&listed);
    assert!(
        shown.contains("everything__echo  Echoes back the input string"),
        "{shown}"
    );
    let output = h.run(&server.url(), "echo", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let outputs = observations(&events_besides(&h, &refused_id));
    assert_eq!(
        outputs[0]["output"],
        from_mcp("everything", "echo", "Echo: allowed"),
        "{outputs:?}"
    );
}

/// The events of the conversation that is not `id` (of two).
fn events_besides(h: &Harness, id: &str) -> Vec<wright_protocol::Event> {
    let dir = h.data.path().join("wright/conversations");
    let other = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .find(|entry| entry.file_name().to_string_lossy() != id)
        .unwrap();
    let text = std::fs::read_to_string(other.path().join("events.jsonl")).unwrap();
    wright_protocol::parse_log(&text).unwrap().events
}

/// What the model is shown of an MCP tool's text: wrapped as content from outside.
fn from_mcp(server: &str, tool: &str, text: &str) -> String {
    let from = wright_protocol::Provenance::Mcp {
        server: server.into(),
        tool: tool.into(),
    };
    let wrapped = wright_protocol::wrap_untrusted(&from, text);
    assert!(wrapped.contains("<<<untrusted-content from MCP tool") && wrapped.contains(text));
    wrapped
}
