//! MCP servers whose program lives outside the workspace, which the sandbox does not
//! show: your own server's package is made readable (read-only, for that server alone);
//! `npx PKG` runs the copy installed here, offline, and is refused at once with the fix
//! when there is none (as is `uvx PKG`); a server that dies says its stderr's last
//! lines; `wright mcp list` fails when a server does, and needs no model key. Against
//! the real reference server, copied where the sandbox cannot see it.

use super::committed_repo;
use super::everything;
use super::user_mcp;
use super::write;
use crate::common::observations;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use std::path::Path;
use std::path::PathBuf;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

const PACKAGE: &str = "@modelcontextprotocol/server-everything";

/// A copy of the installed reference server's `node_modules` (the package and its
/// dependencies) at `into/node_modules`; `None` where it is not installed.
fn copied_server(into: &Path) -> Option<PathBuf> {
    let program = everything()?;
    let installed = program
        .ancestors()
        .find(|dir| dir.ends_with("node_modules"))?;
    std::fs::create_dir_all(into).unwrap();
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(installed)
        .arg(into)
        .status()
        .unwrap();
    assert!(copied.success());
    Some(into.join("node_modules"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn your_server_outside_the_workspace_reads_its_package_and_only_it() {
    let h = Harness::new();
    committed_repo(&h);
    // Under the data directory: outside the workspace, where the sandbox shows nothing.
    let Some(modules) = copied_server(&h.data.path().join("servers")) else {
        return;
    };
    let program = modules.join(PACKAGE).join("dist/index.js");
    user_mcp(
        &h,
        json!({"everything": {"command": "node", "args": [program, "stdio"]}}),
    );
    let listed = h.wright(&["mcp", "list"], &[]).await;
    let shown = stdout(&listed);
    assert_eq!(listed.status.code(), Some(0), "{shown}{}", stderr(&listed));
    assert!(
        shown.contains("everything__echo  Echoes back the input string"),
        "{shown}"
    );
    assert!(
        shown.contains(&format!(
            "mcp everything may read (read-only, nothing else outside the sandbox): {}\n",
            modules.display()
        )),
        "{shown}"
    );

    // In a run: the header says what was granted, the tool works, and the agent's own
    // commands still cannot read the package.
    let manifest = modules.join(PACKAGE).join("package.json");
    let server = ScriptedServer::start(vec![
        reply().call("everything__echo", json!({"message": "from outside"})),
        reply().call(
            "terminal",
            json!({"command": format!("cat {}", manifest.display())}),
        ),
        // A finish right after a failed command is sent back: something works first.
        reply().call("terminal", json!({"command": "true"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "echo", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains("waiting for the MCP server everything to start (at most 30 s)"),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "mcp everything may read (read-only, nothing else outside the sandbox): {}",
            modules.display()
        )),
        "{said}"
    );
    let outputs = observations(&h.events());
    let echoed = outputs[0]["output"].as_str().unwrap();
    assert!(echoed.contains("Echo: from outside"), "{echoed}");
    let cat = outputs[1]["output"].as_str().unwrap();
    assert!(!cat.contains("\"version\""), "{cat}");
    assert!(
        cat.contains("No such file") || cat.contains("Permission denied"),
        "{cat}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repositorys_server_is_given_nothing_outside_the_workspace() {
    let h = Harness::new();
    let Some(modules) = copied_server(&h.data.path().join("servers")) else {
        return;
    };
    let program = modules.join(PACKAGE).join("dist/index.js");
    write(
        h.repo(),
        ".mcp.json",
        &json!({"mcpServers": {"theirs": {"command": "node", "args": [program, "stdio"]}}})
            .to_string(),
    );
    committed_repo(&h);
    let listed = h.wright(&["mcp", "list", "--allow-repo-mcp"], &[]).await;
    let shown = stdout(&listed);
    assert_eq!(listed.status.code(), Some(1), "{shown}{}", stderr(&listed));
    assert!(
        shown.contains(&format!(
            "theirs (the repository's, node {} stdio): failed: it would have to read {} outside the workspace, which wright gives only to the servers of your own configuration",
            program.display(),
            modules.display()
        )),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npx_runs_the_installed_package_offline() {
    let h = Harness::new();
    committed_repo(&h);
    // Installed where wright looks (`npm install --prefix` into its package directory).
    let Some(modules) = copied_server(&h.data.path().join("wright/mcp-packages")) else {
        return;
    };
    user_mcp(
        &h,
        json!({"everything": {"command": "npx", "args": ["-y", PACKAGE, "stdio"]}}),
    );
    let server = ScriptedServer::start(vec![
        reply().call("everything__get-sum", json!({"a": 2, "b": 3})),
        reply().call("finish", json!({"message": "5"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "add", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains(&format!(
            "mcp everything: `npx -y {PACKAGE} stdio` runs the installed {}, offline",
            modules.join(PACKAGE).display()
        )),
        "{said}"
    );
    let outputs = observations(&h.events());
    let sum = outputs[0]["output"].as_str().unwrap();
    assert!(sum.contains("The sum of 2 and 3 is 5."), "{sum}");

    // Or in npm's own npx cache, under the user's home.
    let h = Harness::new();
    committed_repo(&h);
    let home = h.data.path().join("home");
    let Some(cached) = copied_server(&home.join(".npm/_npx/0123abcd")) else {
        return;
    };
    user_mcp(
        &h,
        json!({"everything": {"command": "npx", "args": ["--yes", format!("{PACKAGE}@2026.8.31"), "stdio"]}}),
    );
    let home = home.display().to_string();
    let listed = h.wright(&["mcp", "list"], &[("HOME", &home)]).await;
    let shown = stdout(&listed);
    assert_eq!(listed.status.code(), Some(0), "{shown}{}", stderr(&listed));
    assert!(shown.contains("everything__get-sum"), "{shown}");
    assert!(
        shown.contains(&format!(
            "runs the installed {}, offline",
            cached.join(PACKAGE).display()
        )),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_package_runner_without_the_package_is_refused_with_the_fix() {
    let h = Harness::new();
    committed_repo(&h);
    // A profile whose key is in a variable this shell does not set: the listing talks
    // to no model, so it does not need it.
    h.user_config("profile = \"keyed\"\n[profiles.keyed]\nmodel = \"m\"\napi_key_env = \"WRIGHT_TEST_UNSET_KEY\"\n");
    user_mcp(
        &h,
        json!({
            "js": {"command": "npx", "args": ["-y", "@wright-test/not-installed", "stdio"]},
            "py": {"command": "uvx", "args": ["wright-test-not-installed"]},
        }),
    );
    let listed = h.wright(&["mcp", "list"], &[]).await;
    let shown = stdout(&listed);
    assert_eq!(listed.status.code(), Some(1), "{shown}{}", stderr(&listed));
    let packages = h.data.path().join("wright/mcp-packages");
    assert!(
        shown.contains(&format!(
            "js (yours, npx -y @wright-test/not-installed stdio): failed: `npx -y @wright-test/not-installed stdio` would download @wright-test/not-installed from npm's registry, and the sandbox gives MCP servers no network (npx would wait until the start deadline); no copy of it is installed here, nor in npm's cache. Install it once, outside wright: `npm install --prefix {} @wright-test/not-installed` — this entry then runs it from there, offline, read-only",
            packages.display()
        )),
        "{shown}"
    );
    assert!(
        shown.contains("py (yours, uvx wright-test-not-installed): failed: `uvx wright-test-not-installed` would download wright-test-not-installed from PyPI")
            && shown.contains("`uv tool install wright-test-not-installed`"),
        "{shown}"
    );
    // Nothing was started: the refusal is wright's own, not a deadline passed.
    assert!(!shown.contains("did not answer within"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_says_the_end_of_its_stderr() {
    let h = Harness::new();
    committed_repo(&h);
    let script = h.data.path().join("broken/server.js");
    write(
        script.parent().unwrap(),
        "server.js",
        "console.error('starting the broken server');\nrequire('./no-such-module');\n",
    );
    user_mcp(&h, json!({"broken": {"command": "node", "args": [script]}}));
    let listed = h.wright(&["mcp", "list"], &[]).await;
    let shown = stdout(&listed);
    assert_eq!(listed.status.code(), Some(1), "{shown}{}", stderr(&listed));
    // The cause, not only Node's last line (its version).
    assert!(shown.contains("its stderr ended with:"), "{shown}");
    assert!(
        shown.contains("Cannot find module './no-such-module'"),
        "{shown}"
    );
    assert!(shown.contains("    Node.js v"), "{shown}");
    assert!(shown.contains("    Require stack:"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_conversation_says_which_mcp_server_it_waits_for() {
    let h = Harness::new();
    committed_repo(&h);
    // A server that never answers: the conversation waits for it, and says so.
    user_mcp(
        &h,
        json!({"sleepy": {"command": "python3", "args": ["-c", "import time; time.sleep(600)"]}}),
    );
    let model = ScriptedServer::start(vec![reply().call("finish", json!({"message": "done"}))])
        .await
        .unwrap();
    let served = crate::server::Served::start(&h, &[], &[]).await;
    let id = served.create(h.repo(), "wait", &model.url()).await;
    let mut seen = serde_json::Value::Null;
    for _ in 0..600 {
        let (status, body) = served.get(&format!("/api/conversations/{id}")).await;
        assert_eq!(status, 200, "{body}");
        let waiting = body["notices"].as_array().is_some_and(|notices| {
            notices
                .iter()
                .any(|n| n["text"] == "waiting for the MCP server sleepy to start (at most 30 s)")
        });
        if waiting {
            assert_eq!(body["state"], "starting", "{body}");
            return;
        }
        seen = body;
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the conversation never said what it waits for: {seen}");
}
