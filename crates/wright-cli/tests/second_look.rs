//! The reviewer with fresh eyes: a second agent, on another profile's server, reviews the
//! change at `finish` from the task, the repository and the diff only, finds a planted
//! bug, sends the writer back once, and approves the mended change; its edits never
//! reach the writer's branch.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use serde_json::Value;
use wright_protocol::parse_log;
use wright_protocol::EventBody;
use wright_testkit::failing_python_repo;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;
use wright_testkit::BUG;
use wright_testkit::FIX;

/// Passes the repository's one test (rows of three) and is wrong for every other row.
const PLANTED: &str = "    return \",\".join(str(v) for v in (row if len(row) == 3 else row[:-1]))";
const FINDING: &str = "export.py: row_to_csv still drops the last value of every row that does not have three values: row_to_csv([1, 2]) gives '1'";
const PROBE: &str = "echo x > reviewer_was_here.txt; python3 -c 'from export import row_to_csv; print(row_to_csv([1, 2]))'";

/// Writes the user's configuration with a "local" and a "hosted" profile.
pub fn two_profiles(h: &Harness, local: &ScriptedServer, hosted: &ScriptedServer, more: &str) {
    let dir = h.data.path().join("config/wright");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!(
            "[profiles.local]\nbase_url = \"{}\"\nmodel = \"test-model\"\n[profiles.hosted]\nbase_url = \"{}\"\nmodel = \"judge-model\"\n{more}",
            local.url(),
            hosted.url()
        ),
    )
    .unwrap();
}

/// Every conversation's events, the writer's first (the one not in a reviewer's group).
fn logs(h: &Harness) -> (Vec<EventBody>, Vec<Vec<EventBody>>) {
    let dir = h.data.path().join("wright/conversations");
    let (mut writer, mut reviewers) = (Vec::new(), Vec::new());
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let text = std::fs::read_to_string(entry.path().join("events.jsonl")).unwrap();
        let events: Vec<EventBody> = parse_log(&text)
            .unwrap()
            .events
            .into_iter()
            .map(|e| e.body)
            .collect();
        match &events[0] {
            EventBody::Start(start) if start.group.is_some() => reviewers.push(events),
            _ => writer = events,
        }
    }
    (writer, reviewers)
}

fn last_tool_result(request: &Value) -> String {
    request["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_on_another_server_finds_a_planted_bug_and_sends_the_agent_back() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let local = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "python3 -m unittest"})),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": PLANTED}),
        ),
        reply().call("terminal", json!({"command": "python3 -m unittest"})),
        reply().call("finish", json!({"message": "fixed row_to_csv"})),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": PLANTED, "new_str": FIX}),
        ),
        reply().call("terminal", json!({"command": "python3 -m unittest"})),
        reply().call("finish", json!({"message": "row_to_csv joins the whole row"})),
    ])
    .await
    .unwrap();
    let hosted = ScriptedServer::start_with_models(
        vec![
            // Round 1: it runs the writer's code in its own clone, tries to edit, and finds
            // the bug.
            reply().call("terminal", json!({"command": PROBE})),
            reply().call(
                "file_editor",
                json!({"command": "create", "path": "export.py", "file_text": "pass\n"}),
            ),
            reply().call(
                "verdict",
                json!({"verdict": "request_changes", "findings": [FINDING]}),
            ),
            // Round 2: the mended change.
            reply().call("terminal", json!({"command": PROBE})),
            reply().call("verdict", json!({"verdict": "approve"})),
        ],
        vec!["judge-model".to_string()],
    )
    .await
    .unwrap();
    two_profiles(&h, &local, &hosted, "");
    let task = "le test test_export_csv échoue, corrige-le";
    let output = h
        .wright(
            &["run", "--profile", "local", "--review", "hosted", task],
            &[],
        )
        .await;
    assert!(
        output.status.success(),
        "{}\n{}",
        stderr(&output),
        stdout(&output)
    );
    assert_eq!(local.remaining(), 0);
    assert_eq!(hosted.remaining(), 0);

    // The reviewer saw the task and the diff, not the writer's history.
    let seen = hosted.chat_requests();
    let first = seen[0].json();
    let messages = first["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{first:#}");
    let shown = messages[1]["content"].as_str().unwrap();
    assert!(
        shown.contains(task) && shown.contains("len(row) == 3"),
        "{shown}"
    );
    assert!(!shown.contains("fixed row_to_csv"), "{shown}");
    // It ran the writer's code as it was, in its own clone, and could not edit.
    let ran = last_tool_result(&seen[1].json());
    assert!(ran.lines().any(|line| line.trim() == "1"), "{ran}");
    assert!(
        last_tool_result(&seen[2].json()).contains("a reviewer only views files"),
        "{}",
        last_tool_result(&seen[2].json())
    );
    assert!(
        last_tool_result(&seen[4].json()).contains("1,2"),
        "round 2 sees the mended code: {}",
        last_tool_result(&seen[4].json())
    );

    // The writer got the findings once, in answer to its first finish.
    let sent_back = last_tool_result(&local.chat_requests()[4].json());
    assert!(
        sent_back.contains("a reviewer who did not see your work") && sent_back.contains(FINDING),
        "{sent_back}"
    );

    // Both verdicts are logged; the report shows the last one before the diff.
    let (writer, reviewers) = logs(&h);
    let looks: Vec<_> = writer
        .iter()
        .filter_map(|e| match e {
            EventBody::SecondLook(look) => Some(look.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(looks.len(), 2, "{looks:#?}");
    assert_eq!(
        (
            looks[0].verdict,
            looks[0].sent_back,
            looks[0].findings.clone()
        ),
        (
            Some(wright_protocol::Verdict::RequestChanges),
            true,
            vec![FINDING.to_string()]
        )
    );
    assert_eq!(
        (
            looks[1].verdict,
            looks[1].sent_back,
            looks[1].model.as_str()
        ),
        (
            Some(wright_protocol::Verdict::Approve),
            false,
            "judge-model"
        )
    );
    assert_eq!(reviewers.len(), 2, "one reviewer conversation per round");
    let out = stdout(&output);
    let verdict = out
        .find("── reviewer judge-model: approved (round 2)")
        .unwrap_or_else(|| panic!("{out}"));
    let diff = out
        .find("── changes, on branch")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(verdict < diff, "{out}");

    // The reviewer's edits reached nobody: the writer's branch has the fix only.
    let EventBody::Start(start) = &writer[0] else {
        panic!("no start")
    };
    let branch = format!("wright/{}", start.conversation);
    let files = git(h.repo(), &["ls-tree", "-r", "--name-only", &branch]);
    assert!(!files.contains("reviewer_was_here"), "{files}");
    let source = git(h.repo(), &["show", &format!("{branch}:export.py")]);
    assert!(
        source.contains(FIX) && !source.contains(PLANTED),
        "{source}"
    );
    // And the reviewers' clones are gone.
    let clones: Vec<_> = std::fs::read_dir(h.data.path().join("wright/workspaces"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(clones, vec![start.conversation.clone()]);

    // `wright apply` without an id takes the writer's branch, not a reviewer's
    // conversation (made later); `wright ls` shows the reviewers in their group.
    let applied = h.wright(&["apply"], &[]).await;
    assert!(applied.status.success(), "{}", stderr(&applied));
    assert!(
        stderr(&applied).contains(&start.conversation),
        "{}",
        stderr(&applied)
    );
    let listed = stdout(&h.wright(&["ls"], &[]).await);
    assert!(
        listed.contains(&format!(
            "group review-of-{} (2 conversations):",
            start.conversation
        )),
        "{listed}"
    );
}
