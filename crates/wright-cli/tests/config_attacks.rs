//! The configuration layer as the agent (or a hostile repository) would attack it: a
//! proxy that carries "local" requests elsewhere, the agent writing the file wright reads
//! next, harmless-looking keys that raise limits or pick a server, a configuration
//! directory inside the workspace behind a link, a profile overriding explicit flags.
//! From a review of the layer.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use crate::config::init_repo;
use serde_json::json;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;
use wright_testkit::ServerOptions;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_in_the_environment_never_carries_a_local_request() {
    let h = Harness::new();
    init_repo(h.repo());
    let local = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo secret"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    // The "proxy", which must see nothing.
    let proxy = ScriptedServer::start(vec![]).await.unwrap();
    h.user_config("egress = \"local_only\"\n");
    let proxy_url = format!("http://127.0.0.2:{}", proxy.port());
    let out = h
        .wright(
            &[
                "run",
                "--base-url",
                &local.url(),
                "--model",
                "test-model",
                "go",
            ],
            &[
                ("http_proxy", proxy_url.as_str()),
                ("HTTP_PROXY", proxy_url.as_str()),
                ("ALL_PROXY", proxy_url.as_str()),
            ],
        )
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(proxy.requests().is_empty(), "{:?}", proxy.requests());
    assert!(!local.chat_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_the_agent_wrote_in_a_plain_directory_needs_approval() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": "mkdir -p .wright && printf 'max_reply_tokens = 7\\ntemperature = 1.9\\n' > .wright/config.toml"}),
        ),
        reply().call("finish", json!({"message": "done"})),
        reply().call("finish", json!({"message": "done again"})),
    ])
    .await
    .unwrap();
    let out = h.run(&server.url(), "go", &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = h.conversation_id();
    let resumed = h.resume(&server.url(), &id, "more").await;
    assert_eq!(resumed.status.code(), Some(2), "{}", stderr(&resumed));
    assert!(
        stderr(&resumed).contains("is in a directory the agent works in directly"),
        "{}",
        stderr(&resumed)
    );
    // Once approved, as it is, it counts.
    assert_eq!(
        h.wright(&["allow", "repo-config"], &[]).await.status.code(),
        Some(0)
    );
    let resumed = h.resume(&server.url(), &id, "more").await;
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert_eq!(
        server.chat_requests().last().unwrap().json()["max_tokens"],
        7
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_place_the_agents_configuration_is_never_committed() {
    let h = Harness::new();
    init_repo(h.repo());
    let server = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": "mkdir -p .wright && printf 'temperature = 1.9\\n' > .wright/config.toml && echo work > done.txt"}),
        ),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let out = h.run(&server.url(), "go", &["--in-place"]).await;
    if crate::common::in_place_needs_namespaces("in_place_the_agents_configuration", &out) {
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("the agent changed .wright/config.toml"),
        "{}",
        stdout(&out)
    );
    let committed = wright_testkit::git(h.repo(), &["show", "--stat", "--format=", "HEAD"]);
    assert!(committed.contains("done.txt"), "{committed}");
    assert!(!committed.contains(".wright"), "{committed}");
    let show = stdout(&h.wright(&["config", "show"], &[]).await);
    assert!(!show.contains("1.9"), "{show}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_may_lower_limits_but_not_raise_them_or_pick_a_profile() {
    let h = Harness::new();
    init_repo(h.repo());
    h.user_config(
        "[run]\nmax_steps = 5\n[profiles.hosted]\nbase_url = \"https://api.example.com/v1\"\nmodel = \"big\"\n",
    );
    for (file, key) in [
        ("[run]\nmax_steps = 100000\n", "run.max_steps"),
        ("profile = \"hosted\"\n", "profile"),
        ("context_window = 100000000\n", "context_window"),
    ] {
        h.commit_repo_config(file);
        let out = h.run("http://127.0.0.1:9", "go", &[]).await;
        assert_eq!(out.status.code(), Some(2), "{file}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!(
                "asks for {key}, which a repository's file may only set once you have approved"
            )),
            "{file}: {}",
            stderr(&out)
        );
    }
    h.commit_repo_config("context_window = 8192\n[run]\nmax_steps = 3\n");
    let show = stdout(&h.wright(&["config", "show"], &[]).await);
    assert!(
        show.contains("run.max_steps") && show.contains("= 3  #"),
        "{show}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configuration_directory_behind_a_link_inside_the_workspace_is_refused() {
    let h = Harness::new();
    let real = tempfile::tempdir().unwrap();
    let ws = real.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let link = h.data.path().join("link");
    std::os::unix::fs::symlink(real.path(), &link).unwrap();
    // Not made yet, and named through the link.
    let config = link.join("ws/.config");
    let out = h
        .wright(
            &[
                "run",
                "-C",
                ws.to_str().unwrap(),
                "--base-url",
                "http://127.0.0.1:9",
                "--model",
                "m",
                "go",
            ],
            &[("XDG_CONFIG_HOME", config.to_str().unwrap())],
        )
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("contains your wright configuration"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_given_with_a_profile_are_kept() {
    let h = Harness::new();
    h.user_config(
        "[profiles.hosted]\nbase_url = \"https://api.example.com/v1\"\nmodel = \"big\"\nprice_in = 1.0\nprice_out = 1.0\nmax_cost = 100.0\n",
    );
    let show = stdout(
        &h.wright(
            &[
                "config",
                "show",
                "--profile",
                "hosted",
                "--model",
                "small",
                "--max-cost",
                "1",
            ],
            &[],
        )
        .await,
    );
    assert!(
        show.contains("model") && show.contains("= \"small\"  # flag --model"),
        "{show}"
    );
    assert!(show.contains("= 1.0  # flag --max-cost"), "{show}");
    assert!(
        show.contains("= \"https://api.example.com/v1\"  # flag --profile"),
        "{show}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ollama_tool_results_keep_their_own_names_and_the_prefix_holds() {
    let h = Harness::new();
    std::fs::write(h.repo().join("a.txt"), "x\n").unwrap();
    let options = ServerOptions {
        ollama_style: true,
        ollama_native: Some(32768),
        ..ServerOptions::default()
    };
    let server = ScriptedServer::start_with(
        vec![
            reply().call("terminal", json!({"command": "echo one"})),
            reply().call("file_editor", json!({"command": "view", "path": "a.txt"})),
            reply().call("finish", json!({"message": "done"})),
        ],
        options,
    )
    .await
    .unwrap();
    let out = h.run(&server.url(), "go", &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let chats: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api/chat")
        .collect();
    let last = chats.last().unwrap();
    let names: Vec<String> = last.json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["terminal", "file_editor"]);
    let previous = &chats[chats.len() - 2].body;
    assert!(last.body.starts_with(&previous[..previous.len() - 2]));
}
