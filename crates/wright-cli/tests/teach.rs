//! What a repository teaches the agent, end to end: `AGENTS.md` (and its kin) in the
//! system prompt of the first request and of every later one, resumed ones included,
//! read from the commit (never through a link, bounded in size); skills added when a user
//! message says a trigger, when the agent touches a matching file, or when the model asks
//! for a listed one with the `skill` tool — each inclusion an event.

use crate::common::first_user_message;
use crate::common::stderr;
use crate::common::Harness;
use serde_json::json;
use serde_json::Value;
use wright_protocol::EventBody;
use wright_protocol::SkillCause;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;

fn write(root: &std::path::Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn commit_all(repo: &std::path::Path, message: &str) {
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", message]);
}

fn system_prompt(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string()
}

fn look_and_finish() -> Vec<wright_testkit::Reply> {
    vec![
        reply().call("terminal", json!({"command": "true"})),
        reply().call("finish", json!({"message": "looked"})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_md_is_in_every_request_and_stays_the_same_on_resume() {
    let h = Harness::new();
    let repo = h.repo();
    write(
        repo,
        "AGENTS.md",
        "Always run `make check` before finishing.\n",
    );
    write(repo, "src/AGENTS.md", "In src, keep functions short.\n");
    write(repo, "src/main.py", "print(1)\n");
    git(repo, &["init", "-q"]);
    commit_all(repo, "Rules");
    // Uncommitted: the commit's file is what counts.
    write(repo, "AGENTS.md", "UNCOMMITTED RULES\n");
    let server = ScriptedServer::start(look_and_finish()).await.unwrap();
    let output = h
        .wright(
            &[
                "run",
                "-C",
                "src",
                "--base-url",
                &server.url(),
                "--model",
                "test-model",
                "look around",
            ],
            &[],
        )
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("instructions AGENTS.md, src/AGENTS.md"),
        "{}",
        stderr(&output)
    );
    let requests = server.chat_requests();
    let first = system_prompt(&requests[0].json());
    assert!(
        first.contains("# Repository instructions")
            && first.contains("## AGENTS.md\nAlways run `make check` before finishing.")
            && first.contains("## src/AGENTS.md\nIn src, keep functions short."),
        "{first}"
    );
    assert!(!first.contains("UNCOMMITTED"), "{first}");
    // The general rules before the specific ones.
    assert!(first.find("## AGENTS.md") < first.find("## src/AGENTS.md"));
    for request in &requests[1..] {
        assert_eq!(system_prompt(&request.json()), first);
    }
    let start = h.events().into_iter().find_map(|e| match e.body {
        EventBody::Start(start) => Some(start),
        _ => None,
    });
    let files: Vec<String> = start
        .unwrap()
        .instructions
        .iter()
        .map(|f| f.path.clone())
        .collect();
    assert_eq!(files, ["AGENTS.md", "src/AGENTS.md"]);

    // The repository's rules change; the conversation goes on with those it began with.
    write(repo, "AGENTS.md", "New rules.\n");
    commit_all(repo, "New rules");
    let more = ScriptedServer::start(look_and_finish()).await.unwrap();
    let id = h.conversation_id();
    let resumed = h.resume(&more.url(), &id, "once more").await;
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert_eq!(system_prompt(&more.chat_requests()[0].json()), first);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linked_agents_md_is_not_followed_and_sizes_are_bounded() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "OUTSIDE SECRET\n").unwrap();
    for git_repo in [true, false] {
        let h = Harness::new();
        let repo = h.repo();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), repo.join("AGENTS.md"))
            .unwrap();
        // The fallback for a directory without a (readable) AGENTS.md.
        write(repo, "CLAUDE.md", &format!("{}END", "r".repeat(20_000)));
        write(repo, ".cursorrules", "Not read: CLAUDE.md is there.\n");
        write(repo, ".agents/skills/huge/SKILL.md", &"x".repeat(100_000));
        if git_repo {
            git(repo, &["init", "-q"]);
            commit_all(repo, "Rules");
        }
        let server = ScriptedServer::start(look_and_finish()).await.unwrap();
        let output = h.run(&server.url(), "look around", &[]).await;
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let said = stderr(&output);
        assert!(
            said.contains("not read: AGENTS.md (a link, not followed)"),
            "{said}"
        );
        assert!(said.contains("instructions CLAUDE.md (cut)"), "{said}");
        assert!(
            said.contains("not read: .agents/skills/huge/SKILL.md") && said.contains("65536"),
            "{said}"
        );
        for request in server.chat_requests() {
            assert!(!request.json().to_string().contains("OUTSIDE SECRET"));
        }
        let prompt = system_prompt(&server.chat_requests()[0].json());
        assert!(
            !prompt.contains("END") && !prompt.contains("Not read"),
            "{prompt}"
        );
        // At most the bound of the rules' text, plus the prompt's own.
        assert!(
            prompt.matches('r').count() <= 8_000 + 200,
            "{}",
            prompt.len()
        );
        assert!(prompt.contains("[… the rest was left out"), "{prompt}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_come_by_keyword_by_path_and_on_demand() {
    let h = Harness::new();
    let repo = h.repo();
    write(
        repo,
        ".agents/skills/docker/SKILL.md",
        "---\nname: docker\ndescription: Containers here\ntriggers: [docker, compose]\n---\nUse podman, never docker.\n",
    );
    write(
        repo,
        ".openhands/skills/python.md",
        "---\npaths: [\"*.py\"]\n---\nPython: run ruff after each edit.\n",
    );
    write(
        repo,
        ".agents/skills/release/SKILL.md",
        "---\nname: release\ndescription: How a release is cut\n---\nTag vX.Y.Z, then push the tag.\n",
    );
    write(repo, "app.py", "print('hi')\n");
    git(repo, &["init", "-q"]);
    commit_all(repo, "Skills");
    let server = ScriptedServer::start(vec![
        reply().call("file_editor", json!({"command": "view", "path": "app.py"})),
        reply().call("skill", json!({"name": "release"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h
        .run(&server.url(), "Why does the Docker build fail?", &[])
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains("skills docker (keywords), release (on demand), python (paths)"),
        "{said}"
    );
    assert!(
        said.contains("[skill docker added: the message says \"docker\"]"),
        "{said}"
    );
    let requests = server.chat_requests();
    let first = requests[0].json();
    // Listed: only the skill read on demand, with the tool that reads it.
    let prompt = system_prompt(&first);
    assert!(prompt.contains("# Skills\n") && prompt.contains("- release: How a release is cut"));
    assert!(
        !prompt.contains("podman") && !prompt.contains("ruff"),
        "{prompt}"
    );
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"skill"), "{tools:?}");
    // By keyword: in the first message, after the task.
    let task = first_user_message(&first);
    assert!(
        task.contains("Why does the Docker build fail?\n\n[Skill docker (.agents/skills/docker/SKILL.md), added because the message says \"docker\":]\nUse podman, never docker."),
        "{task}"
    );
    // By path: after the step that touched app.py, and not before.
    let second = requests[1].json().to_string();
    assert!(
        second.contains("Python: run ruff after each edit."),
        "{second}"
    );
    assert!(!first.to_string().contains("ruff"));
    // On demand: the skill tool's answer.
    let third = requests[2].json().to_string();
    assert!(third.contains("Tag vX.Y.Z, then push the tag."), "{third}");
    // Each request extends the one before: the skills were added, nothing rewritten.
    for pair in requests.windows(2) {
        let (a, b) = (pair[0].json(), pair[1].json());
        let before = a["messages"].as_array().unwrap();
        assert_eq!(
            b["messages"].as_array().unwrap()[..before.len()],
            before[..]
        );
    }
    let added: Vec<(String, SkillCause)> = h
        .events()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::Skill { name, cause, .. } => Some((name, cause)),
            _ => None,
        })
        .collect();
    assert_eq!(
        added,
        [
            (
                "docker".to_string(),
                SkillCause::Keyword {
                    word: "docker".into()
                }
            ),
            (
                "python".to_string(),
                SkillCause::Path {
                    path: "app.py".into()
                }
            ),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_is_added_once() {
    let h = Harness::new();
    let repo = h.repo();
    write(
        repo,
        ".agents/skills/py/SKILL.md",
        "---\npaths: [\"*.py\"]\n---\nPYTHON SKILL\n",
    );
    write(repo, "a.py", "1\n");
    write(repo, "b.py", "2\n");
    git(repo, &["init", "-q"]);
    commit_all(repo, "Skills");
    let server = ScriptedServer::start(vec![
        reply().call("file_editor", json!({"command": "view", "path": "a.py"})),
        reply().call("terminal", json!({"command": "cat b.py"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "read them", &[]).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let last = server.chat_requests().last().unwrap().json().to_string();
    assert_eq!(last.matches("PYTHON SKILL").count(), 1, "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_says_what_the_instructions_cost_and_warns_past_a_quarter_of_the_window() {
    let h = Harness::new();
    let repo = h.repo();
    write(repo, "AGENTS.md", &"Keep it short. ".repeat(400));
    git(repo, &["init", "-q"]);
    commit_all(repo, "Rules");
    let options = wright_testkit::ServerOptions {
        llama_cpp_context: Some(4096),
        native_tools: false,
        ..wright_testkit::ServerOptions::default()
    };
    let server = ScriptedServer::start_with(vec![reply().text("1 2 3 4 5")], options)
        .await
        .unwrap();
    let output = h
        .wright(&["doctor", "--base-url", &server.url(), "--json"], &[])
        .await;
    let report: Value = serde_json::from_str(&crate::common::stdout(&output)).unwrap();
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    let tokens = report["teaching"]["prompt_tokens"].as_u64().unwrap();
    assert!((1_500..2_100).contains(&tokens), "{report:#}");
    assert_eq!(report["teaching"]["instructions"][0]["path"], "AGENTS.md");
    assert!(
        report["notes"]
            .to_string()
            .contains("more than a quarter of the 4096-token window"),
        "{report:#}"
    );
}
