//! Secrets through the binary: `wright secrets set` reads the value from stdin into an
//! owner-only store, `ls` shows names only; a run given `--secret TOKEN` has `$TOKEN` in
//! its shell and nowhere else — a command printing it plainly, in base64, hex, URL
//! encoding, a few characters at a time and in a long saved output leaves no trace of it
//! in the log, wright's output, the requests the model received, the scratch files or
//! anything under wright's data directory; a model writing the value itself sees it
//! masked in its own call. A run without the grant has no such variable, a repository's
//! file cannot grant one, the user's file can, and an unknown name stops before anything
//! starts.

use crate::common::observations;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use pretty_assertions::assert_eq;
use serde_json::json;
use serde_json::Value;
use sha2::Digest;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

const VALUE: &str = "wr1ght-s3cret/value+Xy?z&long-tail9";

/// The forms of the value that must appear nowhere, and a piece of it long enough to
/// betray a partial leak.
fn forbidden() -> Vec<String> {
    let hex: String = VALUE.bytes().map(|b| format!("{b:02x}")).collect();
    let python = std::process::Command::new("python3")
        .args([
            "-c",
            "import base64,sys,urllib.parse;v=sys.argv[1].encode();print(base64.b64encode(v).decode());print(base64.urlsafe_b64encode(v).decode());print(urllib.parse.quote(v,safe=''))",
            VALUE,
        ])
        .output()
        .unwrap();
    let mut forms: Vec<String> = String::from_utf8(python.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(forms.len(), 3);
    forms.push(VALUE.to_string());
    forms.push(hex[..58].to_string());
    forms.push(hex.to_ascii_uppercase()[..58].to_string());
    forms.push("s3cret/value".to_string());
    forms
}

fn assert_clean(what: &str, text: &str) {
    for form in forbidden() {
        assert!(!text.contains(&form), "{what} holds {form}:\n{text}");
    }
}

/// Every file under `dir` (links not followed) but `except`, as text.
fn files_under(dir: &Path, except: &Path, found: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            files_under(&path, except, found);
        } else if kind.is_file() && path != except {
            let bytes = std::fs::read(&path).unwrap_or_default();
            found.push((
                path.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
}

async fn store_token(h: &Harness) {
    let out = h
        .wright_with_input(
            &["secrets", "set", "TOKEN"],
            format!("{VALUE}\n").as_bytes(),
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_clean("the output of secrets set", &(stdout(&out) + &stderr(&out)));
}

fn store_file(h: &Harness) -> std::path::PathBuf {
    h.data.path().join("wright/secrets/secrets.json")
}

fn events_json(h: &Harness) -> Vec<Value> {
    h.events()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect()
}

fn start_secrets(h: &Harness) -> Value {
    events_json(h)
        .into_iter()
        .find(|e| e["kind"] == "start")
        .map(|e| e["secrets"].clone())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_granted_secret_reaches_the_shell_and_nothing_else() {
    let h = Harness::new();
    std::fs::write(h.repo().join("README.md"), "A project.\n").unwrap();
    store_token(&h).await;
    let forms = r#"printf 'plain:%s\n' "$TOKEN"
printf %s "$TOKEN" | base64
printf %s "$TOKEN" | xxd -p
python3 -c 'import os,urllib.parse;print(urllib.parse.quote(os.environ["TOKEN"], safe=""))'
for i in $(seq 0 5 40); do printf %s "${TOKEN:$i:5}"; sleep 0.1; done; echo
printf %s "$TOKEN" | sha256sum"#;
    let long = r#"for i in $(seq 1 400); do echo "line $i $TOKEN"; done"#;
    let scratch = r#"d=$(dirname "${BASH_SOURCE[0]}"); ls "$d"; if grep -rqF -e "$TOKEN" "$d"; then echo SCRATCH-LEAK; else echo scratch-clean; fi"#;
    let echoed = format!("test \"$TOKEN\" = '{VALUE}' && echo same-value");
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": forms})),
        reply().call("terminal", json!({"command": long})),
        reply().call("terminal", json!({"command": scratch})),
        reply()
            .text(&format!("The token must be {VALUE}."))
            .call("terminal", json!({"command": echoed})),
        reply().call(
            "finish",
            json!({"message": format!("done; the token was {VALUE}")}),
        ),
    ])
    .await
    .unwrap();
    let output = h
        .run(&server.url(), "use the token", &["--secret", "TOKEN"])
        .await;
    assert!(output.status.success(), "{}", stderr(&output));

    // The command had the value itself: the hash of what it got is the value's.
    let digest: String = sha2::Sha256::digest(VALUE.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let outputs: Vec<String> = observations(&h.events())
        .iter()
        .map(|o| o["output"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(outputs[0].contains(&digest), "{}", outputs[0]);
    assert_eq!(
        outputs[0].matches("<secret:TOKEN>").count(),
        5,
        "plain, base64, hex, URL-encoded, in pieces: {}",
        outputs[0]
    );
    assert!(
        outputs[1].contains("line 400 <secret:TOKEN>"),
        "{}",
        outputs[1]
    );
    assert!(outputs[1].contains("full output in"), "{}", outputs[1]);
    assert!(
        outputs[2].contains("scratch-clean") && outputs[2].contains(".txt"),
        "the scratch directory, with the long output saved: {}",
        outputs[2]
    );
    assert!(outputs[3].contains("same-value"), "{}", outputs[3]);
    assert_eq!(start_secrets(&h), json!(["TOKEN"]));

    // Nowhere: the log, wright's output, the requests, the files in its data directory.
    let log = std::fs::read_to_string(h.log_path()).unwrap();
    assert_clean("the log", &log);
    assert!(log.contains("'<secret:TOKEN>' && echo same-value"), "{log}");
    assert!(log.contains("done; the token was <secret:TOKEN>"), "{log}");
    assert_clean("stdout", &stdout(&output));
    assert_clean("stderr", &stderr(&output));
    assert!(
        stdout(&output).contains("<secret:TOKEN>"),
        "the report: {}",
        stdout(&output)
    );
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 5);
    for (n, request) in requests.iter().enumerate() {
        assert_clean(&format!("request {n}"), &request.json().to_string());
    }
    let mut files = Vec::new();
    files_under(h.data.path(), &store_file(&h), &mut files);
    files_under(h.repo(), Path::new(""), &mut files);
    assert!(files.len() > 3, "{files:?}");
    for (path, text) in files {
        assert_clean(&path, &text);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_grant_gives_the_variable_and_a_repository_cannot_grant_one() {
    let h = Harness::new();
    wright_testkit::git(h.repo(), &["init", "-q"]);
    std::fs::write(h.repo().join("README.md"), "A project.\n").unwrap();
    wright_testkit::git(h.repo(), &["add", "."]);
    wright_testkit::git(h.repo(), &["commit", "-q", "-m", "start"]);
    store_token(&h).await;
    let probe = r#"echo "[${TOKEN-unset}]""#;

    // No grant: no variable.
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": probe})),
        reply().call("finish", json!({"message": "looked"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "look", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let observed = observations(&h.events());
    assert!(
        observed[0]["output"].as_str().unwrap().contains("[unset]"),
        "{observed:?}"
    );
    assert_eq!(start_secrets(&h), Value::Null);
    std::fs::remove_dir_all(h.data.path().join("wright/conversations")).unwrap();

    // The repository's own file asks for it: refused before anything starts.
    let repo = h.repo().canonicalize().unwrap();
    let grant = format!("[repos.\"{}\"]\nsecrets = [\"TOKEN\"]\n", repo.display());
    std::fs::create_dir_all(h.repo().join(".wright")).unwrap();
    std::fs::write(h.repo().join(".wright/config.toml"), &grant).unwrap();
    wright_testkit::git(h.repo(), &["add", "."]);
    wright_testkit::git(h.repo(), &["commit", "-q", "-m", "grant myself"]);
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let output = h.run(&server.url(), "look", &["--allow-repo-config"]).await;
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("which only your own configuration file may set"),
        "{}",
        stderr(&output)
    );
    assert_eq!(server.chat_requests().len(), 0);
    wright_testkit::git(h.repo(), &["rm", "-q", "-r", ".wright"]);
    wright_testkit::git(h.repo(), &["commit", "-q", "-m", "no grant"]);

    // The user's own file grants it on this repository; the agent writing it to a file
    // changes the file, and the diff the report shows is masked.
    let config = h.data.path().join("config/wright");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), &grant).unwrap();
    let write = format!("{probe}; printf '%s\\n' \"$TOKEN\" > token.txt");
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": write})),
        reply().call("finish", json!({"message": "looked"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "look", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let observed = observations(&h.events());
    assert!(
        observed[0]["output"]
            .as_str()
            .unwrap()
            .contains("[<secret:TOKEN>]"),
        "{observed:?}"
    );
    assert_eq!(start_secrets(&h), json!(["TOKEN"]));
    assert!(
        stdout(&output).contains("+<secret:TOKEN>"),
        "{}",
        stdout(&output)
    );
    assert_clean("the report", &(stdout(&output) + &stderr(&output)));
    assert_clean("the log", &std::fs::read_to_string(h.log_path()).unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_secret_stops_the_run_before_anything_starts() {
    let h = Harness::new();
    store_token(&h).await;
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let output = h.run(&server.url(), "look", &["--secret", "NOPE"]).await;
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("there is no secret named NOPE; stored: TOKEN"),
        "{}",
        stderr(&output)
    );
    assert!(server.requests().is_empty(), "the server was asked");
    assert!(!h.data.path().join("wright/conversations").exists());
    let output = h.run(&server.url(), "look", &["--secret", "NO-PE"]).await;
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("not a valid secret name"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test]
async fn the_store_is_owner_only_and_lists_names_only() {
    let h = Harness::new();
    store_token(&h).await;
    let dir = h.data.path().join("wright/secrets");
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(&dir), mode(&store_file(&h))), (0o700, 0o600));

    let listed = h.wright(&["secrets", "ls"], &[]).await;
    assert!(listed.status.success(), "{}", stderr(&listed));
    assert_eq!(stdout(&listed), "TOKEN\n");
    assert_clean("secrets ls", &(stdout(&listed) + &stderr(&listed)));

    // No value, or a name no variable can have: a clear error, nothing stored.
    let empty = h.wright_with_input(&["secrets", "set", "OTHER"], b"").await;
    assert_eq!(empty.status.code(), Some(2));
    assert!(
        stderr(&empty).contains("no value was given for OTHER"),
        "{}",
        stderr(&empty)
    );
    let bad = h.wright_with_input(&["secrets", "set", "1BAD"], b"v").await;
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("'1BAD' is not a valid secret name"),
        "{}",
        stderr(&bad)
    );

    // A store others can read is refused, not used.
    std::fs::set_permissions(store_file(&h), std::fs::Permissions::from_mode(0o644)).unwrap();
    let refused = h.wright(&["secrets", "ls"], &[]).await;
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("can be read by others (mode 644)"),
        "{}",
        stderr(&refused)
    );
    std::fs::set_permissions(store_file(&h), std::fs::Permissions::from_mode(0o600)).unwrap();

    let removed = h.wright(&["secrets", "rm", "TOKEN"], &[]).await;
    assert!(removed.status.success(), "{}", stderr(&removed));
    let listed = h.wright(&["secrets", "ls"], &[]).await;
    assert_eq!(stdout(&listed), "");
    assert_eq!(mode(&store_file(&h)), 0o600);
}

/// A name a run would refuse (a variable wright sets for the shell) is refused when it is
/// stored, with the run's reason; nothing is stored.
#[tokio::test]
async fn a_name_wright_sets_for_the_shell_is_refused_at_set() {
    let h = Harness::new();
    store_token(&h).await;
    for name in ["HOME", "PATH", "HTTPS_PROXY", "PYTHONUNBUFFERED"] {
        let refused = h.wright_with_input(&["secrets", "set", name], b"v").await;
        assert_eq!(refused.status.code(), Some(2), "{name}");
        assert!(
            stderr(&refused).contains(&format!(
                "the secret {name} has the name of a variable wright sets for the shell itself"
            )),
            "{}",
            stderr(&refused)
        );
    }
    let listed = h.wright(&["secrets", "ls"], &[]).await;
    assert_eq!(stdout(&listed), "TOKEN\n");
}
