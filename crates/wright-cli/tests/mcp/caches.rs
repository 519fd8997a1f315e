//! `npx PKG` and `uvx PKG` servers with no network at all, run from what a user's package
//! managers already hold: npm's cache (npx installs from it offline, in the sandbox,
//! leaving the cache as it was), uv's installed tools and the environment an earlier
//! `uvx` left in uv's cache. Against the real reference servers (the "everything" server
//! from npm, `mcp-server-time` from PyPI), which `.ci/run` puts in caches of their own
//! under /opt/wright-test-mcp (see `.ci/test-deps.sh`).

use super::committed_repo;
use super::missing;
use super::user_mcp;
use crate::common::observations;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use std::path::Path;
use std::path::PathBuf;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

const EVERYTHING: &str = "@modelcontextprotocol/server-everything";
/// The version `.ci/test-deps.sh` puts in the cache (the newest by then may be another).
const PINNED: &str = "@modelcontextprotocol/server-everything@2026.8.31";

/// `/opt/wright-test-mcp/NAME` (or under `WRIGHT_TEST_MCP_DIR`) when `ready` is there in
/// it; else `None`, said loudly (a failure under CI).
fn prepared(name: &str, ready: &str) -> Option<PathBuf> {
    let dir =
        std::env::var("WRIGHT_TEST_MCP_DIR").unwrap_or_else(|_| "/opt/wright-test-mcp".into());
    let path = PathBuf::from(dir).join(name);
    if path.join(ready).exists() {
        return Some(path);
    }
    missing(&format!(
        "{} is not prepared (`.ci/run` fills it)",
        path.join(ready).display()
    ));
    None
}

/// Every file beneath `dir` with its size and modification time, sorted: to see that
/// nothing in it changed.
fn listing(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let meta = std::fs::symlink_metadata(entry.path()).unwrap();
            if meta.is_dir() {
                pending.push(entry.path());
            }
            found.push((entry.path(), meta.len(), meta.modified().unwrap()));
        }
    }
    found.sort();
    found
}

/// `wright run` against `server`, with `env` besides the harness's.
async fn run(h: &Harness, server: &ScriptedServer, env: &[(&str, &str)]) -> std::process::Output {
    let url = server.url();
    let args = ["run", "--base-url", &url, "--model", "test-model", "go"];
    h.wright(&args, env).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npx_installs_from_npms_cache_offline_and_leaves_it_as_it_was() {
    let Some(cache) = prepared("npm-cache", "wright-filled") else {
        return;
    };
    let h = Harness::new();
    committed_repo(&h);
    // A home with nothing installed: only the cache has the package.
    let home = h.data.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    user_mcp(
        &h,
        json!({"everything": {"command": "npx", "args": ["-y", PINNED, "stdio"]}}),
    );
    let before = listing(&cache);
    let env = [
        ("HOME", home.to_str().unwrap()),
        ("npm_config_cache", cache.to_str().unwrap()),
    ];
    let server = ScriptedServer::start(vec![
        reply().call("everything__get-sum", json!({"a": 2, "b": 3})),
        reply().call("finish", json!({"message": "5"})),
    ])
    .await
    .unwrap();
    let output = run(&h, &server, &env).await;
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    let cacache = cache.join("_cacache");
    assert!(
        said.contains(&format!(
            "mcp everything: `npx -y {PINNED} stdio` installs {EVERYTHING} from npm's cache {}, offline (the cache read-only; npm writes only a copy of its index, in the sandbox's scratch)",
            cacache.display()
        )),
        "{said}"
    );
    let outputs = observations(&h.events());
    let sum = outputs[0]["output"].as_str().unwrap();
    assert!(sum.contains("The sum of 2 and 3 is 5."), "{sum}");
    assert_eq!(listing(&cache), before, "npm's cache was changed");

    // A package the cache does not hold: refused at once, with the fix.
    user_mcp(
        &h,
        json!({"absent": {"command": "npx", "args": ["-y", "@wright-test/not-cached"]}}),
    );
    let listed = h.wright(&["mcp", "list"], &env).await;
    let shown = stdout(&listed);
    assert_eq!(listed.status.code(), Some(1), "{shown}{}", stderr(&listed));
    assert!(
        shown.contains("no copy of it is installed here, nor in npm's cache")
            && shown.contains("--allow-host registry.npmjs.org"),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uvx_runs_uvs_installed_tool_or_the_environment_in_its_cache_offline() {
    let (Some(tools), Some(cache)) = (
        prepared("uv-tools", "mcp-server-time/bin/mcp-server-time"),
        prepared("uv-cache", "wright-filled"),
    ) else {
        return;
    };
    let prepare = || {
        let h = Harness::new();
        committed_repo(&h);
        for dir in ["home", "empty"] {
            std::fs::create_dir_all(h.data.path().join(dir)).unwrap();
        }
        user_mcp(
            &h,
            json!({"time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone", "UTC"]}}),
        );
        h
    };
    // Installed with `uv tool install`, or left in uv's cache by an earlier `uvx`.
    let cases = [
        (Some(&tools), None, "runs uv's installed"),
        (
            None,
            Some(&cache),
            "runs the environment an earlier uvx left in uv's cache",
        ),
    ];
    for (tool_dir, cache_dir, header) in cases {
        let h = prepare();
        let home = h.data.path().join("home");
        let empty = h.data.path().join("empty");
        let server = ScriptedServer::start(vec![
            reply().call("time__get_current_time", json!({"timezone": "UTC"})),
            reply().call("finish", json!({"message": "it is now"})),
        ])
        .await
        .unwrap();
        let env = [
            ("HOME", home.to_str().unwrap()),
            ("UV_TOOL_DIR", tool_dir.unwrap_or(&empty).to_str().unwrap()),
            (
                "UV_CACHE_DIR",
                cache_dir.unwrap_or(&empty).to_str().unwrap(),
            ),
        ];
        let output = run(&h, &server, &env).await;
        let said = stderr(&output);
        assert_eq!(output.status.code(), Some(0), "{said}");
        assert!(
            said.contains(&format!(
                "mcp time: `uvx mcp-server-time --local-timezone UTC` {header}"
            )),
            "{said}"
        );
        let outputs = observations(&h.events());
        let now = outputs[0]["output"].as_str().unwrap();
        assert!(now.contains("\"timezone\": \"UTC\""), "{now}");
        assert!(now.contains("\"datetime\""), "{now}");
    }

    // Neither: refused at once, with the fix.
    let h = prepare();
    let home = h.data.path().join("home");
    let empty = h.data.path().join("empty");
    let env = [
        ("HOME", home.to_str().unwrap()),
        ("UV_TOOL_DIR", empty.to_str().unwrap()),
        ("UV_CACHE_DIR", empty.to_str().unwrap()),
    ];
    let listed = h.wright(&["mcp", "list"], &env).await;
    let shown = stdout(&listed);
    assert_eq!(listed.status.code(), Some(1), "{shown}{}", stderr(&listed));
    assert!(
        shown.contains("it is not among uv's installed tools nor in uv's cache")
            && shown.contains("`uv tool install mcp-server-time`")
            && shown.contains("--allow-host pypi.org --allow-host files.pythonhosted.org"),
        "{shown}"
    );
}
