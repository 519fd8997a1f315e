//! Choosing the model server and model: flags, then the usual variables, then the local
//! servers that answer. Every dead end ends in a sentence that says what to do.

use anyhow::Result;
use wright_llm::discover_local_server;
use wright_llm::normalize_base_url;
use wright_llm::Client;
use wright_llm::ClientConfig;
use wright_llm::LlmError;

pub struct ServerChoice {
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key: Option<String>,
}

/// Returns a client for a model that exists on a server that answers.
pub async fn connect(choice: ServerChoice, mut config: ClientConfig) -> Result<Client, LlmError> {
    let ollama_host = std::env::var("OLLAMA_HOST").ok().filter(|v| !v.is_empty());
    let explicit = choice.base_url.or(ollama_host);
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
                    config.model = only_model(&config.base_url, models)?;
                    Client::new(config)
                }
            }
        }
        None => {
            let found = discover_local_server("127.0.0.1").await?;
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
                None => only_model(&found.base_url, found.models)?,
            };
            Client::new(config)
        }
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
