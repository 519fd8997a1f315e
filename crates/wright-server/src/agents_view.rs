//! `GET /api/agents`: the external agents the server's own configuration file defines
//! (`[agents.NAME]`), for the UI's New form, which starts one with `"settings": {"agent":
//! NAME}`.
//!
//! What it guarantees: an agent is given by its name and the hosts it may reach, never
//! its command or its environment (the API and the UI name an agent, never a command);
//! the route is the admin's (`tenancy`: users get 403), as starting an agent is unless
//! `[server] users_may` lets users.

use crate::error::ApiError;
use crate::routes::AppState;
use axum::extract::State;
use axum::Json;
use serde::Serialize;
use std::sync::Arc;
use utoipa::ToSchema;

/// One external agent, by name.
#[derive(Debug, Serialize, ToSchema)]
pub struct Agent {
    pub name: String,
    /// The hosts it (and so the conversation's commands) may reach through the proxy.
    pub allow_hosts: Vec<String>,
}

/// The external agents of the server's configuration file.
#[derive(Debug, Serialize, ToSchema)]
pub struct Agents {
    pub agents: Vec<Agent>,
    /// Why they could not be read, when they could not.
    pub error: Option<String>,
}

/// The external agents the server's own configuration file defines, by name.
#[utoipa::path(get, path = "/api/agents",
    responses((status = 200, body = Agents), (status = 403, body = crate::error::ErrorBody)))]
pub async fn agents(State(_state): State<Arc<AppState>>) -> Result<Json<Agents>, ApiError> {
    crate::actions::blocking(|| {
        let Some(file) = wright_config::Config::user_file() else {
            return Agents {
                agents: Vec::new(),
                error: Some("the server has no configuration file".into()),
            };
        };
        match wright_config::agents::load(&file) {
            Ok(found) => Agents {
                agents: found
                    .into_iter()
                    .map(|agent| Agent {
                        name: agent.name,
                        allow_hosts: agent.allow_hosts,
                    })
                    .collect(),
                error: None,
            },
            Err(err) => Agents {
                agents: Vec::new(),
                error: Some(err.to_string()),
            },
        }
    })
    .await
    .map(Json)
}
