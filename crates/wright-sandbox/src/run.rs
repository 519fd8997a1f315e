//! Running one program to its end inside a sandbox, on pipes (no terminal): how wright
//! runs git and other tools over what the agent wrote. Whatever the program prints is
//! read only up to a bound and the program is killed at a deadline, so output the agent
//! arranged (an endless diff, a FIFO that never ends) costs wright neither memory nor a
//! hang.

use crate::mode::SandboxError;
use crate::Sandbox;
use std::io::Read;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Child;
use std::process::Command;
use std::process::Stdio;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

/// What a program may produce and how long it may take.
#[derive(Debug, Clone, Copy)]
pub struct RunLimits {
    pub max_stdout: usize,
    pub max_stderr: usize,
    pub timeout: Duration,
}

impl Default for RunLimits {
    fn default() -> Self {
        Self {
            max_stdout: 16 << 20,
            max_stderr: 64 << 10,
            timeout: Duration::from_secs(120),
        }
    }
}

/// A finished program's results.
#[derive(Debug, Clone)]
pub struct Captured {
    /// The exit code; `None` when killed by a signal (or by the deadline).
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Stdout reached `max_stdout`, so the program was stopped there.
    pub stdout_cut: bool,
    pub timed_out: bool,
}

impl Captured {
    pub fn success(&self) -> bool {
        self.code == Some(0) && !self.stdout_cut && !self.timed_out
    }

    /// Stderr as text for a message, trimmed.
    pub fn said(&self) -> String {
        let mut said = String::from_utf8_lossy(&self.stderr).trim().to_string();
        if self.timed_out {
            said.push_str(" (stopped: it ran past its deadline)");
        }
        if self.stdout_cut {
            said.push_str(" (stopped: its output passed the limit)");
        }
        said
    }
}

impl Sandbox {
    /// A command for `program args` in the sandbox, in `cwd`, with exactly `env`, in a
    /// process group of its own (so a kill reaches what it started); once the sandbox's
    /// check has said yes (its refusal is the error).
    pub fn command(
        &self,
        cwd: &Path,
        env: &[(String, String)],
        program: &str,
        args: &[&str],
    ) -> Result<Command, SandboxError> {
        let (program, wrapped) = self.wrap(program, args)?;
        let mut command = Command::new(program);
        command
            .args(wrapped)
            .current_dir(cwd)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .process_group(0);
        Ok(command)
    }

    /// Runs `program args` in the sandbox to its end, feeding it `stdin`, within `limits`.
    pub fn capture(
        &self,
        cwd: &Path,
        env: &[(String, String)],
        program: &str,
        args: &[&str],
        stdin: &[u8],
        limits: RunLimits,
    ) -> Result<Captured, SandboxError> {
        let mut command = self.command(cwd, env, program, args)?;
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // A copied workspace: the program sees what wright wrote, and wright what it wrote.
        self.before_command()?;
        let child = command
            .spawn()
            .map_err(|e| SandboxError::Spawn(format!("{program}: {e}")))?;
        let captured = finish(child, stdin.to_vec(), limits)?;
        self.after_command()?;
        Ok(captured)
    }
}

/// Feeds, drains (bounded) and waits for a spawned child, killing its group at the
/// deadline or when stdout passes its bound.
pub fn finish(
    mut child: Child,
    stdin: Vec<u8>,
    limits: RunLimits,
) -> Result<Captured, SandboxError> {
    let group = child.id();
    let feeder = child.stdin.take().map(|mut pipe| {
        std::thread::spawn(move || {
            // The program may stop reading early; that is not an error here.
            let _ = pipe.write_all(&stdin);
        })
    });
    let overflowed = Arc::new(AtomicBool::new(false));
    let out = child
        .stdout
        .take()
        .map(|pipe| drain(pipe, limits.max_stdout, Some(overflowed.clone())));
    let err = child
        .stderr
        .take()
        .map(|pipe| drain(pipe, limits.max_stderr, None));
    let deadline = Instant::now() + limits.timeout;
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        let cut = overflowed.load(Ordering::SeqCst);
        if Instant::now() >= deadline || cut {
            timed_out = !cut;
            kill_group(group);
            let _ = child.kill();
            break child.wait()?;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // Whatever the program left running in its group goes too.
    kill_group(group);
    let (stdout, stdout_cut) = out.map(join).unwrap_or_default();
    let (stderr, _) = err.map(join).unwrap_or_default();
    if let Some(feeder) = feeder {
        let _ = feeder.join();
    }
    Ok(Captured {
        code: status.code(),
        stdout,
        stderr,
        stdout_cut,
        timed_out,
    })
}

type Drained = std::thread::JoinHandle<(Vec<u8>, bool)>;

/// Reads `pipe` into memory up to `max` bytes; past that, raises `overflowed` and stops
/// (the caller kills the program), or for stderr reads on and drops the rest.
fn drain(
    mut pipe: impl Read + Send + 'static,
    max: usize,
    overflowed: Option<Arc<AtomicBool>>,
) -> Drained {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buffer = [0u8; 64 * 1024];
        loop {
            match pipe.read(&mut buffer) {
                Ok(0) | Err(_) => return (kept, false),
                Ok(n) => {
                    let room = max - kept.len();
                    kept.extend_from_slice(&buffer[..n.min(room)]);
                    if n > room {
                        if let Some(flag) = &overflowed {
                            flag.store(true, Ordering::SeqCst);
                            return (kept, true);
                        }
                    }
                }
            }
        }
    })
}

fn join(handle: Drained) -> (Vec<u8>, bool) {
    handle.join().unwrap_or_default()
}

fn kill_group(group: u32) {
    if let Ok(group) = i32::try_from(group) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(group),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(script: &str, limits: RunLimits) -> Captured {
        let env = crate::shell_environment(std::env::vars());
        Sandbox::unconfined()
            .capture(Path::new("/"), &env, "bash", &["-c", script], b"", limits)
            .unwrap()
    }

    #[test]
    fn output_and_time_are_bounded() {
        let limits = RunLimits {
            max_stdout: 1000,
            max_stderr: 100,
            timeout: Duration::from_secs(2),
        };
        let ok = run("echo hi; echo oops >&2", limits);
        assert!(ok.success());
        assert_eq!(ok.stdout, b"hi\n");
        assert_eq!(ok.said(), "oops");
        let started = Instant::now();
        let endless = run("yes", limits);
        assert!(endless.stdout_cut && !endless.success());
        assert_eq!(endless.stdout.len(), 1000);
        let slow = run("sleep 30 & sleep 30", limits);
        assert!(slow.timed_out && !slow.success());
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
