//! A second agent's look at the change before `finish` is taken (`--review`): the loop
//! asks a `Reviewer` — which sees only the task, the repository and the diff, never this
//! conversation's history — for a verdict and findings, logs them as a `second_look`
//! event, and sends the findings back to the model as long as rounds are left. When no
//! round is left, or the reviewer approves or gives no verdict, the `finish` is taken.
//! This adds judgement; the test-integrity review (`review`) runs before it, unchanged.

use tokio_util::sync::CancellationToken;
use wright_protocol::Verdict;

/// What a reviewer said.
#[derive(Debug, Clone, PartialEq)]
pub struct Opinion {
    pub verdict: Verdict,
    pub findings: Vec<String>,
    /// The reviewer's own conversation.
    pub conversation: Option<String>,
}

/// Why a reviewer gave no verdict.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct NoVerdict {
    pub message: String,
    /// The reviewer's own conversation, when it was started.
    pub conversation: Option<String>,
}

/// Reviews the change of a conversation; the front end's session library implements it
/// (it knows the sandbox, the clone and the reviewer's model).
#[async_trait::async_trait]
pub trait Reviewer: Send + Sync {
    /// The reviewer's model, for the log and the report.
    fn model(&self) -> String;
    /// Reviews the workspace's change against the start, for `task`.
    async fn review(&self, task: &str, cancel: CancellationToken) -> Result<Opinion, NoVerdict>;
}
