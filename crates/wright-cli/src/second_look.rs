//! `wright run --review PROFILE` (or the `review.profile` key): the reviewer with fresh
//! eyes, connected on its own profile (its server, model and key; the repository's egress
//! policy checked for it as for the writer) and given to the run's conversation. The
//! review itself is `wright_session::second_look`'s.

use crate::settings::SessionSettings;
use anyhow::Result;
use std::sync::Arc;
use wright_core::Conversation;
use wright_session::second_look::FreshReviewer;
use wright_session::Session;

/// Gives `conversation` a reviewer on `profile`, if one is asked for; returns the
/// header's line about it.
pub async fn attach(
    settings: &SessionSettings,
    session: &Session,
    conversation: &mut Conversation,
    flag: Option<&str>,
) -> Result<Option<String>> {
    let Some(profile) = flag
        .map(str::to_string)
        .or_else(|| settings.values.review_profile.clone())
    else {
        return Ok(None);
    };
    let theirs = settings.for_reviewer(&profile)?;
    let client = theirs
        .client(None, crate::hints::Front::CommandLine)
        .await
        .map_err(|err| anyhow::anyhow!("the reviewer's profile '{profile}': {err:#}"))?;
    let line = format!(
        "review by {} on {} (profile {profile}), findings back at most {}",
        client.config().model,
        client.config().base_url,
        wright_protocol::count(u64::from(settings.values.review_rounds), "time")
    );
    let sandbox = theirs.sandbox_choice()?;
    let reviewer = FreshReviewer::new(session, client, theirs.values, sandbox)?;
    conversation.set_reviewer(Arc::new(reviewer), settings.values.review_rounds);
    Ok(Some(line))
}
