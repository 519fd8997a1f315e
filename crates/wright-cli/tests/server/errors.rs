//! The session's errors reach a server's client typed: a conversation that cannot start
//! says why with a code a program branches on (`error_code`, as in the error body) and
//! what to do in the request's own fields, never a command line's flag; `/api/models`
//! answers the session's error with its status and code.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_profile_fails_the_conversation_with_its_code() {
    let h = Harness::new();
    git(h.repo(), &["init", "-q"]);
    h.user_config("[profiles.local]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n");
    let served = Served::start(&h, &[], &[]).await;
    let id = served
        .accepted(json!({"workspace": h.repo(), "task": "x", "settings": {"profile": "nope"}}))
        .await;
    let failed = served.wait_for(&id, &["failed"]).await;
    assert_eq!(failed["error_code"], "unknown_profile", "{failed}");
    let said = failed["error"].as_str().unwrap();
    assert!(
        said.contains("there is no profile 'nope'; defined: local"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_a_chosen_model_is_worded_in_the_request_fields() {
    let h = Harness::new();
    git(h.repo(), &["init", "-q"]);
    let several = ScriptedServer::start_with_models(vec![], vec!["a".into(), "b".into()])
        .await
        .unwrap();
    let served = Served::start(&h, &["--sandbox", "none"], &[]).await;
    let id = served
        .accepted(json!({"workspace": h.repo(), "task": "x",
                         "settings": {"base_url": several.url()}}))
        .await;
    let failed = served.wait_for(&id, &["failed"]).await;
    assert_eq!(failed["error_code"], "choose_model", "{failed}");
    let said = failed["error"].as_str().unwrap();
    assert!(
        said.contains("none was chosen") && said.contains("settings.model"),
        "{said}"
    );
    assert!(
        !said.contains("--model"),
        "a flag the server has not: {said}"
    );
    assert!(several.chat_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_of_an_unknown_profile_are_a_bad_request() {
    let h = Harness::new();
    h.user_config("[profiles.local]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n");
    let served = Served::start(&h, &["--profile", "nope"], &[]).await;
    let (status, body) = served.get("/api/models").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("unknown_profile")),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fallback_chain_where_no_server_answers_fails_with_its_code_naming_each() {
    let h = Harness::new();
    git(h.repo(), &["init", "-q"]);
    // Port 9 (discard) has no listener here: each server is down, a reason to fall back.
    h.user_config(
        "profile = \"local\"\nfallback = [\"hosted\"]\n\
         [profiles.local]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n\
         [profiles.hosted]\nbase_url = \"http://127.0.0.1:9/hosted/v1\"\nmodel = \"big\"\n",
    );
    let served = Served::start(&h, &["--sandbox", "none"], &[]).await;
    let id = served
        .accepted(json!({"workspace": h.repo(), "task": "x"}))
        .await;
    let failed = served.wait_for(&id, &["failed"]).await;
    assert_eq!(failed["error_code"], "no_server_answered", "{failed}");
    let said = failed["error"].as_str().unwrap();
    assert!(
        said.contains("127.0.0.1:9/v1") && said.contains("127.0.0.1:9/hosted/v1"),
        "each server tried is named: {said}"
    );
    assert!(!said.contains("--"), "a flag the server has not: {said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_server_refusing_the_key_mid_run_fails_with_its_code_and_what_to_do() {
    let h = Harness::new();
    wright_testkit::failing_python_repo(h.repo());
    // It lists its models (the start's check passes), then refuses the first request.
    let refusing = ScriptedServer::start(vec![Reply::Status(
        401,
        json!({"error": {"message": "invalid api key"}}),
    )])
    .await
    .unwrap();
    let served = Served::start(&h, &["--sandbox", "none"], &[]).await;
    let id = served
        .accepted(json!({"workspace": h.repo(), "task": "x",
                         "settings": {"base_url": refusing.url(), "model": "test-model"}}))
        .await;
    let failed = served.wait_for(&id, &["failed"]).await;
    assert_eq!(failed["error_code"], "api_key", "{failed}");
    let said = failed["error"].as_str().unwrap();
    assert!(
        said.contains("unauthorized") && said.contains("invalid api key"),
        "the server's own words: {said}"
    );
    assert!(said.contains("settings.profile"), "what to do: {said}");
    assert!(!said.contains("--"), "a flag the server has not: {said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_without_a_commit_is_the_requests_fault_worded_for_the_server() {
    let h = Harness::new();
    git(h.repo(), &["init", "-q"]);
    let model = ScriptedServer::start(vec![]).await.unwrap();
    let served = Served::start(&h, &["--sandbox", "none"], &[]).await;
    let id = served
        .accepted(json!({"workspace": h.repo(), "task": "x",
                         "settings": {"base_url": model.url(), "model": "test-model"}}))
        .await;
    let failed = served.wait_for(&id, &["failed"]).await;
    assert_eq!(failed["error_code"], "no_commit", "{failed}");
    let said = failed["error"].as_str().unwrap();
    assert!(
        said.contains("has no commit yet") && said.contains("commit once"),
        "{said}"
    );
    assert!(!said.contains("--"), "a flag the server has not: {said}");
    assert!(model.chat_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_setting_is_named_by_the_requests_field_never_by_a_flag() {
    let h = Harness::new();
    wright_testkit::failing_python_repo(h.repo());
    let served = Served::start(&h, &["--sandbox", "none"], &[]).await;
    for (settings, field) in [
        (
            json!({"max_steps": 0}),
            "settings.max_steps 0 is out of range",
        ),
        (json!({"tools": "nonsense"}), "settings.tools: "),
        (
            json!({"tool_calling": "sometimes"}),
            "settings.tool_calling ",
        ),
    ] {
        let (status, body) = served
            .post(
                "/api/conversations",
                json!({"workspace": h.repo(), "task": "x", "settings": settings}),
            )
            .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("bad_settings")),
            "{body}"
        );
        let said = body["message"].as_str().unwrap();
        assert!(said.starts_with(field), "{said}");
        assert!(!said.contains("--"), "a flag the server has not: {said}");
    }
}
