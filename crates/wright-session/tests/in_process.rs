//! A conversation built in process, through the session API alone, against the scripted
//! model server: no `wright` binary, only the sandbox launcher this crate builds. A real
//! sandbox, real files, a real git repository; the run's events and the branch it hands
//! over are checked.

mod common;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use wright_core::Observer;
use wright_llm::StreamDelta;
use wright_protocol::AgentState;
use wright_protocol::ChangesOutcome;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::StopReason;
use wright_sandbox::SandboxMode;
use wright_session::sandbox_setup::SandboxOptions;
use wright_session::Ending;
use wright_session::Launcher;
use wright_session::Profiles;
use wright_session::Request;
use wright_session::SandboxChoice;
use wright_session::Session;
use wright_session::Unattended;
use wright_testkit::failing_python_repo;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;
use wright_testkit::BUG;
use wright_testkit::FIX;

/// Keeps every event the conversation shows.
#[derive(Default)]
struct Recorder(Vec<Event>);

impl Observer for Recorder {
    fn event(&mut self, event: &Event) {
        self.0.push(event.clone());
    }
    fn delta(&mut self, _delta: &StreamDelta) {}
}

#[tokio::test]
async fn a_run_in_process_fixes_the_test_and_hands_over_its_branch() {
    // wright's data, cache and configuration in this test's own directory (the only test
    // of this binary: the environment is the process's).
    let data = tempfile::tempdir().unwrap();
    std::env::set_var("XDG_DATA_HOME", data.path());
    std::env::set_var("XDG_CACHE_HOME", data.path().join("cache"));
    std::env::set_var("XDG_CONFIG_HOME", data.path().join("config"));
    let repo = tempfile::tempdir().unwrap();
    failing_python_repo(repo.path());
    let server =
        ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "python3 -m unittest 2>&1 | tail -n 3"})),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": FIX}),
        ),
        reply().call("terminal", json!({"command": "python3 -m unittest"})),
        reply().call("finish", json!({"message": "row_to_csv keeps the last column now."})),
    ])
        .await
        .unwrap();

    let front = Unattended;
    let start = Session::locate(repo.path(), &front).unwrap();
    // Not this test binary: it knows nothing of the launcher's arguments.
    let request = common::request(
        server.url(),
        SandboxMode::Auto,
        Launcher::program(env!("CARGO_BIN_EXE_wright-launcher")),
    )
    .await;
    // What an embedding program finds by default: the launcher beside it (a test binary
    // in Cargo's deps/ finds its package's binaries one directory up).
    assert_eq!(
        Launcher::find().unwrap(),
        Launcher::program(env!("CARGO_BIN_EXE_wright-launcher"))
    );
    let session = Session::prepare(start, request, &front).await.unwrap();
    assert!(
        session.tools.setup.sandbox.is_confined(),
        "{}",
        session.tools.setup.describe()
    );
    let mut conversation = session.start_conversation(session.workspace_map()).unwrap();
    let mut seen = Recorder::default();
    let outcome = conversation
        .proceed(
            Some("the tests fail, fix it"),
            wright_session::limits(&session.settings),
            &CancellationToken::new(),
            &mut seen,
        )
        .await
        .unwrap();
    assert_eq!(outcome.state, AgentState::Finished);
    assert_eq!(outcome.stop, StopReason::Finished);
    let ending = Ending {
        title: "fix it",
        summary: outcome.summary.as_deref(),
        locks: Vec::new(),
    };
    let finished = session
        .finish(conversation, ending, &mut seen)
        .await
        .unwrap();

    // The commands ran, in the sandbox, on the agent's copy: failing, then passing.
    let outputs: Vec<(String, bool)> = seen
        .0
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Observation {
                tool,
                output,
                exit_code,
                ..
            } if tool == "terminal" => Some((output.clone(), *exit_code == Some(0))),
            _ => None,
        })
        .collect();
    assert_eq!(outputs.len(), 2, "{outputs:?}");
    assert!(outputs[0].0.contains("FAILED"), "{outputs:?}");
    assert!(outputs[1].1, "{outputs:?}");
    // The run's last events: finished with a typed reason, then where the changes went.
    let stop = seen.0.iter().rev().find_map(|e| match &e.body {
        EventBody::State { stop, .. } => Some(stop.clone()),
        _ => None,
    });
    assert_eq!(stop, Some(Some(StopReason::Finished)));
    let Some(EventBody::Changes(changes)) = seen.0.last().map(|e| &e.body) else {
        panic!("the last event is not the changes: {:?}", seen.0.last());
    };
    assert_eq!(changes.outcome, ChangesOutcome::Branch);
    // The branch holds the fix; the user's checkout does not.
    let branch = format!("wright/{}", finished.id);
    assert_eq!(changes.branch.as_deref(), Some(branch.as_str()));
    let handed = git(repo.path(), &["show", &format!("{branch}:export.py")]);
    assert!(handed.contains(FIX), "{handed}");
    let mine = std::fs::read_to_string(repo.path().join("export.py")).unwrap();
    assert!(mine.contains(BUG), "{mine}");
    // The log on disk ends with the events shown (those before are the conversation's
    // start, written when it was created).
    // Compared by id and kind: a float's last digit may differ once read back.
    let shape = |events: &[Event]| -> Vec<(u64, serde_json::Value)> {
        events
            .iter()
            .map(|e| (e.id, serde_json::to_value(e).unwrap()["kind"].clone()))
            .collect()
    };
    let logged = wright_protocol::read_log(&finished.log_path)
        .unwrap()
        .events;
    assert!(shape(&logged).ends_with(&shape(&seen.0)), "{logged:?}");
}

/// A server runs sessions on a multi-threaded runtime: what a session's steps return can
/// move between threads (checked when this compiles).
#[allow(dead_code)]
fn the_session_futures_are_send(
    start: wright_session::StartPoint,
    request: Request,
    existing: wright_session::Existing,
    session: Session,
    conversation: wright_core::Conversation,
    observer: &'static mut Recorder,
) {
    fn send<T: Send>(_: T) {}
    send(Session::prepare(start, request, &Unattended));
    let sandbox = SandboxChoice {
        mode: SandboxMode::Auto,
        options: SandboxOptions::of(&session.settings, false),
        launcher: Launcher::program("wright-launcher"),
        secrets: wright_session::Grants::none(),
        repo_hooks: wright_session::RepoHooksChoice::Ask,
        repo_mcp: wright_session::RepoHooksChoice::Ask,
    };
    let client = session.client.clone();
    let settings = session.settings.clone();
    send(async move {
        Session::reopen(
            existing,
            client,
            settings,
            &sandbox,
            Profiles::default(),
            &Unattended,
        )
        .await
    });
    let ending = Ending {
        title: "",
        summary: None,
        locks: Vec::new(),
    };
    send(session.finish(conversation, ending, observer));
}
