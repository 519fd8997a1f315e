//! How the server drives one run to its end: a new conversation prepared and run, a
//! resumed one gone on with; under a lease when replicas share a database (renewed while
//! the run lasts, a lost lease stopping it); or with an external agent in wright's place.

use super::external_agent;
use super::Phase;
use super::Runs;
use super::Work;
use super::LEASE_LOST;
use super::SERVER_STOPPING;
use crate::api;
use crate::front::Recorder;
use crate::hub::Hub;
use crate::hub::HubObserver;
use crate::model_record::ModelRecord;
use crate::replicas::Keeper;
use crate::replicas::LeaseEnd;
use crate::replicas::LetGo;
use anyhow::Result;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wright_acp::client::Opening;
use wright_session::agent_session::AgentSession;
use wright_session::database::Admission;
use wright_session::database::Lease;
use wright_session::database::Owner;
use wright_session::database::Store;
use wright_session::stored::conversations_root as conversations_dir;
use wright_session::working_copy::Outcome;
use wright_session::Reopened;
use wright_session::Running;
use wright_session::Session;
use wright_session::Takes;

impl Runs {
    pub(super) async fn work(
        self: &Arc<Self>,
        id: &str,
        work: Work,
        cancel: CancellationToken,
        front: Arc<Recorder>,
    ) -> Result<()> {
        match work {
            Work::New(mut request) => {
                // An external agent reaches its hosts through the sandbox's proxy.
                let agent = match &request.settings.agent {
                    Some(name) => {
                        let agent = external_agent(name)?;
                        let hosts = request.settings.allow_hosts.get_or_insert_with(Vec::new);
                        hosts.extend(agent.allow_hosts.iter().cloned());
                        Some(agent)
                    }
                    None => None,
                };
                let workspace = match (&request.workspace, &request.repository_url) {
                    (Some(workspace), _) => {
                        // A user's: still under their roots, still the same path.
                        if let (Some(store), Some(Owner::User(user))) =
                            (&self.store, self.owner_of(id).await?)
                        {
                            crate::rights::recheck(store, user, workspace).await?;
                        }
                        std::path::PathBuf::from(workspace)
                    }
                    (None, Some(url)) => {
                        crate::repository::clone_for(id, url, request.repository_branch.as_deref())
                            .await?
                    }
                    (None, None) => anyhow::bail!("the request names no workspace"),
                };
                let mut session = self
                    .starter
                    .prepare(
                        id.to_string(),
                        &request,
                        &workspace,
                        self.secrets_of(id).await?,
                        front.as_ref(),
                    )
                    .await?;
                // The model it was asked for, for its later runs (a restart included).
                if let Err(err) = ModelRecord::of(&request.settings).write(id) {
                    front.note(true, format!("{err:#}"));
                }
                // It has a log now: a restarted server finds it there.
                crate::queue::take(id);
                if let Some(agent) = agent {
                    session.agent = Some(agent.name.clone());
                    let conversation = session.begin_external()?;
                    return self
                        .drive_external(
                            id,
                            session,
                            conversation,
                            &agent,
                            &request.task,
                            Opening::New,
                            cancel,
                        )
                        .await;
                }
                let conversation = session.begin()?;
                let task = request.task.as_str();
                self.drive(id, session, conversation, Some(task), cancel, None)
                    .await
            }
            Work::Confirm { .. } => {
                let dir = conversations_dir().join(id);
                // The model and server it was asked for, as the server recorded them.
                let settings = ModelRecord::read(id)
                    .unwrap_or_default()
                    .apply(&api::Settings::default());
                let Reopened {
                    session,
                    conversation,
                    ..
                } = self
                    .starter
                    .reopen(
                        &dir,
                        &settings,
                        Takes::OwnOnly,
                        self.secrets_of(id).await?,
                        front.as_ref(),
                    )
                    .await?;
                crate::queue::take(id);
                self.drive(id, session, conversation, None, cancel, None)
                    .await
            }
            Work::TakeOver(keeper) => {
                let dir = conversations_dir().join(id);
                let settings = ModelRecord::read(id)
                    .unwrap_or_default()
                    .apply(&api::Settings::default());
                // Its clone may be on the replica that died: made again from the store.
                let restored = self.restore_files(&dir, &settings).await?;
                let Reopened {
                    session,
                    mut conversation,
                    ..
                } = self
                    .starter
                    .reopen(
                        &dir,
                        &settings,
                        Takes::OwnOnly,
                        self.secrets_of(id).await?,
                        front.as_ref(),
                    )
                    .await?;
                super::files::tell(&restored, &front, &mut conversation)?;
                self.drive(id, session, conversation, None, cancel, Some(*keeper))
                    .await
            }
            Work::Message(message) => {
                let dir = conversations_dir().join(id);
                // The recorded model and server, unless this request names others.
                let recorded = ModelRecord::read(id).unwrap_or_default();
                let chosen = recorded.then(&ModelRecord::of(&message.settings));
                let mut settings = chosen.apply(&message.settings);
                // An external agent's conversation goes on in the agent's own session,
                // its hosts reachable as at its start; checked before anything runs.
                let going_on = match AgentSession::read(&dir)? {
                    Some(record) => {
                        let agent = loadable(&record, &message.text)?;
                        let hosts = settings.allow_hosts.get_or_insert_with(Vec::new);
                        hosts.extend(agent.allow_hosts.iter().cloned());
                        Some((agent, record))
                    }
                    None => None,
                };
                let takes = match going_on {
                    Some(_) => Takes::ExternalToo,
                    None => Takes::OwnOnly,
                };
                let Reopened {
                    session,
                    conversation,
                    torn_line,
                } = self
                    .starter
                    .reopen(
                        &dir,
                        &settings,
                        takes,
                        self.secrets_of(id).await?,
                        front.as_ref(),
                    )
                    .await?;
                if chosen != recorded {
                    if let Err(err) = chosen.write(id) {
                        front.note(true, format!("{err:#}"));
                    }
                }
                // Taken: a restarted server must not give it twice.
                crate::queue::take(id);
                if let Some(line) = torn_line {
                    front.note(
                        true,
                        format!(
                            "the log ended in a torn line (line {line}): cut off, the events before it are intact"
                        ),
                    );
                }
                if let Some((agent, record)) = going_on {
                    return self
                        .drive_external(
                            id,
                            session,
                            conversation,
                            &agent,
                            &message.text,
                            Opening::Load(&record),
                            cancel,
                        )
                        .await;
                }
                let mut conversation = conversation;
                if message.condense {
                    conversation.condense_first();
                }
                let text = Some(message.text.as_str()).filter(|t| !t.trim().is_empty());
                self.drive(id, session, conversation, text, cancel, None)
                    .await
            }
        }
    }

    /// Runs `conversation` with `message` to its end, and hands its changes over. With a
    /// database, under the conversation's lease (kept by `held`, or taken now).
    pub(super) async fn drive(
        self: &Arc<Self>,
        id: &str,
        session: Session,
        mut conversation: Running,
        message: Option<&str>,
        cancel: CancellationToken,
        held: Option<Keeper>,
    ) -> Result<()> {
        if let Some(job) = self.jobs().get_mut(id) {
            conversation.set_confirmer(job.confirmer.clone());
            job.asides = Some(conversation.asides());
            job.inspector = session.tools.inspector(&session.working_copy);
            job.phase = Phase::Running;
            job.reason = Some(conversation.interrupt_reason());
            // Stopped while its session was prepared: the run says why at once.
            if let Some(why) = job.stopped_by.filter(|_| cancel.is_cancelled()) {
                if let Ok(mut reason) = conversation.interrupt_reason().lock() {
                    *reason = Some(why.to_string());
                }
            }
        }
        // With a database, each event is committed there before it takes effect, by the
        // one replica holding the conversation's lease.
        let keeper = match &self.store {
            Some(store) => {
                let owner = self.job_owner(id).unwrap_or(Owner::Admin);
                let keeper = match held {
                    Some(keeper) => keeper,
                    None => {
                        // As the database recorded it first (a user's fork, say).
                        let owner = store.add_conversation(id, owner).await?;
                        let lease = self.admit(store, id, owner).await?;
                        self.keep(store, lease)
                    }
                };
                if let Err(err) = conversation
                    .store_events_in(store, id, owner, Some(keeper.lease()))
                    .await
                {
                    keeper.finish(LetGo::Release).await;
                    return Err(err);
                }
                Some(keeper)
            }
            None => None,
        };
        self.push_steps(&session, &mut conversation);
        let ran = self
            .drive_held(id, session, conversation, message, cancel)
            .await;
        if let Some(keeper) = keeper {
            keeper.finish(self.letting_go(id)).await;
        }
        ran
    }

    /// Takes the lease of `id` for a run of `owner`'s: a user's within their run limit,
    /// the database deciding across replicas (`Store::admit`).
    async fn admit(&self, store: &Store, id: &str, owner: Owner) -> Result<Lease> {
        let held = || anyhow::anyhow!("conversation {id} is being run by another replica");
        let Owner::User(user) = owner else {
            return store
                .take_lease(id, &self.replica.name, self.replica.lease)
                .await?
                .ok_or_else(held);
        };
        match store
            .admit(id, user, &self.replica.name, self.replica.lease)
            .await?
        {
            Admission::Taken(lease) => Ok(lease),
            Admission::Held => Err(held()),
            Admission::Full { limit, running } => {
                Err(crate::rights::QuotaFull { limit, running }.into())
            }
        }
    }

    /// The secrets a run of `id` is given: its owner's own when a user's (`None`: the
    /// server's, the admin's).
    pub(crate) async fn secrets_of(&self, id: &str) -> Result<Option<Vec<(String, String)>>> {
        let owner = self.owner_of(id).await?;
        crate::user_secrets::secrets_for(self.store.as_ref(), owner.unwrap_or(Owner::Admin)).await
    }

    /// The owner of `id` as the database recorded it (a queued run restored after a
    /// restart included), else as this replica's runs know it; `None` without users.
    async fn owner_of(&self, id: &str) -> Result<Option<Owner>> {
        Ok(match &self.store {
            Some(store) => store.owner(id).await?.or_else(|| self.job_owner(id)),
            None => None,
        })
    }

    /// How the run of `id`, ended, lets its lease go: handed over when this replica
    /// stopped it as it stops (SIGTERM) in the middle of its work, so another replica
    /// goes on with it at once; released otherwise — a run that finished, or that waits
    /// for a confirmation (it stays waiting, for an answer through any replica).
    fn letting_go(&self, id: &str) -> LetGo {
        let stopping = self
            .jobs()
            .get(id)
            .is_some_and(|job| job.stopped_by == Some(SERVER_STOPPING));
        if !stopping {
            return LetGo::Release;
        }
        match wright_session::stored::Summary::read(id) {
            Ok(summary)
                if summary.pending.is_none()
                    && !matches!(
                        summary.state,
                        wright_session::stored::RunState::Logged(
                            wright_protocol::AgentState::Finished
                        )
                    ) =>
            {
                LetGo::HandOver
            }
            _ => LetGo::Release,
        }
    }

    /// Renews `lease` until its run ends; a lease lost stops that run.
    pub(super) fn keep(self: &Arc<Self>, store: &Store, lease: Lease) -> Keeper {
        let runs = Arc::downgrade(self);
        let run = lease.conversation.clone();
        let stop: Arc<dyn Fn(LeaseEnd) + Send + Sync> = Arc::new(move |_| {
            if let Some(runs) = runs.upgrade() {
                if let Some(job) = runs.jobs().get_mut(&run) {
                    job.stop(LEASE_LOST);
                }
            }
        });
        Keeper::start(store, lease, &self.replica, stop)
    }

    pub(super) async fn drive_held(
        &self,
        id: &str,
        session: Session,
        conversation: Running,
        message: Option<&str>,
        cancel: CancellationToken,
    ) -> Result<()> {
        let hub = self
            .hub(id)
            .unwrap_or_else(|| Arc::new(Hub::new(Vec::new())));
        let mut observer = HubObserver(hub);
        let end = session
            .run(
                conversation,
                message,
                &cancel,
                &mut observer,
                message.unwrap_or_default(),
            )
            .await?;
        if let Outcome::Failed { reason, kept } = &end.finished.changes {
            anyhow::bail!(
                "{reason}; the agent's work is kept in {} (a message goes on there)",
                kept.display()
            );
        }
        if end.state == wright_protocol::AgentState::Failed {
            return Err(crate::session_error::RunFailed {
                stop: end.stop,
                remedy: end.remedy,
            }
            .into());
        }
        Ok(())
    }

    /// Runs a conversation with the external agent `agent` to its end — `task` its
    /// prompt, in a new session of the agent's or the one it had (`opening`) — and
    /// hands its changes over (`wright_acp::client`).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn drive_external(
        &self,
        id: &str,
        session: Session,
        mut conversation: Running,
        agent: &wright_config::agents::AgentConfig,
        task: &str,
        opening: Opening<'_>,
        cancel: CancellationToken,
    ) -> Result<()> {
        if let Some(job) = self.jobs().get_mut(id) {
            conversation.set_confirmer(job.confirmer.clone());
            job.phase = Phase::Running;
            job.reason = Some(conversation.interrupt_reason());
        }
        let hub = self
            .hub(id)
            .unwrap_or_else(|| Arc::new(Hub::new(Vec::new())));
        let mut observer = HubObserver(hub);
        let (ended, finished) = wright_acp::client::run_to_end(
            session,
            conversation,
            agent,
            task,
            opening,
            &cancel,
            &mut observer,
        )
        .await?;
        let end = wright_session::RunEnd {
            state: ended.state(),
            stop: ended.stop().clone(),
            remedy: None,
            finished,
        };
        if let Outcome::Failed { reason, kept } = &end.finished.changes {
            anyhow::bail!("{reason}; the agent's work is kept in {}", kept.display());
        }
        if end.state == wright_protocol::AgentState::Failed {
            return Err(crate::session_error::RunFailed {
                stop: end.stop,
                remedy: end.remedy,
            }
            .into());
        }
        Ok(())
    }
}

/// The agent of `record`, when its conversation can go on with `text`: the agent loads
/// sessions, is still in the user's own configuration, and is given a prompt.
fn loadable(record: &AgentSession, text: &str) -> Result<wright_config::agents::AgentConfig> {
    let refused = |why: &str| {
        anyhow::anyhow!(
            "{}",
            wright_session::external_refusal(&record.agent, &format!("going on with it ({why})"))
        )
    };
    if !record.load_session {
        return Err(refused(
            "the agent does not load sessions: it offered no loadSession (session/load) in initialize",
        ));
    }
    if text.trim().is_empty() {
        anyhow::bail!(
            "the external agent {} goes on from a prompt: the message needs its text",
            record.agent
        );
    }
    external_agent(&record.agent)
}
