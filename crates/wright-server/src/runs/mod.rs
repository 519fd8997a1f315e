//! The conversations this server runs: each started (or resumed with a message) in the
//! background through the session library, at most `--max-runs` at once — the rest wait,
//! `queued`, in the order they came. What is on disk (the logs) says where every other
//! conversation is; this only knows what the server itself is doing, and what a run that
//! failed before it had a log said.

mod driving;
mod files;
mod hubs;
mod restore;

use crate::api;
use crate::api::NewConversation;
use crate::error::ApiError;
use crate::front::Recorder;
use crate::hub::Hub;
use crate::replicas::Keeper;
use crate::replicas::Replica;
use crate::starter::Starter;
use anyhow::Result;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use wright_sandbox::git::RemoteUrl;
use wright_session::database::Lease;
use wright_session::database::Owner;
use wright_session::database::Store;
use wright_session::git_store::GitStore;
use wright_session::stored::conversations_root as conversations_dir;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Queued,
    Starting,
    Running,
    Ended,
}

/// The external agent `name` of the server's own configuration file (the user's: a
/// repository's file cannot define one).
pub(crate) fn external_agent(name: &str) -> Result<wright_config::agents::AgentConfig> {
    let file = wright_config::Config::user_file()
        .ok_or_else(|| anyhow::anyhow!("no configuration file to read [agents.{name}] from"))?;
    Ok(wright_config::agents::find(&file, name)?)
}

pub(crate) struct Job {
    pub(crate) phase: Phase,
    pub(crate) task: String,
    cancel: CancellationToken,
    /// Where the run's stop reason goes, once it runs.
    reason: Option<Arc<Mutex<Option<String>>>>,
    pub(crate) front: Arc<Recorder>,
    pub(crate) error: Option<String>,
    /// The code of `error`, when it is the session's (see `session_error`).
    pub(crate) error_code: Option<&'static str>,
    /// Interrupted while it waited for its turn: it never ran.
    pub(crate) never_ran: bool,
    /// Why it was stopped, once it was.
    stopped_by: Option<&'static str>,
    /// Where its clients' answers about risky actions go.
    pub(crate) confirmer: Arc<crate::confirm::ServerConfirmer>,
    /// Where side questions go while it runs (see `aside`).
    pub(crate) asides: Option<wright_session::Asides>,
    /// What reads its working copy's changes while it runs (see `live`): none before
    /// its session is prepared, nor for a directory that is no git repository.
    pub(crate) inspector: Option<wright_session::inspect::GitInspector>,
    /// Whose it is (the admin's unless a user's key created it).
    pub(crate) owner: Owner,
}

impl Job {
    /// Stops it after the step in flight is logged, saying `why`.
    fn stop(&mut self, why: &'static str) {
        self.stopped_by = Some(why);
        if let Some(slot) = &self.reason {
            if let Ok(mut reason) = slot.lock() {
                *reason = Some(why.to_string());
            }
        }
        self.cancel.cancel();
    }
}

impl Job {
    pub(crate) fn active(&self) -> bool {
        self.phase != Phase::Ended
    }
}

pub struct Runs {
    pub starter: Arc<dyn Starter>,
    slots: Arc<Semaphore>,
    jobs: Mutex<HashMap<String, Job>>,
    hubs: Mutex<HashMap<String, Arc<Hub>>>,
    /// The server is stopping: nothing waiting starts, and what waits stays on disk.
    closing: std::sync::atomic::AtomicBool,
    /// Told each time a run ends.
    pub(crate) ended: tokio::sync::Notify,
    /// The database every run's events are committed to, if any (`--database`).
    store: Option<Store>,
    /// This replica, as the conversations' leases name it (with a database).
    pub(crate) replica: Replica,
    /// Where each step's files are pushed, for a takeover on a replica without the clone.
    git_store: Option<GitStore>,
}

/// The reason logged when a client interrupts a run.
pub const INTERRUPTED: &str = "interrupted through the server";
/// The reason logged when the server stops a run as it stops.
pub const SERVER_STOPPING: &str = "stopped: the server was stopping (a message goes on)";
/// The reason logged (when the database still takes it) when a replica loses a run's lease.
pub const LEASE_LOST: &str =
    "stopped: this replica lost the conversation's lease (another replica goes on with it)";

/// What a new run does once its turn comes.
pub(crate) enum Work {
    New(Box<NewConversation>),
    Message(Box<api::Message>),
    /// Goes on with a conversation whose action waits, with the answer about it.
    Confirm {
        call_id: String,
        body: api::Confirm,
    },
    /// Goes on, under the lease kept (taken from a replica that died, renewed from the
    /// moment it was taken), with a conversation whose run was cut off: from where its
    /// log ends, as `wright resume` does.
    TakeOver(Box<Keeper>),
}

pub(crate) fn log_path(id: &str) -> std::path::PathBuf {
    conversations_dir().join(id).join("events.jsonl")
}

impl Runs {
    pub fn new(
        starter: Arc<dyn Starter>,
        max_runs: usize,
        store: Option<Store>,
        replica: Replica,
        git_store: Option<GitStore>,
    ) -> Arc<Self> {
        Arc::new(Self {
            starter,
            store,
            replica,
            git_store,
            slots: Arc::new(Semaphore::new(max_runs)),
            jobs: Mutex::default(),
            hubs: Mutex::default(),
            closing: std::sync::atomic::AtomicBool::new(false),
            ended: tokio::sync::Notify::new(),
        })
    }

    pub(crate) fn jobs(&self) -> std::sync::MutexGuard<'_, HashMap<String, Job>> {
        // A panic elsewhere must not take the server down with it.
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whose conversation `id` is, as far as this server's runs know (the database
    /// keeps the owner it recorded first).
    pub(crate) fn job_owner(&self, id: &str) -> Option<Owner> {
        self.jobs().get(id).map(|job| job.owner)
    }

    /// The database, when the server has one.
    pub(crate) fn store(&self) -> Option<&Store> {
        self.store.as_ref()
    }

    /// Queues a new conversation; its id comes back at once.
    pub fn create(self: &Arc<Self>, request: NewConversation) -> Result<String, ApiError> {
        self.create_with(request, false, Owner::Admin)
    }

    /// Queues a new conversation of `owner`'s; its id comes back at once.
    pub fn create_as(
        self: &Arc<Self>,
        request: NewConversation,
        owner: Owner,
    ) -> Result<String, ApiError> {
        self.create_with(request, false, owner)
    }

    /// Queues a new conversation nobody watches (an automation's): an action its
    /// confirmation mode would ask about is refused at once, never waited for.
    pub(crate) fn create_unattended(
        self: &Arc<Self>,
        request: NewConversation,
    ) -> Result<String, ApiError> {
        self.create_with(request, true, Owner::Admin)
    }

    /// Returns once `id` is not queued nor running.
    pub(crate) async fn wait_until_ended(&self, id: &str) {
        loop {
            let ended = self.ended.notified();
            if !self.is_active(id) {
                return;
            }
            ended.await;
        }
    }

    fn create_with(
        self: &Arc<Self>,
        request: NewConversation,
        unattended: bool,
        owner: Owner,
    ) -> Result<String, ApiError> {
        if request.task.trim().is_empty() {
            return Err(ApiError::bad_request(
                "the task is empty: say what the agent should do",
            ));
        }
        match (&request.workspace, &request.repository_url) {
            (Some(workspace), None) => {
                let path = Path::new(workspace);
                if !path.is_absolute() || !path.is_dir() {
                    return Err(ApiError::bad_request(format!(
                        "the workspace must be the absolute path of a directory on the server: {workspace}"
                    )));
                }
            }
            (None, Some(url)) => {
                RemoteUrl::parse(url).map_err(|err| ApiError::bad_request(err.to_string()))?;
                if let Some(branch) = &request.repository_branch {
                    if !wright_sandbox::git::safe_branch_name(branch) {
                        return Err(ApiError::bad_request(format!(
                            "repository_branch '{}' is not a plain branch name",
                            branch.escape_debug()
                        )));
                    }
                }
            }
            _ => {
                return Err(ApiError::bad_request(
                    "give either a workspace (a directory on the server) or a repository_url to clone, one of them",
                ))
            }
        }
        self.starter
            .check(&request.settings)
            .map_err(|err| crate::session_error::bad_setting(&err, "settings."))?;
        let mut jobs = self.jobs();
        let id = loop {
            let id = wright_session::stored::new_id();
            let taken =
                jobs.contains_key(&id) || conversations_dir().join(&id).symlink_metadata().is_ok();
            if !taken {
                break id;
            }
        };
        crate::queue::put(&id, &crate::queue::Waiting::New(request.clone()))
            .map_err(|err| ApiError::internal(&err))?;
        let work = Work::New(Box::new(request));
        let front = Arc::default();
        let cancel = Self::register(&mut jobs, &id, &work, &front);
        if let Some(job) = jobs.get_mut(&id) {
            job.owner = owner;
            if unattended {
                job.confirmer = Arc::new(crate::confirm::ServerConfirmer::refusing());
            }
        }
        drop(jobs);
        self.spawn(&id, work, front, cancel);
        Ok(id)
    }

    /// Goes on with a conversation that is not running, with `text`.
    pub fn message(self: &Arc<Self>, id: &str, message: api::Message) -> Result<(), ApiError> {
        if message.text.trim().is_empty() {
            return Err(ApiError::bad_request("the message is empty"));
        }
        self.go_on(id, message)
    }

    /// Goes on with a conversation that stopped (by a limit, an interrupt, a crash)
    /// without a message, as `wright resume ID`: from where its log ends.
    /// With `condense`, the history is condensed first.
    pub fn run(
        self: &Arc<Self>,
        id: &str,
        settings: api::Settings,
        condense: bool,
    ) -> Result<(), ApiError> {
        if !self.is_active(id) && log_path(id).is_file() {
            let finished = wright_session::stored::Summary::read(id).is_ok_and(|summary| {
                matches!(
                    summary.state,
                    wright_session::stored::RunState::Logged(wright_protocol::AgentState::Finished)
                )
            });
            if finished {
                return Err(ApiError::conflict(format!(
                    "conversation {id} finished: send it a message to go on"
                )));
            }
        }
        self.go_on(
            id,
            api::Message {
                text: String::new(),
                settings,
                condense,
            },
        )
    }

    /// Queues `message` (empty: none) for a conversation that is not running.
    fn go_on(self: &Arc<Self>, id: &str, message: api::Message) -> Result<(), ApiError> {
        self.starter
            .check(&message.settings)
            .map_err(|err| crate::session_error::bad_setting(&err, "settings."))?;
        // Checked and registered under one lock: two messages never both start it.
        let mut jobs = self.jobs();
        let front = match jobs.get(id) {
            Some(job) if job.active() => {
                return Err(ApiError::conflict(format!(
                    "conversation {id} is running; interrupt it first, or wait for its end"
                )))
            }
            Some(job) => job.front.clone(),
            None => Arc::default(),
        };
        if !log_path(id).is_file() {
            return Err(match jobs.contains_key(id) {
                true => ApiError::conflict(format!(
                    "conversation {id} never started, so it cannot go on"
                )),
                false => ApiError::not_found(id),
            });
        }
        crate::queue::put(id, &crate::queue::Waiting::Message(message.clone()))
            .map_err(|err| ApiError::internal(&err))?;
        let work = Work::Message(Box::new(message));
        let cancel = Self::register(&mut jobs, id, &work, &front);
        drop(jobs);
        self.spawn(id, work, front, cancel);
        Ok(())
    }

    /// Whether a run could start at once (a slot is free and the server is not stopping).
    pub(crate) fn has_room(&self) -> bool {
        self.slots.available_permits() > 0
            && !self.closing.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Goes on with a conversation whose run was cut off on another replica, under
    /// `lease` (taken from it): its log file is first brought up to what the database
    /// holds, then it resumes from there. A run that had ended is only let go.
    pub(crate) async fn take_over(self: &Arc<Self>, lease: Lease) {
        let id = lease.conversation.clone();
        let Some(store) = self.store.clone() else {
            return;
        };
        let dir = conversations_dir().join(&id);
        let owner = store
            .owner(&id)
            .await
            .ok()
            .flatten()
            .unwrap_or(Owner::Admin);
        if let Err(err) = wright_session::database::sync_log(&store, &id, &dir).await {
            // Left leased: it expires again and is tried again (the database may be back).
            let mut jobs = self.jobs();
            let front = jobs
                .get(&id)
                .map(|job| job.front.clone())
                .unwrap_or_default();
            let nothing = Work::Message(Box::new(api::Message {
                text: String::new(),
                settings: api::Settings::default(),
                condense: false,
            }));
            Self::register(&mut jobs, &id, &nothing, &front);
            if let Some(job) = jobs.get_mut(&id) {
                job.phase = Phase::Ended;
                job.owner = owner;
                job.error = Some(format!("cannot take the cut-off run over: {err:#}"));
            }
            return;
        }
        let ended = wright_session::stored::Summary::read(&id).is_ok_and(|summary| {
            matches!(
                summary.state,
                wright_session::stored::RunState::Logged(wright_protocol::AgentState::Finished)
            )
        });
        if ended {
            let _ = store.release_lease(&lease).await;
            return;
        }
        if self.is_active(&id) {
            // This replica's own run, whose lease expired under it (not renewed in time):
            // it stops at its next append. Not let go — the conversation would be left
            // stopped, free, with nobody to go on with it — but left unrenewed, so it
            // expires again and is taken over once that run has ended.
            return;
        }
        let mut jobs = self.jobs();
        let front = jobs
            .get(&id)
            .map(|job| job.front.clone())
            .unwrap_or_default();
        // Renewed from now: a takeover waiting for its turn does not lose it.
        let work = Work::TakeOver(Box::new(self.keep(&store, lease)));
        let cancel = Self::register(&mut jobs, &id, &work, &front);
        if let Some(job) = jobs.get_mut(&id) {
            job.owner = owner;
        }
        drop(jobs);
        self.spawn(&id, work, front, cancel);
    }

    /// Registers `work` for `id` (queued) in `jobs`, held by the caller since it checked
    /// that `id` was free: two requests never both start it.
    pub(crate) fn register(
        jobs: &mut HashMap<String, Job>,
        id: &str,
        work: &Work,
        front: &Arc<Recorder>,
    ) -> CancellationToken {
        let cancel = CancellationToken::new();
        let (task, confirmer) = match work {
            Work::New(request) => (request.task.clone(), Arc::default()),
            Work::Message(message) => (message.text.clone(), Arc::default()),
            Work::TakeOver(_) => (String::new(), Arc::default()),
            Work::Confirm { call_id, body } => (
                String::new(),
                crate::confirm::ServerConfirmer::answered(call_id, body.into()),
            ),
        };
        jobs.insert(
            id.to_string(),
            Job {
                phase: Phase::Queued,
                task,
                cancel: cancel.clone(),
                reason: None,
                front: front.clone(),
                error: None,
                error_code: None,
                never_ran: false,
                stopped_by: None,
                confirmer,
                asides: None,
                inspector: None,
                owner: Owner::Admin,
            },
        );
        cancel
    }

    /// Registers and starts `work` (for what nobody else can be starting: at start).
    fn launch(self: &Arc<Self>, id: &str, work: Work, front: Arc<Recorder>) {
        let cancel = Self::register(&mut self.jobs(), id, &work, &front);
        self.spawn(id, work, front, cancel);
    }

    /// Runs registered `work` once its turn comes.
    pub(crate) fn spawn(
        self: &Arc<Self>,
        id: &str,
        work: Work,
        front: Arc<Recorder>,
        cancel: CancellationToken,
    ) {
        let runs = self.clone();
        let id = id.to_string();
        tokio::spawn(async move {
            let is_new = matches!(work, Work::New(_));
            let permit = tokio::select! {
                permit = runs.slots.clone().acquire_owned() => permit.ok(),
                () = cancel.cancelled() => None,
            };
            if runs.closing.load(std::sync::atomic::Ordering::SeqCst) {
                // Still waiting as the server stops: kept on disk for its next start; a
                // run taken over from another replica is handed over to the next.
                if let Work::TakeOver(keeper) = work {
                    keeper.finish(crate::replicas::LetGo::HandOver).await;
                }
                return;
            }
            let never_ran = permit.is_none();
            let result = match permit {
                None if is_new => Err(anyhow::anyhow!("interrupted before it started")),
                None => Ok(()),
                Some(_permit) => {
                    runs.set_phase(&id, Phase::Starting);
                    runs.work(&id, work, cancel, front).await
                }
            };
            crate::queue::take(&id);
            let mut jobs = runs.jobs();
            if let Some(job) = jobs.get_mut(&id) {
                job.phase = Phase::Ended;
                job.reason = None;
                let (error, code) = match result {
                    Ok(()) => (None, None),
                    Err(err) => {
                        // Worded in the request's fields, with its code.
                        match crate::session_error::typed(&err) {
                            Some(answer) => (Some(answer.message), Some(answer.code)),
                            None => (Some(format!("{err:#}")), None),
                        }
                    }
                };
                job.error = error;
                job.error_code = code;
                job.never_ran = never_ran;
            }
            drop(jobs);
            runs.catch_up(&id);
            runs.release_hub(&id);
            runs.ended.notify_waiters();
        });
    }

    fn set_phase(&self, id: &str, phase: Phase) {
        if let Some(job) = self.jobs().get_mut(id) {
            job.phase = phase;
        }
    }

    /// Stops a queued or running conversation after the step in flight is logged.
    pub fn interrupt(&self, id: &str) -> Result<(), ApiError> {
        let mut jobs = self.jobs();
        match jobs.get_mut(id) {
            Some(job) if job.active() => {
                job.stop(INTERRUPTED);
                Ok(())
            }
            Some(_) => Err(ApiError::conflict(format!(
                "conversation {id} is not running"
            ))),
            None if log_path(id).is_file() => Err(ApiError::conflict(format!(
                "conversation {id} is not running"
            ))),
            None => Err(ApiError::not_found(id)),
        }
    }

    /// Stops every run as the server stops (each logs its step and hands its changes
    /// over, as an interrupt), and returns once all have ended, with how many there were.
    /// What waits for its turn does not start: it stays on disk for the next start.
    pub async fn stop_all(&self) -> usize {
        self.closing
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.slots.close();
        let mut stopped = 0;
        for job in self.jobs().values_mut() {
            if matches!(job.phase, Phase::Starting | Phase::Running) {
                job.stop(SERVER_STOPPING);
                stopped += 1;
            }
        }
        loop {
            let ended = self.ended.notified();
            let running = self
                .jobs()
                .values()
                .any(|job| matches!(job.phase, Phase::Starting | Phase::Running));
            if !running {
                return stopped;
            }
            ended.await;
        }
    }

    /// Whether the server is running (or about to run) `id`.
    pub fn is_active(&self, id: &str) -> bool {
        self.jobs().get(id).is_some_and(Job::active)
    }

    /// What reads the working copy of `id` while it runs.
    pub(crate) fn inspector(&self, id: &str) -> Option<wright_session::inspect::GitInspector> {
        self.jobs()
            .get(id)
            .filter(|job| job.active())
            .and_then(|job| job.inspector.clone())
    }

    /// Forgets what the server knew of `id` (once it is removed from disk).
    pub fn forget(&self, id: &str) {
        self.jobs().remove(id);
        if let Ok(mut hubs) = self.hubs.lock() {
            hubs.remove(id);
        }
    }
}
