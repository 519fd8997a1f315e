//! `wright doctor`: what a user runs first. It finds the server and the model, reads the
//! real context window, probes tool calling, measures prefill and generation speed with a
//! short request, checks the sandbox, and gives concrete advice for each problem. Exit
//! status 1 when the setup cannot work.

use crate::connect::connect;
use crate::connect::context_window;
use crate::session::CommonArgs;
use crate::settings::SessionSettings;
use anyhow::Result;
use clap::Args;
use serde_json::json;
use serde_json::Value;
use std::time::Duration;
use wright_llm::ChatMessage;
use wright_llm::Client;
use wright_sandbox::confine::Policy;
use wright_sandbox::Sandbox;
use wright_sandbox::SandboxMode;

#[derive(Args)]
pub struct DoctorArgs {
    /// Check this profile of your configuration.
    #[arg(long, conflicts_with = "all")]
    profile: Option<String>,
    /// Check every profile of your configuration, one after the other.
    #[arg(long)]
    all: bool,
    /// Model server URL (default: as `wright run` would choose it).
    #[arg(long)]
    base_url: Option<String>,
    #[arg(long)]
    model: Option<String>,
    #[arg(long)]
    api_key: Option<String>,
    /// The sandbox level to check (default: the configuration's, else auto).
    #[arg(long)]
    sandbox: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

struct Report {
    fields: serde_json::Map<String, Value>,
    problems: Vec<String>,
    lines: Vec<String>,
}

impl Report {
    fn set(&mut self, key: &str, value: Value, line: String) {
        self.fields.insert(key.to_string(), value);
        self.lines.push(line);
    }
}

impl DoctorArgs {
    /// The session flags these stand for, with `profile` chosen.
    fn common(&self, profile: Option<String>) -> CommonArgs {
        CommonArgs {
            profile,
            base_url: self.base_url.clone().filter(|v| !v.is_empty()),
            model: self.model.clone().filter(|v| !v.is_empty()),
            api_key: self.api_key.clone(),
            sandbox: self.sandbox.clone(),
            json: self.json,
            ..CommonArgs::default()
        }
    }
}

pub async fn doctor(args: DoctorArgs) -> Result<u8> {
    // What `wright run` would use, but without a repository's own file: doctor checks
    // the user's setup, wherever it is run.
    let profiles: Vec<Option<String>> = if args.all {
        let defined = crate::settings::merged(&args.common(None), None)?.profiles();
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
        let mut report = Report {
            fields: serde_json::Map::new(),
            problems: Vec::new(),
            lines: Vec::new(),
        };
        if args.all {
            report.lines.push(format!(
                "profile    {}",
                profile.as_deref().unwrap_or_default()
            ));
        }
        let checked = check_profile(&args, profile.clone(), &mut report).await;
        if let Err(err) = checked {
            report.set(
                "server",
                Value::Null,
                format!("server     none usable: {err:#}"),
            );
            report.problems.push(format!("{err:#}"));
        }
        let ok = report.problems.is_empty();
        all_ok &= ok;
        if args.json {
            report.fields.insert("ok".into(), json!(ok));
            report
                .fields
                .insert("problems".into(), json!(report.problems));
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
            say!("\nready: `wright run \"your task\"` will work with this setup.");
        } else {
            say!("\nto fix:");
            for problem in &report.problems {
                say!("  - {problem}");
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

/// One profile (or the setup without one): its server and model, then the sandbox.
async fn check_profile(
    args: &DoctorArgs,
    profile: Option<String>,
    report: &mut Report,
) -> Result<()> {
    let settings = SessionSettings::resolve(&args.common(profile), None)?;
    let mut config = settings.client_config();
    config.idle_timeout = Duration::from_secs(300);
    match connect(settings.server_choice(), config).await {
        Ok(client) => check_model_server(client, settings.values.context_window, report).await,
        Err(err) => {
            report.set(
                "server",
                Value::Null,
                format!("server     none usable: {err}"),
            );
            report.problems.push(err.to_string());
        }
    }
    check_sandbox(&settings.values.sandbox_level, report);
    Ok(())
}

async fn check_model_server(mut client: Client, user_window: Option<u64>, report: &mut Report) {
    let info = client.probe_server().await;
    let base_url = &client.config().base_url;
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
    report.set(
        "model",
        json!(client.config().model),
        format!("model      {}", client.config().model),
    );
    let window = context_window(&mut client, user_window).await;
    let client = &client;
    report.set(
        "context_window",
        json!({"tokens": window.tokens, "source": window.description, "warning": window.warning}),
        format!("context    {}", window.description),
    );
    if let Some(warning) = &window.warning {
        report.lines.push(format!("           warning: {warning}"));
        report.problems.push(warning.clone());
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
            let words = if native {
                "native (the server returns tool_calls)"
            } else {
                "text (the model writes calls as text; wright reads them)"
            };
            report.set(
                "tool_calling",
                json!(if native { "native" } else { "text" }),
                format!("tools      {words}"),
            );
        }
        Err(err) => {
            report.set(
                "tool_calling",
                Value::Null,
                format!("tools      probe failed: {err}"),
            );
            report
                .problems
                .push(format!("the tool-calling probe failed: {err}"));
        }
    }
    measure_speed(client, report).await;
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
            report.problems.push(format!(
                "Ollama allocated fewer tokens than asked ({asked}); it may lack the memory for that window: ask for less with context_window"
            ));
        }
    }
}

/// One short streamed request: prefill and generation speed as this machine gets them.
async fn measure_speed(client: &Client, report: &mut Report) {
    let mut config = client.config().clone();
    config.max_tokens = Some(32);
    config.temperature = Some(0.0);
    config.stream = true;
    let Ok(probe) = Client::new(config) else {
        return;
    };
    let messages = [ChatMessage::User {
        // A prompt the server has not seen (so nothing comes from its cache) and long
        // enough for the prefill rate to mean something.
        content: format!(
            "Request {}. {} Count from 1 to 20, separated by spaces.",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
            "This line is only here to give the model something to read before it answers. "
                .repeat(6)
        ),
    }];
    match probe.complete(&messages, &[], "speed", &mut |_| {}).await {
        Ok(response) => {
            let usage = response.usage.clone().unwrap_or_default();
            let prefill_ms = usage.prompt_ms.unwrap_or(response.first_byte_ms);
            let generation_ms = usage.predicted_ms.unwrap_or(response.generation_ms);
            let rate = |tokens: u64, ms: f64| {
                (ms > 0.0 && tokens > 0).then(|| tokens as f64 * 1000.0 / ms)
            };
            // Only the tokens the server actually processed: a cached prefix costs nothing.
            let processed = usage
                .prompt_tokens
                .saturating_sub(usage.cached_tokens.unwrap_or(0));
            let prefill = rate(processed, prefill_ms);
            let generation = rate(usage.completion_tokens, generation_ms);
            let shown =
                |r: Option<f64>| r.map_or("unknown".to_string(), |r| format!("{r:.0} tokens/s"));
            report.set(
                "speed",
                json!({"prefill_tokens_per_s": prefill, "generation_tokens_per_s": generation}),
                format!(
                    "speed      prefill {}, generation {}",
                    shown(prefill),
                    shown(generation)
                ),
            );
        }
        Err(err) => {
            report.set(
                "speed",
                Value::Null,
                format!("speed      request failed: {err}"),
            );
            report
                .problems
                .push(format!("a short request failed: {err}"));
        }
    }
}

fn check_sandbox(requested: &str, report: &mut Report) {
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
        let workspace = std::env::current_dir()?;
        let private = wright_sandbox::PrivateDir::create(&std::env::temp_dir(), "doctor")?;
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let mut policy = Policy::for_workspace(&workspace, &private, home.as_deref());
        policy.cgroup_description =
            "a cgroup of its own per run, where the cgroup tree is writable".into();
        let launcher = std::env::current_exe()?;
        let result = Sandbox::for_mode(mode, launcher, &policy);
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
        Err(err) => {
            report.set(
                "sandbox",
                Value::Null,
                format!("sandbox    unavailable: {err}"),
            );
            report.problems.push(err.to_string());
        }
    }
}
