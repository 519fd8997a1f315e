//! The `terminal` tool: commands in one persistent bash session, with a timeout that
//! kills the command's process group, early return when a program waits for input
//! (answered with `is_input`), and long output cut to head and tail with the whole text
//! (up to the file-size limit) saved in the scratch area. How much is shown shrinks with
//! the model's context window, so one output never crowds out the task.

mod collector;
mod interactive;
mod shell;
mod waiting;

use crate::args;
use crate::mask::Masker;
use crate::risk::ShellState;
use crate::scratch::Scratch;
use crate::text::clean_terminal_output;
use crate::text::ends_of_larger;
use crate::text::head_and_tail;
use crate::text::tail_first;
use crate::OutputSink;
use crate::Tool;
use crate::ToolError;
use crate::ToolOutput;
use crate::Workspace;
use serde_json::json;
use serde_json::Value;
use shell::Outcome;
use shell::ShellSession;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use wright_protocol::count;
use wright_sandbox::Sandbox;

const DEFAULT_TIMEOUT_SECS: f64 = 120.0;
const MAX_TIMEOUT_SECS: f64 = 3600.0;
/// Characters of output the model sees at most (on a window of 32k tokens or more): the
/// head and the tail, where errors usually are, three to five.
const MAX_SHOWN: usize = 8000;
/// How long, after a command, its connections through the proxy have to end (a program
/// that exited may leave its socket to be closed a moment later) so they are reported with
/// it — and its output marked as received from the network.
const CONNECTIONS_SETTLE: std::time::Duration = std::time::Duration::from_millis(500);
/// Characters shown per token of context window: about a tenth of the window (code and
/// numbers run 2.5 to 4 characters a token).
const SHOWN_PER_WINDOW_TOKEN: u64 = 4;
/// Characters shown however small the window.
const MIN_SHOWN: usize = 500;

/// Characters of output shown on a context window of `tokens`.
fn shown_chars(tokens: u64) -> usize {
    usize::try_from(tokens / SHOWN_PER_WINDOW_TOKEN)
        .unwrap_or(usize::MAX)
        .clamp(MIN_SHOWN, MAX_SHOWN)
}

pub struct TerminalTool {
    workspace: Workspace,
    env: Vec<(String, String)>,
    sandbox: Sandbox,
    scratch: Scratch,
    session: Mutex<Option<ShellSession>>,
    /// The directory last reported to the model, to mention it only when it changes.
    last_cwd: Mutex<Option<PathBuf>>,
    /// Characters of a long output shown (head and tail together).
    shown: AtomicUsize,
    /// The secrets granted to the shell, masked out of everything it prints before that
    /// is kept, saved to a file or returned.
    masker: Option<Arc<Masker>>,
    /// With an allow-list: the connections wright's proxy saw, drained after each command.
    journal: Option<wright_sandbox::egress::Journal>,
    /// What the commands run in the current shell gave it (aliases, functions, traps,
    /// `PATH`): fresh with each new shell.
    shell_state: std::sync::Mutex<ShellState>,
}

impl TerminalTool {
    /// A terminal whose shell runs under `sandbox` with exactly `env`; its scripts and
    /// saved outputs go to `scratch`, which the sandbox must be able to read.
    pub fn new(
        workspace: Workspace,
        env: Vec<(String, String)>,
        sandbox: Sandbox,
        scratch: Scratch,
    ) -> Self {
        let root = workspace.root().to_path_buf();
        let shell_state = std::sync::Mutex::new(ShellState::fresh(&env, &root));
        Self {
            shell_state,
            workspace,
            env,
            sandbox,
            scratch,
            session: Mutex::new(None),
            last_cwd: Mutex::new(Some(root)),
            shown: AtomicUsize::new(MAX_SHOWN),
            masker: None,
            journal: None,
        }
    }

    /// Where its scripts and saved outputs go.
    pub fn scratch(&self) -> &Scratch {
        &self.scratch
    }

    /// The same terminal, reporting the connections of its proxy's `journal` with each
    /// command's output (a refused one also in words, for the model).
    pub fn with_network_journal(mut self, journal: wright_sandbox::egress::Journal) -> Self {
        self.journal = Some(journal);
        self
    }

    /// The journal of its proxy's connections, when it has one (the browser, which runs
    /// in this shell's sandbox, reports its own from it).
    pub fn network_journal(&self) -> Option<&wright_sandbox::egress::Journal> {
        self.journal.as_ref()
    }

    /// The same terminal, its output masked by `masker` (the secrets in its `env`).
    pub fn with_masker(mut self, masker: Arc<Masker>) -> Self {
        self.masker = Some(masker).filter(|m| !m.is_empty());
        self
    }

    /// Starts the shell ahead of the first command, so that call does not pay for it.
    pub async fn warm_up(&self) -> Result<(), ToolError> {
        let mut guard = self.session.lock().await;
        if guard.is_none() {
            *guard = Some(self.start().await?);
        }
        Ok(())
    }

    /// The host pid of the shell (started now if it is not running): the sandbox other
    /// programs join to share its root and loopback (the browser).
    pub async fn shell_pid(&self) -> Result<i32, ToolError> {
        let mut guard = self.session.lock().await;
        if !guard.as_mut().is_some_and(|session| session.is_alive()) {
            *guard = Some(self.start().await?);
        }
        guard
            .as_ref()
            .and_then(|session| session.pid())
            .ok_or_else(|| ToolError::Model("the terminal's shell is not running".into()))
    }

    /// The sandbox the shell runs in.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    async fn start(&self) -> Result<ShellSession, ToolError> {
        let session = ShellSession::start(
            &self.workspace,
            &self.env,
            &self.sandbox,
            &self.scratch,
            self.masker.clone(),
        )
        .await?;
        self.set_shell_state(|state| *state = ShellState::fresh(&self.env, self.workspace.root()));
        Ok(session)
    }

    /// Runs a sync of a copied workspace off the async threads (it waits for the Docker
    /// engine); `None` when the workspace is not copied.
    async fn sync<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Sandbox) -> Result<T, wright_sandbox::SandboxError> + Send + 'static,
    ) -> Result<Option<T>, ToolError> {
        if !self.sandbox.copies_workspace() {
            return Ok(None);
        }
        let sandbox = self.sandbox.clone();
        tokio::task::spawn_blocking(move || work(&sandbox))
            .await
            .map_err(|e| ToolError::Fatal(format!("the workspace's sync stopped: {e}")))?
            .map(Some)
            .map_err(|e| {
                ToolError::Fatal(format!(
                    "cannot keep the sandbox's copy of the workspace in step: {e}"
                ))
            })
    }

    /// Changes the tracked state of the shell (a poisoned lock is taken over: the state
    /// is plain data, whole after any change).
    fn set_shell_state(&self, change: impl FnOnce(&mut ShellState)) {
        let mut state = self
            .shell_state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        change(&mut state);
    }
}

#[async_trait::async_trait]
impl Tool for TerminalTool {
    fn name(&self) -> &'static str {
        "terminal"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["execute_bash", "bash"]
    }

    fn fit_window(&self, tokens: u64) {
        self.shown.store(shown_chars(tokens), Ordering::Relaxed);
    }

    fn shell_state(&self) -> Option<ShellState> {
        let state = self
            .shell_state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Some(state.clone())
    }

    fn schema(&self) -> Value {
        json!({"type": "function", "function": {
            "name": "terminal",
            "description": "Run a bash command in a persistent shell (cwd and exports persist). Long output keeps its head and tail; the full text is saved to a file. If a program waits for input, the call returns: answer with is_input=true.",
            "parameters": {"type": "object", "properties": {
                "command": {"type": "string", "description": "Bash command. With is_input=true: text to type, or C-c / C-d."},
                "is_input": {"type": "boolean", "description": "Send command as input to the running program."},
                "timeout": {"type": "number", "description": "Seconds before the command is killed (default 120)."},
                "reset": {"type": "boolean", "description": "Restart the shell first."}
            }, "required": ["command"]}
        }})
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        self.run_with(arguments, None).await
    }

    async fn run_watched(
        &self,
        arguments: &Value,
        output: &OutputSink,
    ) -> Result<ToolOutput, ToolError> {
        self.run_with(arguments, Some(output)).await
    }
}

impl TerminalTool {
    async fn run_with(
        &self,
        arguments: &Value,
        output: Option<&OutputSink>,
    ) -> Result<ToolOutput, ToolError> {
        let command = args::optional_str(arguments, "command")?.unwrap_or("");
        let is_input = args::optional_bool(arguments, "is_input")?.unwrap_or(false);
        let reset = args::optional_bool(arguments, "reset")?.unwrap_or(false);
        let timeout_secs = args::optional_number(arguments, "timeout")?
            .unwrap_or(DEFAULT_TIMEOUT_SECS)
            .clamp(1.0, MAX_TIMEOUT_SECS);
        let timeout = Duration::from_secs_f64(timeout_secs);

        let mut guard = self.session.lock().await;
        let mut notes = Vec::new();
        if reset {
            if let Some(mut old) = guard.take() {
                old.kill();
            }
            if command.trim().is_empty() {
                return Ok(ToolOutput::text("The shell was restarted."));
            }
            notes.push("[The shell was restarted.]".to_string());
        }
        if let Some(session) = guard.as_mut() {
            if !session.is_alive() {
                *guard = None;
            }
        }
        if is_input {
            match guard.as_mut().filter(|s| s.is_busy()) {
                Some(session) => {
                    let bytes = keys(command);
                    let result = session.send_input(&bytes, timeout, output).await?;
                    return self.report(&mut guard, result, timeout_secs, notes).await;
                }
                // A key (Ctrl-C…) or nothing means input and only input.
                None if is_key(command) => {
                    return Err(ToolError::Model(
                        "no command is running, so there is nothing to send input to; run a command without is_input".into(),
                    ));
                }
                // Small models mark a plain command as input; with nothing waiting for
                // input there is one reading: run it, and say so.
                None => notes.push(
                    "[Nothing was running, so this ran as a new command: is_input is only for answering a command that waits for input.]"
                        .to_string(),
                ),
            }
        }
        if command.trim().is_empty() {
            return Err(ToolError::Model("the command is empty".into()));
        }
        if let Some(program) = interactive::full_screen_program(command) {
            return Err(ToolError::Model(interactive::refusal(program)));
        }
        if guard.as_ref().is_some_and(|s| s.is_busy()) {
            return Err(ToolError::Model(
                "the previous command is still running and waits for input: answer it with is_input=true (C-c stops it), or pass reset=true to restart the shell".into(),
            ));
        }
        let session = match guard.as_mut() {
            Some(session) => session,
            None => guard.insert(self.start().await?),
        };
        // Taken in before it runs: whatever it gave the shell, it may have given it even
        // if it then failed or was stopped.
        self.set_shell_state(|state| state.ran(command, self.workspace.root()));
        let result = session.run(command, timeout, output).await?;
        self.report(&mut guard, result, timeout_secs, notes).await
    }

    async fn report(
        &self,
        session: &mut Option<ShellSession>,
        result: shell::CommandResult,
        timeout_secs: f64,
        mut notes: Vec<String>,
    ) -> Result<ToolOutput, ToolError> {
        let synced = self.sync(|sandbox| sandbox.after_command()).await?;
        if let Some(synced) = synced.filter(|s| !s.skipped.is_empty()) {
            let shown: Vec<&str> = synced.skipped.iter().take(5).map(String::as_str).collect();
            notes.push(format!(
                "[Not copied back from the sandbox (a path out of the workspace or through a link, a device, a hard link, or a protected path): {}{}]",
                shown.join(", "),
                if synced.skipped.len() > 5 { ", …" } else { "" }
            ));
        }
        let text = clean_terminal_output(&result.output.bytes);
        // Again after cleaning: erasing and overwriting (`\r`, backspaces) can put a
        // value together that the raw stream only held in pieces.
        let text = match &self.masker {
            Some(masker) => masker.mask(&text),
            None => text,
        };
        let text = text.trim_end_matches(['\n', ' ']);
        let failed = matches!(result.outcome, Outcome::Exited(code) if code != 0);
        // A failure is read for the model: where it failed in the workspace first, the
        // lines naming the workspace's files marked.
        let read = failed
            .then(|| crate::failure::read(text, &self.workspace))
            .flatten();
        let (header, text) = match &read {
            Some((header, marked)) => (Some(header.clone()), marked.as_str()),
            None => (None, text),
        };
        let shown_chars = self.shown.load(Ordering::Relaxed);
        let (head, tail) = (shown_chars * 3 / 8, shown_chars - shown_chars * 3 / 8);
        let mut shown = if let Some(path) = &result.output.spilled_to {
            // Only the two ends were kept in memory: say what the whole output was.
            let saved = if result.output.spilled_bytes < result.output.total as u64 {
                format!(
                    "its first {} saved to",
                    count(result.output.spilled_bytes, "byte")
                )
            } else {
                "all of it saved to".to_string()
            };
            let whole = format!(
                "the output was {} ({}) in all, {saved} {}",
                count(result.output.total as u64, "byte"),
                count(result.output.lines as u64, "line"),
                path.display()
            );
            ends_of_larger(text, head, tail, &whole)
        } else if text.chars().count() > head + tail {
            let mut file = self.scratch.create("output", "txt")?;
            file.write(text.as_bytes())
                .and_then(|()| file.flush())
                .map_err(|err| {
                    ToolError::Fatal(format!(
                        "cannot save output to {}: {err}",
                        file.path.display()
                    ))
                })?;
            let note = match file.was_cut() {
                // Saved outputs are bounded together by the run's disk limit.
                true => format!(
                    "; its first {} saved in {} (saved outputs are bounded by the disk limit)",
                    count(file.written(), "byte"),
                    file.path.display()
                ),
                false => format!("; full output in {}", file.path.display()),
            };
            if failed {
                tail_first(text, head, tail, &note)
            } else {
                head_and_tail(text, head, tail, &note)
            }
        } else {
            text.to_string()
        };
        if let Some(header) = header {
            shown = format!("{header}\n{shown}");
        }
        let mut exit_code = None;
        match result.outcome {
            Outcome::Exited(code) => {
                exit_code = Some(code);
                if code != 0 {
                    notes.push(format!("[exit code {code}]"));
                }
            }
            Outcome::WaitingForInput => notes.push(
                "[The command is waiting for input. Send it with is_input=true (Enter is added), or C-c to stop it.]".into(),
            ),
            Outcome::TimedOut => notes.push(format!(
                "[The command did not finish within {timeout_secs} s and was killed. Raise timeout, or run it in the background: cmd > log.txt 2>&1 &]"
            )),
            Outcome::ShellDied => {
                if let Some(mut old) = session.take() {
                    old.kill();
                }
                notes.push("[The shell exited; the next command starts a fresh one (directory and variables are reset).]".into());
            }
        }
        if let Some(cwd) = session.as_ref().and_then(|s| s.cwd()) {
            let mut last = self.last_cwd.lock().await;
            if last.as_ref() != Some(&cwd) {
                notes.push(format!("[cwd: {}]", cwd.display()));
                *last = Some(cwd);
            }
        }
        let network = self
            .journal
            .as_ref()
            .map(|journal| journal.drain_settled(CONNECTIONS_SETTLE))
            .unwrap_or_default();
        notes.extend(
            network
                .iter()
                .filter_map(|connection| match connection.verdict {
                    wright_protocol::NetVerdict::Refused { reason } => Some(format!(
                        "[{}]",
                        wright_sandbox::egress::refusal_words(
                            &connection.host,
                            connection.port,
                            reason
                        )
                    )),
                    wright_protocol::NetVerdict::Allowed => None,
                }),
        );
        if shown.is_empty() && notes.is_empty() {
            shown = "(no output)".into();
        }
        for note in notes {
            if !shown.is_empty() {
                shown.push('\n');
            }
            shown.push_str(&note);
        }
        let untrusted = received_from(&network);
        Ok(ToolOutput {
            text: shown,
            is_error: false,
            exit_code,
            network,
            untrusted,
            ..ToolOutput::default()
        })
    }
}

/// What a command printed is from outside when it received data from the network: the
/// hosts it did, each once, in order (`None` when it received nothing).
fn received_from(
    network: &[wright_protocol::NetConnection],
) -> Option<wright_protocol::Provenance> {
    let mut hosts: Vec<String> = Vec::new();
    for connection in network {
        let received = connection.verdict == wright_protocol::NetVerdict::Allowed
            && connection.bytes_received > 0;
        let host = format!("{}:{}", connection.host, connection.port);
        if received && !hosts.contains(&host) {
            hosts.push(host);
        }
    }
    (!hosts.is_empty()).then_some(wright_protocol::Provenance::Network { hosts })
}

/// Translates what the model wants typed: `C-c`, `C-d`, `C-z` as those keys; text with
/// Enter appended; nothing for an empty string (just wait for more output).
/// Whether `input` is only a key (Ctrl-C, Ctrl-D, Ctrl-Z) or nothing: input, never a command.
fn is_key(input: &str) -> bool {
    matches!(
        input.trim(),
        "C-c" | "^C" | "C-d" | "^D" | "C-z" | "^Z" | ""
    )
}

fn keys(input: &str) -> Vec<u8> {
    match input.trim() {
        "C-c" | "^C" => vec![0x03],
        "C-d" | "^D" => vec![0x04],
        "C-z" | "^Z" => vec![0x1a],
        "" => Vec::new(),
        _ => {
            let mut bytes = input.as_bytes().to_vec();
            if !input.ends_with('\n') {
                bytes.push(b'\n');
            }
            bytes
        }
    }
}

/// `text` as one word of a bash command line, whatever it holds.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
