//! `wright serve`: the agent server (`wright_server`), with this program's settings: each
//! conversation's are resolved as `wright run` resolves them (the serve command's flags
//! are every conversation's defaults, a request may change a few), and nobody is ever
//! asked anything. Prints where it listens and, when it made one, the key.

use crate::settings::CommonArgs;
use crate::settings::SessionSettings;
use anyhow::Result;
use clap::Args;
use std::path::Path;
use std::sync::Arc;
use wright_core::Conversation;
use wright_core::ResumeNotes;
use wright_protocol::ConfirmMode;
use wright_server::NewConversation;
use wright_session::Front;
use wright_session::Session;

#[derive(Args)]
pub struct ServeArgs {
    /// The address to listen on; one that is not loopback needs WRIGHT_SERVER_KEY.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The port to listen on (0: any free one, printed).
    #[arg(long, default_value_t = 3000)]
    port: u16,
    /// Most conversations running at once; the others wait, queued.
    #[arg(long, default_value_t = 2)]
    max_runs: usize,
    /// A host name requests may name besides the loopback ones and --host (behind a
    /// proxy, say); repeatable.
    #[arg(long = "allow-host", value_name = "NAME")]
    allow_hosts: Vec<String>,
    /// The repository the OpenAI-compatible endpoint (/v1/chat/completions) works on.
    #[arg(long, value_name = "DIR")]
    workspace: Option<std::path::PathBuf>,
    /// The settings of every conversation, as for `wright run` (a request may set its
    /// model, server, profile, sandbox, limits, tool calling and tools).
    #[command(flatten)]
    common: CommonArgs,
}

pub async fn serve(args: ServeArgs) -> Result<u8> {
    // Not dumpable: no command of an agent (same user, no capabilities) reads this
    // process's memory or environment, where the key is.
    let _ = nix::sys::prctl::set_dumpable(false);
    let mut defaults = args.common.clone();
    // Nobody is at a terminal for the conversations: nothing is asked.
    defaults.json = true;
    defaults.check()?;
    // An embedded engine gives each run at once a cache of its own, and one more for
    // side requests (summaries, questions asked aside).
    wright_session::embedded::set_conversations(args.max_runs + 1);
    let key = std::env::var("WRIGHT_SERVER_KEY")
        .ok()
        .filter(|k| !k.is_empty());
    let options = wright_server::Options {
        host: args.host,
        port: args.port,
        key,
        max_runs: args.max_runs,
        allowed_hosts: args.allow_hosts,
        workspace: args
            .workspace
            .map(|dir| std::path::absolute(&dir))
            .transpose()?,
    };
    let bound = wright_server::Bound::bind(options, Arc::new(CliStarter { defaults })).await?;
    let address = bound.address();
    say!("wright serve: listening on http://{address}");
    if bound.key().generated() {
        say!(
            "  key {} (made for this run; set WRIGHT_SERVER_KEY to choose one)",
            bound.key().as_str()
        );
    } else {
        say!("  key from WRIGHT_SERVER_KEY");
    }
    say!("  send it as `Authorization: Bearer KEY` or `X-Session-API-Key: KEY`; the API is at /openapi.json");
    say!("  in a browser, open once: {}", bound.browser_url());
    let stopped = bound.serve().await?;
    say!(
        "wright serve: stopped ({} stopped after logging the step in flight; a message goes on with each)",
        wright_protocol::count(stopped as u64, "run")
    );
    Ok(0)
}

/// Sessions as `wright run` and `wright resume` prepare them.
struct CliStarter {
    defaults: CommonArgs,
}

impl CliStarter {
    fn args(&self, settings: &wright_server::Settings) -> CommonArgs {
        let mut args = self.defaults.clone();
        let text = |given: &Option<String>, default: &mut Option<String>| {
            if given.is_some() {
                *default = given.clone();
            }
        };
        text(&settings.model, &mut args.model);
        text(&settings.base_url, &mut args.base_url);
        text(&settings.profile, &mut args.profile);
        text(&settings.sandbox, &mut args.sandbox);
        text(&settings.tool_calling, &mut args.tool_calling);
        text(&settings.tools, &mut args.tools);
        text(&settings.confirm, &mut args.confirm);
        if let Some(hosts) = &settings.allow_hosts {
            args.allow_hosts = hosts.clone();
        }
        args.max_steps = settings.max_steps.or(args.max_steps);
        args.max_time = settings.max_time.or(args.max_time);
        args.max_tokens = settings.max_tokens.or(args.max_tokens);
        args
    }
}

#[async_trait::async_trait]
impl wright_server::Starter for CliStarter {
    fn check(&self, settings: &wright_server::Settings) -> Result<()> {
        self.args(settings).check()
    }

    async fn prepare(
        &self,
        id: String,
        request: &NewConversation,
        workspace: &Path,
        front: &dyn Front,
    ) -> Result<Session> {
        let args = self.args(&request.settings);
        // The server asks before risky actions unless told otherwise.
        crate::unattended::prepare(&args, id, workspace, Some(ConfirmMode::Risky), front).await
    }

    async fn reopen(
        &self,
        dir: &Path,
        settings: &wright_server::Settings,
        front: &dyn Front,
    ) -> Result<(Session, Conversation, ResumeNotes)> {
        // The request's settings (over the server's record of the conversation's) name
        // the model it goes on with, or nothing does.
        let named =
            settings.model.is_some() || settings.base_url.is_some() || settings.profile.is_some();
        crate::unattended::reopen(
            &self.args(settings),
            dir,
            Some(ConfirmMode::Risky),
            crate::going_on::Naming::Request { named },
            front,
        )
        .await
    }

    fn sandbox(
        &self,
        settings: &wright_server::Settings,
        source: &crate::settings::RepoConfigSource,
    ) -> Result<wright_session::SandboxChoice> {
        SessionSettings::resolve(&self.args(settings), Some(source))?.sandbox_choice()
    }

    async fn doctor(&self, settings: &wright_server::Settings) -> serde_json::Value {
        crate::doctor::json_report(&self.args(settings)).await
    }

    async fn models(&self) -> Result<wright_server::Models> {
        let settings = SessionSettings::resolve(&self.defaults, None)?;
        let choice = settings.server_choice();
        let (base_url, models) = match &choice.base_url {
            Some(url) => {
                let url = wright_llm::normalize_base_url(url)?;
                // Nothing is asked of a server the code may not go to, not even its models.
                settings.check_egress(&url)?;
                let mut config = settings.client_config();
                config.base_url = url.clone();
                config.api_key = choice.api_key.clone();
                let client = wright_llm::Client::new(config)?;
                (url, client.list_models().await?)
            }
            None => {
                let found = wright_llm::discover_local_server("127.0.0.1").await?;
                (found.base_url, found.models)
            }
        };
        Ok(wright_server::Models { base_url, models })
    }
}
