//! The live area at the bottom of a terminal, under the run's progress: while the model
//! reads the prompt or writes its reply, one line with the time it has taken, the tokens
//! so far and how far the server has read the prompt (where it says: llama.cpp); while a
//! command runs, its last few lines as they come and the time it has run.
//!
//! Guarantees: it is drawn only when stderr is a terminal (never in a pipe or a file, and
//! `--json` never builds one); it holds a bounded amount of output (the last
//! `COMMAND_LINES` lines, each clipped, and a partial line of at most `PARTIAL_MAX`
//! bytes); it is erased before any other line is printed and drawn again after, so the
//! run's log on the screen stays as it would be without it; everything in it is made
//! printable by `screen` (only its own erasing reaches the terminal as controls).

use std::collections::VecDeque;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant;
use wright_llm::PromptProgress;

/// Lines of a running command shown at once.
const COMMAND_LINES: usize = 5;
/// Characters of one shown line.
const LINE_CHARS: usize = 160;
/// Bytes of a line still being printed kept (a progress bar without newlines).
const PARTIAL_MAX: usize = 4096;
/// How often the elapsed time is brought up to date.
const TICK: Duration = Duration::from_millis(250);
/// A wait shorter than this is not worth a line (most tool calls, a fast model).
const QUIET_FOR: Duration = Duration::from_millis(300);

/// What is going on now.
enum Activity {
    Idle,
    Model(ModelWait),
    Command(CommandWatch),
}

struct ModelWait {
    step: u32,
    since: Instant,
    /// Pieces of the reply so far (about one token each).
    pieces: u64,
    prefill: Option<PromptProgress>,
    /// The tool whose call is being written.
    writing: Option<String>,
}

struct CommandWatch {
    tool: String,
    since: Instant,
    lines: VecDeque<String>,
    partial: Vec<u8>,
    count: u64,
}

impl CommandWatch {
    fn push(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if byte == b'\n' || byte == b'\r' {
                self.end_line();
            } else {
                self.partial.push(byte);
            }
        }
        if self.partial.len() > PARTIAL_MAX {
            let excess = self.partial.len() - PARTIAL_MAX / 2;
            self.partial.drain(..excess);
        }
    }

    fn end_line(&mut self) {
        let text = wright_tools::clean_terminal_output(&self.partial);
        self.partial.clear();
        let text = text.trim_end();
        if text.trim().is_empty() {
            return;
        }
        self.count += 1;
        self.lines
            .push_back(crate::progress::clip(text, LINE_CHARS));
        while self.lines.len() > COMMAND_LINES {
            self.lines.pop_front();
        }
    }
}

struct State {
    enabled: bool,
    /// Lines of the live area on the screen now (the cursor is at the end of the last).
    drawn: usize,
    /// Whether what was printed ends with a newline: only then is there room below.
    at_line_start: bool,
    activity: Activity,
}

impl State {
    /// The live area's lines now, if it is worth showing.
    fn lines(&self, now: Instant) -> Vec<String> {
        match &self.activity {
            Activity::Idle => Vec::new(),
            Activity::Model(wait) => {
                let elapsed = now.duration_since(wait.since);
                if elapsed < QUIET_FOR && wait.prefill.is_none() && wait.pieces == 0 {
                    return Vec::new();
                }
                vec![model_line(wait, elapsed)]
            }
            Activity::Command(watch) => {
                let elapsed = now.duration_since(watch.since);
                if elapsed < QUIET_FOR && watch.lines.is_empty() {
                    return Vec::new();
                }
                let mut lines: Vec<String> = watch
                    .lines
                    .iter()
                    .map(|line| format!("    │ {line}"))
                    .collect();
                let count = match watch.count {
                    0 => String::new(),
                    1 => " · 1 line".to_string(),
                    n => format!(" · {n} lines"),
                };
                lines.push(format!(
                    "  ⋯ {} running · {}{count}",
                    watch.tool,
                    seconds(elapsed)
                ));
                lines
            }
        }
    }

    /// Erases the live area, writes `text`, and draws the area again where there is room.
    fn write(&mut self, text: &str) {
        let mut erase = String::new();
        if self.drawn > 0 {
            erase.push_str("\r\x1b[2K");
            for _ in 1..self.drawn {
                erase.push_str("\x1b[1A\x1b[2K");
            }
            self.drawn = 0;
        }
        if !text.is_empty() {
            self.at_line_start = text.ends_with('\n');
        }
        let lines = if self.at_line_start {
            self.lines(Instant::now())
        } else {
            Vec::new()
        };
        if lines.is_empty() {
            crate::screen::err_live(&erase, text, "");
            return;
        }
        self.drawn = lines.len();
        // Without autowrap a long line is cut at the edge instead of taking two rows,
        // which the erasing would not know about.
        let shown = format!("{text}{}", lines.join("\n"));
        erase.push_str("\x1b[?7l");
        crate::screen::err_live(&erase, &shown, "\x1b[?7h");
    }

    /// Brings the area up to date (the time goes on).
    fn refresh(&mut self) {
        if self.drawn > 0 || self.at_line_start && !self.lines(Instant::now()).is_empty() {
            self.write("");
        }
    }
}

fn model_line(wait: &ModelWait, elapsed: Duration) -> String {
    let mut line = format!("  ⋯ step {} · ", wait.step);
    if wait.pieces == 0 {
        line.push_str("the model reads the prompt · ");
        line.push_str(&seconds(elapsed));
        if let Some(p) = wait.prefill.filter(|p| p.total > 0) {
            let percent = p.processed.min(p.total) * 100 / p.total;
            line.push_str(&format!(
                " · {} of {} tokens read ({percent} %)",
                p.processed, p.total
            ));
            if p.cached > 0 {
                line.push_str(&format!(", {} from its cache", p.cached));
            }
        }
    } else {
        match &wait.writing {
            Some(tool) => line.push_str(&format!("the model writes a {tool} call · ")),
            None => line.push_str("the model writes · "),
        }
        line.push_str(&seconds(elapsed));
        let unit = if wait.pieces == 1 { "token" } else { "tokens" };
        line.push_str(&format!(" · {} {unit} so far", wait.pieces));
    }
    line
}

fn seconds(elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    if secs >= 60 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{secs} s")
    }
}

/// The live area (a no-op where stderr is not a terminal). Dropping it erases it.
pub struct Live {
    state: Arc<Mutex<State>>,
    ticker: Option<tokio::task::JoinHandle<()>>,
}

impl Live {
    /// On stderr if it is a terminal, else nothing is ever drawn.
    pub fn new() -> Self {
        let term = std::env::var("TERM").unwrap_or_default();
        let enabled = std::io::stderr().is_terminal() && term != "dumb";
        let state = Arc::new(Mutex::new(State {
            enabled,
            drawn: 0,
            at_line_start: true,
            activity: Activity::Idle,
        }));
        let ticker = match tokio::runtime::Handle::try_current() {
            Ok(runtime) if enabled => {
                let state = state.clone();
                Some(runtime.spawn(async move {
                    loop {
                        tokio::time::sleep(TICK).await;
                        lock(&state).refresh();
                    }
                }))
            }
            _ => None,
        };
        Self { state, ticker }
    }

    /// Prints `text` (made printable) on stderr, around the live area.
    pub fn print(&self, text: &str) {
        let mut state = lock(&self.state);
        if state.enabled {
            state.write(text);
        } else {
            if !text.is_empty() {
                state.at_line_start = text.ends_with('\n');
            }
            crate::screen::err(text);
        }
    }

    pub fn at_line_start(&self) -> bool {
        lock(&self.state).at_line_start
    }

    pub fn enabled(&self) -> bool {
        lock(&self.state).enabled
    }

    fn change(&self, change: impl FnOnce(&mut Activity)) {
        let mut state = lock(&self.state);
        if !state.enabled {
            return;
        }
        change(&mut state.activity);
        state.refresh();
    }

    /// A request went to the model.
    pub fn model_request(&self, step: u32) {
        self.change(|activity| {
            *activity = Activity::Model(ModelWait {
                step,
                since: Instant::now(),
                pieces: 0,
                prefill: None,
                writing: None,
            })
        });
    }

    /// A piece of the reply came (text, reasoning or a call's arguments): counted, and
    /// shown at the next tick (a piece of text is printed at once, which redraws).
    pub fn piece(&self) {
        if let Activity::Model(wait) = &mut lock(&self.state).activity {
            wait.pieces += 1;
        }
    }

    pub fn writing(&self, tool: &str) {
        self.change(|activity| {
            if let Activity::Model(wait) = activity {
                wait.writing = Some(tool.to_string());
            }
        });
    }

    pub fn prefill(&self, progress: PromptProgress) {
        self.change(|activity| {
            if let Activity::Model(wait) = activity {
                wait.prefill = Some(progress);
            }
        });
    }

    /// A tool call began.
    pub fn tool(&self, tool: &str) {
        self.change(|activity| {
            *activity = Activity::Command(CommandWatch {
                tool: tool.to_string(),
                since: Instant::now(),
                lines: VecDeque::new(),
                partial: Vec::new(),
                count: 0,
            })
        });
    }

    /// What the running command printed.
    pub fn output(&self, bytes: &[u8]) {
        self.change(|activity| {
            if let Activity::Command(watch) = activity {
                watch.push(bytes);
            }
        });
    }

    /// Nothing is awaited: the area goes.
    pub fn idle(&self) {
        self.change(|activity| *activity = Activity::Idle);
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(ticker) = self.ticker.take() {
            ticker.abort();
        }
        let mut state = lock(&self.state);
        if state.enabled {
            state.activity = Activity::Idle;
            state.write("");
        }
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch() -> CommandWatch {
        CommandWatch {
            tool: "terminal".into(),
            since: Instant::now(),
            lines: VecDeque::new(),
            partial: Vec::new(),
            count: 0,
        }
    }

    #[test]
    fn a_command_keeps_its_last_lines_whole_and_clean() {
        let mut watch = watch();
        watch.push(b"one\ntw");
        watch.push(b"o\n\x1b[31mred\x1b[0m\n\n");
        for n in 0..10 {
            watch.push(format!("line {n}\n").as_bytes());
        }
        watch.push(b"50%\r100%\rno newline yet");
        assert_eq!(watch.count, 15);
        assert_eq!(
            Vec::from(watch.lines.clone()),
            vec!["line 7", "line 8", "line 9", "50%", "100%"]
        );
        // A line that never ends stays bounded.
        watch.push(&vec![b'x'; 3 * PARTIAL_MAX]);
        assert!(watch.partial.len() <= PARTIAL_MAX);
    }

    #[test]
    fn the_model_line_says_what_is_known() {
        let mut wait = ModelWait {
            step: 3,
            since: Instant::now(),
            pieces: 0,
            prefill: None,
            writing: None,
        };
        let elapsed = Duration::from_secs(75);
        assert_eq!(
            model_line(&wait, elapsed),
            "  ⋯ step 3 · the model reads the prompt · 1m15s"
        );
        wait.prefill = Some(PromptProgress {
            total: 4000,
            cached: 1000,
            processed: 3000,
        });
        assert_eq!(
            model_line(&wait, elapsed),
            "  ⋯ step 3 · the model reads the prompt · 1m15s · 3000 of 4000 tokens read (75 %), 1000 from its cache"
        );
        wait.pieces = 42;
        wait.writing = Some("terminal".into());
        assert_eq!(
            model_line(&wait, Duration::from_secs(80)),
            "  ⋯ step 3 · the model writes a terminal call · 1m20s · 42 tokens so far"
        );
    }
}
