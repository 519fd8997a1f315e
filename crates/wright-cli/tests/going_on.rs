//! A conversation goes on with the model it is on, or with one the user names — never
//! another without a word. Resumed or forked with nothing named, it is refused when the
//! settings give another model or server (the exact flags said, nothing sent, the log
//! untouched), unless the server is a loopback one a profile of the user's own
//! configuration names; resumed or forked with another model named, the change is a
//! `model_switch` that `wright ls` and `wright show` name.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_protocol::EventBody;
use wright_protocol::SwitchReason;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

/// A conversation stopped after its first step (`--max-steps 1`), on a server that has
/// one more reply (`finish`) for whoever goes on with it: that server, and the id.
async fn stopped_after_one_step(h: &Harness) -> (ScriptedServer, String) {
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo one"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h
        .run(&server.url(), "say one then finish", &["--max-steps", "1"])
        .await;
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    (server, h.conversation_id())
}

/// A server with `model` whose only reply is a call of `finish`.
async fn finishing(model: &str) -> ScriptedServer {
    ScriptedServer::start_with_models(
        vec![reply().call("finish", json!({"message": "done"}))],
        vec![model.to_string()],
    )
    .await
    .unwrap()
}

fn switches(h: &Harness, id: &str) -> Vec<wright_protocol::ModelSwitch> {
    conversation_events(h, id)
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::ModelSwitch(switch) => Some(switch),
            _ => None,
        })
        .collect()
}

fn conversation_events(h: &Harness, id: &str) -> Vec<wright_protocol::Event> {
    let path = h
        .data
        .path()
        .join("wright/conversations")
        .join(id)
        .join("events.jsonl");
    wright_protocol::parse_log(&std::fs::read_to_string(path).unwrap())
        .unwrap()
        .events
}

async fn ls_line(h: &Harness, id: &str) -> String {
    let listed = stdout(&h.wright(&["ls"], &[]).await);
    listed
        .lines()
        .find(|line| line.trim_start().starts_with(id))
        .unwrap_or_else(|| panic!("{id} not in\n{listed}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumed_without_its_server_named_it_is_refused_then_goes_on_when_named() {
    let h = Harness::new();
    let (first, id) = stopped_after_one_step(&h).await;
    // The user's default is another server, with a model of the same name.
    let default = finishing("test-model").await;
    h.user_config(&format!(
        "base_url = \"{}\"\nmodel = \"test-model\"\n",
        default.url()
    ));
    let log = h.log_path();
    let before = std::fs::read(&log).unwrap();

    let refused = h.wright(&["resume", &id, "go on"], &[]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let said = stderr(&refused);
    assert!(
        said.contains(&format!(
            "pass --base-url {} --model test-model to go on with it",
            first.url()
        )),
        "{said}"
    );
    // Nothing was sent to either server (not even a question about its models), nothing
    // was written to the log.
    assert!(default.requests().is_empty());
    assert_eq!(first.chat_requests().len(), 1);
    assert_eq!(std::fs::read(&log).unwrap(), before);

    // With the flags it said: the same model, on the same server, no switch.
    let url = first.url();
    let resumed = h
        .wright(
            &["resume", &id, "--base-url", &url, "--model", "test-model"],
            &[],
        )
        .await;
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(first.chat_requests().len(), 2);
    assert!(default.chat_requests().is_empty());
    assert!(switches(&h, &id).is_empty());
    assert!(ls_line(&h, &id).await.contains("test-model"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loopback_server_a_profile_of_the_users_names_is_used_without_a_flag() {
    let h = Harness::new();
    let (first, id) = stopped_after_one_step(&h).await;
    let default = finishing("test-model").await;
    h.user_config(&format!(
        "base_url = \"{}\"\nmodel = \"test-model\"\n[profiles.local]\nbase_url = \"{}\"\nmodel = \"test-model\"\n",
        default.url(),
        first.url()
    ));
    let resumed = h.wright(&["resume", &id, "go on"], &[]).await;
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(first.chat_requests().len(), 2);
    assert!(default.chat_requests().is_empty());
    assert!(switches(&h, &id).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_model_named_on_resume_is_a_switch_that_ls_and_show_name() {
    let h = Harness::new();
    let (first, id) = stopped_after_one_step(&h).await;
    let other = finishing("other-model").await;
    let url = other.url();
    let resumed = h
        .wright(
            &["resume", &id, "--base-url", &url, "--model", "other-model"],
            &[],
        )
        .await;
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(other.chat_requests().len(), 1);
    assert_eq!(other.chat_requests()[0].json()["model"], "other-model");

    let switches = switches(&h, &id);
    assert_eq!(switches.len(), 1, "{switches:?}");
    let switch = &switches[0];
    assert_eq!(
        (
            switch.step,
            switch.reason,
            switch.from.model.as_str(),
            switch.from.base_url.as_str(),
            switch.to.model.as_str(),
            switch.to.base_url.as_str()
        ),
        (
            2,
            SwitchReason::Chosen,
            "test-model",
            first.url().as_str(),
            "other-model",
            url.as_str()
        )
    );
    assert!(
        stderr(&resumed).contains("model switch: test-model → other-model"),
        "{}",
        stderr(&resumed)
    );
    let line = ls_line(&h, &id).await;
    assert!(
        line.contains("other-model") && !line.contains("test-model"),
        "{line}"
    );
    let shown = stdout(&h.wright(&["show", &id], &[]).await);
    assert!(
        shown.contains("model switch at step 2: test-model → other-model"),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("model now: other-model on {url}")),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_on_another_model_logs_the_switch_and_the_original_keeps_its_own() {
    let h = Harness::new();
    let (_first, original) = stopped_after_one_step(&h).await;
    let other = finishing("other-model").await;
    let url = other.url();
    let forked = h
        .wright(
            &[
                "fork",
                &original,
                "--base-url",
                &url,
                "--model",
                "other-model",
                "try it on the other model",
            ],
            &[],
        )
        .await;
    assert!(forked.status.success(), "{}", stderr(&forked));
    let text = stdout(&forked);
    let fork_id = text
        .split(" as ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{text}"))
        .to_string();
    let switches = switches(&h, &fork_id);
    assert_eq!(switches.len(), 1, "{switches:?}");
    assert_eq!(
        (switches[0].reason, switches[0].to.model.as_str()),
        (SwitchReason::Chosen, "other-model")
    );
    assert!(ls_line(&h, &fork_id).await.contains("other-model"));
    let line = ls_line(&h, &original).await;
    assert!(
        line.contains("test-model") && !line.contains("other-model"),
        "{line}"
    );
    let shown = stdout(&h.wright(&["show", &fork_id], &[]).await);
    assert!(
        shown.contains(&format!("model now: other-model on {url}")),
        "{shown}"
    );
}
