//! The toolchain caches in the user's home (`~/.cargo/registry`, pip's, npm's, Go's build
//! cache) hold code the user's own builds run outside any sandbox: what the agent writes
//! there must never reach them.

use crate::common::observations;
use crate::common::sandbox_header;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_planted_in_a_toolchain_cache_stays_in_the_sandbox() {
    let h = Harness::new();
    let home = tempfile::tempdir().unwrap();
    let crate_dir = home
        .path()
        .join(".cargo/registry/src/index.crates.io-x/serde-1.0.0");
    std::fs::create_dir_all(&crate_dir).unwrap();
    std::fs::write(crate_dir.join("build.rs"), "fn main() {}\n").unwrap();
    std::fs::create_dir_all(home.path().join(".cargo/bin")).unwrap();
    std::fs::write(home.path().join(".cargo/.package-cache"), "").unwrap();
    // Go trusts its build cache: an object planted there is linked into the user's builds.
    let gocache = home.path().join(".cache/go-build/00");
    std::fs::create_dir_all(&gocache).unwrap();
    std::fs::write(gocache.join("0000-d"), "object").unwrap();
    let go_object = gocache.join("0000-d").display().to_string();
    let build_rs = crate_dir.join("build.rs").display().to_string();
    let lock = home
        .path()
        .join(".cargo/.package-cache")
        .display()
        .to_string();
    let plant = format!(
        "echo 'fn main() {{ std::process::Command::new(\"evil\"); }}' >> {build_rs} && echo x > {lock} && echo evil > {go_object} && cat {build_rs} && echo PLANTED || echo REFUSED"
    );
    let output = run_with_home(
        &h,
        home.path(),
        "plant in the cache",
        vec![
            reply().call("terminal", json!({ "command": plant })),
            reply().call("finish", json!({"message": "done"})),
        ],
    )
    .await;
    // The user's cache is as it was.
    assert_eq!(
        std::fs::read_to_string(crate_dir.join("build.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert_eq!(
        std::fs::read_to_string(home.path().join(".cargo/.package-cache")).unwrap(),
        ""
    );
    assert_eq!(
        std::fs::read_to_string(gocache.join("0000-d")).unwrap(),
        "object"
    );
    // With a root of its own the agent writes a private layer (builds work as usual);
    // without one the cache is read-only.
    let said = observations(&h.events())[0]["output"]
        .as_str()
        .unwrap()
        .to_string();
    if sandbox_header(&output).contains("own root") {
        assert!(said.contains("evil") && said.ends_with("PLANTED"), "{said}");
    } else {
        assert!(said.ends_with("REFUSED"), "{said}");
    }
}

/// The private layer over a cache is mounted again by every sandboxed process (a new
/// shell, wright's own commands): what the agent put there stays for the rest of the run,
/// while the user's cache never sees it. (The layer is mounted `volatile`, whose marker
/// refuses a second mount unless wright clears it: this is the second mount.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_private_cache_layer_keeps_its_files_across_shells() {
    let h = Harness::new();
    let home = tempfile::tempdir().unwrap();
    let registry = home.path().join(".cargo/registry");
    std::fs::create_dir_all(&registry).unwrap();
    std::fs::create_dir_all(home.path().join(".cargo/bin")).unwrap();
    let fetched = registry.join("fetched.crate").display().to_string();
    let output = run_with_home(
        &h,
        home.path(),
        "fetch a crate",
        vec![
        reply().call(
            "terminal",
            json!({ "command": format!("echo bytes > {fetched} && echo WROTE || echo REFUSED") }),
        ),
        reply().call(
            "terminal",
            json!({ "command": format!("cat {fetched} || echo GONE"), "reset": true }),
        ),
        reply().call(
            "terminal",
            json!({ "command": format!("cat {fetched} || echo GONE"), "reset": true }),
        ),
        reply().call("finish", json!({"message": "done"})),
        ],
    )
    .await;
    assert!(
        !registry.join("fetched.crate").exists(),
        "the user's cache got the agent's file"
    );
    let events = h.events();
    let said: Vec<String> = observations(&events)
        .iter()
        .map(|o| o["output"].as_str().unwrap().to_string())
        .collect();
    if !sandbox_header(&output).contains("own root") {
        eprintln!("NOT CHECKED: no root of its own here, so no private layer: {said:?}");
        assert!(said[0].ends_with("REFUSED"), "{said:?}");
        return;
    }
    assert!(said[0].ends_with("WROTE"), "{said:?}");
    for again in &said[1..3] {
        assert!(
            again.starts_with("bytes\n"),
            "a new shell lost the layer: {said:?}"
        );
    }
}

/// `wright run TASK` with `HOME` at `home`, against a server playing `replies`; it must
/// succeed.
async fn run_with_home(
    h: &Harness,
    home: &std::path::Path,
    task: &str,
    replies: Vec<wright_testkit::Reply>,
) -> std::process::Output {
    let server = ScriptedServer::start(replies).await.unwrap();
    let url = server.url();
    let output = h
        .wright(
            &["run", "--base-url", &url, "--model", "test-model", task],
            &[("HOME", &home.display().to_string())],
        )
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
    output
}
