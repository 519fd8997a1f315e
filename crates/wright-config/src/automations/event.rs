//! The kinds of webhook event an automation fires on (`event`), and the task fields each
//! fills: a task naming a field its event does not fill is refused at load.

/// The kind of webhook event an automation fires on (`event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// An issue opened or labelled.
    #[default]
    Issue,
    /// A check that failed on a branch (GitHub's `check_run`, GitLab's failed pipeline).
    CheckRun,
    /// A comment on a pull (merge) request mentioning the bot.
    Comment,
    /// A push to a branch.
    Push,
}

impl EventKind {
    /// The task fields an event of this kind fills.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Self::Issue => &[
                "issue.title",
                "issue.body",
                "issue.number",
                "issue.url",
                "sender",
                "repository",
            ],
            Self::CheckRun => &[
                "check_run.name",
                "check_run.url",
                "check_run.output",
                "check_run.log",
                "branch",
                "commit",
                "sender",
                "repository",
            ],
            Self::Comment => &[
                "comment.body",
                "comment.url",
                "issue.number",
                "issue.title",
                "issue.url",
                "sender",
                "repository",
            ],
            Self::Push => &["branch", "commit", "commits", "sender", "repository"],
        }
    }

    /// Whether its firings work on (and ask to merge into) the event's branch.
    pub fn on_branch(self) -> bool {
        matches!(self, Self::CheckRun | Self::Push)
    }
}
