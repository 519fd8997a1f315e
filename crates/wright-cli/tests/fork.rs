//! `wright fork`: a second approach from a prefix of a conversation, in its own clone and
//! branch, leaving the first untouched.

use crate::common::stderr;
use crate::common::stdout;
use crate::common::Harness;
use serde_json::json;
use wright_testkit::failing_python_repo;
use wright_testkit::git;
use wright_testkit::reply;
use wright_testkit::ScriptedServer;
use wright_testkit::BUG;
use wright_testkit::FIX;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_tries_another_fix_on_its_own_branch() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    let server =
        ScriptedServer::start(vec![
        reply().call("file_editor", json!({"command": "view", "path": "export.py"})),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": FIX}),
        ),
        reply().call("finish", json!({"message": "first approach"})),
    ])
        .await
        .unwrap();
    let output = h.run(&server.url(), "fix the test", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let original = h.conversation_id();
    // The first observation (the view) is the fork point: nothing was changed before it.
    let at = h
        .events()
        .iter()
        .find(|e| matches!(e.body, wright_protocol::EventBody::Observation { .. }))
        .unwrap()
        .id
        .to_string();

    let second = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "grep -c 'row\\[:-1\\]' export.py; sed -i 's/row\\[:-1\\]/list(row)/' export.py && python3 -m unittest 2>&1 | tail -n 1"})),
        reply().call("finish", json!({"message": "second approach"})),
    ])
    .await
    .unwrap();
    let url = second.url();
    let forked = h
        .wright(
            &[
                "fork",
                &original,
                "--at",
                &at,
                "--base-url",
                &url,
                "--model",
                "test-model",
                "try sed instead",
            ],
            &[],
        )
        .await;
    assert!(
        forked.status.success(),
        "{}\n{}",
        stderr(&forked),
        stdout(&forked)
    );
    let text = stdout(&forked);
    assert!(
        text.contains(&format!("forked {original} at event {at} as ")),
        "{text}"
    );
    let fork_id = text
        .split(" as ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();

    // The fork started from the original files (the bug was still there) and used its own branch.
    let events: Vec<serde_json::Value> = std::fs::read_to_string(
        h.data
            .path()
            .join("wright/conversations")
            .join(&fork_id)
            .join("events.jsonl"),
    )
    .unwrap()
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    assert_eq!(events[0]["forked_from"], format!("{original}@{at}"));
    let sed = events
        .iter()
        .find(|e| e["kind"] == "observation" && e["tool"] == "terminal")
        .unwrap();
    assert_eq!(sed["output"], "1\nOK");
    let fork_file = git(h.repo(), &["show", &format!("wright/{fork_id}:export.py")]);
    assert!(fork_file.contains("list(row)"), "{fork_file}");
    let original_file = git(h.repo(), &["show", &format!("wright/{original}:export.py")]);
    assert!(original_file.contains(FIX) && !original_file.contains("list(row)"));
    // The fork's history points at the fork's own clone.
    assert!(events[0]["system_prompt"]
        .as_str()
        .unwrap()
        .contains(&fork_id));
}

/// The id of the observation of the call whose arguments hold `needle`.
fn observation_after(events: &[wright_protocol::Event], needle: &str) -> u64 {
    let call_id = events
        .iter()
        .find_map(|e| match &e.body {
            wright_protocol::EventBody::Action {
                call_id, arguments, ..
            } if arguments.to_string().contains(needle) => Some(call_id.clone()),
            _ => None,
        })
        .unwrap();
    events
        .iter()
        .find(|e| matches!(&e.body, wright_protocol::EventBody::Observation { call_id: c, .. } if *c == call_id))
        .unwrap()
        .id
}

fn action_of(events: &[wright_protocol::Event], needle: &str) -> u64 {
    events
        .iter()
        .find(|e| matches!(&e.body, wright_protocol::EventBody::Action { arguments, .. } if arguments.to_string().contains(needle)))
        .unwrap()
        .id
}

/// The id `wright fork` printed for the new conversation.
fn fork_id_of(output: &std::process::Output) -> String {
    let text = stdout(output);
    text.split(" as ")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"))
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// The original writes v1 (step 1), reads it (step 2), then writes v2 (step 3).
async fn v1_then_v2(h: &Harness) -> String {
    failing_python_repo(h.repo());
    let server = ScriptedServer::start(vec![
        reply().call(
            "file_editor",
            json!({"command": "create", "path": "notes.txt", "file_text": "v1\n"}),
        ),
        reply().call("terminal", json!({"command": "cat notes.txt"})),
        reply().call("terminal", json!({"command": "echo v2 > notes.txt"})),
        reply().call("finish", json!({"message": "wrote v2"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "write the notes", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    h.conversation_id()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_at_an_event_gets_the_files_as_they_were_then() {
    let h = Harness::new();
    let original = v1_then_v2(&h).await;
    let events = h.events();
    let after_v1 = observation_after(&events, "v1").to_string();
    let workspaces = h.data.path().join("wright/workspaces");

    // Forked after step 1, the fork's agent finds v1 (in its clone, and with `cat`).
    let second = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "cat notes.txt"})),
        reply().call("finish", json!({"message": "read it"})),
    ])
    .await
    .unwrap();
    let url = second.url();
    let forked = h
        .wright(
            &[
                "fork",
                &original,
                "--at",
                &after_v1,
                "--base-url",
                &url,
                "--model",
                "test-model",
                "read the notes",
            ],
            &[],
        )
        .await;
    assert!(forked.status.success(), "{}", stderr(&forked));
    assert!(
        stdout(&forked).contains(&format!(
            "files: the original's as they were after event {after_v1}"
        )),
        "{}",
        stdout(&forked)
    );
    let fork_id = fork_id_of(&forked);
    let read = std::fs::read_to_string(workspaces.join(&fork_id).join("notes.txt")).unwrap();
    assert_eq!(read, "v1\n");
    let fork_log = std::fs::read_to_string(
        h.data
            .path()
            .join("wright/conversations")
            .join(&fork_id)
            .join("events.jsonl"),
    )
    .unwrap();
    let fork_events = wright_protocol::parse_log(&fork_log).unwrap().events;
    let cat = fork_events
        .iter()
        .rev()
        .find_map(|e| match &e.body {
            wright_protocol::EventBody::Observation { tool, output, .. } if tool == "terminal" => {
                Some(output.clone())
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(cat, "v1");
    assert_eq!(
        git(h.repo(), &["show", &format!("wright/{fork_id}:notes.txt")]),
        "v1\n"
    );

    // At step 1's action the file was not written yet: the start commit.
    let before = action_of(&events, "v1").to_string();
    let at_start = h.wright(&["fork", &original, "--at", &before], &[]).await;
    assert!(at_start.status.success(), "{}", stderr(&at_start));
    assert!(
        stdout(&at_start).contains("files: the start commit's"),
        "{}",
        stdout(&at_start)
    );
    let start_clone = workspaces.join(fork_id_of(&at_start));
    assert!(start_clone.join("export.py").is_file());
    assert!(!start_clone.join("notes.txt").exists());

    // At step 3's action (v2 not written yet), still v1.
    let before_v2 = action_of(&events, "echo v2").to_string();
    let at_v2 = h
        .wright(&["fork", &original, "--at", &before_v2], &[])
        .await;
    assert!(at_v2.status.success(), "{}", stderr(&at_v2));
    let read = std::fs::read_to_string(workspaces.join(fork_id_of(&at_v2)).join("notes.txt"));
    assert_eq!(read.unwrap(), "v1\n");

    // The whole conversation: the files as they are now.
    let whole = h.wright(&["fork", &original], &[]).await;
    assert!(whole.status.success(), "{}", stderr(&whole));
    let read = std::fs::read_to_string(workspaces.join(fork_id_of(&whole)).join("notes.txt"));
    assert_eq!(read.unwrap(), "v2\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kept_files_stay_in_the_agents_clone() {
    let h = Harness::new();
    let id = v1_then_v2(&h).await;
    let dir = h.data.path().join("wright/conversations").join(&id);
    let clone = h.data.path().join("wright/workspaces").join(&id);
    let kept: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("steps.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // One per step that may have changed files: the create and the two commands.
    assert_eq!(kept.len(), 3, "{kept:?}");
    let commits: Vec<String> = kept
        .iter()
        .map(|k| k["commit"].as_str().unwrap().to_string())
        .collect();
    // `cat` changed nothing: no new commit.
    assert_eq!(commits[0], commits[1]);
    assert_ne!(commits[1], commits[2]);
    assert_eq!(
        git(&clone, &["rev-parse", "refs/wright/steps"]).trim(),
        commits[2]
    );
    let v1_blob = git(&clone, &["rev-parse", &format!("{}:notes.txt", commits[0])]);

    // The user's repository has the branch, one commit on its start, and nothing else.
    let refs = git(h.repo(), &["for-each-ref", "--format=%(refname)"]);
    assert_eq!(
        refs.lines().collect::<Vec<_>>(),
        vec![
            "refs/heads/main".to_string(),
            format!("refs/heads/wright/{id}")
        ]
    );
    assert_eq!(
        git(
            h.repo(),
            &["rev-list", "--count", &format!("main..wright/{id}")]
        )
        .trim(),
        "1"
    );
    for object in commits.iter().map(String::as_str).chain([v1_blob.trim()]) {
        let found = std::process::Command::new("git")
            .args(["cat-file", "-e", object])
            .current_dir(h.repo())
            .status()
            .unwrap();
        assert!(!found.success(), "{object} reached the user's repository");
    }
}

/// The content `notes.txt` has after step `i` of `edit_at_each_step`.
fn step_text(i: usize) -> String {
    format!("step {i:02}\n")
}

/// Thirty steps, each writing `notes.txt` to the same size (so only the stat data's times
/// tell the writes apart), by a command, the editor and `sed -i` (a new inode) in turn.
fn edit_at_each_step() -> Vec<wright_testkit::Reply> {
    let mut script: Vec<_> = (0..30)
        .map(|i| match i % 3 {
            0 => reply().call(
                "terminal",
                json!({"command": format!("printf 'step %02d\\n' {i} > notes.txt")}),
            ),
            1 => reply().call(
                "file_editor",
                json!({"command": "str_replace", "path": "notes.txt",
                       "old_str": format!("step {:02}", i - 1), "new_str": format!("step {i:02}")}),
            ),
            _ => reply().call(
                "terminal",
                json!({"command": format!("sed -i 's/step {:02}/step {i:02}/' notes.txt", i - 1)}),
            ),
        })
        .collect();
    script.push(reply().call("finish", json!({"message": "edited"})));
    script
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_at_every_event_of_a_fast_run_finds_that_steps_files() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    // The model answers at once: each step's files are kept while the next one starts.
    let server = ScriptedServer::start(edit_at_each_step()).await.unwrap();
    let output = h.run(&server.url(), "edit the notes", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let original = h.conversation_id();
    let events = h.events();
    // Step i's files are those after its observation (and before the next action). The
    // scripted calls share their ids: the observation is the first after the action.
    let written: Vec<u64> = (0..30)
        .map(|i| {
            let action = match i % 3 {
                0 => action_of(&events, &format!("' {i} > notes")),
                1 => action_of(&events, &format!("\"new_str\":\"step {i:02}\"")),
                _ => action_of(&events, &format!("/step {i:02}/'")),
            };
            events
                .iter()
                .find(|e| {
                    e.id > action
                        && matches!(e.body, wright_protocol::EventBody::Observation { .. })
                })
                .unwrap()
                .id
        })
        .collect();
    assert!(written.windows(2).all(|w| w[0] < w[1]), "{written:?}");
    let workspaces = h.data.path().join("wright/workspaces");
    let last = events.last().unwrap().id;
    for at in 1..=last {
        let forked = h
            .wright(&["fork", &original, "--at", &at.to_string()], &[])
            .await;
        assert!(
            forked.status.success(),
            "at {at}: {}\n{}",
            stderr(&forked),
            stdout(&forked)
        );
        let notes = std::fs::read_to_string(workspaces.join(fork_id_of(&forked)).join("notes.txt"));
        match written.iter().rposition(|w| *w <= at) {
            Some(step) => assert_eq!(
                notes.ok(),
                Some(step_text(step)),
                "at event {at}: {}",
                stdout(&forked)
            ),
            None => assert!(notes.is_err(), "at event {at}: {}", stdout(&forked)),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_that_changed_no_file_is_kept_without_git() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    // Step 2 leaves the files alone but takes the clone's objects away: a snapshot made by
    // git would fail there. Step 3 puts them back, for the rest of the run.
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo v1 > notes.txt"})),
        reply().call("terminal", json!({"command": "mv .git/objects .git/away"})),
        reply().call("terminal", json!({"command": "mv .git/away .git/objects"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "write the notes", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let dir = h
        .data
        .path()
        .join("wright/conversations")
        .join(h.conversation_id());
    let kept: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("steps.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(kept.len(), 3, "{kept:?}");
    for step in &kept {
        assert_eq!(step["commit"], kept[0]["commit"], "{kept:?}");
    }
}

/// The files of `commit` in `clone`, with their modes: `MODE PATH` a line.
fn tree_of(clone: &std::path::Path, commit: &str) -> Vec<String> {
    git(
        clone,
        &["ls-tree", "-r", "--format=%(objectmode) %(path)", commit],
    )
    .lines()
    .map(str::to_string)
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_whose_files_were_copied_is_kept_as_git_keeps_the_tree() {
    let h = Harness::new();
    failing_python_repo(h.repo());
    // Step 1 is committed from the whole tree (nothing looked at before it); steps 2 and 3
    // change files alone, copied at their end; step 4 changes the ignore rules, which may
    // change what git keeps of files it did not touch.
    let server = ScriptedServer::start(vec![
        reply().call("terminal", json!({"command": "echo start > first.txt && printf '*.log\\n' > .gitignore && mkdir sub && printf 'keep*\\n' > sub/.gitignore"})),
        reply().call("terminal", json!({"command": "echo a > kept.txt && echo x > junk.log && mkdir -p sub/deep && echo s > sub/deep/s.txt && echo k > sub/deep/keep.me"})),
        reply().call("terminal", json!({"command": "chmod +x kept.txt && rm first.txt && echo t > sub/deep/t.txt"})),
        reply().call("terminal", json!({"command": "rm .gitignore && echo b > later.log"})),
        reply().call("finish", json!({"message": "done"})),
    ])
    .await
    .unwrap();
    let output = h.run(&server.url(), "write the files", &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let id = h.conversation_id();
    let dir = h.data.path().join("wright/conversations").join(&id);
    let clone = h.data.path().join("wright/workspaces").join(&id);
    let kept: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("steps.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(kept.len(), 4, "{kept:?}");
    let trees: Vec<Vec<String>> = kept
        .iter()
        .map(|k| {
            tree_of(
                &clone,
                k["commit"].as_str().unwrap_or_else(|| panic!("{k}")),
            )
        })
        .collect();
    let has = |step: usize, line: &str| trees[step].iter().any(|l| l == line);
    let names =
        |step: usize, path: &str| trees[step].iter().any(|l| l.ends_with(&format!(" {path}")));

    assert!(
        has(0, "100644 first.txt") && has(0, "100644 .gitignore"),
        "{:?}",
        trees[0]
    );
    // Step 2: the files written, the one the rules ignore left out.
    assert!(
        has(1, "100644 kept.txt") && has(1, "100644 sub/deep/s.txt"),
        "{:?}",
        trees[1]
    );
    assert!(has(1, "100644 first.txt") && has(1, "100644 sub/.gitignore"));
    // Left out by the rules of the root and of a directory above it.
    assert!(
        !names(1, "junk.log") && !names(1, "sub/deep/keep.me"),
        "{:?}",
        trees[1]
    );
    // Step 3: a mode change, a removal, a new file beside an unchanged one.
    assert!(has(2, "100755 kept.txt"), "{:?}", trees[2]);
    assert!(!names(2, "first.txt") && has(2, "100644 sub/deep/t.txt"));
    assert!(has(2, "100644 sub/deep/s.txt") && !names(2, "junk.log"));
    // Step 4: without the rules, both logs are the step's files, the one written in step 2
    // included — as a fork there finds them.
    assert!(!names(3, ".gitignore"), "{:?}", trees[3]);
    assert!(
        has(3, "100644 later.log") && has(3, "100644 junk.log"),
        "{:?}",
        trees[3]
    );
    assert!(!names(3, "sub/deep/keep.me"), "{:?}", trees[3]);
    // No copy is left behind.
    assert!(!clone
        .join(".git/wright-stage")
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some()));
}
