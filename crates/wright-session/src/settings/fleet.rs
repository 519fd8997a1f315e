//! The command line's side of fallback between profiles: the profiles of `fallback`
//! (or `--fallback`) resolved once before the run starts — each checked against the
//! egress policy as the first profile is, so a profile whose server the repository's code
//! may not go to is left out before anything is sent, and said so in the header — the
//! first of the chain whose server answers found (`connect`), and the words for a switch,
//! a route and each model's share in the report and `wright show`.

use super::CommonArgs;
use super::SessionSettings;
use anyhow::bail;
use anyhow::Result;
use wright_core::Alternate;
use wright_protocol::count;
use wright_protocol::Event;
use wright_protocol::ModelAt;
use wright_protocol::ModelSwitch;
use wright_protocol::Route;
use wright_protocol::SwitchReason;

/// The profiles to go on with, each with its own settings, and those left out.
#[derive(Default)]
pub struct Fleet {
    pub members: Vec<Member>,
    /// The header's lines about the profiles the egress policy left out.
    pub left_out: Vec<String>,
}

/// A fallback profile: its settings (its server, model and prices) and its client.
pub struct Member {
    pub settings: SessionSettings,
    pub alternate: Alternate,
}

impl Fleet {
    /// Resolves `settings`' fallback list (the profile in use, and any named twice, left
    /// out). A profile that does not exist, or names no server and model, is an error; one
    /// the egress policy refuses is left out with the reason.
    pub fn resolve(settings: &SessionSettings, args: &CommonArgs) -> Result<Self> {
        let mut fleet = Fleet::default();
        let mut seen: Vec<String> = settings.values.profile.iter().cloned().collect();
        for name in &settings.values.fallback {
            if seen.contains(name) {
                continue;
            }
            seen.push(name.clone());
            // The profile's own server and model: a --base-url or --model given for the
            // first profile is not this one's.
            let given = CommonArgs {
                profile: Some(name.clone()),
                base_url: None,
                model: None,
                api_key: None,
                ..args.clone()
            };
            let other = settings.resolve_again(&given)?;
            let (Some(base_url), Some(model)) = (&other.values.base_url, &other.values.model)
            else {
                bail!("the fallback profile '{name}' must name its server and model (base_url and model in [profiles.{name}])");
            };
            let base_url = wright_llm::normalize_base_url(base_url)?;
            if let Err(refused) = other.check_egress(&base_url) {
                fleet
                    .left_out
                    .push(format!("fallback {name}: left out — {refused}"));
                continue;
            }
            let mut config = other.client_config();
            config.base_url = base_url;
            config.model = model.clone();
            config.api_key = other.values.api_key.clone().filter(|k| !k.is_empty());
            let client = wright_llm::Client::new(config)?;
            let alternate = Alternate {
                profile: name.clone(),
                client,
                price: other.values.price,
                context_window: other.values.context_window,
            };
            fleet.members.push(Member {
                settings: other,
                alternate,
            });
        }
        Ok(fleet)
    }
}

/// The header's line about a fallback profile.
pub fn fallback_line(alternate: &Alternate) -> String {
    format!(
        "fallback {} ({} on {})",
        alternate.profile,
        alternate.client.config().model,
        alternate.client.config().base_url
    )
}

pub fn model_words(at: &ModelAt) -> String {
    match &at.profile {
        Some(profile) => format!("{} ({profile})", at.model),
        None => at.model.clone(),
    }
}

/// A switch, in one line: `model switch at step 3: small (local) → big (hosted): its
/// server stayed overloaded (…)`.
pub fn switch_line(switch: &ModelSwitch) -> String {
    format!(
        "model switch at step {}: {}",
        switch.step,
        switch_words(&switch.from, &switch.to, switch.reason, &switch.detail)
    )
}

/// `small (local) → big (hosted) on URL: its server could not be reached (…)`.
pub fn switch_words(from: &ModelAt, to: &ModelAt, reason: SwitchReason, detail: &str) -> String {
    format!(
        "{} → {} on {}: {} ({detail})",
        model_words(from),
        model_words(to),
        to.base_url,
        reason.describe(),
    )
}

/// How the profile was chosen, in one line.
pub fn route_line(route: &Route) -> String {
    format!("profile {}: {}", route.profile, route.why)
}

/// What each model did and cost, when more than one worked on the conversation.
pub fn share_lines(events: &[Event]) -> Vec<String> {
    let shares = wright_protocol::by_model(events);
    if shares.len() < 2 {
        return Vec::new();
    }
    let mut lines = vec!["by model:".to_string()];
    for share in shares {
        let cost = share
            .cost
            .map(|cost| format!(" · cost {cost:.4}"))
            .unwrap_or_default();
        lines.push(format!(
            "  {} on {}: {} · {} prompt tokens · {} generated{cost}",
            match &share.profile {
                Some(profile) => format!("{} ({profile})", share.model),
                None => share.model.clone(),
            },
            share.base_url,
            count(u64::from(share.steps), "step"),
            share.prompt_tokens,
            share.completion_tokens
        ));
    }
    lines
}
