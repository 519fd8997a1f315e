//! What the in-process session tests share: the request for a conversation against the
//! scripted model server, with a given sandbox and launcher.

#![allow(clippy::unwrap_used)] // a test helper: a failure is the test's

use wright_llm::ClientConfig;
use wright_sandbox::SandboxMode;
use wright_session::connect::connect;
use wright_session::connect::ServerChoice;
use wright_session::sandbox_setup::SandboxOptions;
use wright_session::Launcher;
use wright_session::Place;
use wright_session::Profiles;
use wright_session::Replies;
use wright_session::Request;
use wright_session::SandboxChoice;
use wright_session::UncommittedChoice;

/// A new conversation's request on the server at `url` (`test-model`, native tool calls,
/// no constraint), in a clone, with `mode` started through `launcher`.
pub async fn request(url: String, mode: SandboxMode, launcher: Launcher) -> Request {
    let mut settings =
        wright_config::Settings::from_config(&wright_config::Config::default(), None, |_| None)
            .unwrap();
    settings.tool_calling = "native".into();
    settings.constrain = "off".into();
    let choice = ServerChoice {
        base_url: Some(url),
        model_file: None,
        window: None,
        model: Some("test-model".into()),
        preferred_model: None,
        api_key: None,
    };
    let client = connect(choice, ClientConfig::new("", "")).await.unwrap();
    Request {
        client,
        settings: settings.clone(),
        place: Place {
            in_place: false,
            force: false,
            uncommitted: UncommittedChoice::Leave,
            snapshot: true,
        },
        sandbox: SandboxChoice {
            mode,
            options: SandboxOptions::of(&settings, false),
            launcher,
            secrets: wright_session::Grants::none(),
            repo_hooks: wright_session::RepoHooksChoice::Ask,
            repo_mcp: wright_session::RepoHooksChoice::Ask,
        },
        profiles: Profiles::default(),
        replies: Replies::AlwaysCalls,
    }
}
