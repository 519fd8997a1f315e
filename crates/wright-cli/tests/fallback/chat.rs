//! A chat's later conversations are on the chat's fallback chain as its first one is: the
//! one `/new` starts and the one `/resume` goes back to each hand their turn to the next
//! profile when the server in use stays overloaded.

use super::*;

fn busy() -> Reply {
    Reply::Status(503, json!({"error": {"message": "Loading model"}}))
}

/// The model switches conversation `id`'s log holds.
fn switches_of(h: &Harness, id: &str) -> Vec<ModelSwitch> {
    let log = h
        .data
        .path()
        .join("wright/conversations")
        .join(id)
        .join("events.jsonl");
    let text = std::fs::read_to_string(log).unwrap();
    wright_protocol::parse_log(&text)
        .unwrap()
        .events
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::ModelSwitch(switch) => Some(switch),
            _ => None,
        })
        .collect()
}

fn overloaded_to_hosted(switches: &[ModelSwitch]) {
    assert_eq!(switches.len(), 1, "{switches:?}");
    assert_eq!(
        (
            switches[0].reason,
            switches[0].from.profile.as_deref(),
            switches[0].to.profile.as_deref()
        ),
        (SwitchReason::Overloaded, Some("local"), Some("hosted")),
        "{switches:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chats_new_conversation_goes_on_with_the_fallback_profile() {
    let h = Harness::new();
    let local = ScriptedServer::start(vec![busy(), busy(), busy(), busy()])
        .await
        .unwrap();
    let hosted = ScriptedServer::start_with_models(vec![reply().text("two")], big())
        .await
        .unwrap();
    two_profiles(&h, &local.url(), &hosted.url(), true);
    let output = h
        .wright_with_input(&["chat"], b"/new\nsay two\n/exit\n")
        .await;
    let out = stdout(&output);
    let id = out
        .lines()
        .find_map(|line| line.strip_prefix("new conversation "))
        .unwrap_or_else(|| panic!("no new conversation: {out}\n{}", stderr(&output)))
        .trim()
        .to_string();
    overloaded_to_hosted(&switches_of(&h, &id));
    assert_eq!(
        (local.chat_requests().len(), hosted.chat_requests().len()),
        (4, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_a_chat_resumes_goes_on_with_the_fallback_profile() {
    let h = Harness::new();
    let local = ScriptedServer::start(vec![
        terminal("echo one"),
        finish(),
        busy(),
        busy(),
        busy(),
        busy(),
    ])
    .await
    .unwrap();
    // A run's conversation: its turn ends with `finish`, in a chat too.
    let hosted = ScriptedServer::start_with_models(vec![finish()], big())
        .await
        .unwrap();
    two_profiles(&h, &local.url(), &hosted.url(), true);
    let run = h.wright(&["run", "say one"], &[]).await;
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let id = h.conversation_id();
    assert!(switches_of(&h, &id).is_empty());
    let output = h
        .wright_with_input(
            &["chat"],
            format!("/resume {id}\nsay two\n/exit\n").as_bytes(),
        )
        .await;
    let out = stdout(&output);
    assert!(
        out.contains(&format!("back in conversation {id}")),
        "{out}\n{}",
        stderr(&output)
    );
    overloaded_to_hosted(&switches_of(&h, &id));
    assert_eq!(
        (local.chat_requests().len(), hosted.chat_requests().len()),
        (6, 1),
        "{out}\n{}",
        stderr(&output)
    );
}
