//! What the server tells of a conversation: where it is (what this server is doing with
//! it, else what its log says), its task, steps, repository, branch, and what its session
//! said; and the list of every one, on disk or only here.

use crate::api;
use crate::api::State;
use crate::runs::log_path;
use crate::runs::Phase;
use crate::runs::Runs;
use anyhow::Result;
use wright_protocol::AgentState;
use wright_session::stored::RunState;
use wright_session::stored::Summary;
use wright_session::working_copy::Record;

impl Runs {
    /// The conversation `id`, as this server and its log know it.
    pub fn info(&self, id: &str) -> Option<api::Conversation> {
        let job = self.jobs().get(id).map(|job| {
            (
                match (job.phase, job.never_ran) {
                    (Phase::Ended, true) => None,
                    (phase, _) => Some(phase),
                },
                job.task.clone(),
                job.error.clone(),
                job.front.all(),
                job.error_code,
            )
        });
        let summary = match log_path(id).is_file() {
            true => Summary::read(id).ok(),
            false => None,
        };
        if job.is_none() && summary.is_none() {
            return None;
        }
        let state = match (&job, &summary) {
            (Some((Some(Phase::Queued), ..)), _) => State::Queued,
            (Some((Some(Phase::Starting), ..)), _) => State::Starting,
            // Its run waits for an answer (logged before it asks).
            (Some((Some(Phase::Running), ..)), Some(summary))
                if summary.state == RunState::Logged(AgentState::AwaitingConfirmation) =>
            {
                State::AwaitingConfirmation
            }
            (Some((Some(Phase::Running), ..)), _) => State::Running,
            (_, Some(summary)) => match summary.state {
                RunState::Logged(state) => state.into(),
                RunState::Interrupted => State::Interrupted,
            },
            // Interrupted while queued: it never ran.
            (Some((None, ..)), None) => State::Stopped,
            (Some((Some(Phase::Ended), ..)), None) => State::Failed,
            (None, None) => State::Failed,
        };
        let (task, error, notices, error_code) = match job {
            Some((_, task, error, notices, code)) => (task, error, notices, code),
            None => (String::new(), None, Vec::new(), None),
        };
        Some(api::Conversation {
            id: id.to_string(),
            state,
            task: summary
                .as_ref()
                .map(|s| s.task.clone())
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| task.lines().next().unwrap_or("").to_string()),
            steps: summary.as_ref().map_or(0, |s| s.steps),
            model: summary
                .as_ref()
                .map(|s| s.model.clone())
                .filter(|m| !m.is_empty()),
            repository: summary
                .as_ref()
                .and_then(|s| s.repository())
                .map(|p| p.display().to_string()),
            branch: summary.as_ref().and_then(|s| match &s.record {
                Some(Record::Clone { branch, .. }) => Some(branch.clone()),
                _ => None,
            }),
            last_active: summary
                .as_ref()
                .and_then(|s| s.last_active)
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs()),
            error,
            error_code: error_code.map(str::to_string),
            notices,
            pending: summary
                .as_ref()
                .and_then(|s| s.pending.as_ref())
                .map(crate::confirm::pending_view),
            group: summary.as_ref().and_then(|s| s.group.clone()),
        })
    }

    /// Every conversation, on disk or only in this server, newest first.
    pub fn list(&self) -> Result<Vec<api::Conversation>> {
        let mut ids = wright_session::stored::conversation_ids()?;
        ids.extend(
            self.jobs()
                .keys()
                .filter(|id| !log_path(id).is_file())
                .cloned()
                .collect::<Vec<_>>(),
        );
        ids.sort();
        ids.dedup();
        ids.reverse();
        Ok(ids.iter().filter_map(|id| self.info(id)).collect())
    }
}
