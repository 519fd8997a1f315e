//! A program on its own pseudo-terminal, in its own session. Output is read by a thread
//! and handed over in chunks through a bounded channel, so a program printing 100 MB is
//! slowed down by back-pressure rather than filling wright's memory.
//!
//! When the program is a `docker exec` client the Docker sandbox marked (see `remote`),
//! the shell's pid and the terminal's foreground group are those of the processes in the
//! container, so signals, kills and the waiting-for-input check reach them.

use crate::mode::SandboxError;
use crate::remote::RemoteShell;
use nix::sys::signal::killpg;
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use portable_pty::native_pty_system;
use portable_pty::Child;
use portable_pty::CommandBuilder;
use portable_pty::MasterPty;
use portable_pty::PtySize;
use std::io::Read;
use std::io::Write;
use std::path::Path;
use tokio::sync::mpsc;

const READ_CHUNK: usize = 64 * 1024;
const CHANNEL_CHUNKS: usize = 16;

pub struct PtyProcess {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    output: mpsc::Receiver<Vec<u8>>,
    pid: Option<i32>,
    remote: Option<RemoteShell>,
}

impl PtyProcess {
    /// Starts `program` with exactly `env` (nothing inherited) in `cwd`.
    pub fn spawn(
        program: &str,
        args: &[&str],
        env: &[(String, String)],
        cwd: &Path,
    ) -> Result<Self, SandboxError> {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 50,
                cols: 200,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|err| SandboxError::Spawn(err.to_string()))?;
        let mut command = CommandBuilder::new(program);
        command.args(args);
        command.env_clear();
        for (key, value) in env {
            command.env(key, value);
        }
        command.cwd(cwd);
        let child = pair
            .slave
            .spawn_command(command)
            .map_err(|err| SandboxError::Spawn(format!("{program}: {err}")))?;
        drop(pair.slave);
        let mut reader = pair
            .master
            .try_clone_reader()
            .map_err(|err| SandboxError::Spawn(err.to_string()))?;
        let writer = pair
            .master
            .take_writer()
            .map_err(|err| SandboxError::Spawn(err.to_string()))?;
        let (sender, output) = mpsc::channel(CHANNEL_CHUNKS);
        std::thread::Builder::new()
            .name("wright-pty-reader".into())
            .spawn(move || {
                let mut buffer = vec![0u8; READ_CHUNK];
                loop {
                    match reader.read(&mut buffer) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if sender.blocking_send(buffer[..n].to_vec()).is_err() {
                                break;
                            }
                        }
                    }
                }
            })
            .map_err(SandboxError::Io)?;
        let pid = child.process_id().and_then(|pid| i32::try_from(pid).ok());
        Ok(Self {
            master: pair.master,
            writer,
            child,
            output,
            pid,
            remote: RemoteShell::from_args(args),
        })
    }

    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), SandboxError> {
        self.writer.write_all(bytes)?;
        self.writer.flush()?;
        Ok(())
    }

    /// The next chunk of output; `None` once the terminal is closed (the program ended).
    pub async fn read(&mut self) -> Option<Vec<u8>> {
        self.output.recv().await
    }

    /// A chunk already waiting, without blocking.
    pub fn try_read(&mut self) -> Option<Vec<u8>> {
        self.output.try_recv().ok()
    }

    /// The shell's pid (for a shell in a container, its host pid once it is found).
    pub fn pid(&self) -> Option<i32> {
        self.remote.as_ref().and_then(RemoteShell::pid).or(self.pid)
    }

    /// The process group in the terminal's foreground: the running job, or the shell.
    pub fn foreground_group(&self) -> Option<i32> {
        self.remote
            .as_ref()
            .and_then(RemoteShell::foreground_group)
            .or_else(|| self.master.process_group_leader())
    }

    /// Sends `signal` to a process group of this terminal's session.
    pub fn signal_group(&self, group: i32, signal: Signal) {
        // The group may have ended in between; nothing to do then.
        let _ = killpg(Pid::from_raw(group), signal);
    }

    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Ends the program and everything it started in its terminal.
    pub fn kill(&mut self) {
        if let Some(remote) = &self.remote {
            // The client's end would leave them running in the container.
            for group in [remote.foreground_group(), remote.pid()]
                .into_iter()
                .flatten()
            {
                self.signal_group(group, Signal::SIGKILL);
            }
        }
        if let Some(group) = self.master.process_group_leader() {
            self.signal_group(group, Signal::SIGKILL);
        }
        if let Some(pid) = self.pid {
            self.signal_group(pid, Signal::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for PtyProcess {
    fn drop(&mut self) {
        if self.is_alive() {
            self.kill();
        }
    }
}
