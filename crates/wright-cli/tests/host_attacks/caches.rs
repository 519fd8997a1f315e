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
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({ "command": plant })),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let url = server.url();
    let output = h
        .wright(
            &[
                "run",
                "--base-url",
                &url,
                "--model",
                "test-model",
                "plant in the cache",
            ],
            &[("HOME", &home.path().display().to_string())],
        )
        .await;
    assert!(output.status.success(), "{}", stderr(&output));
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
