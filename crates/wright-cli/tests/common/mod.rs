//! The harness: a temporary data home and repository, and `wright` run as a subprocess.

pub mod terminal;

use std::path::Path;
use std::path::PathBuf;
use std::process::Output;
use tempfile::TempDir;
use wright_protocol::parse_log;
use wright_protocol::Event;

pub struct Harness {
    pub data: TempDir,
    pub repo: TempDir,
}

impl Harness {
    pub fn new() -> Self {
        Self {
            data: tempfile::tempdir().unwrap(),
            repo: tempfile::tempdir().unwrap(),
        }
    }

    pub fn repo(&self) -> &Path {
        self.repo.path()
    }

    /// Runs `wright ARGS` with the repository as workspace and an environment holding only
    /// what the test gives it (plus PATH and HOME).
    pub async fn wright(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        self.program(env!("CARGO_BIN_EXE_wright"), args, env).await
    }

    /// `wright ARGS` started, not waited for (its output piped).
    pub fn spawn_wright(&self, args: &[&str], env: &[(&str, &str)]) -> tokio::process::Child {
        let mut command = self.command(env!("CARGO_BIN_EXE_wright"), args, env);
        command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("cannot start wright")
    }

    /// `wright ARGS` started with its stdin, stdout and stderr all piped (a program that
    /// talks to it, as an editor to `wright acp`).
    pub fn spawn_wright_piped(&self, args: &[&str]) -> tokio::process::Child {
        let mut command = self.command(env!("CARGO_BIN_EXE_wright"), args, &[]);
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("cannot start wright")
    }

    async fn program(&self, program: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = self.command(program, args, env);
        // A guard against a hung run, not a measure: under CI's passes side by side two
        // runs on the embedded engine share the cores (one took 120 s so, 27 s alone).
        tokio::time::timeout(std::time::Duration::from_secs(300), command.output())
            .await
            .expect("wright did not finish within 300 s")
            .expect("cannot start wright")
    }

    fn command(
        &self,
        program: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .current_dir(self.repo.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", std::env::var("HOME").unwrap_or_default())
            .env("XDG_DATA_HOME", self.data.path())
            .env("XDG_CACHE_HOME", self.data.path().join("cache"))
            .env("XDG_CONFIG_HOME", self.data.path().join("config"));
        for (key, value) in env {
            command.env(key, value);
        }
        command.kill_on_drop(true);
        command
    }

    /// `wright ARGS` with its address space bounded to `bytes` (so a runaway fails instead
    /// of swelling the machine), and the peak resident memory, in KiB, of wright and of
    /// everything it ran (the largest of them), as the kernel counted it.
    pub async fn wright_measured(
        &self,
        bytes: u64,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (Output, u64) {
        const MEASURE: &str = "import resource, subprocess, sys\n\
limit = int(sys.argv[1])\n\
def bound():\n    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n\
code = subprocess.run(sys.argv[2:], preexec_fn=bound).returncode\n\
print('PEAK_KIB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n\
sys.exit(code if code >= 0 else 128 - code)";
        let limit = bytes.to_string();
        let mut full = vec!["-c", MEASURE, limit.as_str(), env!("CARGO_BIN_EXE_wright")];
        full.extend_from_slice(args);
        let output = self.program("python3", &full, env).await;
        let said = String::from_utf8_lossy(&output.stderr);
        let peak = said
            .lines()
            .rev()
            .find_map(|line| line.strip_prefix("PEAK_KIB "))
            .and_then(|kib| kib.trim().parse().ok())
            .expect("the measuring wrapper printed no peak");
        (output, peak)
    }

    /// `wright run --base-url URL --model test-model EXTRA... TASK` (sandboxed by default).
    pub async fn run(&self, url: &str, task: &str, extra: &[&str]) -> Output {
        let mut args = vec!["run", "--base-url", url, "--model", "test-model"];
        args.extend_from_slice(extra);
        args.push(task);
        self.wright(&args, &[]).await
    }

    /// A shell command line for a terminal (tmux) that runs `wright ARGS` (shell words,
    /// quoted by the caller) in the repository with this harness's directories, then
    /// prints `LABEL-EXIT-<status>` and lingers `linger` seconds so the screen can be read.
    /// Under bash whatever the login shell: dash, not waiting cooperatively, would die of a
    /// Ctrl-C meant for wright once wright exits.
    pub fn terminal_command(&self, args: &str, label: &str, linger: u32) -> String {
        let data = self.data.path().display();
        format!(
            "exec bash -c 'cd {} && XDG_DATA_HOME={data} XDG_CACHE_HOME={data}/cache XDG_CONFIG_HOME={data}/config {} {args}; echo {label}-EXIT-$?; sleep {linger}'",
            self.repo.path().display(),
            env!("CARGO_BIN_EXE_wright"),
        )
    }

    /// `wright chat` on `url` with `input` typed on its stdin (a pipe), to its end.
    pub async fn chat_with_input(&self, url: &str, input: &[u8]) -> Output {
        self.wright_with_input(&["chat", "--base-url", url, "--model", "test-model"], input)
            .await
    }

    /// `wright ARGS` with `input` on its stdin (a pipe), to its end.
    pub async fn wright_with_input(&self, args: &[&str], input: &[u8]) -> Output {
        self.wright_with_input_env(args, input, &[]).await
    }

    /// `wright_with_input`, with `env` set besides the harness's own.
    pub async fn wright_with_input_env(
        &self,
        args: &[&str],
        input: &[u8],
        env: &[(&str, &str)],
    ) -> Output {
        use tokio::io::AsyncWriteExt;
        let mut command = self.command(env!("CARGO_BIN_EXE_wright"), args, env);
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("cannot start wright");
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input).await.unwrap();
        drop(stdin);
        tokio::time::timeout(
            std::time::Duration::from_secs(120),
            child.wait_with_output(),
        )
        .await
        .expect("wright did not finish within 120 s")
        .unwrap()
    }

    /// `wright resume ID --base-url URL --model test-model MESSAGE`.
    pub async fn resume(&self, url: &str, id: &str, message: &str) -> Output {
        self.wright(
            &[
                "resume",
                id,
                "--base-url",
                url,
                "--model",
                "test-model",
                message,
            ],
            &[],
        )
        .await
    }

    /// The one conversation's log file.
    pub fn log_path(&self) -> PathBuf {
        let dir = self.data.path().join("wright/conversations");
        let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
        assert_eq!(
            entries.len(),
            1,
            "expected one conversation in {}",
            dir.display()
        );
        entries.remove(0).path().join("events.jsonl")
    }

    /// The one conversation's id.
    pub fn conversation_id(&self) -> String {
        let path = self.log_path();
        let dir = path.parent().unwrap();
        dir.file_name().unwrap().to_string_lossy().into_owned()
    }

    pub fn events(&self) -> Vec<Event> {
        let text = std::fs::read_to_string(self.log_path()).unwrap();
        let parsed = parse_log(&text).unwrap();
        assert!(parsed.torn.is_none());
        parsed.events
    }
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Each event as `kind` or `kind:tool` for actions and observations: the run's shape.
pub fn shape(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|event| {
            let value = serde_json::to_value(event).unwrap();
            let kind = value["kind"].as_str().unwrap().to_string();
            match value.get("tool").and_then(|t| t.as_str()) {
                Some(tool) => format!("{kind}:{tool}"),
                None => match value.get("state").and_then(|s| s.as_str()) {
                    Some(state) => format!("{kind}:{state}"),
                    None => kind,
                },
            }
        })
        .collect()
}

/// The run's last state (`state:finished`, …): after it, only where the changes went.
/// The events of one kind, from a log read as JSON (the server's API, `--json`).
pub fn of_kind<'a>(events: &'a [serde_json::Value], kind: &str) -> Vec<&'a serde_json::Value> {
    events.iter().filter(|e| e["kind"] == kind).collect()
}

pub fn last_state(events: &[Event]) -> String {
    shape(events)
        .into_iter()
        .rev()
        .find(|kind| kind.starts_with("state:"))
        .unwrap_or_default()
}

/// Observations, in order, as JSON values.
pub fn observations(events: &[Event]) -> Vec<serde_json::Value> {
    events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|v| v["kind"] == "observation")
        .collect()
}

/// The run's `sandbox …` header line (what the sandbox says it enforces).
pub fn sandbox_header(output: &Output) -> String {
    stderr(output)
        .lines()
        .find(|line| line.trim_start().starts_with("sandbox "))
        .unwrap_or_default()
        .to_string()
}

/// Whether the run was refused because `--in-place` needs a mount namespace this machine
/// does not give (user namespaces restricted): then it must be refused, closed, and the
/// caller's test says so loudly and stops there.
pub fn in_place_needs_namespaces(test: &str, output: &Output) -> bool {
    let refused = stderr(output).contains("needs a mount namespace");
    if refused {
        assert_eq!(output.status.code(), Some(2), "{}", stderr(output));
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "!!! {test}: --in-place refused here, as it must be without a mount namespace !!!"
        );
    }
    refused
}

/// The content of the first user message of a chat request (the task, with what wright
/// puts at its head and after it).
pub fn first_user_message(request: &serde_json::Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The review set-up `run`, the server and the editor share: the failing Python
/// repository, a `local` model that fixes it and finishes, and a `hosted` one
/// (`judge-model`) that approves, named by the user's configuration as the
/// `review.profile`. Returns (local, hosted).
pub async fn fixed_and_reviewed(
    h: &Harness,
) -> (
    wright_testkit::ScriptedServer,
    wright_testkit::ScriptedServer,
) {
    use serde_json::json;
    use wright_testkit::reply;
    wright_testkit::failing_python_repo(h.repo());
    let local = wright_testkit::ScriptedServer::start(vec![
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py",
                   "old_str": wright_testkit::BUG, "new_str": wright_testkit::FIX}),
        ),
        reply().call(
            "finish",
            json!({"message": "row_to_csv joins the whole row"}),
        ),
    ])
    .await
    .unwrap();
    let hosted = wright_testkit::ScriptedServer::start_with_models(
        vec![reply().call("verdict", json!({"verdict": "approve"}))],
        vec!["judge-model".to_string()],
    )
    .await
    .unwrap();
    h.user_config(&format!(
        "profile = \"local\"\n[review]\nprofile = \"hosted\"\n[profiles.local]\nbase_url = \"{}\"\nmodel = \"test-model\"\n[profiles.hosted]\nbase_url = \"{}\"\nmodel = \"judge-model\"\n",
        local.url(),
        hosted.url()
    ));
    (local, hosted)
}
