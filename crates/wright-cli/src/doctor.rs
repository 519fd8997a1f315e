//! `wright doctor`: what a user runs first. It finds the server and the model, reads the
//! real context window, probes tool calling (the answer is kept for `wright run`, see
//! `wright_session::tool_mode`), measures prefill and generation speed with a short request, checks the
//! sandbox, and gives concrete advice for each problem, once. Its rule is `run`'s: a
//! problem is what makes `run` fail (or silently wrong), exit 1; what `run` only warns
//! about (a small context window) is a note, exit 0. "ready" names the command that works,
//! with the flags doctor was given.

mod speed;
mod teaching;

use crate::hints::explain;
use crate::hints::Front;
use crate::settings::CommonArgs;
use crate::settings::RepoConfigSource;
use crate::settings::SessionSettings;
use anyhow::Result;
use clap::Args;
use serde_json::json;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;
use wright_llm::Client;
use wright_llm::LlmError;
use wright_protocol::ToolCalling;
use wright_sandbox::confine::Policy;
use wright_sandbox::Sandbox;
use wright_sandbox::SandboxMode;
use wright_session::connect::connect;
use wright_session::connect::context_window;
use wright_tools::ToolName;

#[derive(Args)]
pub struct DoctorArgs {
    /// Check this profile of your configuration.
    #[arg(long, conflicts_with = "all")]
    profile: Option<String>,
    /// Check every profile of your configuration, one after the other.
    #[arg(long)]
    all: bool,
    /// Check what `wright run -C DIR` would use: DIR's own .wright/config.toml counts, and
    /// the sandbox is checked there (default: your own setup, checked here).
    #[arg(short = 'C', long)]
    workspace: Option<PathBuf>,
    /// Model server URL (default: as `wright run` would choose it).
    #[arg(long)]
    base_url: Option<String>,
    /// Model name (default: as `wright run` would choose it).
    #[arg(long)]
    model: Option<String>,
    /// A GGUF file (or a model from `wright model ls`) for the embedded engine, as
    /// `wright run --model-file` (default: as `wright run` would choose it).
    #[arg(long, value_name = "PATH")]
    model_file: Option<String>,
    /// API key, if the server wants one (default: $OPENAI_API_KEY, or the profile's
    /// api_key_env).
    #[arg(long)]
    api_key: Option<String>,
    /// Never send more than this many tokens, as `wright run --context-window` (the
    /// window checked is the smaller of this and the server's).
    #[arg(long, allow_negative_numbers = true)]
    context_window: Option<i64>,
    /// The sandbox level to check (default: the configuration's, else auto).
    #[arg(long)]
    sandbox: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Default)]
struct Report {
    fields: serde_json::Map<String, Value>,
    /// What makes `run` fail: each said once, with its fix.
    problems: Vec<String>,
    /// What `run` warns about and goes on.
    notes: Vec<String>,
    lines: Vec<String>,
}

impl Report {
    fn set(&mut self, key: &str, value: Value, line: String) {
        self.fields.insert(key.to_string(), value);
        self.lines.push(line);
    }

    /// The verdict beside the findings, for JSON: `ok`, `problems`, `notes`, and the
    /// `run` command that has this setup.
    fn close_fields(&mut self, command: &str) {
        let ok = self.problems.is_empty();
        self.fields.insert("ok".into(), json!(ok));
        self.fields.insert("problems".into(), json!(self.problems));
        self.fields.insert("notes".into(), json!(self.notes));
        self.fields.insert("run".into(), json!(command));
    }

    /// A failed check: a short line in place, the sentence (with its fix) under "to fix".
    fn fail(&mut self, key: &str, line: String, problem: String) {
        self.set(key, Value::Null, format!("{line} (see below)"));
        self.problems.push(problem);
    }
}

impl DoctorArgs {
    /// The session flags these stand for, with `profile` chosen.
    fn common(&self, profile: Option<String>) -> CommonArgs {
        CommonArgs {
            profile,
            base_url: self.base_url.clone().filter(|v| !v.is_empty()),
            model: self.model.clone().filter(|v| !v.is_empty()),
            model_file: self.model_file.clone().filter(|v| !v.is_empty()),
            api_key: self.api_key.clone(),
            context_window: self.context_window,
            sandbox: self.sandbox.clone(),
            json: self.json,
            ..CommonArgs::default()
        }
    }

    /// The `wright run` command that has this setup: the flags doctor was given, for
    /// `profile`. Without them `run` may choose another server or model.
    fn run_command(&self, profile: Option<&str>) -> String {
        let mut words = vec!["wright".to_string(), "run".to_string()];
        let mut flag = |name: &str, value: Option<String>| {
            if let Some(value) = value {
                words.push(name.to_string());
                words.push(shell_word(&value));
            }
        };
        flag(
            "-C",
            self.workspace.as_ref().map(|d| d.display().to_string()),
        );
        flag("--profile", profile.map(str::to_string));
        flag(
            "--base-url",
            self.base_url.clone().filter(|v| !v.is_empty()),
        );
        flag("--model", self.model.clone().filter(|v| !v.is_empty()));
        flag(
            "--model-file",
            self.model_file.clone().filter(|v| !v.is_empty()),
        );
        // Never the key itself on the screen.
        flag(
            "--api-key",
            self.api_key.as_ref().map(|_| "KEY".to_string()),
        );
        flag(
            "--context-window",
            self.context_window.map(|n| n.to_string()),
        );
        flag("--sandbox", self.sandbox.clone());
        words.push("\"your task\"".to_string());
        words.join(" ")
    }
}

/// `word` as one shell word.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@=+,".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

pub async fn doctor(args: DoctorArgs) -> Result<u8> {
    args.common(None).check()?;
    // What `wright run` would use: with -C, the repository's own file too.
    let source = args
        .workspace
        .as_deref()
        .map(crate::config_cmds::source_of)
        .transpose()?;
    let profiles: Vec<Option<String>> = if args.all {
        let defined = crate::settings::merged(&args.common(None), source.as_ref())?.profiles();
        if defined.is_empty() {
            anyhow::bail!(
                "no profile is defined; add a [profiles.NAME] table to {}",
                wright_config::Config::user_file()
                    .map_or_else(|| "your configuration".into(), |p| p.display().to_string())
            );
        }
        defined.into_iter().map(Some).collect()
    } else {
        vec![args.profile.clone()]
    };
    let mut all_ok = true;
    let mut reports = serde_json::Map::new();
    for profile in profiles {
        let mut report = Report::default();
        if args.all {
            report.lines.push(format!(
                "profile    {}",
                profile.as_deref().unwrap_or_default()
            ));
        }
        if let Err(err) = check_profile(&args, profile.clone(), source.as_ref(), &mut report).await
        {
            report.fail("setup", "setup      not usable".into(), format!("{err:#}"));
        }
        let ok = report.problems.is_empty();
        all_ok &= ok;
        let command = args.run_command(profile.as_deref());
        if args.json {
            report.close_fields(&command);
            match &profile {
                Some(name) if args.all => {
                    reports.insert(name.clone(), Value::Object(report.fields));
                }
                _ => reports = report.fields,
            }
            continue;
        }
        for line in &report.lines {
            say!("{line}");
        }
        if ok {
            say!("\nready: `{command}` will work with this setup.");
        } else {
            say!("\nto fix:");
            for problem in &report.problems {
                say!("  - {problem}");
            }
        }
        if !report.notes.is_empty() {
            say!(
                "{}",
                if ok {
                    "note (run warns too, and goes on):"
                } else {
                    "note:"
                }
            );
            for note in &report.notes {
                say!("  - {note}");
            }
        }
        if args.all {
            say!();
        }
    }
    if args.json {
        let value = if args.all {
            json!({"ok": all_ok, "profiles": reports})
        } else {
            Value::Object(reports)
        };
        crate::screen::out(&wright_protocol::escape_for_json_line(format!("{value}\n")));
    }
    Ok(if all_ok { 0 } else { 1 })
}

/// The report `wright doctor --json` prints for the setup `common` stands for (what a
/// server shows before a conversation starts).
pub async fn json_report(common: &CommonArgs) -> Value {
    let args = DoctorArgs {
        profile: common.profile.clone(),
        all: false,
        workspace: None,
        base_url: common.base_url.clone(),
        model: common.model.clone(),
        model_file: common.model_file.clone(),
        api_key: common.api_key.clone(),
        context_window: common.context_window,
        sandbox: common.sandbox.clone(),
        json: true,
    };
    let mut report = Report::default();
    if let Err(err) = check_profile(&args, args.profile.clone(), None, &mut report).await {
        report.fail("setup", "setup      not usable".into(), format!("{err:#}"));
    }
    let command = args.run_command(args.profile.as_deref());
    report.close_fields(&command);
    Value::Object(report.fields)
}

/// One profile (or the setup without one): its server and model, then the sandbox.
async fn check_profile(
    args: &DoctorArgs,
    profile: Option<String>,
    source: Option<&RepoConfigSource>,
    report: &mut Report,
) -> Result<()> {
    let settings = SessionSettings::resolve(&args.common(profile), source)?;
    let mut config = settings.client_config();
    config.idle_timeout = Duration::from_secs(300);
    match connect(settings.server_choice(), config.clone()).await {
        Ok(client) => check_model_server(client, &settings.values, report).await,
        Err(err) => {
            let problem = explain(&err, Front::CommandLine);
            match model_trouble(&err) {
                // The server answered; only the model is wrong: say what the server is.
                Some((url, what)) => {
                    config.base_url = url;
                    config.api_key = settings.values.api_key.clone();
                    if let Ok(client) = Client::new(config) {
                        let info = client.probe_server().await;
                        server_lines(&info, &client.config().base_url, report);
                    }
                    report.fail("model", format!("model      {what}"), problem);
                }
                None => report.fail("server", "server     none usable".into(), problem),
            }
        }
    }
    let workspace = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()?,
    };
    teaching::check_teaching(&workspace, report)?;
    check_sandbox(&settings.values.sandbox_level, workspace, report);
    Ok(())
}

/// When the server answered and only the model is wrong: its URL, and the trouble in a
/// few words.
fn model_trouble(err: &LlmError) -> Option<(String, String)> {
    match err.last() {
        LlmError::ModelNotFound { model, url, .. } => {
            Some((url.clone(), format!("'{model}' is not on this server")))
        }
        LlmError::ModelRequired { url, .. } => Some((
            url.clone(),
            "none chosen, and the server has several".into(),
        )),
        LlmError::NoModels { url } => {
            Some((url.clone(), "none: the server serves no model".into()))
        }
        _ => None,
    }
}

fn server_lines(info: &wright_llm::probe::ServerInfo, base_url: &str, report: &mut Report) {
    let version = info
        .version
        .clone()
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    report.set(
        "server",
        json!({"kind": info.kind.name(), "version": info.version, "url": base_url}),
        format!("server     {}{version} at {base_url}", info.kind.name()),
    );
    report.set(
        "models",
        json!(info.models),
        format!("models     {}", info.models.join(", ")),
    );
}

async fn check_model_server(
    mut client: Client,
    values: &wright_config::Settings,
    report: &mut Report,
) {
    let info = client.probe_server().await;
    server_lines(&info, &client.config().base_url.clone(), report);
    if let Some(engine) = wright_session::embedded::loaded_engine(&client.config().model) {
        engine_lines(engine.info(), report);
    }
    report.set(
        "model",
        json!(client.config().model),
        format!("model      {}", client.config().model),
    );
    // Which tools a run would give this model (see `session::choose_tools`): `fetch` only
    // where its commands would have the web, as the run builds them.
    let web = wright_session::sandbox_setup::SandboxOptions::of(values, false).has_web();
    let chosen = wright_session::choose_tools(&values.tools, &client.config().model)
        .map(|(names, why)| (offered(names, web), why));
    match chosen {
        Ok((names, why)) => report.set(
            "tools",
            json!(names.iter().map(|n| n.as_str()).collect::<Vec<_>>()),
            format!(
                "tools      {} ({why})",
                names
                    .iter()
                    .map(|n| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        Err(err) => report.fail("tools", "tools      not usable".into(), format!("{err:#}")),
    }
    let window = context_window(&mut client, values.context_window).await;
    let client = &client;
    report.set(
        "context_window",
        json!({"tokens": window.tokens, "source": crate::drive::window_words(&window), "warning": window.warning}),
        format!("context    {}", crate::drive::window_words(&window)),
    );
    if let Some(warning) = &window.warning {
        // `run` warns about it and goes on: a note here too, not a failure.
        report.notes.push(warning.clone());
    }
    if let Some(processor) = &info.processor {
        report.set(
            "processor",
            json!(processor),
            format!("processor  {processor}"),
        );
    }
    match client.probe_native_tool_calling().await {
        Ok(native) => {
            let (mode, words) = if native {
                (
                    ToolCalling::Native,
                    "native (the server returns tool_calls)",
                )
            } else {
                (
                    ToolCalling::Text,
                    "text (the model writes calls as text; wright reads them)",
                )
            };
            // The next `wright run` on this server and model takes this answer.
            wright_session::tool_mode::remember(client, &window.server, mode, "doctor");
            report.set(
                "tool_calling",
                json!(mode.as_str()),
                format!("tool calls {words}"),
            );
            let asking = wright_session::constrain_mode::Asking {
                client,
                server: &window.server,
                kind: window.kind,
                tool_calling: mode,
            };
            // `run` takes this answer too (a chat never constrains its replies).
            let decision = wright_session::constrain_mode::doctor(&asking).await;
            report.set(
                "constraint",
                json!({"in_force": decision.constraint, "why": decision.why}),
                format!("constraint {}", decision.why),
            );
        }
        Err(err) => report.fail(
            "tool_calling",
            "tool calls the probe failed".into(),
            format!(
                "the tool-calling probe failed: {}",
                explain(&err, Front::CommandLine)
            ),
        ),
    }
    speed::measure_speed(client, report).await;
    if let Some(asked) = client.config().ollama_num_ctx {
        // What Ollama allocated once wright's requests loaded the model.
        let after = client.probe_server().await.allocated_context;
        report.set(
            "ollama_window",
            json!({"asked": asked, "before": info.allocated_context, "after": after}),
            format!(
                "window     Ollama allocated {} before wright's requests, {} after (asked: {asked})",
                info.allocated_context
                    .map_or_else(|| "nothing (not loaded)".to_string(), |n| n.to_string()),
                after.map_or_else(|| "nothing it reports".to_string(), |n| n.to_string()),
            ),
        );
        if after.is_some_and(|after| after < asked) {
            // Not a note: a run would not know, and the model would see a cut prompt.
            report.problems.push(format!(
                "Ollama allocated fewer tokens than asked ({asked}); it may lack the memory for that window: ask for less with context_window"
            ));
        }
    }
}

/// `names` as a run gives them: without `fetch` when the run has no web.
fn offered(mut names: Vec<ToolName>, web: bool) -> Vec<ToolName> {
    if !web {
        names.retain(|name| *name != ToolName::Fetch);
    }
    names
}

/// The embedded engine: what it was built with, the model file, and whether the model and
/// one conversation's cache fit in the memory free now.
fn engine_lines(info: &wright_engine::EngineInfo, report: &mut Report) {
    let built = if info.gpu_backends.is_empty() {
        "CPU only (GPU back ends are the cargo features cuda, metal and vulkan)".to_string()
    } else {
        format!("{} built in", info.gpu_backends.join(", "))
    };
    report.set(
        "engine",
        json!({"gpu_backends": info.gpu_backends, "threads": info.threads, "window": info.window}),
        format!(
            "engine     llama.cpp inside wright: {built}, {} threads, a window of {} tokens",
            info.threads, info.window
        ),
    );
    report.set(
        "model_file",
        json!({"path": info.model_file, "bytes": info.file_bytes, "parameters": info.parameters, "trained_window": info.trained_window}),
        format!(
            "model file {} ({}, {:.1} B parameters, trained for {} tokens)",
            info.model_file.display(),
            wright_engine::gib(info.file_bytes),
            info.parameters as f64 / 1e9,
            info.trained_window
        ),
    );
    let needed = info.file_bytes + info.cache_bytes();
    let free = wright_engine::available_memory();
    report.set(
        "engine_memory",
        json!({"model": info.file_bytes, "cache": info.cache_bytes(), "free": free}),
        format!(
            "memory     {} for the model + {} for a conversation's cache = {}; {} free now",
            wright_engine::gib(info.file_bytes),
            wright_engine::gib(info.cache_bytes()),
            wright_engine::gib(needed),
            free.map_or_else(|| "unknown".to_string(), wright_engine::gib)
        ),
    );
    if free.is_some_and(|free| needed > free) {
        report.problems.push(format!(
            "the model and one conversation's cache need {} of memory and {} is free: choose a smaller window with --context-window N, or a smaller model (`wright model ls`)",
            wright_engine::gib(needed),
            free.map_or_else(String::new, wright_engine::gib)
        ));
    }
}

fn check_sandbox(requested: &str, workspace: PathBuf, report: &mut Report) {
    let mode: SandboxMode = match requested.parse() {
        Ok(mode) => mode,
        Err(err) => {
            report.problems.push(err.to_string());
            return;
        }
    };
    if mode == SandboxMode::None {
        report.set(
            "sandbox",
            json!("none"),
            "sandbox    none (as asked): commands run unconfined".into(),
        );
        return;
    }
    let checked = (|| {
        let private = wright_sandbox::PrivateDir::create(&std::env::temp_dir(), "doctor")?;
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let mut policy = Policy::for_workspace(&workspace, &private, home.as_deref());
        policy.cgroup_description =
            "a cgroup of its own per run, where the cgroup tree is writable".into();
        let launcher = wright_session::Launcher::this_program()?;
        let result = Sandbox::for_mode(mode, launcher.path().to_path_buf(), &policy);
        drop(private);
        Ok::<_, anyhow::Error>(result?)
    })();
    match checked {
        Ok((_, Some(enforced))) => report.set(
            "sandbox",
            json!(enforced),
            format!("sandbox    {}", enforced.summary()),
        ),
        Ok((_, None)) => {}
        Err(err) => report.fail(
            "sandbox",
            "sandbox    unavailable".into(),
            format!("{err:#}"),
        ),
    }
}
