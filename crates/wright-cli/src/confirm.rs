//! The terminal's answers about risky actions (`wright_core::confirm::Confirmer`): the
//! pending call shown (its tool, arguments, risk and why, and what wright flagged), then
//! one line read: yes, no (with a reason, told to the model), or always for this tool in
//! this conversation. `run`, `resume` and `fork` ask only where a person is at a
//! terminal; without one the run stops with the call waiting and says how to answer it.
//! A chat reads its answers where it reads its lines.

use crate::progress::describe_arguments;
use std::io::BufRead;
use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use wright_core::confirm::Answer;
use wright_core::confirm::Confirmer;
use wright_core::confirm::Pending;
use wright_protocol::Decision;

/// Asks at the terminal.
pub struct TerminalConfirmer {
    /// Whether someone answers here.
    answers: bool,
}

impl TerminalConfirmer {
    /// For `run`, `resume` and `fork`: only where stdin and stderr are a terminal (and
    /// stdout is not the event log, `--json`).
    pub fn for_run(json: bool) -> Arc<Self> {
        Arc::new(Self {
            answers: crate::ask::can_ask(json),
        })
    }

    /// For a chat, whose lines (and so its answers) come from stdin, a terminal or not.
    pub fn for_chat() -> Arc<Self> {
        Arc::new(Self { answers: true })
    }
}

#[async_trait::async_trait]
impl Confirmer for TerminalConfirmer {
    fn can_answer(&self) -> bool {
        self.answers
    }

    async fn ask(&self, pending: &Pending) -> Answer {
        tell!("{}", question(pending));
        // Dropped when the run is cancelled (Ctrl-C): the reader stops waiting.
        let stop = Arc::new(AtomicBool::new(false));
        let _stopping = StopOnDrop(stop.clone());
        let tool = pending.tool.clone();
        tokio::task::spawn_blocking(move || read_answer(&tool, &stop))
            .await
            .unwrap_or(Answer {
                decision: Decision::Rejected,
                reason: None,
            })
    }
}

struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// What the user is shown about `pending`.
pub fn question(pending: &Pending) -> String {
    let mut text = format!(
        "\n  ? wright asks before this {} call (risk {}): {} {}\n    why: {}",
        pending.tool,
        pending.risk,
        pending.tool,
        describe_arguments(&pending.tool, &pending.arguments),
        pending.reason
    );
    if let Some(flag) = &pending.flag {
        text.push_str(&format!("\n    warning: {flag}"));
    }
    text
}

/// Reads the answer: asks again on a word it does not know, rejects at the end of input
/// (nothing runs unless someone said yes).
fn read_answer(tool: &str, stop: &AtomicBool) -> Answer {
    let prompt = format!(
        "  Run it? y = yes · n = no (then why, told to the model) · a = always {tool} in this conversation: "
    );
    for _ in 0..5 {
        crate::screen::err(&prompt);
        let Some(line) = read_line(stop) else {
            return rejected(None);
        };
        let line = line.trim();
        let (word, rest) = line
            .split_once(|c: char| c.is_whitespace() || c == ',' || c == ':')
            .unwrap_or((line, ""));
        let rest = rest.trim_start_matches([',', ':', ' ']).trim();
        match word.to_ascii_lowercase().as_str() {
            "y" | "yes" => {
                return Answer {
                    decision: Decision::Approved,
                    reason: None,
                }
            }
            "a" | "always" => {
                return Answer {
                    decision: Decision::Always,
                    reason: None,
                }
            }
            "n" | "no" if !rest.is_empty() => return rejected(Some(rest.to_string())),
            "n" | "no" => {
                crate::screen::err("  Why not? (told to the model; Enter for no reason): ");
                let reason = read_line(stop).map(|r| r.trim().to_string());
                return rejected(reason.filter(|r| !r.is_empty()));
            }
            _ => {}
        }
    }
    rejected(None)
}

fn rejected(reason: Option<String>) -> Answer {
    Answer {
        decision: Decision::Rejected,
        reason,
    }
}

/// One line of stdin; `None` at its end or once `stop` is set. On a terminal it waits
/// in short polls so a cancelled question lets go of the terminal (a line typed later is
/// the chat's, not this question's).
fn read_line(stop: &AtomicBool) -> Option<String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        use std::os::fd::AsFd;
        loop {
            if stop.load(Ordering::SeqCst) {
                return None;
            }
            let mut fds = [nix::poll::PollFd::new(
                stdin.as_fd(),
                nix::poll::PollFlags::POLLIN,
            )];
            match nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(200u16)) {
                Ok(0) => continue,
                Ok(_) => break,
                Err(nix::errno::Errno::EINTR) => continue,
                Err(_) => return None,
            }
        }
    }
    let mut line = String::new();
    match stdin.lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}
