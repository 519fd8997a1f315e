use serde_json::json;
use std::time::Instant;
use tempfile::TempDir;
use wright_tools::Scratch;
use wright_tools::TerminalTool;
use wright_tools::Tool;
use wright_tools::ToolError;
use wright_tools::ToolOutput;
use wright_tools::Workspace;

/// The workspace, and the scratch directory beside it (outside it, as in a run).
struct Dirs {
    workspace: TempDir,
    scratch: TempDir,
}

impl Dirs {
    fn new() -> Self {
        Self {
            workspace: tempfile::tempdir().unwrap(),
            scratch: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &std::path::Path {
        self.workspace.path()
    }

    fn terminal(&self, env: Vec<(String, String)>) -> TerminalTool {
        TerminalTool::new(
            Workspace::new(self.path()).unwrap(),
            env,
            wright_sandbox::Sandbox::unconfined(),
            Scratch::open(self.scratch.path(), 1 << 30).unwrap(),
        )
    }
}

fn terminal() -> (Dirs, TerminalTool) {
    let dirs = Dirs::new();
    let tool = dirs.terminal(wright_sandbox::shell_environment(std::env::vars()));
    (dirs, tool)
}

async fn run(tool: &TerminalTool, args: serde_json::Value) -> ToolOutput {
    tool.run(&args)
        .await
        .unwrap_or_else(|err| panic!("{args}: {err}"))
}

#[tokio::test]
async fn directory_and_exports_persist_and_exit_codes_are_reported() {
    let (dir, t) = terminal();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let out = run(&t, json!({"command": "cd sub && export GREETING=hello"})).await;
    assert_eq!(out.exit_code, Some(0));
    assert!(
        out.text.contains("[cwd: ") && out.text.contains("/sub]"),
        "{}",
        out.text
    );
    let out = run(
        &t,
        json!({"command": "echo $GREETING from $(basename $PWD)"}),
    )
    .await;
    assert_eq!(out.text, "hello from sub");
    let out = run(&t, json!({"command": "ls missing-file"})).await;
    assert_eq!(out.exit_code, Some(2));
    assert!(out.text.ends_with("[exit code 2]"), "{}", out.text);
}

#[tokio::test]
async fn long_and_multi_line_commands_arrive_intact() {
    let (_dir, t) = terminal();
    let long = "x".repeat(10_000);
    let out = run(&t, json!({"command": format!("s='{long}'\necho ${{#s}}\ncat <<'EOF'\nquote ' and \" and $HOME\nEOF")})).await;
    assert_eq!(out.text, "10000\nquote ' and \" and $HOME");
}

#[tokio::test]
async fn a_timeout_kills_the_process_group_and_the_shell_lives_on() {
    let (_dir, t) = terminal();
    let started = Instant::now();
    let out = run(
        &t,
        json!({"command": "echo started; sleep 30 | cat; echo never", "timeout": 1}),
    )
    .await;
    assert!(started.elapsed().as_secs() < 10);
    assert!(out.text.starts_with("started"), "{}", out.text);
    assert!(!out.text.contains("never"));
    assert!(
        out.text
            .contains("did not finish within 1 s and was killed"),
        "{}",
        out.text
    );
    let after = run(&t, json!({"command": "echo still here"})).await;
    assert_eq!(after.text, "still here");
    // A loop inside the shell itself is interrupted like Ctrl-C would.
    let out = run(
        &t,
        json!({"command": "while true; do :; done", "timeout": "1"}),
    )
    .await;
    assert!(out.text.contains("was killed"), "{}", out.text);
    assert_eq!(run(&t, json!({"command": "echo ok"})).await.text, "ok");
}

#[tokio::test]
async fn huge_output_keeps_head_and_tail_and_saves_the_rest() {
    let (_dir, t) = terminal();
    let out = run(&t, json!({"command": "seq 1 2000000"})).await;
    assert!(out.text.starts_with("1\n2\n3\n"), "{}", &out.text[..50]);
    assert!(
        out.text.contains("\n2000000\n[cwd") || out.text.ends_with("\n2000000"),
        "{}",
        &out.text[out.text.len() - 100..]
    );
    assert!(
        out.text.len() < 10_000,
        "{} characters shown",
        out.text.len()
    );
    let saved = out
        .text
        .split("saved to ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    let full = std::fs::read_to_string(saved).unwrap();
    let bytes = (1..=2_000_000)
        .map(|n: u32| n.to_string().len() + 1)
        .sum::<usize>();
    assert_eq!(full.len(), bytes);
    // What is left out is told truly: the whole output, not what was kept in memory.
    assert!(
        out.text.contains(&format!(
            "[... the middle is omitted; the output was {bytes} bytes (2000000 lines) in all, all of it saved to {saved} ...]"
        )),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn a_program_waiting_for_input_returns_and_gets_its_answer() {
    let (_dir, t) = terminal();
    let started = Instant::now();
    let out = run(
        &t,
        json!({"command": "python3 -c \"name = input('Name? '); print('hello', name)\""}),
    )
    .await;
    assert!(started.elapsed().as_secs() < 10);
    assert!(out.text.starts_with("Name?"), "{}", out.text);
    assert!(out.text.contains("waiting for input"), "{}", out.text);
    assert_eq!(out.exit_code, None);
    let busy = t.run(&json!({"command": "echo other"})).await;
    assert!(matches!(busy, Err(ToolError::Model(m)) if m.contains("still running")));
    let answered = run(&t, json!({"command": "Ada", "is_input": true})).await;
    assert_eq!(answered.text, "hello Ada");
    assert_eq!(answered.exit_code, Some(0));
    // C-c stops a program that waits.
    run(
        &t,
        json!({"command": "read -p 'continue? ' x; echo got $x"}),
    )
    .await;
    let stopped = run(&t, json!({"command": "C-c", "is_input": "true"})).await;
    assert_eq!(stopped.exit_code, Some(130), "{}", stopped.text);
}

#[tokio::test]
async fn exiting_the_shell_starts_a_fresh_one() {
    let (_dir, t) = terminal();
    let out = run(&t, json!({"command": "exit 3"})).await;
    assert!(out.text.contains("The shell exited"), "{}", out.text);
    assert_eq!(
        run(&t, json!({"command": "echo again"})).await.text,
        "again"
    );
    let reset = run(&t, json!({"command": "", "reset": true})).await;
    assert_eq!(reset.text, "The shell was restarted.");
    let nothing = t.run(&json!({"command": "C-c", "is_input": true})).await;
    assert!(matches!(nothing, Err(ToolError::Model(m)) if m.contains("no command is running")));
    // A command marked as input with nothing running is run, and the model told.
    let ran = run(&t, json!({"command": "echo marker-42", "is_input": true})).await;
    assert!(ran.text.starts_with("marker-42"), "{}", ran.text);
    assert!(
        ran.text.contains("is_input is only for answering"),
        "{}",
        ran.text
    );
}

#[tokio::test]
async fn the_environment_is_scrubbed() {
    let dir = Dirs::new();
    let host = vec![
        ("PATH".to_string(), std::env::var("PATH").unwrap()),
        (
            "OPENAI_API_KEY".to_string(),
            "sk-should-not-leak".to_string(),
        ),
    ];
    let t = dir.terminal(wright_sandbox::shell_environment(host));
    let out = run(&t, json!({"command": "env"})).await;
    assert!(!out.text.contains("sk-should-not-leak"));
    assert!(out.text.contains("TERM=dumb"));
}

#[tokio::test]
async fn the_output_shown_shrinks_with_the_window() {
    let (_dir, t) = terminal();
    let full = run(&t, json!({"command": "seq 1 2000"})).await;
    t.fit_window(4096);
    let small = run(&t, json!({"command": "seq 1 2000"})).await;
    assert!(full.text.len() > 8000, "{}", full.text.len());
    assert!(small.text.len() < 1300, "{}", small.text);
    assert!(small.text.starts_with("1\n2\n3\n"), "{}", small.text);
    assert!(small.text.ends_with("\n2000"), "{}", small.text);
    assert!(small.text.contains(" lines) omitted; full output in "));
    t.fit_window(65536);
    let large = run(&t, json!({"command": "seq 1 2000"})).await;
    assert_eq!(large.text.len(), full.text.len());
}

#[tokio::test]
async fn a_granted_secret_is_in_the_environment_and_masked_in_the_output() {
    let dirs = Dirs::new();
    let value = "tok-3f9a1c77e2/b+q";
    let mut env = wright_sandbox::shell_environment(std::env::vars());
    env.push(("TOKEN".into(), value.into()));
    let masker = wright_tools::Masker::new(&[("TOKEN".into(), value.into())]).unwrap();
    let t = dirs.terminal(env).with_masker(std::sync::Arc::new(masker));
    let command = r#"printf '%s\n' "$TOKEN"; printf %s "$TOKEN" | base64; printf %s "$TOKEN" | od -An -tx1 | tr -d ' \n'; echo; for i in 0 4 8 12 16; do printf %s "${TOKEN:$i:4}"; sleep 0.05; done; echo; printf %s "$TOKEN" | sha256sum"#;
    let out = run(&t, json!({"command": command})).await;
    assert!(!out.text.contains(value), "{}", out.text);
    assert!(!out.text.contains("dG9r"), "{}", out.text);
    assert_eq!(
        out.text.matches("<secret:TOKEN>").count(),
        4,
        "{}",
        out.text
    );
    // The command had the value itself.
    use sha2::Digest;
    let digest = sha2::Sha256::digest(value.as_bytes());
    let digest: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    assert!(out.text.contains(&digest), "{}", out.text);
}
