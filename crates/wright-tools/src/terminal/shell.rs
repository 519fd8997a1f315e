//! One persistent bash per conversation, on its own PTY.
//!
//! Each command is written to a new file in the scratch area (which the sandbox can read
//! but not write) and run with `. FILE`, so any length and any quoting reach bash intact
//! (a terminal line is cut at 4 KB) and `cd` and `export` persist. The prompt is set to a marker carrying a per-session nonce and `$?`:
//! seeing it means the command is over and gives its exit code. Terminal echo is off, so
//! the output is only what the command printed.

use super::collector::Collected;
use super::collector::Collector;
use super::waiting::group_waits_for_input;
use crate::mask::MaskStream;
use crate::mask::Masker;
use crate::scratch::Scratch;
use crate::OutputSink;
use crate::ToolError;
use crate::Workspace;
use nix::sys::signal::Signal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;
use wright_sandbox::PtyProcess;
use wright_sandbox::Sandbox;

/// Silence after which we look whether the command waits for keyboard input.
const INPUT_CHECK_AFTER: Duration = Duration::from_millis(400);
const POLL: Duration = Duration::from_millis(200);
/// How long an interrupted command gets to stop before it is killed.
const SIGINT_GRACE: Duration = Duration::from_millis(500);
/// How long a killed command gets to hand the prompt back before the shell is replaced.
const KILL_GRACE: Duration = Duration::from_secs(3);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Exited(i32),
    WaitingForInput,
    TimedOut,
    ShellDied,
}

pub struct CommandResult {
    pub outcome: Outcome,
    pub output: Collected,
}

pub struct ShellSession {
    pty: PtyProcess,
    marker: Vec<u8>,
    scratch: Scratch,
    /// The scratch file of the last command, removed once the next one starts.
    command_file: Option<String>,
    busy: bool,
    /// The granted secrets, masked out of the output before it is kept or saved.
    masker: Option<Arc<Masker>>,
    /// The last raw bytes read, where the prompt marker is looked for (the masked
    /// stream holds some back).
    raw_tail: Vec<u8>,
    /// The sandbox the shell runs in: a copied workspace is sent in before each command.
    sandbox: Sandbox,
}

impl ShellSession {
    pub async fn start(
        workspace: &Workspace,
        env: &[(String, String)],
        sandbox: &Sandbox,
        scratch: &Scratch,
        masker: Option<Arc<Masker>>,
    ) -> Result<Self, ToolError> {
        let nonce = nonce();
        // The sandbox's check may still be under way: waited for here without blocking
        // the runtime; its refusal ends the run (fail closed).
        sandbox
            .ready()
            .await
            .map_err(|err| ToolError::Fatal(err.to_string()))?;
        let (program, args) = sandbox
            .wrap("bash", &["--noprofile", "--norc", "--noediting", "-i"])
            .map_err(|err| ToolError::Fatal(err.to_string()))?;
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let pty = PtyProcess::spawn(&program, &args, env, workspace.root())
            .map_err(|err| ToolError::Fatal(err.to_string()))?;
        let marker = format!("__WRIGHT_{nonce}_").into_bytes();
        let mut session = Self {
            pty,
            marker,
            scratch: scratch.clone(),
            command_file: None,
            busy: false,
            masker,
            raw_tail: Vec::new(),
            sandbox: sandbox.clone(),
        };
        let init = format!(
            "stty -echo -onlcr 2>/dev/null; unset HISTFILE; PROMPT_COMMAND=''; PS2=''; PS1='__WRIGHT_{nonce}_$?__'\n"
        );
        session.write(init.as_bytes())?;
        session.busy = true;
        let ready = session.wait(Duration::from_secs(10), false, None).await?;
        match ready.outcome {
            Outcome::Exited(_) => Ok(session),
            Outcome::WaitingForInput | Outcome::TimedOut | Outcome::ShellDied => {
                let said = super::super::clean_terminal_output(&ready.output.bytes);
                Err(ToolError::Fatal(format!(
                    "the terminal's bash did not start: {}",
                    said.trim()
                )))
            }
        }
    }

    pub fn is_busy(&self) -> bool {
        self.busy
    }

    pub fn is_alive(&mut self) -> bool {
        self.pty.is_alive()
    }

    /// The shell's host pid, while it runs.
    pub fn pid(&self) -> Option<i32> {
        self.pty.pid()
    }

    /// The shell's current directory.
    pub fn cwd(&self) -> Option<PathBuf> {
        std::fs::read_link(format!("/proc/{}/cwd", self.pty.pid()?)).ok()
    }

    /// Runs `command`; what it prints also goes to `output` as it comes, when given.
    pub async fn run(
        &mut self,
        command: &str,
        timeout: Duration,
        output: Option<&OutputSink>,
    ) -> Result<CommandResult, ToolError> {
        self.remove_command_file();
        let mut script = command.to_string();
        if !script.ends_with('\n') {
            script.push('\n');
        }
        let mut file = self.scratch.create("command", "sh")?;
        file.write(script.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|err| ToolError::Fatal(format!("{}: {err}", file.path.display())))?;
        if file.was_cut() {
            self.scratch.remove(&file.name);
            return Err(ToolError::Model(format!(
                "the command is {} bytes, more than the file-size limit; write long text to a file with file_editor instead",
                script.len()
            )));
        }
        // The path is wright's own (a private directory it made), so quoting it is safe.
        let line = format!(". '{}'\n", file.path.display());
        self.command_file = Some(file.name);
        if self.sandbox.copies_workspace() {
            // A copied workspace (a remote Docker engine): the command, its file among
            // them, sees what wright wrote; the terminal brings back what it wrote.
            let sandbox = self.sandbox.clone();
            tokio::task::spawn_blocking(move || sandbox.before_command())
                .await
                .map_err(|e| ToolError::Fatal(format!("the workspace's sync stopped: {e}")))?
                .map_err(|e| {
                    ToolError::Fatal(format!(
                        "cannot send the workspace to the sandbox's copy of it: {e}"
                    ))
                })?;
        }
        self.write(line.as_bytes())?;
        self.busy = true;
        self.wait(timeout, true, output).await
    }

    fn remove_command_file(&mut self) {
        if let Some(name) = self.command_file.take() {
            self.scratch.remove(&name);
        }
    }

    /// Types into the running command (keys already translated to bytes).
    pub async fn send_input(
        &mut self,
        bytes: &[u8],
        timeout: Duration,
        output: Option<&OutputSink>,
    ) -> Result<CommandResult, ToolError> {
        self.write(bytes)?;
        self.wait(timeout, true, output).await
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), ToolError> {
        self.pty
            .write_all(bytes)
            .map_err(|err| ToolError::Fatal(format!("cannot write to the terminal: {err}")))
    }

    async fn wait(
        &mut self,
        timeout: Duration,
        detect_input: bool,
        output: Option<&OutputSink>,
    ) -> Result<CommandResult, ToolError> {
        let mut collector = Collector::new(self.scratch.clone());
        let mut stream = MaskStream::new(self.masker.clone());
        self.raw_tail.clear();
        let deadline = Instant::now() + timeout;
        let mut last_output = Instant::now();
        let outcome = loop {
            let now = Instant::now();
            if now >= deadline {
                break self.interrupt(&mut collector, &mut stream).await?;
            }
            let poll = POLL.min(deadline - now);
            match tokio::time::timeout(poll, self.pty.read()).await {
                Ok(Some(chunk)) => {
                    last_output = Instant::now();
                    // Raw, the prompt marker included: the watcher shows whole lines only,
                    // and the marker ends no line.
                    if let Some(output) = output {
                        output(&chunk);
                    }
                    if let Some(code) = self.take_chunk(&mut collector, &mut stream, &chunk)? {
                        break Outcome::Exited(code);
                    }
                }
                Ok(None) => break Outcome::ShellDied,
                Err(_) => {
                    if detect_input
                        && last_output.elapsed() >= INPUT_CHECK_AFTER
                        && self.waits_for_input()
                    {
                        // The prompt may be in flight: give it a moment before saying so.
                        if let Some(code) = self
                            .drain(&mut collector, &mut stream, Duration::from_millis(50))
                            .await?
                        {
                            break Outcome::Exited(code);
                        }
                        break Outcome::WaitingForInput;
                    }
                }
            }
        };
        self.busy = matches!(outcome, Outcome::WaitingForInput);
        collector.push(&stream.finish())?;
        let output = collector.finish()?;
        Ok(CommandResult { outcome, output })
    }

    /// Adds a chunk (masked); returns the exit code if it completed the prompt marker.
    fn take_chunk(
        &mut self,
        collector: &mut Collector,
        stream: &mut MaskStream,
        chunk: &[u8],
    ) -> Result<Option<i32>, ToolError> {
        collector.push(&stream.push(chunk))?;
        self.raw_tail.extend_from_slice(chunk);
        let keep = self.marker.len() + 4096 + 16;
        let excess = self.raw_tail.len().saturating_sub(keep);
        self.raw_tail.drain(..excess);
        let window_len = self.marker.len() + chunk.len().min(4096) + 16;
        let window = &self.raw_tail[self.raw_tail.len().saturating_sub(window_len)..];
        let Some((start, code)) = find_marker(window, &self.marker) else {
            return Ok(None);
        };
        // The marker (and what follows it) is dropped where it is: still held back by
        // the masked stream, or already passed on to the collector (where nothing in it
        // was masked: no secret holds the marker's nonce).
        let marker_bytes = window.len() - start;
        let held = stream.discard_last(marker_bytes);
        collector.drop_last(marker_bytes - held)?;
        collector.push(&stream.finish())?;
        self.raw_tail.clear();
        Ok(Some(code))
    }

    async fn drain(
        &mut self,
        collector: &mut Collector,
        stream: &mut MaskStream,
        within: Duration,
    ) -> Result<Option<i32>, ToolError> {
        let until = Instant::now() + within;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match tokio::time::timeout(left, self.pty.read()).await {
                Ok(Some(chunk)) => {
                    if let Some(code) = self.take_chunk(collector, stream, &chunk)? {
                        return Ok(Some(code));
                    }
                }
                Ok(None) | Err(_) => break,
            }
        }
        Ok(None)
    }

    fn waits_for_input(&self) -> bool {
        self.pty
            .foreground_group()
            .is_some_and(group_waits_for_input)
    }

    /// Stops the running command as Ctrl-C would (SIGINT to its process group, which also
    /// makes bash drop the rest of the command list); a group that ignores SIGINT is
    /// killed. If the prompt still does not come back, the shell itself is killed.
    async fn interrupt(
        &mut self,
        collector: &mut Collector,
        stream: &mut MaskStream,
    ) -> Result<Outcome, ToolError> {
        let shell = self.pty.pid();
        let group = self.pty.foreground_group().or(shell);
        if let Some(group) = group {
            self.pty.signal_group(group, Signal::SIGINT);
            if self.drain(collector, stream, SIGINT_GRACE).await?.is_some() {
                return Ok(Outcome::TimedOut);
            }
            if Some(group) != shell {
                self.pty.signal_group(group, Signal::SIGKILL);
            }
        }
        if self.drain(collector, stream, KILL_GRACE).await?.is_none() {
            self.pty.kill();
            return Ok(Outcome::ShellDied);
        }
        Ok(Outcome::TimedOut)
    }

    /// Ends the shell and everything it started.
    pub fn kill(&mut self) {
        self.pty.kill();
        self.remove_command_file();
    }
}

impl Drop for ShellSession {
    fn drop(&mut self) {
        self.remove_command_file();
    }
}

/// Finds the last `MARKER<digits>__` in `window`; returns where it starts and the code.
fn find_marker(window: &[u8], marker: &[u8]) -> Option<(usize, i32)> {
    let mut search_end = window.len();
    while let Some(start) = window[..search_end]
        .windows(marker.len())
        .rposition(|w| w == marker)
    {
        let rest = &window[start + marker.len()..];
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 && rest[digits..].starts_with(b"__") {
            let code = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
            return Some((start, code));
        }
        search_end = start;
    }
    None
}

fn nonce() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{:x}{:x}", nanos & 0xffff_ffff_ffff, std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_needs_digits_and_closing() {
        let marker = b"__WRIGHT_ab_";
        assert_eq!(find_marker(b"out\n__WRIGHT_ab_0__", marker), Some((4, 0)));
        assert_eq!(
            find_marker(b"PS1='__WRIGHT_ab_$?__'\n__WRIGHT_ab_127__", marker),
            Some((23, 127))
        );
        assert_eq!(find_marker(b"__WRIGHT_ab_12", marker), None);
    }
}
