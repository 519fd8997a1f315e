//! Fallback between profiles, against two scripted servers standing for "local" and
//! "hosted": a server that stays overloaded, one that goes away, and a model that is
//! stuck each hand the same conversation to the next profile, whose first request carries
//! the history byte for byte; the egress policy leaves a hosted profile out before
//! anything is sent to it.

use crate::common::last_state;
use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use crate::config::init_repo;
use serde_json::json;
use wright_protocol::EventBody;
use wright_protocol::ModelSwitch;
use wright_protocol::SwitchReason;
use wright_testkit::reply;
use wright_testkit::Recorded;
use wright_testkit::Reply;
use wright_testkit::ScriptedServer;

mod chat;

fn terminal(command: &str) -> Reply {
    reply().call("terminal", json!({"command": command}))
}

/// The hosted server's model.
fn big() -> Vec<String> {
    vec!["big-model".to_string()]
}

fn finish() -> Reply {
    reply().call("finish", json!({"message": "done"}))
}

/// Two profiles, `local` first and `hosted` (with prices) after it.
fn two_profiles(h: &Harness, local: &str, hosted: &str, fallback_key: bool) {
    init_repo(h.repo());
    h.user_config(&format!(
        "profile = \"local\"\n{}[profiles.local]\nbase_url = \"{local}\"\nmodel = \"test-model\"\n[profiles.hosted]\nbase_url = \"{hosted}\"\nmodel = \"big-model\"\nprice_in = 1.0\nprice_out = 2.0\n",
        if fallback_key { "fallback = [\"hosted\"]\n" } else { "" }
    ));
}

/// The request's `messages` and what follows (its last field): the history as sent.
/// Two servers for an editor's or the server's conversation: "local" runs one command,
/// then answers 503 until the client gives up; "hosted" (serving `big-model`) runs
/// another and finishes.
pub async fn busy_local_and_hosted() -> (ScriptedServer, ScriptedServer) {
    let busy = || Reply::Status(503, json!({"error": {"message": "Loading model"}}));
    let local = ScriptedServer::start(vec![terminal("echo one"), busy(), busy(), busy(), busy()])
        .await
        .unwrap();
    let hosted = ScriptedServer::start_with_models(vec![terminal("echo two"), finish()], big())
        .await
        .unwrap();
    (local, hosted)
}

fn history(request: &Recorded) -> &[u8] {
    let key = b"\"messages\":";
    let at = request
        .body
        .windows(key.len())
        .position(|w| w == key)
        .expect("a request without messages");
    &request.body[at..]
}

fn switches(h: &Harness) -> Vec<ModelSwitch> {
    h.events()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::ModelSwitch(switch) => Some(switch),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overloaded_server_hands_the_conversation_to_the_next_profile() {
    let h = Harness::new();
    let local = ScriptedServer::start(vec![
        terminal("echo one"),
        Reply::Status(503, json!({"error": {"message": "Loading model"}})),
        Reply::Status(503, json!({"error": {"message": "Loading model"}})),
        Reply::Status(503, json!({"error": {"message": "Loading model"}})),
        Reply::Status(503, json!({"error": {"message": "Loading model"}})),
    ])
    .await
    .unwrap();
    let hosted =
        ScriptedServer::start_with_models(vec![terminal("echo two"), finish(), finish()], big())
            .await
            .unwrap();
    two_profiles(&h, &local.url(), &hosted.url(), true);
    let output = h.wright(&["run", "say one then two"], &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&format!("fallback hosted (big-model on {})", hosted.url())),
        "{}",
        stderr(&output)
    );
    let switches = switches(&h);
    assert_eq!(switches.len(), 1, "{switches:?}");
    let switch = &switches[0];
    assert_eq!(
        (switch.step, switch.reason),
        (2, SwitchReason::Overloaded),
        "{switch:?}"
    );
    assert_eq!(switch.from.profile.as_deref(), Some("local"));
    assert_eq!(switch.to.profile.as_deref(), Some("hosted"));
    assert_eq!(switch.to.model, "big-model");
    assert!(switch.detail.contains("HTTP 503"), "{}", switch.detail);
    // The step the local server could not serve is the hosted one's first, with the
    // same history, byte for byte; only the model's name differs in the body.
    let (local_requests, hosted_requests) = (local.chat_requests(), hosted.chat_requests());
    assert_eq!(local_requests.len(), 5);
    assert_eq!(hosted_requests.len(), 2);
    let refused = local_requests.last().unwrap();
    assert_eq!(history(refused), history(&hosted_requests[0]));
    assert_eq!(hosted_requests[0].json()["model"], "big-model");
    assert_eq!(last_state(&h.events()), "state:finished");
    // The report says what each model did and what it cost.
    let out = stdout(&output);
    assert!(out.contains("by model:"), "{out}");
    let local_line = out
        .lines()
        .find(|l| l.contains("test-model (local)"))
        .unwrap();
    let hosted_line = out
        .lines()
        .find(|l| l.contains("big-model (hosted)"))
        .unwrap();
    assert!(local_line.contains("1 step ·"), "{local_line}");
    assert!(
        hosted_line.contains("2 steps ·") && hosted_line.contains("cost "),
        "{hosted_line}"
    );
    // So does `wright show`.
    let id = h.conversation_id();
    let shown = h.wright(&["show", &id], &[]).await;
    let shown = stdout(&shown);
    assert!(
        shown.contains("model switch at step 2: test-model (local) → big-model (hosted)"),
        "{shown}"
    );
    assert!(shown.contains("by model:"), "{shown}");
    // Resumed, it goes on with the model in force.
    let resumed = h.wright(&["resume", &id, "say three"], &[]).await;
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert_eq!(hosted.chat_requests().len(), 3);
    assert_eq!(local.chat_requests().len(), 5);
    assert!(
        stderr(&resumed).contains("model in force big-model"),
        "{}",
        stderr(&resumed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_goes_away_hands_the_conversation_to_the_next_profile() {
    let h = Harness::new();
    let local = ScriptedServer::start(vec![terminal("echo one"), Reply::ShutDown])
        .await
        .unwrap();
    let hosted = ScriptedServer::start_with_models(vec![terminal("echo two"), finish()], big())
        .await
        .unwrap();
    two_profiles(&h, &local.url(), &hosted.url(), false);
    let output = h
        .wright(&["run", "--fallback", "hosted", "say one then two"], &[])
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let switches = switches(&h);
    assert_eq!(switches.len(), 1, "{switches:?}");
    assert_eq!(
        (switches[0].step, switches[0].reason),
        (2, SwitchReason::Unreachable),
        "{:?}",
        switches[0]
    );
    assert!(
        switches[0].detail.contains("connection refused"),
        "{}",
        switches[0].detail
    );
    let local_requests = local.chat_requests();
    assert_eq!(
        history(local_requests.last().unwrap()),
        history(&hosted.chat_requests()[0])
    );
    assert!(h.repo().join(".git").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_model_hands_the_conversation_to_the_next_profile() {
    let h = Harness::new();
    let local = ScriptedServer::start((0..4).map(|_| terminal("cat missing.txt")).collect())
        .await
        .unwrap();
    let hosted =
        ScriptedServer::start_with_models(vec![terminal("echo looked elsewhere"), finish()], big())
            .await
            .unwrap();
    two_profiles(&h, &local.url(), &hosted.url(), true);
    let output = h.wright(&["run", "read missing.txt"], &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(local.remaining(), 0);
    let switches = switches(&h);
    assert_eq!(switches.len(), 1, "{switches:?}");
    assert_eq!(
        (switches[0].step, switches[0].reason),
        (5, SwitchReason::Stuck),
        "{:?}",
        switches[0]
    );
    // The hosted model's first request extends the local one's last, byte for byte.
    let local_last = local.chat_requests().last().unwrap().clone();
    let hosted_first = hosted.chat_requests()[0].clone();
    let before = history(&local_last);
    let before = &before[..before.len() - 2];
    assert!(
        history(&hosted_first).starts_with(before),
        "the history was not carried over as it was"
    );
    let sent = hosted_first.json()["messages"].to_string();
    assert!(sent.contains("You are going in circles"), "{sent}");
    assert_eq!(last_state(&h.events()), "state:finished");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_only_leaves_the_hosted_fallback_out() {
    let h = Harness::new();
    let local = ScriptedServer::start(vec![
        terminal("echo one"),
        Reply::Status(503, json!({"error": {"message": "busy"}})),
        Reply::Status(503, json!({"error": {"message": "busy"}})),
        Reply::Status(503, json!({"error": {"message": "busy"}})),
        Reply::Status(503, json!({"error": {"message": "busy"}})),
    ])
    .await
    .unwrap();
    init_repo(h.repo());
    let repo = h.repo().canonicalize().unwrap();
    h.user_config(&format!(
        "profile = \"local\"\nfallback = [\"hosted\"]\n[profiles.local]\nbase_url = \"{}\"\nmodel = \"test-model\"\n[profiles.hosted]\nbase_url = \"https://api.example.com/v1\"\nmodel = \"big\"\n[repos.\"{}\"]\negress = \"local_only\"\n",
        local.url(),
        repo.display()
    ));
    let output = h.wright(&["run", "--allow-remote", "say one"], &[]).await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains("fallback hosted: left out — this repository's code may only go to a server on this machine"),
        "{said}"
    );
    assert!(switches(&h).is_empty());
    assert_eq!(last_state(&h.events()), "state:failed");
}

fn routes(h: &Harness) -> Vec<wright_protocol::Route> {
    h.events()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::Route(route) => Some(route),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routing_rules_choose_the_profile_and_say_why() {
    let h = Harness::new();
    init_repo(h.repo());
    let local = ScriptedServer::start(vec![terminal("echo here"), finish()])
        .await
        .unwrap();
    let hosted = ScriptedServer::start_with_models(vec![terminal("echo there"), finish()], big())
        .await
        .unwrap();
    let config = format!(
        "profile = \"local\"\n[route]\nrun = \"local\"\nlarge_repo_files = 1\nlarge_repo = \"hosted\"\n[profiles.local]\nbase_url = \"{}\"\nmodel = \"test-model\"\n[profiles.hosted]\nbase_url = \"{}\"\nmodel = \"big-model\"\n",
        local.url(),
        hosted.url()
    );
    h.user_config(&config);
    // The repository has a file: large by this rule, so the hosted profile.
    let output = h.wright(&["run", "look around"], &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(hosted.chat_requests().len(), 2);
    assert!(local.chat_requests().is_empty());
    let said = stderr(&output);
    assert!(
        said.contains("profile hosted: the repository has ")
            && said.contains("route.large_repo_files = 1"),
        "{said}"
    );
    let route = routes(&h);
    assert_eq!(route.len(), 1);
    assert_eq!(
        (route[0].profile.as_str(), route[0].reason),
        ("hosted", wright_protocol::RouteReason::LargeRepository)
    );
    // Named by hand, it wins over every rule.
    let h = Harness::new();
    init_repo(h.repo());
    h.user_config(&config);
    let output = h
        .wright(&["run", "--profile", "local", "look around"], &[])
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(local.chat_requests().len(), 2);
    let route = routes(&h);
    assert_eq!(
        (route[0].profile.as_str(), route[0].reason),
        ("local", wright_protocol::RouteReason::ByHand)
    );
    assert!(
        stderr(&output).contains("profile local: named by hand (flag --profile)"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_too_large_for_the_server_goes_to_the_next_profile() {
    let h = Harness::new();
    let too_large = || {
        Reply::Status(
            400,
            json!({"error": {"message": "the request exceeds the available context size (4096 tokens)"}}),
        )
    };
    // Twice: a constrained request refused is first sent again without its constraint.
    let local = ScriptedServer::start(vec![terminal("echo one"), too_large(), too_large()])
        .await
        .unwrap();
    let hosted = ScriptedServer::start_with_models(vec![terminal("echo two"), finish()], big())
        .await
        .unwrap();
    two_profiles(&h, &local.url(), &hosted.url(), true);
    let output = h.wright(&["run", "say one then two"], &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let switches = switches(&h);
    assert_eq!(switches.len(), 1, "{switches:?}");
    assert_eq!(
        (switches[0].step, switches[0].reason),
        (2, SwitchReason::TooLarge),
        "{:?}",
        switches[0]
    );
    assert_eq!(
        history(local.chat_requests().last().unwrap()),
        history(&hosted.chat_requests()[0])
    );
}

/// A model server's address where nothing listens: a port taken, then let go.
fn nothing_listens() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/v1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_profile_down_at_the_start_hands_the_run_to_the_next() {
    let h = Harness::new();
    let local = nothing_listens();
    let hosted =
        ScriptedServer::start_with_models(vec![terminal("echo two"), finish(), finish()], big())
            .await
            .unwrap();
    two_profiles(&h, &local, &hosted.url(), true);
    let output = h.wright(&["run", "say two"], &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains(&format!(
            "model switch at the start: test-model (local) → big-model (hosted) on {}: its server could not be reached",
            hosted.url()
        )),
        "{said}"
    );
    // The run starts on the hosted profile: no fallback left after it.
    assert!(!said.contains("fallback hosted ("), "{said}");
    let switches = switches(&h);
    assert_eq!(switches.len(), 1, "{switches:?}");
    let switch = &switches[0];
    assert_eq!(
        (switch.step, switch.reason),
        (1, SwitchReason::Unreachable),
        "{switch:?}"
    );
    assert_eq!(
        (switch.from.profile.as_deref(), switch.from.model.as_str()),
        (Some("local"), "test-model")
    );
    assert_eq!(switch.from.base_url, local);
    assert_eq!(
        (switch.to.profile.as_deref(), switch.to.model.as_str()),
        (Some("hosted"), "big-model")
    );
    assert!(
        switch.detail.contains("connection refused"),
        "{}",
        switch.detail
    );
    assert_eq!(hosted.chat_requests().len(), 2);
    assert_eq!(last_state(&h.events()), "state:finished");
    // The report and `wright show` say it as they say a switch in the run.
    let out = stdout(&output);
    let local_line = out
        .lines()
        .find(|l| l.contains("test-model (local)"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(local_line.contains("0 steps ·"), "{local_line}");
    let hosted_line = out
        .lines()
        .find(|l| l.contains("big-model (hosted)"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(hosted_line.contains("2 steps ·"), "{hosted_line}");
    let id = h.conversation_id();
    let shown = stdout(&h.wright(&["show", &id], &[]).await);
    assert!(
        shown.contains("model switch at step 1: test-model (local) → big-model (hosted)"),
        "{shown}"
    );
    assert!(shown.contains("by model:"), "{shown}");
    // Resumed, it goes on with the model in force, the local profile not asked again.
    let resumed = h.wright(&["resume", &id, "say three"], &[]).await;
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert_eq!(hosted.chat_requests().len(), 3);
    assert_eq!(self::switches(&h).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_no_profile_answers_the_error_names_each_one_tried() {
    let h = Harness::new();
    let (local, hosted) = (nothing_listens(), nothing_listens());
    two_profiles(&h, &local, &hosted, true);
    let output = h.wright(&["run", "say two"], &[]).await;
    // The setup's failure, as when the one server named does not answer.
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(said.contains("no profile's server answered"), "{said}");
    for tried in [
        format!("test-model (local) on {local}: "),
        format!("big-model (hosted) on {hosted}: "),
    ] {
        assert!(said.contains(&tried), "{said}");
    }
}

/// `fallback` without `profile`: the run starts on what discovery finds (here the
/// embedded engine), and the header says the first fallback is only that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fallback_without_a_profile_is_said_to_be_only_a_fallback() {
    if crate::engine::a_local_server_runs() {
        eprintln!("!!!!!!!! SKIPPED: a model server listens on a usual local port !!!!!!!!");
        return;
    }
    let h = Harness::new();
    crate::engine::repo(&h);
    let hosted = ScriptedServer::start_with_models(vec![], big())
        .await
        .unwrap();
    h.user_config(&format!(
        "fallback = [\"hosted\"]\n[profiles.hosted]\nbase_url = \"{}\"\nmodel = \"big-model\"\n",
        hosted.url()
    ));
    let models = tempfile::tempdir().unwrap();
    let store = models.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    wright_testkit::tiny_gguf::write_tiny_gguf(
        &store.join("wright-tiny.gguf"),
        &wright_testkit::tiny_gguf::TinyModel::default(),
    )
    .unwrap();
    let env = [("WRIGHT_MODELS_DIR", store.to_str().unwrap())];
    let output = h
        .wright(
            &[
                "run",
                "--context-window",
                "4096",
                "--max-steps",
                "1",
                "--max-reply-tokens",
                "20",
                "look at notes.txt",
            ],
            &env,
        )
        .await;
    let said = stderr(&output);
    assert!(said.contains("wright's embedded engine"), "{said}");
    assert!(
        said.contains("no profile chosen: this run starts on what was found here")
            && said.contains(
                "'hosted' is only its fallback; to start on it, set profile = \"hosted\""
            ),
        "{said}"
    );
}
