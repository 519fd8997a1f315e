//! The `constrain` setting (`auto` or `off`): whether the server is asked to hold every reply to a tool call
//! (see `wright_llm::constrain`). `auto` takes the constraint the server's kind documents
//! for the tool-calling mode in force, and uses it only once a probe (one small model
//! request) has shown the server enforces it, not merely accepts it. The answer is kept
//! in `$XDG_CACHE_HOME/wright/constraint.json` under the rules of `tool_mode`'s cache
//! (same URL, model and mode, the server looking the same, at most `MAX_AGE` old), and
//! `wright doctor`'s probe goes there too.

use crate::tool_mode::MAX_AGE;
use anyhow::bail;
use anyhow::Result;
use serde::Deserialize;
use serde::Serialize;
use std::collections::BTreeMap;
use wright_llm::constrain::is_small_model;
use wright_llm::constrain::ActiveConstraint;
use wright_llm::constrain::CallShape;
use wright_llm::constrain::Constraint;
use wright_llm::constrain::Enforcement;
use wright_llm::probe::ServerKind;
use wright_llm::Client;
use wright_protocol::ToolCalling;
use wright_tools::Toolbox;

/// The constraint probes' answers, in the cache directory.
const CACHE_FILE: &str = "constraint.json";

/// What a probe found, as kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Verdict {
    Enforced,
    Ignored,
    Refused { message: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Probed {
    constraint: Constraint,
    verdict: Verdict,
    server: String,
    probed_at: u64,
    by: String,
}

fn cache_key(client: &Client, constraint: Constraint) -> String {
    format!("{} {}", crate::tool_mode::key(client), constraint.field())
}

fn read_cache() -> BTreeMap<String, Probed> {
    crate::probe_cache::read(CACHE_FILE)
}

fn remember(client: &Client, server: &str, constraint: Constraint, verdict: &Verdict, by: &str) {
    let mut cache = read_cache();
    let now = crate::tool_mode::now();
    cache.retain(|_, probed| now.saturating_sub(probed.probed_at) <= MAX_AGE.as_secs());
    cache.insert(
        cache_key(client, constraint),
        Probed {
            constraint,
            verdict: verdict.clone(),
            server: server.to_string(),
            probed_at: now,
            by: by.to_string(),
        },
    );
    crate::probe_cache::write(CACHE_FILE, &cache);
}

/// The constraint decided for a run, and how, in words for the header and doctor.
#[derive(Debug, Clone)]
pub struct Decision {
    pub constraint: Option<Constraint>,
    pub why: String,
}

impl Decision {
    fn none(why: impl Into<String>) -> Self {
        Self {
            constraint: None,
            why: why.into(),
        }
    }
}

/// What the server is and what wright asks of it.
pub struct Asking<'a> {
    pub client: &'a Client,
    /// `tool_mode::identity` of the server, as this run read it.
    pub server: &'a str,
    pub kind: ServerKind,
    pub tool_calling: ToolCalling,
}

/// The constraint to try on this server in this mode, or why there is none.
fn candidate(asking: &Asking<'_>) -> Result<Constraint, String> {
    let native = asking.tool_calling == ToolCalling::Native;
    let ollama_api = asking.client.config().ollama_num_ctx.is_some();
    let mode = match native {
        true => "native tool calls",
        false => "calls written as text",
    };
    let Some(constraint) = wright_llm::constrain::candidate(asking.kind, native, ollama_api) else {
        return Err(format!(
            "none ({} documents no way to constrain {mode})",
            asking.kind.name()
        ));
    };
    if asking
        .client
        .config()
        .extra
        .contains_key(constraint.field())
    {
        return Err(format!(
            "none (your profile's extra sets {} itself)",
            constraint.field()
        ));
    }
    Ok(constraint)
}

/// The constraint for `requested` ("auto" or "off"), probing the server when no recent
/// answer is kept for it. A failed probe leaves the run unconstrained, never stopped.
pub async fn decide(requested: &str, asking: &Asking<'_>) -> Result<Decision> {
    match requested {
        "off" => return Ok(Decision::none("off (as asked)")),
        "auto" => {}
        other => bail!("unknown constraint setting '{other}'; choose auto or off"),
    }
    let constraint = match candidate(asking) {
        Ok(constraint) => constraint,
        Err(why) => return Ok(Decision::none(why)),
    };
    let cached = read_cache().remove(&cache_key(asking.client, constraint));
    if let Some(probed) = cached {
        let age = crate::tool_mode::now().saturating_sub(probed.probed_at);
        if probed.server == asking.server && age <= MAX_AGE.as_secs() {
            let how = format!(
                "probed by {} {} ago",
                probed.by,
                crate::tool_mode::shown_age(age)
            );
            return Ok(decision(constraint, &probed.verdict, &how));
        }
    }
    Ok(probe(asking, constraint, "run").await)
}

/// Probes `constraint` now and keeps the answer (`by`: who probed).
async fn probe(asking: &Asking<'_>, constraint: Constraint, by: &str) -> Decision {
    let reasoning = is_small_model(&asking.client.config().model);
    let verdict = match asking.client.probe_constraint(constraint, reasoning).await {
        Ok(Enforcement::Enforced) => Verdict::Enforced,
        Ok(Enforcement::Ignored) => Verdict::Ignored,
        Ok(Enforcement::Refused(message)) => Verdict::Refused { message },
        Err(err) => {
            return Decision::none(format!(
                "none (the probe of {} failed: {err})",
                constraint.describe(),
            ))
        }
    };
    remember(asking.client, asking.server, constraint, &verdict, by);
    decision(constraint, &verdict, "probed now")
}

fn decision(constraint: Constraint, verdict: &Verdict, how: &str) -> Decision {
    let what = constraint.describe();
    match verdict {
        Verdict::Enforced => Decision {
            constraint: Some(constraint),
            why: format!("{what} (the server enforces it; {how})"),
        },
        Verdict::Ignored => Decision::none(format!(
            "none (the server takes {what} but does not enforce it; {how})"
        )),
        Verdict::Refused { message } => Decision::none(format!(
            "none (the server refuses {what}: {}; {how})",
            wright_protocol::printable(message)
        )),
    }
}

/// The tools a run offers under `constraint`: a small model held to a schema with a
/// `reasoning` field has its room to think there, and a `think` tool besides draws it
/// into thinking in circles (the 1.5B wrote four identical thoughts and no action).
pub fn fit_tools(toolbox: &Toolbox, constraint: Option<Constraint>, model: &str) -> Toolbox {
    let reasons_in_schema = constraint.is_some_and(|c| c != Constraint::ToolChoice);
    if reasons_in_schema && is_small_model(model) {
        toolbox.without("think")
    } else {
        toolbox.clone()
    }
}

/// Puts `constraint` on `client` for every call `toolbox` can take (one shape per command
/// of a tool that has several): built once, the same bytes in every request of the
/// conversation.
pub fn apply(client: &mut Client, constraint: Option<Constraint>, toolbox: &Toolbox) {
    let reasoning = is_small_model(&client.config().model);
    let shapes: Vec<CallShape> = toolbox
        .call_shapes()
        .into_iter()
        .map(|(name, arguments)| CallShape { name, arguments })
        .collect();
    client.set_constraint(
        constraint.map(|kind| ActiveConstraint::of_shapes(kind, &shapes, reasoning)),
    );
}

/// `wright doctor`: probes the constraint for the mode it found, keeps the answer for the
/// next run, and says it.
pub async fn doctor(asking: &Asking<'_>) -> Decision {
    match candidate(asking) {
        Ok(constraint) => probe(asking, constraint, "doctor").await,
        Err(why) => Decision::none(why),
    }
}
