//! The running browser: Chromium started with the DevTools pipes on its fds 3 and 4,
//! attached to its one page, and what the tool asks of that page (scripts, input,
//! waiting for it to settle). The guarantees are the tool's (`super`); this is the
//! process and the protocol's calls, and the whole process group dies with it.

use super::cdp;
use super::cdp::Cdp;
use super::cdp::CdpError;
use super::Failure;
use super::CALL_TIMEOUT;
use super::LOAD_TIMEOUT;
use super::MAX_READ_CHARS;
use super::PAGE_JS;
use super::START_TIMEOUT;
use crate::ToolOutput;
use serde_json::json;
use serde_json::Value;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant;
use wright_protocol::Provenance;

/// A running Chromium, attached to its one page.
pub(super) struct Browser {
    pub(super) child: std::process::Child,
    pub(super) cdp: Cdp,
    pub(super) session: String,
    pub(super) stderr: Arc<Mutex<Vec<u8>>>,
}

impl Drop for Browser {
    fn drop(&mut self) {
        // The launcher leads the group; everything it started (Chromium's processes,
        // inside the sandbox's PID namespace) is in it.
        if let Ok(group) = i32::try_from(self.child.id()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(group),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Attaches to a new page of the browser, with what the tool watches turned on; its
/// session id. The first call also waits for the browser to be up.
pub(super) async fn attach(cdp: &Cdp) -> Result<String, CdpError> {
    let target = cdp
        .call(
            None,
            "Target.createTarget",
            json!({"url": "about:blank"}),
            START_TIMEOUT,
        )
        .await?;
    let attached = cdp
        .call(
            None,
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
            CALL_TIMEOUT,
        )
        .await?;
    let session = attached["sessionId"].as_str().unwrap_or("").to_string();
    // Nothing a page offers lands anywhere: downloads are refused, and reported. These
    // four go out together (each answer is a round trip through a busy browser).
    let enable = |method: &'static str| cdp.call(Some(&session), method, json!({}), CALL_TIMEOUT);
    let (downloads, page, runtime, log) = tokio::join!(
        cdp.call(
            None,
            "Browser.setDownloadBehavior",
            json!({"behavior": "deny", "eventsEnabled": true}),
            CALL_TIMEOUT,
        ),
        enable("Page.enable"),
        enable("Runtime.enable"),
        enable("Log.enable"),
    );
    for answer in [downloads, page, runtime, log] {
        answer?;
    }
    Ok(session)
}

impl Browser {
    pub(super) async fn call(&self, method: &str, params: Value) -> Result<Value, CdpError> {
        self.cdp
            .call(Some(&self.session), method, params, CALL_TIMEOUT)
            .await
    }

    /// Runs `expression` after wright's page script; its value, or the page's exception
    /// as the model's error.
    pub(super) async fn script(&self, expression: &str) -> Result<Value, Failure> {
        let result = self
            .call(
                "Runtime.evaluate",
                json!({
                    "expression": format!("{PAGE_JS}\n{expression}"),
                    "returnByValue": true,
                    "awaitPromise": true,
                }),
            )
            .await?;
        if let Some(details) = result.get("exceptionDetails") {
            let message = details["exception"]["description"]
                .as_str()
                .or(details["text"].as_str())
                .unwrap_or("the page's script failed");
            let first = message.lines().next().unwrap_or(message);
            return Err(Failure::Model(
                first.trim_start_matches("Error: ").to_string(),
            ));
        }
        Ok(result["result"]["value"].clone())
    }

    /// Waits for the page to be loaded after an action that may start a navigation (a
    /// click, a key): a moment for it to start, then `loaded`.
    pub(super) async fn settle(&self) -> Result<(), Failure> {
        tokio::time::sleep(Duration::from_millis(150)).await;
        self.loaded().await
    }

    /// Waits for the document to be loaded, within bounds: after `Page.navigate`, which
    /// answers once the new document is committed, at once.
    pub(super) async fn loaded(&self) -> Result<(), Failure> {
        let deadline = Instant::now() + LOAD_TIMEOUT;
        while Instant::now() < deadline {
            match self.script("document.readyState").await {
                Ok(state) if state == "complete" => return Ok(()),
                // A navigation in progress destroys the context the script ran in.
                Ok(_) | Err(Failure::Model(_)) => {}
                Err(err) => return Err(err),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }

    /// The page as text, with `said` (what the action did) first and any console errors
    /// since the last look last; all of it untrusted.
    pub(super) async fn page(&self, said: Option<String>) -> Result<ToolOutput, Failure> {
        // One evaluation, its value returned as is (not through the page's own JSON,
        // which the page may have replaced).
        let read = self
            .script(&format!(
                "[String(document.title), String(location.href), __wright.read({MAX_READ_CHARS})]"
            ))
            .await?;
        let part = |n: usize| read[n].as_str().unwrap_or("").to_string();
        let (title, url, body) = (part(0), part(1), read[2].clone());
        let mut text = String::new();
        if let Some(said) = said {
            text.push_str(&said);
            text.push('\n');
        }
        text.push_str(&format!("page: {title} — {url}\n"));
        text.push_str(body.as_str().unwrap_or(""));
        let output = self.untrusted(text).await;
        Ok(ToolOutput {
            untrusted: Some(Provenance::Web { url }),
            ..output
        })
    }

    /// `text`, with a note of new console errors and refused downloads, as page content.
    pub(super) async fn untrusted(&self, mut text: String) -> ToolOutput {
        let url = self
            .script("location.href")
            .await
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let (errors, downloads) = {
            let events = cdp::lock_events(&self.cdp);
            (
                events.errors.len() + events.dropped,
                events.downloads.clone(),
            )
        };
        if errors > 0 && !text.contains("console error") {
            text.push_str(&format!(
                "\n[{errors} console error(s): action console shows them]"
            ));
        }
        for url in downloads {
            text.push_str(&format!("\n[the page started a download, refused: {url}]"));
        }
        cdp::lock_events(&self.cdp).downloads.clear();
        ToolOutput {
            text,
            untrusted: Some(Provenance::Web { url }),
            ..ToolOutput::default()
        }
    }

    pub(super) async fn press(&self, key: &str) -> Result<(), CdpError> {
        let (code, text) = match key {
            "Enter" => (13, "\r"),
            "Tab" => (9, ""),
            "Escape" => (27, ""),
            "Backspace" => (8, ""),
            "ArrowLeft" => (37, ""),
            "ArrowUp" => (38, ""),
            "ArrowRight" => (39, ""),
            "ArrowDown" => (40, ""),
            _ => (0, key),
        };
        for kind in ["keyDown", "keyUp"] {
            let mut event = json!({"type": kind, "key": key, "windowsVirtualKeyCode": code});
            if kind == "keyDown" && !text.is_empty() {
                event["text"] = json!(text);
            }
            self.call("Input.dispatchKeyEvent", event).await?;
        }
        Ok(())
    }
}

pub(super) type Spawned = (std::process::Child, Cdp, Arc<Mutex<Vec<u8>>>);

/// Starts `program` with the DevTools pipes on its fds 3 (commands in) and 4 (answers
/// out); its stderr kept (the last part) for a message if it fails to start.
pub(super) fn spawn_with_pipes(
    program: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
) -> std::io::Result<Spawned> {
    use nix::fcntl::OFlag;
    let (commands_in, commands_out): (OwnedFd, OwnedFd) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    let (answers_in, answers_out): (OwnedFd, OwnedFd) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    let (read_end, write_end) = (commands_in.as_raw_fd(), answers_out.as_raw_fd());
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: between fork and exec only async-signal-safe calls (fcntl, dup2) on
    // descriptors this process owns; moved above 10 first, so placing one at 3 or 4 never
    // overwrites the other.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            let high_read = dup_above(read_end)?;
            let high_write = dup_above(write_end)?;
            for (from, to) in [(high_read, 3), (high_write, 4)] {
                if libc::dup2(from, to) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut child = command.spawn()?;
    drop(commands_in);
    drop(answers_out);
    let stderr: Arc<Mutex<Vec<u8>>> = Arc::default();
    if let Some(mut pipe) = child.stderr.take() {
        let kept = stderr.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                let mut kept = kept
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                kept.extend_from_slice(&buffer[..n]);
                let excess = kept.len().saturating_sub(16 << 10);
                kept.drain(..excess);
            }
        });
    }
    let cdp = Cdp::new(
        std::fs::File::from(commands_out),
        std::fs::File::from(answers_in),
    );
    Ok((child, cdp, stderr))
}

/// A copy of `fd` numbered 10 or more (closed on exec), in a child before exec.
fn dup_above(fd: i32) -> std::io::Result<i32> {
    // SAFETY: fcntl on a descriptor this process owns; async-signal-safe.
    #[allow(unsafe_code)]
    let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10) };
    if copy < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(copy)
}
