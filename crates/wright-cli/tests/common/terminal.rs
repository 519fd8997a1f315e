//! A real terminal for tests that need one (tmux): what a person sees and types. Each
//! terminal has a tmux server of its own (its own socket): tests run side by side, and
//! one shared server exits with its last session while another test is starting one.

use std::time::Duration;
use std::time::Instant;

pub struct Terminal {
    /// The name of its tmux server's socket, which is also the session's name.
    session: String,
}

impl Terminal {
    /// Runs `command` (a shell command line) in a new detached tmux session, or `None`
    /// (said loudly) when tmux is not installed.
    pub fn start(test: &str, command: &str) -> Option<Self> {
        if std::process::Command::new("tmux")
            .arg("-V")
            .output()
            .is_err()
        {
            eprintln!("!!! SKIPPED {test}: no tmux !!!");
            return None;
        }
        let terminal = Self {
            session: format!("wright-{test}-{}", std::process::id()),
        };
        let started = terminal.tmux(&[
            "new-session",
            "-d",
            "-s",
            &terminal.session,
            "-x",
            "200",
            "-y",
            "50",
            command,
        ]);
        assert!(
            started.status.success(),
            "tmux new-session: {}",
            String::from_utf8_lossy(&started.stderr)
        );
        Some(terminal)
    }

    pub fn screen(&self) -> String {
        String::from_utf8_lossy(
            &self
                .tmux(&["capture-pane", "-p", "-t", &self.session, "-S", "-200"])
                .stdout,
        )
        .into_owned()
    }

    /// Waits (30 s at most) until the screen shows `needle`; returns the screen.
    pub fn wait_for(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let text = self.screen();
            if text.contains(needle) {
                return text;
            }
            assert!(Instant::now() < deadline, "never saw {needle:?}:\n{text}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `tmux ARGS` on this terminal's own server.
    fn tmux(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new("tmux")
            .args(["-L", &self.session])
            .args(args)
            .output()
            .unwrap()
    }

    /// Types `keys` (tmux key names: text, "Enter", "C-c").
    pub fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", self.session.as_str()];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
    }
}
