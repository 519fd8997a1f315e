//! From the command line, the environment and the configuration files to what one session
//! runs with. The repository's own `.wright/config.toml` is read from the user's
//! repository at the commit the conversation starts from (through git's object store,
//! never the work tree or the agent's clone), or from a plain directory without leaving
//! it; a file that asks for more than the defaults is taken only once the user approved
//! its exact content (recorded by hash), by a flag for one run, or by answering at the
//! terminal. Where the model server is not on this machine, `egress` decides whether the
//! repository's code may go there.

mod merge;
pub use merge::merged;
pub use merge::merged_routed;

use crate::ask;
use crate::hints::explain;
use crate::hints::Front;
use anyhow::bail;
use anyhow::Result;
use clap::Args;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;
use wright_config::consent;
use wright_config::consent::Consent;
use wright_config::Config;
use wright_config::EgressVerdict;
use wright_config::Settings;
use wright_core::Limits;
use wright_llm::Client;
use wright_llm::ClientConfig;
use wright_sandbox::SandboxMode;
use wright_session::connect::connect;
use wright_session::connect::ServerChoice;
pub use wright_session::repo_config::RepoConfigSource;
use wright_session::repo_config::RepoFile;
use wright_session::sandbox_setup::SandboxOptions;

#[derive(Args, Clone, Default)]
pub struct CommonArgs {
    /// Use this profile of your configuration (a [profiles.NAME] table; default: the
    /// `profile` key, or $WRIGHT_PROFILE).
    #[arg(long)]
    pub profile: Option<String>,
    /// Go on with these profiles, in order, when the one in use cannot (its server down
    /// or overloaded, the request too large for it, the model stuck); default: the
    /// `fallback` key.
    #[arg(long, value_name = "PROFILE,…", value_delimiter = ',')]
    pub fallback: Vec<String>,
    /// Model server URL (default: $OPENAI_BASE_URL, $OLLAMA_HOST, the configuration's
    /// base_url, else the local servers that answer).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Run this GGUF model file (or a model from `wright model ls`) in wright's embedded
    /// engine: no server needed (default: $WRIGHT_MODEL_FILE, the configuration's
    /// model_file).
    #[arg(long, value_name = "PATH")]
    pub model_file: Option<String>,
    /// Model name (default: $OPENAI_MODEL, the configuration's model, else the server's
    /// only model).
    #[arg(long)]
    pub model: Option<String>,
    /// API key, if the server wants one (default: $OPENAI_API_KEY, or the variable the
    /// profile's api_key_env names).
    #[arg(long)]
    pub api_key: Option<String>,
    /// Stop after this many model steps (default 50).
    #[arg(long, allow_negative_numbers = true)]
    pub max_steps: Option<i64>,
    /// Stop once the conversation has used this many tokens (prompt + completion).
    #[arg(long, allow_negative_numbers = true)]
    pub max_tokens: Option<i64>,
    /// Stop after this many seconds.
    #[arg(long, allow_negative_numbers = true)]
    pub max_time: Option<i64>,
    /// Stop once the conversation has cost this much, at the profile's price_in and
    /// price_out (per million tokens).
    #[arg(long, allow_negative_numbers = true)]
    pub max_cost: Option<f64>,
    /// Confinement of the model's commands: auto, landlock, namespaces, docker or none
    /// (default auto).
    #[arg(long)]
    pub sandbox: Option<String>,
    /// Image for --sandbox docker: any image with bash (default: $WRIGHT_DOCKER_IMAGE, else
    /// debian:bookworm-slim; an image with the project's toolchain is better, e.g. rust:1
    /// or python:3.12).
    #[arg(long)]
    pub docker_image: Option<String>,
    /// Let the model's commands use the network (off by default).
    #[arg(long)]
    pub network: bool,
    /// `--allow-host` of `run`, `chat`, `resume` and `fork` (see `NetArgs`; `serve` has an `--allow-host` of
    /// its own, for the Host header, and takes these per conversation or from the config).
    #[arg(skip)]
    pub allow_hosts: Vec<String>,
    /// Most processes the model's commands may run at once (default 512).
    #[arg(long, allow_negative_numbers = true)]
    pub max_processes: Option<i64>,
    /// Memory limit for all the model's commands together, in MiB (default: half the RAM,
    /// at most 16 GiB).
    #[arg(long, allow_negative_numbers = true)]
    pub max_memory: Option<i64>,
    /// Largest file a command may write, in MiB (default 4096).
    #[arg(long, allow_negative_numbers = true)]
    pub max_file_size: Option<i64>,
    /// Stop when the agent's files (workspace, private tmp and home) have grown by this
    /// many MiB (default: half the free space at the start).
    #[arg(long, allow_negative_numbers = true)]
    pub max_disk: Option<i64>,
    /// How tool calls travel: auto (probe the server once, remember), native, or text
    /// (tools described in the prompt, calls read from the reply).
    #[arg(long)]
    pub tool_calling: Option<String>,
    /// Hold every reply of a run to a tool call where the server enforces it (auto: probe
    /// the server once, remember; off: never).
    #[arg(long)]
    pub constrain: Option<String>,
    /// A map of the workspace (its files, languages, test and build commands, recent
    /// commits) at the head of a new conversation's first message: on or off (default on).
    #[arg(long, value_name = "on|off")]
    pub map: Option<String>,
    /// The model's tools: auto (small for a model whose name says 8B or less, else full),
    /// small, full, or names separated by commas (terminal,file_editor,grep,glob,
    /// task_tracker,think,finish; finish is always there).
    #[arg(long, value_name = "SET")]
    pub tools: Option<String>,
    /// Never send more than this many tokens, even if the server's window is larger.
    #[arg(long, allow_negative_numbers = true)]
    pub context_window: Option<i64>,
    /// Condense the history when a request would pass this share of the window (default
    /// 0.75).
    #[arg(long, allow_negative_numbers = true)]
    pub condense_at: Option<f64>,
    /// Print the event log's lines on stdout instead of progress on stderr.
    #[arg(long)]
    pub json: bool,
    /// Say everything in the header: the sandbox's whole description (by default one
    /// short line: its level, the network, what the agent may write).
    #[arg(long)]
    pub verbose: bool,
    /// Ask for whole replies instead of streamed ones.
    #[arg(long)]
    pub no_stream: bool,
    /// Sampling temperature sent to the server (default: the server's).
    #[arg(long, allow_negative_numbers = true)]
    pub temperature: Option<f64>,
    /// Seconds of silence from the server before a request is given up (default 600).
    #[arg(long, allow_negative_numbers = true)]
    pub idle_timeout: Option<i64>,
    /// Most tokens one reply may generate (a small model can ramble until its window is
    /// full; 0 leaves it to the server; default 4096).
    #[arg(long, allow_negative_numbers = true)]
    pub max_reply_tokens: Option<i64>,
    /// Take the repository's .wright/config.toml for this run although it asks for more
    /// than the defaults and you have not approved it (`wright allow repo-config` approves
    /// it for good).
    #[arg(long)]
    pub allow_repo_config: bool,
    /// Let the repository's hooks and setup script run (in the sandbox) for this run
    /// although you have not approved their content (`wright allow repo-hooks` approves
    /// it for good).
    #[arg(long)]
    pub allow_repo_hooks: bool,
    /// Let the repository's MCP servers (.wright/mcp.json, .mcp.json) start (in the
    /// sandbox) for this run although you have not approved their content (`wright allow
    /// repo-mcp` approves it for good).
    #[arg(long)]
    pub allow_repo_mcp: bool,
    /// Let this run send the repository's code to a model server that is not on this
    /// machine, where egress is `ask` (`wright allow egress HOST` allows it for good).
    #[arg(long)]
    pub allow_remote: bool,
    /// When no server answers and no model is stored, download the default model for
    /// wright's embedded engine without asking (`wright model ls` shows it).
    #[arg(long)]
    pub pull: bool,
    /// When to ask before an action runs: never, risky (high or unknown risk: pushes,
    /// installs, the network, deleting many files, writing outside the workspace, …) or
    /// always (default: risky for chat and serve, never for run; resume and fork: as the
    /// conversation last ran).
    #[arg(long, value_name = "never|risky|always")]
    pub confirm: Option<String>,
    /// Give the shell this secret (stored with `wright secrets set NAME`) as the
    /// environment variable NAME, masked in everything logged, shown or sent; repeatable.
    #[arg(long = "secret", value_name = "NAME")]
    pub secrets: Vec<String>,
}

impl CommonArgs {
    /// Checks every flag given against its key's type and range (the configuration's
    /// own check, so a flag and a file accept the same values); called first, before
    /// anything is read or made.
    pub fn check(&self) -> Result<()> {
        for (key, value, flag) in self.flags() {
            Config::check_flag(key, &value, flag)?;
        }
        if let Some(tools) = &self.tools {
            wright_tools::ToolSet::parse(tools).map_err(|err| anyhow::anyhow!("--tools: {err}"))?;
        }
        if let Some(name) = self
            .secrets
            .iter()
            .find(|name| !wright_config::secrets::valid_name(name))
        {
            bail!(
                "--secret: {}",
                wright_config::secrets::SecretError::InvalidName(name.clone())
            );
        }
        Ok(())
    }

    /// The flags given, as command-line words again (for the runs `--parallel` starts),
    /// `--profile` and `--json` left out: the caller gives those.
    pub fn words(&self) -> Vec<String> {
        let mut words = Vec::new();
        for (_, value, flag) in self.flags() {
            match value {
                _ if flag == "--profile" => {}
                toml::Value::Boolean(_) => words.push(flag.to_string()),
                toml::Value::String(text) => words.extend([flag.to_string(), text]),
                other => words.extend([flag.to_string(), other.to_string()]),
            }
        }
        for (given, flag) in [
            (self.allow_repo_config, "--allow-repo-config"),
            (self.allow_repo_hooks, "--allow-repo-hooks"),
            (self.allow_remote, "--allow-remote"),
            (self.pull, "--pull"),
        ] {
            if given {
                words.push(flag.to_string());
            }
        }
        for name in &self.secrets {
            words.extend(["--secret".to_string(), name.clone()]);
        }
        words
    }

    /// The flags given, as configuration values with their flag's name.
    fn flags(&self) -> Vec<(&'static str, toml::Value, &'static str)> {
        use toml::Value;
        let text = |v: &Option<String>| v.clone().map(Value::String);
        let int = |v: Option<i64>| v.map(Value::Integer);
        let mut flags = vec![
            ("profile", text(&self.profile), "--profile"),
            (
                "fallback",
                (!self.fallback.is_empty()).then(|| {
                    Value::Array(self.fallback.iter().cloned().map(Value::String).collect())
                }),
                "--fallback",
            ),
            ("base_url", text(&self.base_url), "--base-url"),
            ("model_file", text(&self.model_file), "--model-file"),
            ("model", text(&self.model), "--model"),
            ("api_key", text(&self.api_key), "--api-key"),
            ("run.max_steps", int(self.max_steps), "--max-steps"),
            ("run.max_tokens", int(self.max_tokens), "--max-tokens"),
            ("run.max_time", int(self.max_time), "--max-time"),
            ("max_cost", self.max_cost.map(Value::Float), "--max-cost"),
            ("sandbox.level", text(&self.sandbox), "--sandbox"),
            (
                "sandbox.docker_image",
                text(&self.docker_image),
                "--docker-image",
            ),
            (
                "sandbox.network",
                self.network.then_some(Value::Boolean(true)),
                "--network",
            ),
            (
                "sandbox.allow_hosts",
                (!self.allow_hosts.is_empty()).then(|| {
                    Value::Array(
                        self.allow_hosts
                            .iter()
                            .cloned()
                            .map(Value::String)
                            .collect(),
                    )
                }),
                "--allow-host",
            ),
            (
                "sandbox.max_processes",
                int(self.max_processes),
                "--max-processes",
            ),
            ("sandbox.max_memory", int(self.max_memory), "--max-memory"),
            (
                "sandbox.max_file_size",
                int(self.max_file_size),
                "--max-file-size",
            ),
            ("sandbox.max_disk", int(self.max_disk), "--max-disk"),
            ("tool_calling", text(&self.tool_calling), "--tool-calling"),
            ("constrain", text(&self.constrain), "--constrain"),
            ("map", text(&self.map), "--map"),
            ("tools", text(&self.tools), "--tools"),
            ("confirm", text(&self.confirm), "--confirm"),
            (
                "context_window",
                int(self.context_window),
                "--context-window",
            ),
            (
                "run.condense_at",
                self.condense_at.map(Value::Float),
                "--condense-at",
            ),
            (
                "run.stream",
                self.no_stream.then_some(Value::Boolean(false)),
                "--no-stream",
            ),
            (
                "temperature",
                self.temperature.map(Value::Float),
                "--temperature",
            ),
            ("run.idle_timeout", int(self.idle_timeout), "--idle-timeout"),
            (
                "max_reply_tokens",
                int(self.max_reply_tokens),
                "--max-reply-tokens",
            ),
        ];
        flags
            .drain(..)
            .filter_map(|(key, value, flag)| value.map(|value| (key, value, flag)))
            .collect()
    }
}

/// Refuses an empty or blank task or message (`what` names it for the sentence): the
/// agent would run on nothing and spend steps guessing.
pub fn check_text(text: &str, what: &str, example: &str) -> Result<()> {
    if text.trim().is_empty() {
        bail!("the {what} is empty: say what the agent should do, for example {example}");
    }
    Ok(())
}

/// A server's failure to answer, worded for `front`; for a resumed conversation (`logged`:
/// its server and model) with how to name its server again.
pub fn server_failure(
    err: &wright_llm::LlmError,
    logged: Option<(&str, &str)>,
    front: Front,
) -> String {
    match logged {
        Some((url, model)) => format!(
            "{}\n  this conversation worked with {model} on {url}; wright does not take a server from a log: pass --base-url {url} to use it again",
            explain(err, front)
        ),
        None => explain(err, front),
    }
}

/// What a session runs with, and how it was decided.
pub struct SessionSettings {
    pub values: Settings,
    /// The repository (or directory) the session works on, for consent.
    pub repo: Option<PathBuf>,
    pub json: bool,
    allow_remote: bool,
    /// What they were resolved from, to resolve them again with another profile.
    args: CommonArgs,
    source: Option<RepoConfigSource>,
    /// How the profile was chosen, when routing rules were applied.
    pub route: Option<wright_protocol::Route>,
}

impl SessionSettings {
    /// Resolves everything for a session on `source`'s repository.
    pub fn resolve(args: &CommonArgs, source: Option<&RepoConfigSource>) -> Result<Self> {
        Self::resolve_routed(args, source, None)
    }

    /// `resolve`, with the routing rules of `command` (see `wright_config::route`).
    pub fn resolve_routed(
        args: &CommonArgs,
        source: Option<&RepoConfigSource>,
        command: Option<wright_config::RouteCommand>,
    ) -> Result<Self> {
        let (config, route) = merged_routed(args, source, command)?;
        let repo = source.map(|s| s.key().to_path_buf());
        let values =
            Settings::from_config(&config, repo.as_deref(), |name| std::env::var(name).ok())?;
        values.sandbox_level.parse::<SandboxMode>()?;
        Ok(Self {
            values,
            repo,
            json: args.json,
            allow_remote: args.allow_remote,
            args: args.clone(),
            source: source.cloned(),
            route,
        })
    }

    /// The settings `args` give on the same repository (its file read as before).
    pub fn resolve_again(&self, args: &CommonArgs) -> Result<Self> {
        Self::resolve(args, self.source.as_ref())
    }

    /// The same settings with the profile `name` chosen (as by `--profile`).
    pub fn with_profile(&self, name: &str) -> Result<Self> {
        let args = CommonArgs {
            profile: Some(name.to_string()),
            ..self.args.clone()
        };
        Self::resolve(&args, self.source.as_ref())
    }

    /// The settings of a second agent on the profile `name` (`--review`): the profile's
    /// server, model and key, not those of this command line's flags.
    pub fn for_reviewer(&self, name: &str) -> Result<Self> {
        let args = CommonArgs {
            profile: Some(name.to_string()),
            base_url: None,
            model: None,
            api_key: None,
            ..self.args.clone()
        };
        Self::resolve(&args, self.source.as_ref())
    }

    pub fn sandbox_mode(&self) -> Result<SandboxMode> {
        Ok(self.values.sandbox_level.parse()?)
    }

    pub fn client_config(&self) -> ClientConfig {
        let values = &self.values;
        let mut config = ClientConfig::new("", "");
        config.stream = values.stream;
        config.temperature = values.temperature;
        config.idle_timeout = Duration::from_secs(values.idle_timeout.max(1));
        config.max_tokens = (values.max_reply_tokens > 0).then_some(values.max_reply_tokens);
        config.extra = values.extra.clone();
        config
    }

    /// Connects to the model server the settings name (else the local servers that
    /// answer). `logged` is a resumed conversation's (base URL, model): its model is
    /// preferred when the chosen server has it, but its server is never taken on the
    /// log's word — the user is told how to name it. The repository's egress setting is
    /// checked before anything of it is sent.
    pub async fn client(&self, logged: Option<(&str, &str)>, front: Front) -> Result<Client> {
        match self.try_client(logged).await? {
            Ok(client) => Ok(client),
            Err(err) => bail!("{}", server_failure(&err, logged, front)),
        }
    }

    /// `client`, with the server's own failure kept apart and typed (the outer error is
    /// a refusal of wright's: egress, a bad URL), for a caller that goes on with another
    /// profile when the server does not answer.
    pub async fn try_client(
        &self,
        logged: Option<(&str, &str)>,
    ) -> Result<std::result::Result<Client, wright_llm::LlmError>> {
        let choice = ServerChoice {
            preferred_model: logged.map(|(_, model)| model.to_string()),
            ..self.server_choice()
        };
        // Nothing is asked of a server the code may not go to, not even its models.
        if let Some(url) = &choice.base_url {
            self.check_egress(&wright_llm::normalize_base_url(url)?)?;
        }
        let client = match connect(choice.clone(), self.client_config()).await {
            Ok(client) => client,
            Err(wright_llm::LlmError::NothingToRun { .. }) if self.may_pull() => {
                crate::model_cmd::pull_default().await?;
                match connect(choice, self.client_config()).await {
                    Ok(client) => client,
                    Err(err) => return Ok(Err(err)),
                }
            }
            Err(err) => return Ok(Err(err)),
        };
        self.check_egress(&client.config().base_url)?;
        Ok(Ok(client))
    }

    /// Whether the default model may be downloaded now that nothing else can run: `--pull`,
    /// or the user's yes when someone is there to answer.
    fn may_pull(&self) -> bool {
        self.args.pull
            || (crate::ask::can_ask(self.json)
                && crate::ask::yes(&crate::model_cmd::pull_question()))
    }

    /// The server and model the settings name.
    pub fn server_choice(&self) -> ServerChoice {
        ServerChoice {
            base_url: self.values.base_url.clone(),
            model_file: self.values.model_file.clone(),
            window: self.values.context_window,
            model: self.values.model.clone(),
            preferred_model: None,
            api_key: self.values.api_key.clone(),
        }
    }

    /// A client for `model` on `base_url` with these settings (chat's /model: its errors
    /// are worded for the chat).
    pub async fn client_for(&self, base_url: &str, model: &str) -> Result<Client> {
        let choice = ServerChoice {
            base_url: Some(base_url.to_string()),
            model_file: None,
            window: None,
            model: Some(model.to_string()),
            preferred_model: None,
            api_key: self.values.api_key.clone(),
        };
        self.check_egress(&wright_llm::normalize_base_url(base_url)?)?;
        connect(choice, self.client_config())
            .await
            .map_err(|err| anyhow::anyhow!("{}", explain(&err, Front::Chat)))
    }

    /// Refuses a server the repository's code may not go to; asks, where egress is `ask`
    /// and someone can answer, for one that is not on this machine.
    pub fn check_egress(&self, base_url: &str) -> Result<()> {
        let destination = wright_llm::destination(base_url);
        let host = wright_llm::host_and_port(base_url);
        let repo = self.repo.as_deref();
        let mut record = Consent::open(&Consent::default_path())?;
        let granted = repo.is_some_and(|repo| record.allows(consent::Kind::Egress, repo, &host));
        match self.values.egress_verdict(destination, base_url, granted) {
            EgressVerdict::Allowed => Ok(()),
            EgressVerdict::Refused(why) => bail!("{why}"),
            EgressVerdict::Ask if self.allow_remote => Ok(()),
            EgressVerdict::Ask if ask::can_ask(self.json) => {
                let question = format!(
                    "The model server {base_url} is not on this machine: send this repository's code ({}) to {host}?",
                    repo.map_or_else(String::new, |r| r.display().to_string())
                );
                if !ask::yes(&question) {
                    bail!("not sent: the code stays here. Use a server on this machine, or allow {host} with `wright allow egress {host}`");
                }
                if let Some(repo) = repo {
                    record.allow(consent::Kind::Egress, repo, &host)?;
                }
                Ok(())
            }
            EgressVerdict::Ask => bail!(
                "the model server {base_url} is not on this machine, and this repository's code goes there only with your consent: pass --allow-remote for this run, run `wright allow egress {host}` in the repository to allow it for good, or set egress = \"any\""
            ),
        }
    }

    pub fn limits(&self) -> Limits {
        wright_session::limits(&self.values)
    }

    /// The sandbox these settings ask for, started through this program (`wright` is its
    /// own sandbox launcher).
    /// How the session's commands are confined, and the secrets its shell gets (those of
    /// `--secret` and those your configuration grants on this repository): a secret not
    /// stored is an error here, before anything starts.
    pub fn sandbox_choice(&self) -> Result<wright_session::SandboxChoice> {
        let secrets = wright_session::Grants::resolve(
            &self.args.secrets,
            &self.values.secrets,
            &wright_config::secrets::SecretStore::default_location(),
        )?;
        Ok(wright_session::SandboxChoice {
            mode: self.sandbox_mode()?,
            options: self.sandbox_options(),
            launcher: wright_session::Launcher::this_program()?,
            secrets,
            // Asked at a terminal; a front with nobody to ask says no.
            repo_hooks: match self.args.allow_repo_hooks {
                true => wright_session::RepoHooksChoice::AllowOnce,
                false => wright_session::RepoHooksChoice::Ask,
            },
            repo_mcp: match self.args.allow_repo_mcp {
                true => wright_session::RepoHooksChoice::AllowOnce,
                false => wright_session::RepoHooksChoice::Ask,
            },
        })
    }

    pub fn sandbox_options(&self) -> SandboxOptions {
        SandboxOptions::of(&self.values, self.args.verbose)
    }
}

/// The network allow-list of `run`, `chat`, `resume` and `fork` (not remembered by a
/// conversation: a grant is for the invocation that names it, as `--network` is).
#[derive(Args, Debug, Clone, Default)]
pub struct NetArgs {
    /// A host the model's commands may reach, with the network otherwise off: HOST (ports
    /// 80 and 443), HOST:PORT, or a glob such as '*.pythonhosted.org' (repeatable). Through
    /// wright's proxy; needs a network namespace (--sandbox auto or namespaces).
    #[arg(long = "allow-host", value_name = "HOST[:PORT]")]
    pub allow_hosts: Vec<String>,
}
