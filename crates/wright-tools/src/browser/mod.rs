//! `browser`: a headless Chromium the model drives, one per conversation, started on the
//! first call (nothing runs, nothing is paid, while the tool is unused) and killed with
//! the tool at the conversation's end.
//!
//! Where it runs: inside the conversation's sandbox, in the namespaces of the terminal's
//! shell (`Sandbox::wrap_joined`): the same root, the same loopback (so `localhost` is the
//! sandbox's, where the agent's dev server listens, never the host's), and the same
//! confinement (Landlock, seccomp, no capabilities, rlimits). Anything beyond that
//! loopback goes through wright's allow-list proxy (`--proxy-server` at the relay on the
//! sandbox's loopback), which decides each host as it does for the shell's commands and
//! `fetch` (nothing without `--network`/`--allow-host`; the host's loopback and private
//! addresses never). Where the shell has no network namespace of its own (`--sandbox
//! landlock`, kernels without user namespaces, `--network`, which shares the host's
//! network) or runs in Docker or unconfined, joining is refused and so is the tool, with
//! the reason: a browser there would reach the host's loopback.
//!
//! Chromium's own sandbox is off (`--no-sandbox`): it needs namespaces and seccomp
//! filters of its own inside wright's, and what it would protect (the renderer from the
//! browser process) matters less here: the whole browser is confined as the agent's own
//! commands are, so a page that took over a renderer gets no more than the agent's shell
//! already has.
//!
//! The DevTools protocol goes over `--remote-debugging-pipe` (see `cdp`): no port is ever
//! opened, neither on the host nor in the sandbox. Page text reaches the model only as
//! untrusted content (as `fetch`'s); `file:` URLs outside the workspace are refused;
//! downloads are refused by the browser.

mod cdp;
mod running;

use running::attach;
use running::spawn_with_pipes;
use running::Browser;

use crate::args;
use crate::TerminalTool;
use crate::Tool;
use crate::ToolError;
use crate::ToolOutput;
use cdp::CdpError;
use serde_json::json;
use serde_json::Value;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

/// How Chromium is started: headless, its own sandbox off (see above), the protocol on
/// the pipes, and none of its own work a page does not need. Without the last lines it
/// phones home at start even so — the network time, the component updater (whatever
/// `--disable-component-update` says), the signed-in accounts — through the proxy, which
/// refuses them, and each would be a `network` event of the model's first call; those
/// two services are pointed at the sandbox's port 9 instead (a port Chromium never
/// connects to).
const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--remote-debugging-pipe",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-component-extensions-with-background-pages",
    "--disable-default-apps",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-breakpad",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-field-trial-config",
    "--no-pings",
    "--password-store=basic",
    "--mute-audio",
    "--window-size=1280,800",
    "--disable-features=NetworkTimeServiceQuerying,Translate,OptimizationHints,MediaRouter",
    "--component-updater=url-source=http://127.0.0.1:9",
    "--gaia-url=http://127.0.0.1:9",
];

/// Debian's Chromium binary itself (`/usr/bin/chromium` is a shell wrapper that reads
/// the user's settings).
pub const CHROMIUM: &str = "/usr/lib/chromium/chromium";
/// Debian's headless shell (`chromium-headless-shell`, the same engine without the
/// browser's own layer): preferred when installed, since it starts in a fraction of the
/// time (0.24 s against 0.97 s to a first DevTools answer, measured side by side here).
pub const HEADLESS_SHELL: &str = "/usr/lib/chromium/chromium-headless-shell";

/// The Chromium the tool starts: the headless shell, else the full browser; `None`
/// when neither is installed.
pub fn chromium_program() -> Option<&'static str> {
    [HEADLESS_SHELL, CHROMIUM]
        .into_iter()
        .find(|path| Path::new(path).is_file())
}
/// Characters of page text shown at most: about 1,250 tokens.
const MAX_READ_CHARS: usize = 5000;
const START_TIMEOUT: Duration = Duration::from_secs(30);
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
const LOAD_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a call waits for its open proxy connections to end before reporting them.
const CONNECTIONS_SETTLE: Duration = Duration::from_millis(150);
const PAGE_JS: &str = include_str!("page.js");

pub struct BrowserTool {
    terminal: Arc<TerminalTool>,
    env: Vec<(String, String)>,
    workspace: PathBuf,
    /// Where screenshots are saved for people: the conversation's own data, outside the
    /// sandbox (kept after the conversation).
    shots: PathBuf,
    browser: tokio::sync::Mutex<Option<Browser>>,
}

impl BrowserTool {
    /// A browser that runs in the sandbox of `terminal`'s shell, with `env` (the sandbox's
    /// environment, without the shell's secrets); `workspace`: the only place `file:` URLs
    /// may name; screenshots go to `shots` (made when the first is taken).
    pub fn new(
        terminal: Arc<TerminalTool>,
        env: Vec<(String, String)>,
        workspace: PathBuf,
        shots: PathBuf,
    ) -> Self {
        Self {
            terminal,
            env,
            workspace,
            shots,
            browser: tokio::sync::Mutex::new(None),
        }
    }
}

/// The verbs of the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Goto,
    Read,
    Click,
    Type,
    Press,
    Select,
    Back,
    WaitFor,
    Console,
    Screenshot,
}

impl Action {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "goto" | "open" | "navigate" => Action::Goto,
            "read" => Action::Read,
            "click" => Action::Click,
            "type" | "fill" => Action::Type,
            "press" => Action::Press,
            "select" => Action::Select,
            "back" => Action::Back,
            "wait_for" | "wait" => Action::WaitFor,
            "console" => Action::Console,
            "screenshot" => Action::Screenshot,
            _ => return None,
        })
    }
}

#[async_trait::async_trait]
impl Tool for BrowserTool {
    fn name(&self) -> &'static str {
        "browser"
    }

    fn schema(&self) -> Value {
        json!({"type": "function", "function": {
            "name": "browser",
            "description": "A headless browser in the sandbox (localhost is the sandbox's). action: goto (url), read (page text; elements numbered [n]), click/type/select (element n, text), press (key), back, wait_for (text or selector), console (errors), screenshot (saved for the user).",
            "parameters": {"type": "object", "properties": {
                "action": {"type": "string", "enum": ["goto", "read", "click", "type", "press", "select", "back", "wait_for", "console", "screenshot"]},
                "url": {"type": "string"},
                "element": {"type": "integer"},
                "text": {"type": "string"},
                "key": {"type": "string"},
                "selector": {"type": "string"}
            }, "required": ["action"]}
        }})
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        let name = args::required_str(arguments, "action")?;
        let action = Action::parse(name).ok_or_else(|| {
            ToolError::Model(format!(
                "unknown action '{name}'; use goto, read, click, type, press, select, back, wait_for, console or screenshot"
            ))
        })?;
        // Checked before anything starts: a refused URL costs no browser.
        let url = match action {
            Action::Goto => Some(self.check_url(args::required_str(arguments, "url")?)?),
            _ => None,
        };
        let mut guard = self.browser.lock().await;
        if guard.is_none() {
            *guard = Some(self.start().await?);
        }
        let Some(browser) = guard.as_ref() else {
            return Err(ToolError::Fatal("the browser vanished".into()));
        };
        let outcome = self.act(browser, action, arguments, url).await;
        // What the page fetched beyond the sandbox went through wright's proxy: each
        // connection is a `network` event of this call, as the shell's commands' are.
        let network = self.connections().await;
        let refusals = refusal_notes(&network);
        match outcome {
            // A refused page is the proxy's answer, which the page text already shows.
            Ok(output) => Ok(ToolOutput { network, ..output }),
            // An error that has connections to report keeps them (an `Err` has no room).
            Err(Failure::Model(message)) if !network.is_empty() => Ok(ToolOutput {
                text: format!("{message}{refusals}"),
                is_error: true,
                network,
                ..ToolOutput::default()
            }),
            Err(Failure::Model(message)) => Err(ToolError::Model(message)),
            Err(Failure::Cdp(CdpError::Closed)) => {
                // Its shell ended (and its PID namespace with it), or it crashed: the next
                // call starts a new one.
                *guard = None;
                Err(ToolError::Model(
                    "the browser closed (the terminal's shell was restarted, or it crashed); call again to start a new one".into(),
                ))
            }
            Err(Failure::Cdp(err)) => Err(ToolError::Model(format!("browser: {err}"))),
        }
    }
}

/// The refused connections among `network`, in words for the model (one line each).
fn refusal_notes(network: &[wright_protocol::NetConnection]) -> String {
    network
        .iter()
        .filter_map(|connection| match connection.verdict {
            wright_protocol::NetVerdict::Refused { reason } => Some(format!(
                "\n[{}]",
                wright_sandbox::egress::refusal_words(&connection.host, connection.port, reason)
            )),
            wright_protocol::NetVerdict::Allowed => None,
        })
        .collect()
}

/// Why an action failed: something the model can act on, or the connection.
enum Failure {
    Model(String),
    Cdp(CdpError),
}

impl From<CdpError> for Failure {
    fn from(err: CdpError) -> Self {
        Failure::Cdp(err)
    }
}

impl BrowserTool {
    /// `url` if the browser may open it: http(s) (the sandbox's loopback, or beyond
    /// through the proxy, which decides), `about:blank`, and `file:` inside the workspace.
    fn check_url(&self, url: &str) -> Result<String, ToolError> {
        let parsed = reqwest::Url::parse(url).map_err(|e| {
            ToolError::Model(format!(
                "not a URL ({e}): {url}; write http://localhost:PORT/…"
            ))
        })?;
        match parsed.scheme() {
            "http" | "https" => Ok(parsed.to_string()),
            "about" if parsed.as_str() == "about:blank" => Ok(parsed.to_string()),
            "file" => {
                let path = parsed
                    .to_file_path()
                    .map_err(|()| ToolError::Model(format!("not a file path: {url}")))?;
                if within(&path, &self.workspace) {
                    Ok(parsed.to_string())
                } else {
                    Err(ToolError::Model(format!(
                        "file: URLs outside the workspace ({}) are refused: {url}",
                        self.workspace.display()
                    )))
                }
            }
            other => Err(ToolError::Model(format!(
                "the browser opens http, https and file (in the workspace) URLs, not {other}:"
            ))),
        }
    }

    /// The connections through the proxy that ended since the last report, after a short
    /// wait for those still open (a page's last request is usually closing as it loads;
    /// a TLS tunnel Chromium keeps open is reported with the call during which it ends).
    async fn connections(&self) -> Vec<wright_protocol::NetConnection> {
        let Some(journal) = self.terminal.network_journal().cloned() else {
            return Vec::new();
        };
        tokio::task::spawn_blocking(move || journal.drain_settled(CONNECTIONS_SETTLE))
            .await
            .unwrap_or_default()
    }

    async fn start(&self) -> Result<Browser, ToolError> {
        let pid = self.terminal.shell_pid().await?;
        let var = |name: &str| {
            self.env
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let tmp = var("TMPDIR").unwrap_or_else(|| "/tmp".into());
        let profile = format!("{tmp}/wright-browser-{}", std::process::id());
        let mut flags: Vec<String> = FLAGS.iter().map(|f| f.to_string()).collect();
        flags.push(format!("--user-data-dir={profile}"));
        // Beyond the sandbox's loopback (which Chromium never sends to a proxy), wright's.
        if let Some(proxy) = var("HTTP_PROXY") {
            flags.push(format!("--proxy-server={proxy}"));
        }
        flags.push("about:blank".into());
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let chromium = chromium_program().ok_or_else(|| {
            ToolError::Model(format!(
                "the browser cannot run here: Chromium is not installed ({HEADLESS_SHELL} or {CHROMIUM}; Debian's chromium-headless-shell or chromium)"
            ))
        })?;
        let (program, wrapped) = self
            .terminal
            .sandbox()
            .wrap_joined(pid, chromium, &flags)
            .map_err(|e| ToolError::Model(format!("the browser cannot run here: {e}")))?;
        let spawned = spawn_with_pipes(&program, &wrapped, &self.env, &self.workspace)
            .map_err(|e| ToolError::Model(format!("the browser cannot start: {e}")))?;
        let (child, cdp, stderr) = spawned;
        let mut browser = Browser {
            child,
            cdp,
            session: String::new(),
            stderr,
        };
        match attach(&browser.cdp).await {
            Ok(session) => browser.session = session,
            Err(err) => {
                let said = String::from_utf8_lossy(
                    &browser.stderr.lock().map(|s| s.clone()).unwrap_or_default(),
                )
                .lines()
                .filter(|l| {
                    l.contains("wright sandbox") || l.contains("FATAL") || l.contains("rror")
                })
                .take(5)
                .collect::<Vec<_>>()
                .join("\n");
                let said = said.replace("wright sandbox: ", "");
                return Err(ToolError::Model(format!(
                    "the browser cannot run here ({err}): {said}"
                )));
            }
        }
        Ok(browser)
    }

    async fn act(
        &self,
        browser: &Browser,
        action: Action,
        arguments: &Value,
        url: Option<String>,
    ) -> Result<ToolOutput, Failure> {
        let element = || -> Result<i64, Failure> {
            args::optional_int(arguments, "element")
                .map_err(|e| Failure::Model(e.to_string()))?
                .ok_or_else(|| {
                    Failure::Model(format!(
                        "{action:?} needs element: the number [n] of the element in the last read"
                    ))
                })
        };
        let text = |key: &str| -> Result<Option<String>, Failure> {
            args::optional_str(arguments, key)
                .map(|t| t.map(str::to_string))
                .map_err(|e| Failure::Model(e.to_string()))
        };
        match action {
            Action::Goto => {
                let url = url.unwrap_or_default();
                let result = browser.call("Page.navigate", json!({"url": url})).await?;
                if let Some(error) = result["errorText"].as_str().filter(|e| !e.is_empty()) {
                    return Err(Failure::Model(format!(
                        "cannot open {url}: {error} (localhost is the sandbox's; other hosts only as the user allowed)"
                    )));
                }
                browser.loaded().await?;
                browser.page(None).await
            }
            Action::Read => browser.page(None).await,
            Action::Click => {
                let n = element()?;
                let done = browser.script(&format!("__wright.click({n})")).await?;
                browser.settle().await?;
                browser
                    .page(Some(format!("clicked {}", done.as_str().unwrap_or(""))))
                    .await
            }
            Action::Type => {
                let n = element()?;
                let typed = text("text")?.unwrap_or_default();
                let done = browser
                    .script(&format!("__wright.type({n}, {})", json!(typed)))
                    .await?;
                Ok(browser
                    .untrusted(format!("typed into {}", done.as_str().unwrap_or("")))
                    .await)
            }
            Action::Select => {
                let n = element()?;
                let choice = text("text")?.unwrap_or_default();
                let done = browser
                    .script(&format!("__wright.select({n}, {})", json!(choice)))
                    .await?;
                browser.settle().await?;
                Ok(browser
                    .untrusted(format!("selected in {}", done.as_str().unwrap_or("")))
                    .await)
            }
            Action::Press => {
                let key = text("key")?.or(text("text")?).ok_or_else(|| {
                    Failure::Model("press needs key (Enter, Tab, Escape, …)".into())
                })?;
                if let Ok(Some(n)) = args::optional_int(arguments, "element") {
                    browser.script(&format!("__wright.focus({n})")).await?;
                }
                browser.press(&key).await?;
                browser.settle().await?;
                browser.page(Some(format!("pressed {key}"))).await
            }
            Action::Back => {
                let history = browser.call("Page.getNavigationHistory", json!({})).await?;
                let index = history["currentIndex"].as_u64().unwrap_or(0) as usize;
                let Some(entry) = index.checked_sub(1).and_then(|i| history["entries"].get(i))
                else {
                    return Err(Failure::Model("no earlier page to go back to".into()));
                };
                browser
                    .call(
                        "Page.navigateToHistoryEntry",
                        json!({"entryId": entry["id"]}),
                    )
                    .await?;
                browser.settle().await?;
                browser.page(None).await
            }
            Action::WaitFor => {
                let (wanted, selector) = match (text("text")?, text("selector")?) {
                    (_, Some(selector)) => (String::new(), Some(selector)),
                    (Some(wanted), None) => (wanted, None),
                    (None, None) => {
                        return Err(Failure::Model("wait_for needs text or selector".into()))
                    }
                };
                let check = format!("__wright.has({}, {})", json!(wanted), json!(selector));
                let deadline = Instant::now() + LOAD_TIMEOUT;
                loop {
                    if browser.script(&check).await? == json!(true) {
                        return browser.page(None).await;
                    }
                    if Instant::now() >= deadline {
                        let what = selector.unwrap_or(wanted);
                        return Err(Failure::Model(format!(
                            "{what:?} did not appear within {} s",
                            LOAD_TIMEOUT.as_secs()
                        )));
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
            Action::Console => {
                let (errors, dropped) = {
                    let mut events = cdp::lock_events(&browser.cdp);
                    (
                        std::mem::take(&mut events.errors),
                        std::mem::take(&mut events.dropped),
                    )
                };
                let text = if errors.is_empty() {
                    "no console errors since the last check".to_string()
                } else {
                    let mut text = format!("{} console error(s):\n", errors.len() + dropped);
                    for error in &errors {
                        text.push_str(&format!("- {error}\n"));
                    }
                    if dropped > 0 {
                        text.push_str(&format!("[… {dropped} more not shown]\n"));
                    }
                    text
                };
                Ok(browser.untrusted(text).await)
            }
            Action::Screenshot => {
                let shot = browser
                    .call("Page.captureScreenshot", json!({"format": "png"}))
                    .await?;
                use base64::Engine;
                let png = base64::engine::general_purpose::STANDARD
                    .decode(shot["data"].as_str().unwrap_or(""))
                    .map_err(|e| Failure::Model(format!("the screenshot was not PNG data: {e}")))?;
                let path = save_new(&self.shots, &png)
                    .map_err(|e| Failure::Model(format!("cannot save the screenshot: {e}")))?;
                Ok(ToolOutput::text(format!(
                    "screenshot saved for the user: {} ({} KiB); read the page to see its text",
                    path.display(),
                    png.len() / 1024
                )))
            }
        }
    }
}

/// Writes `bytes` to a new `screenshot-N.png` in `dir` (never an existing file).
fn save_new(dir: &Path, bytes: &[u8]) -> std::io::Result<PathBuf> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    for n in 1..10_000 {
        let path = dir.join(format!("screenshot-{n}.png"));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                file.write_all(bytes)?;
                return Ok(path);
            }
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(err),
        }
    }
    Err(std::io::Error::other("every screenshot name is taken"))
}

/// Whether `path`, with `.` and `..` resolved as written, is `root` or beneath it.
fn within(path: &Path, root: &Path) -> bool {
    let mut resolved = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                resolved.pop();
            }
            Component::CurDir => {}
            other => resolved.push(other),
        }
    }
    resolved.starts_with(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_judged_as_written() {
        let root = Path::new("/work/space");
        assert!(within(Path::new("/work/space/index.html"), root));
        assert!(!within(Path::new("/work/space/../secret"), root));
        assert!(!within(Path::new("/etc/passwd"), root));
        assert!(!within(Path::new("/work/spaceship"), root));
    }
}
