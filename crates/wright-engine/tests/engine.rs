//! The engine end to end on a tiny GGUF model with random weights, written by the test:
//! every reply with tools is a valid call, each step evaluates only the new tokens, a
//! stopped caller stops generation, and a saved cache is read back.

// Test helpers outside #[test] functions panic on purpose, as the tests do.
#![allow(clippy::unwrap_used)]

use serde_json::json;
use serde_json::Value;
use std::sync::Arc;
use wright_engine::Conversation;
use wright_engine::Engine;
use wright_engine::EngineConfig;
use wright_llm::in_process::InProcessModel;
use wright_testkit::tiny_gguf::write_tiny_gguf;
use wright_testkit::tiny_gguf::TinyModel;

fn tools() -> Vec<Value> {
    vec![
        json!({"type": "function", "function": {"name": "terminal", "description": "Runs a command.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string", "maxLength": 60}, "timeout": {"type": "integer"}}, "required": ["command"]}}}),
        json!({"type": "function", "function": {"name": "finish", "description": "Ends.",
            "parameters": {"type": "object", "properties": {"message": {"type": "string", "maxLength": 60}}, "required": ["message"]}}}),
    ]
}

fn body(messages: &[Value], tools: &[Value], seed: u32) -> Vec<u8> {
    json!({"model": "tiny", "stream": true, "temperature": 1.0, "max_tokens": 200, "seed": seed,
        "tools": tools, "messages": messages})
    .to_string()
    .into_bytes()
}

/// The start of every test conversation: a system prompt and a task.
fn opening() -> Vec<Value> {
    vec![
        json!({"role": "system", "content": "You are a test."}),
        json!({"role": "user", "content": "Fix the bug."}),
    ]
}

fn engine(dir: &std::path::Path, conversations: usize) -> Arc<Engine> {
    let file = dir.join("tiny.gguf");
    // Written once: a second engine on the same file must find the same file (its saved
    // caches are named after the file's size and modification time).
    if !file.exists() {
        write_tiny_gguf(&file, &TinyModel::default()).unwrap();
    }
    let mut config = EngineConfig::new(&file);
    config.window = Some(4096);
    config.threads = Some(1);
    config.conversations = conversations;
    Engine::load(&config).unwrap()
}

#[tokio::test]
async fn every_reply_is_a_valid_call_and_each_step_reads_only_new_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), 1);
    let model = Conversation {
        engine: engine.clone(),
        state_file: None,
    };
    let tools = tools();
    let mut messages = opening();
    let mut previous_total = 0u64;
    for step in 0..12u32 {
        let mut deltas = 0;
        let reply = model
            .complete(&body(&messages, &tools, step), &mut |_| deltas += 1)
            .await
            .unwrap();
        assert_eq!(reply.tool_calls.len(), 1, "step {step}: {reply:?}");
        let call = &reply.tool_calls[0];
        let arguments: Value = serde_json::from_str(&call.function.arguments).unwrap();
        match call.function.name.as_str() {
            "terminal" => assert!(arguments["command"].is_string(), "{arguments}"),
            "finish" => assert!(arguments["message"].is_string(), "{arguments}"),
            other => panic!("not a declared tool: {other}"),
        }
        let usage = reply.usage.clone().unwrap();
        let cached = usage.cached_tokens.unwrap();
        if step > 0 {
            // Everything sent and generated before is reused; only the new turn is read.
            assert_eq!(
                cached, previous_total,
                "step {step}: reused {cached} of {} tokens, the last step ended at {previous_total}",
                usage.prompt_tokens
            );
            // The new turn: the end of the reply, the tool result, the next header.
            assert!(usage.prompt_tokens - cached < 60, "{usage:?}");
        }
        previous_total = usage.prompt_tokens + usage.completion_tokens;
        messages.push(json!({"role": "assistant", "content": reply.text, "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": call.function.name, "arguments": call.function.arguments}}
        ]}));
        messages.push(
            json!({"role": "tool", "tool_call_id": call.id, "content": format!("output {step}")}),
        );
        assert!(deltas > 0);
    }
}

/// Runs `steps` steps of a conversation from `messages`, returning the usage of the last
/// one and leaving its turns in `messages`.
async fn steps(
    model: &Conversation,
    messages: &mut Vec<Value>,
    steps: u32,
) -> wright_llm::TokenUsage {
    let tools = tools();
    let mut last = None;
    for step in 0..steps {
        let reply = model
            .complete(&body(messages, &tools, step), &mut |_| {})
            .await
            .unwrap();
        let call = &reply.tool_calls[0];
        messages.push(json!({"role": "assistant", "content": reply.text, "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": call.function.name, "arguments": call.function.arguments}}
        ]}));
        messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": "x".repeat(400)}));
        last = reply.usage;
    }
    last.unwrap()
}

#[tokio::test]
async fn a_side_request_on_the_only_slot_does_not_cost_the_conversation_its_cache() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), 1);
    let model = Conversation {
        engine: engine.clone(),
        state_file: None,
    };
    let mut messages = opening();
    let before = steps(&model, &mut messages, 3).await;
    // A summary of the work so far, asked with another system prompt (as the condenser
    // does): it shares almost nothing with the conversation, and there is one slot.
    let mut aside = vec![
        json!({"role": "system", "content": "Summarize the conversation below."}),
        json!({"role": "user", "content": "y".repeat(2000)}),
    ];
    steps(&model, &mut aside, 1).await;
    let tools = tools();
    let reply = model
        .complete(&body(&messages, &tools, 99), &mut |_| {})
        .await
        .unwrap();
    let usage = reply.usage.unwrap();
    // The slot's cache before the aside: the last step's prompt and reply, without the
    // reply's end-of-turn token, which was never fed back.
    let held = before.prompt_tokens + before.completion_tokens;
    let cached = usage.cached_tokens.unwrap();
    assert!(
        cached + 2 >= held,
        "the conversation read again {} of its {} tokens after the aside",
        usage.prompt_tokens - cached,
        usage.prompt_tokens
    );
}

#[tokio::test]
async fn a_resumed_conversation_reads_its_saved_cache_instead_of_its_whole_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("conversation");
    std::fs::create_dir_all(&state).unwrap();
    let mut messages = opening();
    let before = {
        let engine = engine(dir.path(), 1);
        let model = Conversation {
            engine: engine.clone(),
            state_file: None,
        };
        let bound = model.for_conversation(&state).unwrap();
        let mut last = None;
        let tools = tools();
        for step in 0..3 {
            let reply = bound
                .complete(&body(&messages, &tools, step), &mut |_| {})
                .await
                .unwrap();
            let call = &reply.tool_calls[0];
            messages.push(json!({"role": "assistant", "content": reply.text, "tool_calls": [
                {"id": call.id, "type": "function", "function": {"name": call.function.name, "arguments": call.function.arguments}}
            ]}));
            messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": "ok"}));
            last = reply.usage;
        }
        last.unwrap()
        // The engine stops here (its last reference goes) and saves the cache.
    };
    let saved: Vec<_> = std::fs::read_dir(&state)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        saved.iter().any(|name| name.starts_with("engine-cache-")),
        "{saved:?}"
    );

    let engine = engine(dir.path(), 1);
    let model = Conversation {
        engine,
        state_file: None,
    };
    // A probe first, as a run makes, on the same (only) slot.
    model
        .complete(
            &body(&[json!({"role": "user", "content": "hi"})], &tools(), 7),
            &mut |_| {},
        )
        .await
        .unwrap();
    let bound = model.for_conversation(&state).unwrap();
    let reply = bound
        .complete(&body(&messages, &tools(), 9), &mut |_| {})
        .await
        .unwrap();
    let usage = reply.usage.unwrap();
    let cached = usage.cached_tokens.unwrap();
    assert!(
        cached + 2 >= before.prompt_tokens + before.completion_tokens,
        "resumed, it read {} of its {} prompt tokens again",
        usage.prompt_tokens - cached,
        usage.prompt_tokens
    );
}

#[tokio::test]
async fn a_fork_reads_only_from_the_fork_point() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), 1);
    let model = Conversation {
        engine,
        state_file: None,
    };
    let mut messages = opening();
    let at_fork = steps(&model, &mut messages, 2).await;
    let fork_point = messages.clone();
    let original = steps(&model, &mut messages, 2).await;
    // The fork: the history up to the point, then another message.
    let mut fork = fork_point;
    fork.push(json!({"role": "user", "content": "Try another way."}));
    let reply = model
        .complete(&body(&fork, &tools(), 5), &mut |_| {})
        .await
        .unwrap();
    let usage = reply.usage.unwrap();
    let cached = usage.cached_tokens.unwrap();
    let shared = at_fork.prompt_tokens + at_fork.completion_tokens;
    assert!(
        cached + 2 >= shared && usage.prompt_tokens - cached < 100,
        "the fork reused {cached} tokens of the {shared} before its point, and read {}",
        usage.prompt_tokens - cached
    );
    // And the original goes on from its own cache (parked while the fork ran).
    let reply = model
        .complete(&body(&messages, &tools(), 6), &mut |_| {})
        .await
        .unwrap();
    let usage = reply.usage.unwrap();
    assert!(
        usage.cached_tokens.unwrap() + 2 >= original.prompt_tokens + original.completion_tokens,
        "the original lost its cache to the fork: {usage:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_that_goes_away_stops_generation_within_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), 1);
    let model = Conversation {
        engine: engine.clone(),
        state_file: None,
    };
    // No tools: free text, up to 3000 tokens, which random weights rarely end early.
    let long = json!({"model": "tiny", "stream": true, "temperature": 1.0, "max_tokens": 3000,
        "seed": 3, "messages": [{"role": "user", "content": "Write."}]})
    .to_string()
    .into_bytes();
    let (first_tx, first_rx) = tokio::sync::oneshot::channel::<()>();
    let mut first_tx = Some(first_tx);
    let request = async {
        model
            .complete(&long, &mut |_| {
                if let Some(tx) = first_tx.take() {
                    let _ = tx.send(());
                }
            })
            .await
    };
    // Ctrl-C, a budget: the caller drops the request after its first piece.
    tokio::select! {
        _ = request => panic!("the reply ended before it could be cancelled"),
        _ = first_rx => {}
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let after_cancel = engine.generated_tokens();
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    let later = engine.generated_tokens();
    assert_eq!(
        after_cancel, later,
        "generation went on after its caller went away"
    );
    assert!(after_cancel < 3000, "{after_cancel}");
    // The engine is free for the next request.
    let reply = model
        .complete(
            &body(
                &[json!({"role": "user", "content": "Fix it."})],
                &tools(),
                4,
            ),
            &mut |_| {},
        )
        .await
        .unwrap();
    assert_eq!(reply.tool_calls.len(), 1);
}

/// Ctrl-C or SIGTERM while a long prompt is read: the engine stops reading it within a
/// turn (a short one, see `worker::pace`), not at its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_that_goes_away_during_its_prompt_stops_the_prompt_within_a_turn() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("wider.gguf");
    // Wider than the default and a long window: reading 15,000 tokens takes a while.
    let model = TinyModel {
        layers: 4,
        embedding: 256,
        feed_forward: 512,
        context: 16384,
        ..TinyModel::default()
    };
    write_tiny_gguf(&file, &model).unwrap();
    let mut config = EngineConfig::new(&file);
    config.window = Some(16384);
    config.threads = Some(1);
    let engine = Engine::load(&config).unwrap();
    let model = Conversation {
        engine: engine.clone(),
        state_file: None,
    };
    // One token per byte: some 15,000 prompt tokens.
    let long = json!({"model": "tiny", "stream": true, "max_tokens": 1, "seed": 5,
        "messages": [{"role": "user", "content": "read me ".repeat(1875)}]})
    .to_string()
    .into_bytes();
    let (first_tx, first_rx) = tokio::sync::oneshot::channel::<u64>();
    let mut first_tx = Some(first_tx);
    let request = async {
        model
            .complete(&long, &mut |delta| {
                if let wright_llm::StreamDelta::PromptProgress(progress) = delta {
                    if let Some(tx) = first_tx.take() {
                        let _ = tx.send(progress.total);
                    }
                }
            })
            .await
    };
    // The caller goes away once the first turn of its prompt is read.
    let total = tokio::select! {
        _ = request => panic!("the prompt was read whole before it could be cancelled"),
        total = first_rx => total.unwrap(),
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let after_cancel = engine.prefilled_tokens();
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    let later = engine.prefilled_tokens();
    assert_eq!(
        after_cancel, later,
        "the prompt was read on after its caller went away"
    );
    assert!(
        after_cancel < total,
        "the whole prompt was read: {after_cancel} of {total} tokens"
    );
    assert_eq!(engine.generated_tokens(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_conversations_at_once_each_keep_their_own_cache() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), 2);
    let run = |task: &'static str| {
        let model = Conversation {
            engine: engine.clone(),
            state_file: None,
        };
        async move {
            let tools = tools();
            let mut messages = vec![
                json!({"role": "system", "content": "You are a test."}),
                json!({"role": "user", "content": task}),
            ];
            let mut totals = Vec::new();
            for step in 0..4u32 {
                let reply = model
                    .complete(&body(&messages, &tools, step), &mut |_| {})
                    .await
                    .unwrap();
                let usage = reply.usage.clone().unwrap();
                totals.push((
                    usage.prompt_tokens,
                    usage.completion_tokens,
                    usage.cached_tokens.unwrap(),
                ));
                let call = &reply.tool_calls[0];
                messages.push(json!({"role": "assistant", "content": reply.text, "tool_calls": [
                    {"id": call.id, "type": "function", "function": {"name": call.function.name, "arguments": call.function.arguments}}
                ]}));
                messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": format!("{task} {step}")}));
            }
            totals
        }
    };
    let (first, second) = tokio::join!(
        run("Fix the bug in the parser."),
        run("Write the missing tests for the exporter, please.")
    );
    for (name, totals) in [("first", first), ("second", second)] {
        for pair in totals.windows(2) {
            let (prompt, completion, _) = pair[0];
            let (_, _, cached) = pair[1];
            assert_eq!(
                cached,
                prompt + completion,
                "the {name} conversation read again what it had read: {totals:?}"
            );
        }
    }
}

/// A request whose `tool_choice` names some of its tools (a step held away from the
/// shell): every reply calls one of those, and the prompt, which still lists every tool,
/// is read from the cache like any other step's.
#[tokio::test]
async fn a_tool_choice_naming_some_tools_holds_replies_to_them_and_keeps_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), 1);
    let model = Conversation {
        engine: engine.clone(),
        state_file: None,
    };
    let tools = tools();
    let mut messages = opening();
    let held_away = json!({"type": "allowed_tools", "allowed_tools": {"mode": "required",
        "tools": [{"type": "function", "function": {"name": "finish"}}]}});
    let mut previous_total = 0u64;
    for step in 0..8u32 {
        let mut request: Value = serde_json::from_slice(&body(&messages, &tools, step)).unwrap();
        let held = step % 2 == 1;
        if held {
            request["tool_choice"] = held_away.clone();
        }
        let reply = model
            .complete(request.to_string().as_bytes(), &mut |_| {})
            .await
            .unwrap();
        assert_eq!(reply.tool_calls.len(), 1, "step {step}: {reply:?}");
        let call = &reply.tool_calls[0];
        if held {
            assert_eq!(call.function.name, "finish", "step {step}: {reply:?}");
        }
        let usage = reply.usage.clone().unwrap();
        if step > 0 {
            assert_eq!(usage.cached_tokens, Some(previous_total), "step {step}");
        }
        previous_total = usage.prompt_tokens + usage.completion_tokens;
        messages.push(json!({"role": "assistant", "content": reply.text, "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": call.function.name, "arguments": call.function.arguments}}
        ]}));
        messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": "ok"}));
    }
}
