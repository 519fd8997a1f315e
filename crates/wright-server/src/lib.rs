//! `wright serve`: the agent server. HTTP and WebSocket routes over the session library
//! (`wright_session`) — the conversations' REST routes, their event sockets, an
//! OpenAI-compatible endpoint, the OpenAPI document, the browser UI (`ui`, embedded) — a
//! thin front end beside the CLI: it resolves nothing itself (the
//! program around it gives a `Starter` that turns a request into a session, as `wright
//! run` does), it never prompts (its `Front` answers no and records what it is told), and
//! the event log stays the source of truth (the routes read it; the WebSocket gets what a
//! run logs as it is logged).
//!
//! What it guarantees: every route and the WebSocket want the server's key, compared in
//! constant time, but an automation's webhook (`/hooks/NAME`), which wants its forge's
//! signature instead (see `automations`); a request naming another host (DNS rebinding) or coming from another
//! origin is refused; bodies are bounded; no CORS header is ever sent; errors are JSON
//! with a 4xx or 5xx status, never a half-done change.

mod actions;
mod agents_view;
mod api;
mod aside;
mod auth;
pub mod automations;
mod browser;
mod changes;
mod confirm;
mod error;
mod front;
mod hub;
mod key;
mod live;
mod model_record;
mod openai;
mod openai_history;
mod openapi;
mod queue;
pub mod replicas;
mod repository;
mod rights;
mod routes;
mod runs;
mod screenshot;
mod session_error;
mod settings_view;
mod setup;
mod signin;
mod socket;
mod starter;
mod tenancy;
mod ui;
mod user_secrets;
mod view;
mod widening;
mod workspace;

pub use api::Models;
pub use api::NewConversation;
pub use api::Settings;
pub use automations::Waiting;
pub use key::ServerKey;
pub use starter::DoctorReport;
pub use starter::SettingsStarter;
pub use starter::Starter;
pub use widening::UserLimits;
pub use widening::Widening;

use anyhow::Context;
use anyhow::Result;
use std::net::SocketAddr;
use std::sync::Arc;

/// Largest request body a route reads (a task or message is text).
pub const BODY_LIMIT: usize = 256 * 1024;

/// How the server is started.
pub struct Options {
    pub host: String,
    pub port: u16,
    /// The key clients present; `None`: one is generated.
    pub key: Option<String>,
    /// Most conversations running at once; the rest wait, `queued`.
    pub max_runs: usize,
    /// Host names besides the loopback ones (and the one bound) that requests may name.
    pub allowed_hosts: Vec<String>,
    /// The workspace the OpenAI-compatible endpoint's conversations work on.
    pub workspace: Option<std::path::PathBuf>,
    /// The automations of the user's configuration (`[automations.NAME]`).
    pub automations: Vec<wright_config::automations::Automation>,
    /// A repository's `.wright/automations.toml` not (or no longer) allowed: listed as
    /// waiting, none of it defined.
    pub waiting_automations: Option<Waiting>,
    /// The database the conversations' events and the users are kept in; `None`: the
    /// files alone, one user (the server key's).
    pub database: Option<wright_session::database::Store>,
    /// How long a run's lease on its conversation lasts unrenewed (with a database):
    /// a run cut off is taken over by another replica within about this long.
    pub lease: std::time::Duration,
    /// The git store the replicas share (`--git-store`): each step's files are pushed
    /// there, and a takeover without the conversation's clone makes it from there.
    pub git_store: Option<std::path::PathBuf>,
}

/// Why the server refuses to start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("--host {0} is reachable from other machines: set a key of your own in WRIGHT_SERVER_KEY (at least 32 characters) to bind there")]
    PublicWithoutKey(String),
    #[error("the server key must be at least {min} characters of printable ASCII without spaces")]
    WeakKey { min: usize },
    #[error("--max-runs must be at least 1")]
    NoRuns,
}

/// A server bound to its address, not yet serving.
pub struct Bound {
    listener: tokio::net::TcpListener,
    address: SocketAddr,
    key: ServerKey,
    state: Arc<routes::AppState>,
}

impl Bound {
    /// Checks the options and binds. A host other than a loopback one needs a key set by
    /// the user: a generated one printed on a terminal is no protection on a network.
    pub async fn bind(options: Options, starter: Arc<dyn Starter>) -> Result<Self> {
        if options.max_runs == 0 {
            return Err(StartError::NoRuns.into());
        }
        let key = match &options.key {
            Some(given) => ServerKey::given(given)?,
            None if auth::is_loopback_name(&options.host) => ServerKey::generate()?,
            None => return Err(StartError::PublicWithoutKey(options.host.clone()).into()),
        };
        let listener = tokio::net::TcpListener::bind((options.host.as_str(), options.port))
            .await
            .with_context(|| format!("cannot listen on {}:{}", options.host, options.port))?;
        let address = listener.local_addr()?;
        let mut hosts = options.allowed_hosts.clone();
        hosts.push(options.host.clone());
        let guard = auth::Guard::new(key.clone(), address.port(), hosts, browser::Browser::new()?);
        let runs = runs::Runs::new(
            starter,
            options.max_runs,
            options.database.clone(),
            replicas::Replica::new(options.lease),
            options
                .git_store
                .as_deref()
                .map(wright_session::git_store::GitStore::new),
        );
        // What a killed server had accepted and not started.
        runs.restore();
        let automations = automations::Automations::new(
            options.automations,
            options.waiting_automations,
            runs.clone(),
        )?;
        let state = Arc::new(routes::AppState {
            runs,
            guard,
            workspace: options.workspace.clone(),
            exchanges: Arc::default(),
            automations,
        });
        Ok(Self {
            listener,
            address,
            key,
            state,
        })
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    pub fn key(&self) -> &ServerKey {
        &self.key
    }

    /// The address a browser opens once to get its cookie (`/auth?token=…`).
    pub fn browser_url(&self) -> String {
        format!(
            "http://{}{}?token={}",
            self.address,
            browser::AUTH_PATH,
            self.state.guard.browser.token()
        )
    }

    /// Serves until SIGINT or SIGTERM, then stops every run after its step (each logs
    /// why and hands its changes over; what waits stays on disk for the next start) and
    /// returns how many runs it stopped.
    pub async fn serve(self) -> Result<usize> {
        let runs = self.state.runs.clone();
        // With a database, runs other replicas lost are taken over here, and the events
        // other replicas log reach this one's sockets.
        if let Some(store) = runs.store().cloned() {
            let mut notices = store
                .listen()
                .await
                .context("cannot listen for the other replicas' events")?;
            let listener = runs.clone();
            let wake = Arc::new(tokio::sync::Notify::new());
            let waker = wake.clone();
            tokio::spawn(async move {
                while let Some(notice) = notices.recv().await {
                    match notice {
                        wright_session::database::Notice::Appended { conversation, .. } => {
                            listener.refresh_hub(&conversation).await
                        }
                        wright_session::database::Notice::Resumed => listener.refresh_hubs().await,
                        // Kept if nobody looks right now: the next look is at once.
                        wright_session::database::Notice::HandedOver { .. } => waker.notify_one(),
                    }
                }
            });
            let (room, taker) = (runs.clone(), runs.clone());
            tokio::spawn(replicas::watch(
                store,
                runs.replica.clone(),
                wake,
                move || room.has_room(),
                move |lease| {
                    let taker = taker.clone();
                    tokio::spawn(async move { taker.take_over(lease).await });
                },
            ));
        }
        self.state
            .automations
            .start_schedules(Arc::new(automations::SystemClock));
        // The webhooks are outside the key's guard: the forge's signature is their key.
        let app = routes::router(self.state.clone())
            .merge(automations::router(self.state.automations.clone()));
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .context("cannot watch SIGTERM")?;
        tokio::select! {
            served = axum::serve(self.listener, app) => {
                served.context("the server stopped")?;
            }
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
        Ok(runs.stop_all().await)
    }
}
