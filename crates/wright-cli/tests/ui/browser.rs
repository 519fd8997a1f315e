//! A real headless Chromium (Debian's `chromium`) driven over WebDriver by its
//! `chromedriver`, through fantoccini. Started as this machine's docs say — headless, no
//! sandbox (root), no GPU, none of Chromium's own network traffic (the machine's network
//! is closed) — with a fresh profile each time, one browser at a time (two cores). When
//! Chromium or its driver is not installed, `launch` says so loudly and the test returns.

use fantoccini::elements::Element;
use fantoccini::error::ErrorStatus;
use fantoccini::Client;
use fantoccini::ClientBuilder;
use fantoccini::Locator;
use serde_json::json;
use serde_json::Value;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::Duration;
use std::time::Instant;

/// How long a page may take to show what a test waits for.
const PATIENCE: Duration = Duration::from_secs(90);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Viewport {
    /// A laptop's window, 1280×900.
    Desktop,
    /// A phone's screen, 390×844 CSS pixels at 3×, touch (Chrome's mobile emulation).
    Phone,
}

impl Viewport {
    pub fn name(self) -> &'static str {
        match self {
            Viewport::Desktop => "desktop",
            Viewport::Phone => "phone",
        }
    }
}

pub struct Browser {
    pub client: Client,
    pub viewport: Viewport,
    driver: tokio::process::Child,
    _profile: tempfile::TempDir,
    _turn: tokio::sync::MutexGuard<'static, ()>,
}

/// One machine-wide load at a time: a browser (a few hundred MB, a core's worth of work
/// and a hundred threads) or the attack suite, whose process limit without a user
/// namespace counts every thread of the user, a concurrent browser's included.
pub static HEAVY_TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The program `name` on PATH (or in /usr/bin).
fn program(name: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// Where screenshots go: the build's scratch directory, `ui-screenshots/`.
pub fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ui-screenshots")
}

/// A fresh Chromium at `viewport`, or `None` (said loudly) when it is not installed.
pub async fn launch(test: &str, viewport: Viewport) -> Option<Browser> {
    let (Some(chromium), Some(driver)) = (program("chromium"), program("chromedriver")) else {
        // Straight to stderr: the harness captures the output of passing tests.
        let _ = writeln!(
            std::io::stderr(),
            "\n!!!!!!!! SKIPPED {test}: Chromium is not installed (apt-get install chromium chromium-driver; .ci/run does) !!!!!!!!\n"
        );
        return None;
    };
    let turn = HEAVY_TURN.lock().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let driver = tokio::process::Command::new(driver)
        .arg(format!("--port={port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        // Its Chromium is in its group: killed with it, whatever happens to the test.
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .expect("cannot start chromedriver");
    let profile = tempfile::tempdir().unwrap();
    let mut args = vec![
        "--headless".to_string(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-quic".into(),
        "--no-first-run".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--disable-dev-shm-usage".into(),
        format!("--user-data-dir={}", profile.path().display()),
    ];
    let mut options = json!({"binary": chromium});
    match viewport {
        Viewport::Desktop => args.push("--window-size=1280,900".into()),
        Viewport::Phone => {
            options["mobileEmulation"] = json!({
                "deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 3.0, "touch": true},
                "userAgent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Mobile Safari/537.36"
            });
        }
    }
    options["args"] = json!(args);
    let mut capabilities = serde_json::Map::new();
    capabilities.insert("browserName".into(), json!("chrome"));
    capabilities.insert("goog:chromeOptions".into(), options);
    let url = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    let client = loop {
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        match ClientBuilder::new(connector)
            .capabilities(capabilities.clone())
            .connect(&url)
            .await
        {
            Ok(client) => break client,
            Err(err) if started.elapsed() < Duration::from_secs(30) => {
                let _ = err;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(err) => panic!("chromedriver gave no browser within 30 s: {err}"),
        }
    };
    Some(Browser {
        client,
        viewport,
        driver,
        _profile: profile,
        _turn: turn,
    })
}

impl Browser {
    pub async fn goto(&self, url: &str) {
        self.client.goto(url).await.unwrap();
    }

    /// Runs `script` (a function body) in the page; its return value.
    pub async fn js(&self, script: &str) -> Value {
        self.client.execute(script, vec![]).await.unwrap()
    }

    /// Waits for an element matching `css`.
    pub async fn find(&self, css: &str) -> Element {
        match self
            .client
            .wait()
            .at_most(PATIENCE)
            .every(Duration::from_millis(50))
            .for_element(Locator::Css(css))
            .await
        {
            Ok(element) => element,
            Err(err) => panic!("no `{css}` on the page: {err}\n{}", self.page_text().await),
        }
    }

    /// Waits until `script` (a function body) returns true; says `what` when it never does.
    pub async fn until(&self, what: &str, script: &str) {
        let started = Instant::now();
        while started.elapsed() < PATIENCE {
            if self.js(script).await == json!(true) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("never: {what}\n{}", self.page_text().await);
    }

    /// Waits until an element matching `css` holds `text` (as text).
    pub async fn until_text(&self, css: &str, text: &str) {
        let script = format!(
            "return [...document.querySelectorAll({})].some(e => e.textContent.includes({}));",
            json!(css),
            json!(text)
        );
        self.until(&format!("`{css}` holds {text:?}"), &script)
            .await;
    }

    /// Clicks the element matching `css`, as a person would once it can be clicked: while
    /// rows still arrive the page follows them, and a header link scrolled into view may
    /// have moved under the sticky bar by the time the click lands; the click is then
    /// made again (found again, scrolled again) until it lands or `PATIENCE` runs out.
    pub async fn click(&self, css: &str) {
        let started = Instant::now();
        loop {
            let element = self.find(css).await;
            // Into view first: on a phone the sticky controls may sit over it.
            let scrolled = self
                .client
                .execute(
                    "arguments[0].scrollIntoView({block: 'center'});",
                    vec![serde_json::to_value(&element).unwrap()],
                )
                .await;
            let clicked = match scrolled {
                Ok(_) => element.click().await,
                Err(err) => Err(err),
            };
            match clicked {
                Ok(()) => return,
                Err(fantoccini::error::CmdError::Standard(err))
                    if started.elapsed() < PATIENCE
                        && matches!(
                            err.error,
                            ErrorStatus::ElementClickIntercepted
                                | ErrorStatus::ElementNotInteractable
                                | ErrorStatus::StaleElementReference
                        ) =>
                {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(err) => panic!("cannot click `{css}`: {err}\n{}", self.page_text().await),
            }
        }
    }

    pub async fn type_into(&self, css: &str, text: &str) {
        let element = self.find(css).await;
        element.clear().await.unwrap();
        element.send_keys(text).await.unwrap();
    }

    /// The page's text, for failure messages.
    pub async fn page_text(&self) -> String {
        let text = self
            .client
            .execute(
                "return document.body ? document.body.textContent : '';",
                vec![],
            )
            .await
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .unwrap_or_default();
        let url = self
            .client
            .current_url()
            .await
            .map(|u| u.to_string())
            .unwrap_or_default();
        format!("page {url}:\n{text}")
    }

    /// The page's hash route (`#/c/ID`, …).
    pub async fn hash(&self) -> String {
        self.js("return location.hash;")
            .await
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// A screenshot of what is shown, saved as `ui-screenshots/VIEWPORT-PAGE.png` in the
    /// build's scratch directory, or in the system's temporary one when this user cannot
    /// write there (CI runs the tests again as another user).
    pub async fn screenshot(&self, page: &str) -> PathBuf {
        let png = self.client.screenshot().await.unwrap();
        let name = format!("{}-{page}.png", self.viewport.name());
        let save = |dir: PathBuf| {
            std::fs::create_dir_all(&dir)?;
            std::fs::write(dir.join(&name), &png).map(|()| dir.join(&name))
        };
        // One directory a user: CI's users share the temporary directory, and the
        // first to make it would own it.
        let user = std::fs::metadata("/proc/self").map_or(0, |m| m.uid());
        save(screenshot_dir())
            .or_else(|_| save(std::env::temp_dir().join(format!("wright-ui-screenshots-{user}"))))
            .unwrap()
    }

    /// Ends the session (Chromium quits), then the driver.
    pub async fn quit(mut self) {
        let _ = self.client.clone().close().await;
        let _ = self.driver.kill().await;
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // A failed test never reaches `quit`: its driver's group (Chromium with it) goes.
        if let Some(pid) = self.driver.id() {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}
