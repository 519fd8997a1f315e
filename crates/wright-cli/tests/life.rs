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
            EventBody::State { state, reason, .. } => {
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

/// The script of the live tests: the model reads the prompt for a while (llama.cpp says
/// how far it is when asked), then runs a command that prints a line, works a while and
/// prints another.
fn slow_script() -> Vec<wright_testkit::Reply> {
    vec![
        wright_testkit::Reply::Prefill(
            std::time::Duration::from_secs(4),
            Box::new(reply().call(
                "terminal",
                json!({"command": "echo first-line; sleep 4; echo last-line"}),
            )),
        ),
        reply().call("finish", json!({"message": "done"})),
    ]
}

fn llama_cpp() -> wright_testkit::ServerOptions {
    wright_testkit::ServerOptions {
        llama_cpp_context: Some(32768),
        ..wright_testkit::ServerOptions::default()
    }
}

/// In a real terminal (tmux): while the model reads the prompt a live line says for how
/// long and how far (llama.cpp's progress), and a command's output shows as it comes —
/// before the command ends — then the live area is gone and the run reads as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_line_shows_the_model_reading_and_the_command_printing() {
    let h = Harness::new();
    let server = ScriptedServer::start_with(slow_script(), llama_cpp())
        .await
        .unwrap();
    let command = h.terminal_command(
        &format!(
            "run --base-url {} --model test-model \"be slow\"",
            server.url()
        ),
        "LIVE",
        60,
    );
    let Some(terminal) = crate::common::terminal::Terminal::start("live-line", &command) else {
        return;
    };
    let screen = terminal.wait_for("the model reads the prompt");
    assert!(
        screen.contains("⋯ step 1 · the model reads the prompt · "),
        "{screen}"
    );
    let screen = terminal.wait_for("tokens read (");
    assert!(
        screen.contains(" of ") && screen.contains(" %)"),
        "{screen}"
    );
    // The first line of the command, shown while it still runs (the live area, and its
    // `│`, exist only while the command runs; it is erased when the command ends).
    let screen = terminal.wait_for("│ first-line");
    assert!(screen.contains("⋯ terminal running · "), "{screen}");
    let screen = terminal.wait_for("LIVE-EXIT-");
    assert!(screen.contains("LIVE-EXIT-0"), "{screen}");
    // The live area left nothing behind; the observation is there as always.
    assert!(!screen.contains('⋯') && !screen.contains('│'), "{screen}");
    assert!(screen.contains("    first-line\n    last-line"), "{screen}");
    let asked = server.chat_requests()[0].json();
    assert_eq!(asked["return_progress"], json!(true));
}

/// Where stderr is not a terminal (a pipe, a file, CI) nothing of the live area is
/// written, and a server not known to be llama.cpp is not asked for its progress.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_live_area_in_a_pipe() {
    let h = Harness::new();
    let server = ScriptedServer::start(slow_script()).await.unwrap();
    let output = h.run(&server.url(), "be slow", &[]).await;
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    assert!(!said.contains('⋯') && !said.contains('│'), "{said}");
    assert!(!said.contains('\u{1b}'), "{said}");
    assert!(said.contains("    first-line\n    last-line"), "{said}");
    assert_eq!(
        server.chat_requests()[0].json().get("return_progress"),
        None
    );
}
