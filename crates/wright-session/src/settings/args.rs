//! The settings `run`, `chat`, `resume`, `fork`, the server and the editor's agent share
//! (`CommonArgs`): each is a configuration key given for one invocation (a flag, or a
//! request's field), checked as the configuration checks that key. With the `clap`
//! feature they are the command line's flags.

use anyhow::Result;
use wright_config::assist::Piece;
use wright_config::Config;

/// The flag that sets one piece of the help.
const ASSIST_PIECE: &str = "--assist-piece";

#[derive(Clone, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct CommonArgs {
    /// Use this profile of your configuration (a [profiles.NAME] table; default: the
    /// `profile` key, or $WRIGHT_PROFILE).
    #[cfg_attr(feature = "clap", arg(long))]
    pub profile: Option<String>,
    /// Go on with these profiles, in order, when the one in use cannot (its server down
    /// or overloaded, the request too large for it, the model stuck); default: the
    /// `fallback` key.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "PROFILE,…", value_delimiter = ',')
    )]
    pub fallback: Vec<String>,
    /// Model server URL (default: $OPENAI_BASE_URL, $OLLAMA_HOST, the configuration's
    /// base_url, else the local servers that answer).
    #[cfg_attr(feature = "clap", arg(long))]
    pub base_url: Option<String>,
    /// Run this GGUF model file (or a model from `wright model ls`) in wright's embedded
    /// engine: no server needed (default: $WRIGHT_MODEL_FILE, the configuration's
    /// model_file).
    #[cfg_attr(feature = "clap", arg(long, value_name = "PATH"))]
    pub model_file: Option<String>,
    /// Model name (default: $OPENAI_MODEL, the configuration's model, else the server's
    /// only model).
    #[cfg_attr(feature = "clap", arg(long))]
    pub model: Option<String>,
    /// API key, if the server wants one (default: $OPENAI_API_KEY, or the variable the
    /// profile's api_key_env names).
    #[cfg_attr(feature = "clap", arg(long))]
    pub api_key: Option<String>,
    /// Stop after this many model steps (default 50).
    #[cfg_attr(feature = "clap", arg(long, allow_negative_numbers = true))]
    pub max_steps: Option<i64>,
    /// Stop once the conversation has used this many tokens (prompt + completion).
    #[cfg_attr(feature = "clap", arg(long, allow_negative_numbers = true))]
    pub max_tokens: Option<i64>,
    /// Stop after this many seconds.
    #[cfg_attr(feature = "clap", arg(long, allow_negative_numbers = true))]
    pub max_time: Option<i64>,
    /// Stop once the conversation has cost this much, at the profile's price_in and
    /// price_out (per million tokens).
    #[cfg_attr(feature = "clap", arg(long, allow_negative_numbers = true))]
    pub max_cost: Option<f64>,
    /// Confinement of the model's commands: auto, landlock, namespaces, docker or none
    /// (default auto).
    #[cfg_attr(feature = "clap", arg(long))]
    pub sandbox: Option<String>,
    /// Image for --sandbox docker: any image with bash (default: $WRIGHT_DOCKER_IMAGE, else
    /// debian:bookworm-slim; an image with the project's toolchain is better, e.g. rust:1
    /// or python:3.12).
    #[cfg_attr(feature = "clap", arg(long))]
    pub docker_image: Option<String>,
    /// The Docker engine for --sandbox docker: unix:///PATH or tcp://HOST:PORT (default:
    /// $DOCKER_HOST, else unix:///var/run/docker.sock). The docker client the terminal
    /// runs is given the same address.
    #[cfg_attr(feature = "clap", arg(long, value_name = "ADDRESS"))]
    pub docker_host: Option<String>,
    /// How the workspace reaches the container: bind (mounted: the engine must run on
    /// this machine) or copy (sent through the engine, brought back after each command);
    /// default bind for a unix:// engine, copy for any other.
    #[cfg_attr(feature = "clap", arg(long, value_name = "bind|copy"))]
    pub docker_workspace: Option<String>,
    /// Let the model's commands use the network (off by default).
    #[cfg_attr(feature = "clap", arg(long))]
    pub network: bool,
    /// `--allow-host` of `run`, `chat`, `resume` and `fork` (see `NetArgs`; `serve` has an `--allow-host` of
    /// its own, for the Host header, and takes these per conversation or from the config).
    #[cfg_attr(feature = "clap", arg(skip))]
    pub allow_hosts: Vec<String>,
    /// Most processes the model's commands may run at once (default 512).
    #[cfg_attr(feature = "clap", arg(long, allow_negative_numbers = true))]
    pub max_processes: Option<i64>,
    /// Memory limit for all the model's commands together, in MiB (default: half the RAM,
    /// at most 16 GiB).
    #[cfg_attr(feature = "clap", arg(long, allow_negative_numbers = true))]
    pub max_memory: Option<i64>,
    /// Largest file a command may write, in MiB (default 4096).
    #[cfg_attr(feature = "clap", arg(long, allow_negative_numbers = true))]
    pub max_file_size: Option<i64>,
    /// Stop when the agent's files (workspace, private tmp and home) have grown by this
    /// many MiB (default: half the free space at the start).
    #[cfg_attr(feature = "clap", arg(long, allow_negative_numbers = true))]
    pub max_disk: Option<i64>,
    /// How tool calls travel: auto (probe the server once, remember), native, or text
    /// (tools described in the prompt, calls read from the reply).
    #[cfg_attr(feature = "clap", arg(long))]
    pub tool_calling: Option<String>,
    /// Hold every reply of a run to a tool call where the server enforces it (auto: probe
    /// the server once, remember; off: never).
    #[cfg_attr(feature = "clap", arg(long))]
    pub constrain: Option<String>,
    /// How much wright helps the model (the workspace map, the tests run before the
    /// first step and after each edit, the failure read apart, …): auto (as the model
    /// needs: by its name, the connection probe and what it does during the run), on, off
    /// (default auto).
    #[cfg_attr(feature = "clap", arg(long, value_name = "auto|on|off"))]
    pub assist: Option<String>,
    /// One piece of the help set apart from --assist (see `wright_config::assist`).
    #[cfg_attr(
        feature = "clap",
        arg(
            long = "assist-piece",
            value_name = "PIECE=LEVEL",
            value_delimiter = ',',
            help = wright_config::assist::pieces_short_help(),
            long_help = wright_config::assist::pieces_help()
        )
    )]
    pub assist_pieces: Vec<String>,
    /// Deprecated: `--assist-piece map=on|off`.
    #[cfg_attr(feature = "clap", arg(long, hide = true))]
    pub map: Option<String>,
    /// Deprecated: `--assist-piece retest=on|off`.
    #[cfg_attr(feature = "clap", arg(long, hide = true))]
    pub retest: Option<String>,
    /// Deprecated: `--assist-piece last-change=on|off`.
    #[cfg_attr(feature = "clap", arg(long, hide = true))]
    pub last_change: Option<String>,
    /// Deprecated: `--assist-piece candidates=auto|on|off`.
    #[cfg_attr(feature = "clap", arg(long, hide = true))]
    pub candidates: Option<String>,
    /// Deprecated: `--assist-piece first-look=auto|on|off`.
    #[cfg_attr(
        feature = "clap",
        arg(long, hide = true, value_parser = ["auto", "on", "off"])
    )]
    pub first_look: Option<String>,
    /// Deprecated: `--assist-piece reading=auto|on|off`.
    #[cfg_attr(
        feature = "clap",
        arg(long, hide = true, value_parser = ["auto", "on", "off"])
    )]
    pub reading: Option<String>,
    /// The model's tools: auto (small for a model whose name says 8B or less, else full),
    /// small, full, or names separated by commas (terminal,file_editor,grep,glob,
    /// task_tracker,think,finish; finish is always there).
    #[cfg_attr(feature = "clap", arg(long, value_name = "SET"))]
    pub tools: Option<String>,
    /// Never send more than this many tokens, even if the server's window is larger.
    #[cfg_attr(feature = "clap", arg(long, allow_negative_numbers = true))]
    pub context_window: Option<i64>,
    /// Condense the history when a request would pass this share of the window (default
    /// 0.75).
    #[cfg_attr(feature = "clap", arg(long, allow_negative_numbers = true))]
    pub condense_at: Option<f64>,
    /// Print the event log's lines on stdout instead of progress on stderr.
    #[cfg_attr(feature = "clap", arg(long))]
    pub json: bool,
    /// Say everything in the header: the sandbox's whole description (by default one
    /// short line: its level, the network, what the agent may write).
    #[cfg_attr(feature = "clap", arg(long))]
    pub verbose: bool,
    /// Ask for whole replies instead of streamed ones.
    #[cfg_attr(feature = "clap", arg(long))]
    pub no_stream: bool,
    /// Sampling temperature sent to the server (default: the server's).
    #[cfg_attr(feature = "clap", arg(long, allow_negative_numbers = true))]
    pub temperature: Option<f64>,
    /// Seconds of silence from the server before a request is given up (default 600).
    #[cfg_attr(feature = "clap", arg(long, allow_negative_numbers = true))]
    pub idle_timeout: Option<i64>,
    /// Most tokens one reply may generate (a small model can ramble until its window is
    /// full; 0 leaves it to the server; default 4096).
    #[cfg_attr(feature = "clap", arg(long, allow_negative_numbers = true))]
    pub max_reply_tokens: Option<i64>,
    /// Take the repository's .wright/config.toml for this run although it asks for more
    /// than the defaults and you have not approved it (`wright allow repo-config` approves
    /// it for good).
    #[cfg_attr(feature = "clap", arg(long))]
    pub allow_repo_config: bool,
    /// Let the repository's hooks and setup script run (in the sandbox) for this run
    /// although you have not approved their content (`wright allow repo-hooks` approves
    /// it for good).
    #[cfg_attr(feature = "clap", arg(long))]
    pub allow_repo_hooks: bool,
    /// Let the repository's MCP servers (.wright/mcp.json, .mcp.json) start (in the
    /// sandbox) for this run although you have not approved their content (`wright allow
    /// repo-mcp` approves it for good).
    #[cfg_attr(feature = "clap", arg(long))]
    pub allow_repo_mcp: bool,
    /// Let this run send the repository's code to a model server that is not on this
    /// machine, where egress is `ask` (`wright allow egress HOST` allows it for good).
    #[cfg_attr(feature = "clap", arg(long))]
    pub allow_remote: bool,
    /// When no server answers and no model is stored, download the default model for
    /// wright's embedded engine without asking (`wright model ls` shows it).
    #[cfg_attr(feature = "clap", arg(long))]
    pub pull: bool,
    /// When to ask before an action runs: never, risky (high or unknown risk: pushes,
    /// installs, the network, deleting many files, writing outside the workspace, …) or
    /// always (default: risky for chat and serve, never for run; resume and fork: as the
    /// conversation last ran).
    #[cfg_attr(feature = "clap", arg(long, value_name = "never|risky|always"))]
    pub confirm: Option<String>,
    /// Give the shell this secret (stored with `wright secrets set NAME`) as the
    /// environment variable NAME, masked in everything logged, shown or sent; repeatable.
    #[cfg_attr(feature = "clap", arg(long = "secret", value_name = "NAME"))]
    pub secrets: Vec<String>,
    /// Not a flag: the secrets a server gives one user's conversation, in place of the
    /// program's own (`--secret`, the configuration's grants), which it then never gets.
    #[cfg_attr(feature = "clap", arg(skip))]
    pub given_secrets: Option<Vec<(String, String)>>,
}

/// A flag whose value its key's type or range refuses: the flag, then what is wrong
/// with its value (worded to follow the flag, or a front end's own name for it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{flag}{problem}")]
pub struct BadFlag {
    pub flag: &'static str,
    /// What follows the flag's name: " 'x' is out of range: …" or ": …".
    pub problem: String,
}

impl BadFlag {
    fn new(flag: &'static str, problem: String) -> Self {
        Self { flag, problem }
    }
}

impl CommonArgs {
    /// Checks every flag given against its key's type and range (the configuration's
    /// own check, so a flag and a file accept the same values); called first, before
    /// anything is read or made.
    pub fn check(&self) -> Result<(), BadFlag> {
        for (key, value, flag) in self.flags() {
            Config::check_flag(key, &value, flag).map_err(|err| match err {
                wright_config::ConfigError::Flag {
                    value, expected, ..
                } => BadFlag::new(
                    flag,
                    format!(" {value} is out of range: it must be {expected}"),
                ),
                other => BadFlag::new(flag, format!(": {other}")),
            })?;
        }
        for setting in &self.assist_pieces {
            wright_config::assist::parse_piece_setting(setting)
                .map_err(|err| BadFlag::new(ASSIST_PIECE, format!(" {err}")))?;
        }
        if let Some(tools) = &self.tools {
            wright_tools::ToolSet::parse(tools)
                .map_err(|err| BadFlag::new("--tools", format!(": {err}")))?;
        }
        if let Some(name) = self
            .secrets
            .iter()
            .find(|name| !wright_config::secrets::valid_name(name))
        {
            let err = wright_config::secrets::SecretError::InvalidName(name.clone());
            return Err(BadFlag::new("--secret", format!(": {err}")));
        }
        Ok(())
    }

    /// The flags given, as command-line words again (for the runs `--parallel` starts),
    /// `--profile` and `--json` left out: the caller gives those.
    pub fn words(&self) -> Vec<String> {
        let mut words = Vec::new();
        for (key, value, flag) in self.flags() {
            match value {
                _ if flag == "--profile" => {}
                // `--assist-piece` gives a key of its piece: said as PIECE=LEVEL again.
                toml::Value::String(level) if flag == ASSIST_PIECE => {
                    if let Some(piece) = Piece::ALL.into_iter().find(|p| p.path() == key) {
                        words.extend([flag.to_string(), format!("{}={level}", piece.word())]);
                    }
                }
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
    pub(crate) fn flags(&self) -> Vec<(&'static str, toml::Value, &'static str)> {
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
                "sandbox.docker_host",
                text(&self.docker_host),
                "--docker-host",
            ),
            (
                "sandbox.docker_workspace",
                text(&self.docker_workspace),
                "--docker-workspace",
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
            ("assist.level", text(&self.assist), "--assist"),
            // Deprecated: each an alias of its piece, warned about where it is read.
            ("map", text(&self.map), "--map"),
            ("run.retest", text(&self.retest), "--retest"),
            ("run.last_change", text(&self.last_change), "--last-change"),
            ("run.candidates", text(&self.candidates), "--candidates"),
            ("run.first_look", text(&self.first_look), "--first-look"),
            ("run.reading", text(&self.reading), "--reading"),
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
        // Each piece set apart (those that do not read were refused by `check`).
        for setting in &self.assist_pieces {
            if let Ok((piece, level)) = wright_config::assist::parse_piece_setting(setting) {
                flags.push((
                    piece.path(),
                    Some(Value::String(level.as_str().to_string())),
                    ASSIST_PIECE,
                ));
            }
        }
        flags
            .drain(..)
            .filter_map(|(key, value, flag)| value.map(|value| (key, value, flag)))
            .collect()
    }
}
