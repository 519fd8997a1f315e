//! Choosing the model server and model: the one the settings name (flags, variables,
//! files), else the local servers that answer, else a model in wright's store run by the
//! embedded engine. Every dead end ends in a sentence that says what to do.

use anyhow::Result;
use wright_llm::discover_local_server;
use wright_llm::normalize_base_url;
use wright_llm::Client;
use wright_llm::ClientConfig;
use wright_llm::LlmError;

// No Debug: it holds the API key.
#[derive(Clone)]
pub struct ServerChoice {
    pub base_url: Option<String>,
    /// A GGUF file (or a stored model's name) run by the embedded engine: no server.
    pub model_file: Option<String>,
    /// The user's window (`context_window`): the embedded engine sizes its cache for this
    /// many tokens (at most what the model was trained for) instead of its default.
    pub window: Option<u64>,
    pub model: Option<String>,
    /// Taken when no model is named and the server has it (a resumed conversation's).
    pub preferred_model: Option<String>,
    pub api_key: Option<String>,
}

/// Returns a client for a model that exists on a server that answers.
pub async fn connect(choice: ServerChoice, mut config: ClientConfig) -> Result<Client, LlmError> {
    if let Some(file) = &choice.model_file {
        return crate::embedded::client(file, choice.window, config);
    }
    let explicit = choice.base_url;
    config.api_key = choice.api_key.filter(|k| !k.is_empty());
    match explicit {
        Some(raw) => {
            config.base_url = normalize_base_url(&raw)?;
            match choice.model {
                Some(model) => {
                    config.model = model;
                    let client = Client::new(config)?;
                    client.check_model().await?;
                    Ok(client)
                }
                None => {
                    let probe = Client::new(config.clone())?;
                    let models = probe.list_models().await?;
                    config.model =
                        preferred_or_only(&config.base_url, choice.preferred_model, models)?;
                    Client::new(config)
                }
            }
        }
        None => {
            let found = match discover_local_server("127.0.0.1").await {
                Ok(found) => found,
                // Nothing named and no server here: the embedded engine, when a model
                // is stored (a named model is a server's: nothing to run it with here).
                Err(LlmError::NoServerFound { tried }) if choice.model.is_none() => {
                    let file = crate::embedded::stored_default(tried)?;
                    return crate::embedded::client(&file, choice.window, config);
                }
                Err(err) => return Err(err),
            };
            config.base_url = found.base_url.clone();
            config.model = match choice.model {
                Some(model) if found.models.is_empty() || found.models.contains(&model) => model,
                Some(model) => {
                    return Err(LlmError::ModelNotFound {
                        closest: wright_llm::closest_name(&model, &found.models),
                        model,
                        url: found.base_url,
                        available: found.models,
                    })
                }
                None => preferred_or_only(&found.base_url, choice.preferred_model, found.models)?,
            };
            Client::new(config)
        }
    }
}

fn preferred_or_only(
    url: &str,
    preferred: Option<String>,
    models: Vec<String>,
) -> Result<String, LlmError> {
    match preferred {
        Some(model) if models.contains(&model) => Ok(model),
        _ => only_model(url, models),
    }
}

fn only_model(url: &str, models: Vec<String>) -> Result<String, LlmError> {
    match models.as_slice() {
        [] => Err(LlmError::NoModels {
            url: url.to_string(),
        }),
        [one] => Ok(one.clone()),
        _ => Err(LlmError::ModelRequired {
            url: url.to_string(),
            available: models,
        }),
    }
}

/// The context window to respect, and where it comes from.
pub struct Window {
    pub tokens: Option<u64>,
    pub source: WindowSource,
    pub warning: Option<String>,
    /// What the server looks like (`tool_mode::identity`), read with the window.
    pub server: String,
    /// What kind of server it is (which constraints its documentation offers).
    pub kind: wright_llm::probe::ServerKind,
}

/// Where a window comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum WindowSource {
    /// The server said (`how`: how it was read).
    Server { how: String },
    /// The user's `context_window`, below the server's window (`server`, when it said).
    UserLimit { server: Option<u64> },
    /// Ollama, asked for it on its native API (`words`: what was asked, and why).
    Ollama { words: String },
    /// Nobody said: the server's kind did not tell.
    Unknown,
}

impl Window {
    /// Where the window comes from, in words that name settings, not flags (a front end
    /// words these its own way: the CLI names its flags).
    pub fn description(&self) -> String {
        let tokens = self.tokens.unwrap_or_default();
        match &self.source {
            WindowSource::Server { how } => format!("{tokens} tokens ({how})"),
            WindowSource::UserLimit { server: Some(server) } => {
                format!("{tokens} tokens (your context_window; the server has {server})")
            }
            WindowSource::UserLimit { server: None } => {
                format!("{tokens} tokens (your context_window)")
            }
            WindowSource::Ollama { words } => words.clone(),
            WindowSource::Unknown => format!(
                "unknown ({} did not say); set context_window so wright never sends more than it holds",
                self.kind.name()
            ),
        }
    }
}

/// The effective window: the smaller of what the server has and what the user set. On
/// Ollama, whose OpenAI-compatible endpoint ignores `num_ctx`, the client is switched to
/// its native chat API with the window asked for there, so the model gets that window.
pub async fn context_window(client: &mut Client, user_limit: Option<u64>) -> Window {
    let info = client.probe_server().await;
    // llama.cpp says how far it has read a long prompt, when asked: the live line shows it.
    if info.kind == wright_llm::probe::ServerKind::LlamaCpp && !client.config().prompt_progress {
        let mut config = client.config().clone();
        config.prompt_progress = true;
        if let Ok(asking) = client.reconfigured(config) {
            *client = asking;
        }
    }
    let server = crate::tool_mode::identity(&info);
    if let Some(ollama) = wright_llm::probe::ollama_window(&info, user_limit) {
        let mut config = client.config().clone();
        config.ollama_num_ctx = Some(ollama.num_ctx);
        if let Ok(native) = client.reconfigured(config) {
            *client = native;
            let warning = (ollama.tokens < 16384).then(|| {
                format!(
                    "the context window is only {} tokens: an agent forgets its plan in a window this small",
                    ollama.tokens
                )
            });
            return Window {
                tokens: Some(ollama.tokens),
                source: WindowSource::Ollama {
                    words: ollama.description,
                },
                warning,
                server,
                kind: info.kind,
            };
        }
    }
    let server_window = info.context.clone();
    let tokens = match (&server_window, user_limit) {
        (Some(context), Some(limit)) => Some(context.tokens.min(limit)),
        (Some(context), None) => Some(context.tokens),
        (None, limit) => limit,
    };
    let source = match (&server_window, user_limit) {
        (Some(context), Some(limit)) if limit < context.tokens => WindowSource::UserLimit {
            server: Some(context.tokens),
        },
        (Some(context), _) => WindowSource::Server {
            how: context.source.clone(),
        },
        (None, Some(_)) => WindowSource::UserLimit { server: None },
        (None, None) => WindowSource::Unknown,
    };
    let warning = match (&server_window, tokens) {
        (Some(context), Some(tokens)) if tokens < 16384 => {
            let advice = wright_llm::probe::small_window_advice(info.kind, context)
                .unwrap_or_else(|| "raise the server's context window".to_string());
            Some(format!(
                "the context window is only {tokens} tokens: an agent forgets its plan in a window this small. {advice}"
            ))
        }
        (None, Some(tokens)) if tokens < 16384 => Some(format!(
            "the context window is only {tokens} tokens: an agent forgets its plan in a window this small"
        )),
        _ => None,
    };
    Window {
        tokens,
        source,
        warning,
        server,
        kind: info.kind,
    }
}

/// What the model server said it is, before a new conversation's first request.
pub struct Probed {
    pub window: Window,
    pub tool_calling: wright_protocol::ToolCalling,
    pub tool_calling_why: String,
    pub constraint: crate::constrain_mode::Decision,
}

/// Asks the model server for its context window (first: on Ollama it decides the wire,
/// which the probes then use), how it takes tool calls, and whether its replies can be
/// constrained.
pub async fn ask_the_server(
    client: &mut Client,
    settings: &wright_config::Settings,
    replies: crate::Replies,
) -> Result<Probed> {
    let window = context_window(client, settings.context_window).await;
    let (tool_calling, tool_calling_why) =
        crate::tool_mode::decide(&settings.tool_calling, client, &window.server).await?;
    let constraint = match replies {
        crate::Replies::AlwaysCalls => {
            let asking = crate::constrain_mode::Asking {
                client,
                server: &window.server,
                kind: window.kind,
                tool_calling,
            };
            crate::constrain_mode::decide(&settings.constrain, &asking).await?
        }
        crate::Replies::MayBeWords => crate::constrain_mode::Decision {
            constraint: None,
            why: "none (in a chat a reply may be words)".into(),
        },
    };
    Ok(Probed {
        window,
        tool_calling,
        tool_calling_why,
        constraint,
    })
}
