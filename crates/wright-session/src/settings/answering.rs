//! The model a session starts on: the profile in use when its server answers, else the
//! first of its fallback profiles whose server does. Each profile that did not answer is
//! kept, for the conversation to log as a switch before its next step and for the
//! header to say. The egress policy is checked for every profile when the chain is
//! resolved (`Fleet::resolve`), before any server is asked anything, and again by the
//! connection itself.

use super::fleet::fallback_line;
use super::fleet::route_line;
use super::fleet::switch_words;
use super::fleet::Fleet;
use super::server_failure;
use super::CommonArgs;
use super::SessionSettings;
use crate::error::Tried;
use crate::profiles::Unanswered;
use crate::Profiles;
use crate::SessionError;
use wright_core::switch_reason;
use wright_llm::Client;
use wright_llm::LlmError;
use wright_protocol::ModelAt;

/// What a session starts with: the settings of the profile whose server answered, its
/// client, the profiles its conversations use, and the header's lines about them.
pub struct Connected {
    pub settings: SessionSettings,
    pub client: Client,
    pub profiles: Profiles,
    pub lines: Vec<String>,
}

/// Connects to `settings`' server or, when it does not answer (down, or overloaded) and
/// fallback profiles are configured, to the first of them that does; the profiles after
/// it stay the conversation's fallbacks. `logged`: a resumed conversation's server and
/// model (see `SessionSettings::client`). A failure that is the user's to fix (a bad key,
/// an unknown model) stops here as it did without fallback; when no server answers, the
/// error names each one tried.
pub async fn connect(
    settings: SessionSettings,
    args: &CommonArgs,
    logged: Option<(&str, &str)>,
) -> Result<Connected, SessionError> {
    let Fleet { members, left_out } = Fleet::resolve(&settings, args)?;
    let route = settings.route.clone();
    let mut members = members.into_iter();
    let (settings, client, unanswered) = match settings.try_client(logged).await? {
        Ok(client) => (settings, client, Vec::new()),
        Err(err) => {
            let Some(reason) = switch_reason(&err).filter(|_| members.len() > 0) else {
                return Err(server_failure(err, logged));
            };
            let first = Unanswered {
                at: first_at(&settings, logged),
                reason,
                detail: err.to_string(),
            };
            let mut tried = vec![Tried {
                at: first.at.clone(),
                error: err,
            }];
            let mut unanswered = vec![first];
            loop {
                let Some(member) = members.next() else {
                    return Err(SessionError::NoneAnswered { tried });
                };
                let at = model_at(
                    Some(member.alternate.profile.clone()),
                    &member.alternate.client,
                );
                match member.settings.try_client(None).await? {
                    Ok(client) => break (member.settings, client, unanswered),
                    Err(err) => {
                        let Some(reason) = switch_reason(&err) else {
                            return Err(SessionError::FallbackUnusable {
                                profile: member.alternate.profile.clone(),
                                error: Box::new(err),
                                tried,
                            });
                        };
                        unanswered.push(Unanswered {
                            at: at.clone(),
                            reason,
                            detail: err.to_string(),
                        });
                        tried.push(Tried { at, error: err });
                    }
                }
            }
        }
    };
    let in_use = model_at(settings.values.profile.clone(), &client);
    let mut lines: Vec<String> = route.iter().map(route_line).collect();
    for (at, gone) in unanswered.iter().enumerate() {
        let to = unanswered.get(at + 1).map_or(&in_use, |next| &next.at);
        lines.push(format!(
            "model switch at the start: {}",
            switch_words(&gone.at, to, gone.reason, &gone.detail)
        ));
    }
    let alternates: Vec<_> = members.map(|member| member.alternate).collect();
    let found = settings.values.profile.is_none()
        && settings.values.base_url.is_none()
        && settings.values.model_file.is_none();
    if let Some(first) = alternates
        .first()
        .filter(|_| found && unanswered.is_empty())
    {
        // `fallback` without `profile` reads as "use these": the first is only a fallback.
        lines.push(format!(
            "no profile chosen: this run starts on what was found here ({} on {}), and '{}' is only its fallback; to start on it, set profile = \"{}\" (or pass --profile {})",
            in_use.model, in_use.base_url, first.profile, first.profile, first.profile
        ));
    }
    lines.extend(alternates.iter().map(fallback_line));
    lines.extend(left_out);
    let profiles = Profiles {
        current: settings.values.profile.clone(),
        route,
        alternates,
        unanswered,
        chosen: None,
    };
    Ok(Connected {
        settings,
        client,
        profiles,
        lines,
    })
}

/// `client`'s model and server, under `profile`.
pub fn model_at(profile: Option<String>, client: &Client) -> ModelAt {
    let base_url = client.config().base_url.clone();
    ModelAt {
        profile,
        model: client.config().model.clone(),
        destination: wright_llm::destination(&base_url),
        base_url,
    }
}

/// The first profile's model and server as the settings (or the resumed log) name them:
/// it never answered, so nothing else is known of it.
fn first_at(settings: &SessionSettings, logged: Option<(&str, &str)>) -> ModelAt {
    let named_url = settings.values.base_url.as_deref().map(|url| {
        wright_llm::normalize_base_url(url).unwrap_or_else(|_: LlmError| url.to_string())
    });
    // Without a server named, the local servers were looked for (never the log's).
    let base_url = named_url.unwrap_or_else(|| "http://127.0.0.1".to_string());
    let model = settings
        .values
        .model
        .clone()
        .or_else(|| logged.map(|(_, model)| model.to_string()))
        .unwrap_or_else(|| "(no model named)".to_string());
    ModelAt {
        profile: settings.values.profile.clone(),
        model,
        destination: wright_llm::destination(&base_url),
        base_url,
    }
}
