//! The reviewer with fresh eyes (`wright run --review PROFILE`, the `review.profile` key),
//! the same for every front end: connected on its own profile (its server, model and key;
//! the repository's egress policy checked for it as for the writer) when the session is
//! prepared, and given to the conversation the session starts. The review itself is
//! `second_look`'s.

use super::SessionSettings;
use crate::second_look::FreshReviewer;
use crate::SandboxChoice;
use crate::Session;
use anyhow::Context;
use anyhow::Result;
use std::sync::Arc;
use wright_config::Settings;
use wright_core::Conversation;
use wright_llm::Client;
use wright_strategies::Help;

/// A reviewer chosen and connected, for the conversation a session starts.
pub struct Review {
    client: Client,
    settings: Settings,
    sandbox: SandboxChoice,
    rounds: u32,
    /// The header's line about it.
    pub line: String,
}

impl Review {
    /// The reviewer on `flag`'s profile, else the `review.profile` key's; none when
    /// neither names one. Fails when its profile does not resolve or its server does
    /// not answer.
    pub async fn choose(settings: &SessionSettings, flag: Option<&str>) -> Result<Option<Self>> {
        let Some(profile) = flag
            .map(str::to_string)
            .or_else(|| settings.values.review_profile.clone())
        else {
            return Ok(None);
        };
        let theirs = settings.for_reviewer(&profile)?;
        let client = theirs
            .client(None)
            .await
            .with_context(|| format!("the reviewer's profile '{profile}'"))?;
        let rounds = settings.values.review_rounds;
        let line = format!(
            "review by {} on {} (profile {profile}), findings back at most {}",
            client.config().model,
            client.config().base_url,
            wright_protocol::count(u64::from(rounds), "time")
        );
        let sandbox = theirs.sandbox_choice()?;
        Ok(Some(Self {
            client,
            settings: theirs.values,
            sandbox,
            rounds,
            line,
        }))
    }

    /// Gives `conversation`, of `writer`, this reviewer.
    pub(crate) fn attach(&self, writer: &Session, conversation: &mut Conversation) -> Result<()> {
        let reviewer = FreshReviewer::new(
            writer,
            self.client.clone(),
            self.settings.clone(),
            self.sandbox.clone(),
        )?;
        conversation.set_reviewer(Arc::new(reviewer), self.rounds);
        Ok(())
    }
}
