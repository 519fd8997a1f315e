//! Signs of life and readable output: a closed pipe ends wright quietly, file names in
//! diffs are readable (and still safe for the terminal), the run's header is short, and
//! on a terminal a live line shows the model reading and a command's output as it comes.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_protocol::AgentState;
use wright_protocol::EventBody;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// `wright ARGS` with stdout a real pipe whose reading end is already closed.
fn with_stdout_closed(h: &Harness, args: &[&str]) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    std::process::Command::new(env!("CARGO_BIN_EXE_wright"))
        .args(args)
        .current_dir(h.repo())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", std::env::var("HOME").unwrap_or_default())
        .env("XDG_DATA_HOME", h.data.path())
        .env("XDG_CACHE_HOME", h.data.path().join("cache"))
        .env("XDG_CONFIG_HOME", h.data.path().join("config"))
        .stdout(writer)
        .output()
        .unwrap()
}

fn last_state(h: &Harness) -> (AgentState, String) {
    h.events()
        .iter()
        .rev()
        .find_map(|e| match &e.body {
            EventBody::State { state, reason } => {
                Some((*state, reason.clone().unwrap_or_default()))
            }
            _ => None,
        })
        .unwrap()
}

/// `wright ls | head -1`, `wright show … | head`, `wright run … | head`: the reader went
/// away, and wright ends quietly with SIGPIPE's status — no panic, no message; a run in
/// progress with `--json` is stopped and logged as such.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_pipe_ends_wright_quietly() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo hi"})),
        reply().call("finish", json!({"message": "all done"})),
        reply().call("terminal", json!({"command": "echo again"})),
        reply().call("finish", json!({"message": "all done"})),
    ])
    .await
    .unwrap();
    let url = server.url();
    // The report at the end of a run meets the closed pipe: the run itself is whole.
    let run = with_stdout_closed(
        &h,
        &["run", "--base-url", &url, "--model", "test-model", "say hi"],
    );
    assert_eq!(run.status.code(), Some(141), "{}", stderr(&run));
    assert!(!stderr(&run).contains("panic"), "{}", stderr(&run));
    assert_eq!(last_state(&h).0, AgentState::Finished);
    let id = h.conversation_id();

    for args in [vec!["ls"], vec!["show", id.as_str()], vec!["--help"]] {
        let output = with_stdout_closed(&h, &args);
        let said = stderr(&output);
        assert!(
            !said.contains("panic") && !said.contains("Broken pipe"),
            "{args:?}: {said}"
        );
        if args != ["--help"] {
            assert_eq!(output.status.code(), Some(141), "{args:?}: {said}");
        }
    }

    // With --json the first event line meets it: the run stops, logged as stopped.
    let resumed = with_stdout_closed(
        &h,
        &[
            "resume",
            "--json",
            "--base-url",
            &url,
            "--model",
            "test-model",
            &id,
            "again",
        ],
    );
    let said = stderr(&resumed);
    assert_eq!(resumed.status.code(), Some(141), "{said}");
    assert!(!said.contains("panic"), "{said}");
    let (state, reason) = last_state(&h);
    assert_eq!(state, AgentState::Stopped, "{reason}");
    assert!(reason.contains("output was closed"), "{reason}");
    // And it can be resumed as usual.
    let again = h
        .wright(
            &["resume", "--base-url", &url, "--model", "test-model", &id],
            &[],
        )
        .await;
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
}

/// Names with letters beyond ASCII read as they are in the diff of the report (git's
/// core.quotePath would print `caf\303\251.txt`), and still cannot steer the terminal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_names_in_the_diff_are_readable_and_safe() {
    let h = Harness::new();
    wright_testkit::failing_python_repo(h.repo());
    let server = ScriptedServer::start(vec![
        reply().call(
            "terminal",
            json!({"command": "printf 'x\\n' > café.txt && printf 'y\\n' > \"$(printf 'evil\\342\\200\\256txt.exe')\" && mkdir -p données && printf 'z\\n' > données/über.md"}),
        ),
        reply().call("finish", json!({"message": "made files"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "make files", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(out.contains("+++ b/café.txt"), "{out}");
    assert!(out.contains("+++ b/données/über.md"), "{out}");
    assert!(!out.contains("\\303"), "{out}");
    // The right-to-left override in a name is dropped before the terminal.
    assert!(out.contains("+++ b/eviltxt.exe"), "{out}");
    assert!(!out.contains('\u{202e}'), "{out}");
}

/// The header says in one short line how the commands are confined (level, network, what
/// they may write); `--verbose` gives the whole description, as `wright doctor` does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_header_is_one_short_line_unless_verbose() {
    let h = Harness::new();
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo hi"})),
        reply().call("finish", json!({"message": "done"})),
        reply().call("terminal", json!({"command": "echo hi"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let short = h.run(&server.url(), "say hi", &[]).await;
    assert!(short.status.success(), "{}", stderr(&short));
    let header = crate::common::sandbox_header(&short);
    assert!(header.chars().count() < 160, "{header}");
    assert!(
        header.contains("network: off")
            && header.contains("writable: the workspace, a private tmp, a private home")
            && (header.contains("own root, Landlock, seccomp")
                || header.contains("Landlock and seccomp, no namespaces")),
        "{header}"
    );
    let verbose = h.run(&server.url(), "say hi", &["--verbose"]).await;
    assert!(verbose.status.success(), "{}", stderr(&verbose));
    let full = crate::common::sandbox_header(&verbose);
    assert!(
        full.contains("files: Landlock")
            && full.contains("syscalls: ")
            && full.contains("limits: "),
        "{full}"
    );
}
