//! Forking a conversation: a new conversation from a prefix of another, to try a second
//! approach without touching the first (`wright fork`, the server's fork route). The fork
//! gets its own clone, on its own branch from the original's start commit. At an event,
//! its files are the original's as they were then: the start commit when nothing had
//! changed by then, else the files kept after the last step that changed them (see
//! `working_copy::steps`), copied from the original's clone; when they were not kept (a
//! conversation from before wright kept them), the files as they are now, which the fork
//! is told. Without an event, the files as they are now. Those are copied inside a sandbox
//! that reads the original clone and writes the new one: they are the agent's, and may be
//! links, FIFOs or anything else.
//!
//! What it guarantees: the original is never written; a fork that fails half way leaves
//! nothing behind (its directory and clone are removed); the fork's log is the original's
//! prefix with the workspace's path moved to the fork's clone, so it resumes like any
//! conversation.

use crate::repo_config::RepoConfigSource;
use crate::sandbox_setup::SandboxSetup;
use crate::working_copy::steps;
use crate::working_copy::steps::FilesAt;
use crate::working_copy::steps::Unknown;
use crate::working_copy::AgentClone;
use crate::working_copy::Record;
use crate::working_copy::WorkingCopy;
use crate::Front;
use crate::SandboxChoice;
use anyhow::bail;
use anyhow::Context;
use std::path::Path;
use wright_core::conversations_dir;
use wright_core::new_conversation_id;
use wright_protocol::parse_log;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_sandbox::git::AgentRepo;
use wright_sandbox::RunLimits;

/// Why a fork is refused before anything is made: the caller asked for what cannot be.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("event {at} does not exist; the conversation has events 0 to {last}")]
    NoSuchEvent { at: u64, last: u64 },
    #[error("event {at} is inside a step that changed files (events {first} to {last}): fork at {first} for the files before it, or at {last} for the files after it")]
    InsideStep { at: u64, first: u64, last: u64 },
    #[error("the log is damaged at line {line}: {message}")]
    Damaged { line: usize, message: String },
    #[error("the log has no start event")]
    NoStart,
    /// An external agent ran it: its history and files are the agent's, not a model's
    /// of wright's to go on with.
    #[error("{}", crate::running::external_refusal(.agent, "a fork"))]
    ExternalAgent { agent: String },
}

/// A fork that could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ForkError {
    #[error(transparent)]
    Refused(#[from] Refused),
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
}

/// What the fork's files are, for the user.
#[derive(Debug, Clone)]
pub enum Given {
    /// As `FilesAt` says, in the fork's own clone.
    Files(FilesAt),
    /// Shared with the original, which worked directly in its directory.
    Shared,
}

/// A fork made: its id, where it was cut, and what its files are.
#[derive(Debug)]
pub struct Forked {
    pub id: String,
    /// The original's id.
    pub from: String,
    /// The last event kept.
    pub at: u64,
    pub files: Given,
    /// Whether the original changed files after the fork point.
    pub changed_after: bool,
}

impl Forked {
    /// What the fork's files are, in a sentence.
    pub fn describe_files(&self) -> String {
        let now = if self.changed_after {
            "the original's as they are now, including changes made after the fork point"
        } else {
            "the original's as they are now (nothing changed after the fork point)"
        };
        let at = self.at;
        match &self.files {
            Given::Files(FilesAt::Start) => {
                format!("the start commit's (nothing had changed by event {at})")
            }
            Given::Files(FilesAt::Kept { after, .. }) => {
                format!("the original's as they were after event {after}")
            }
            Given::Files(FilesAt::Unknown(Unknown::AsNow)) => now.to_string(),
            Given::Files(FilesAt::Unknown(Unknown::NotKept { event })) => format!(
                "{now}: the files after event {event} were not kept (the conversation ran before wright kept each step's files, or was stopped before it could)"
            ),
            Given::Files(FilesAt::Unknown(Unknown::Failed { event, why })) => {
                format!("{now}: keeping the files after event {event} failed ({why})")
            }
            Given::Files(FilesAt::InsideStep { first, last }) => {
                format!("inside the step of events {first} to {last}")
            }
            Given::Shared => "shared with the original, which worked directly in its directory: they are as they are now, whatever the fork point".to_string(),
        }
    }
}

/// Forks the conversation in `source_dir` after event `at` (default: all of it). The
/// sandbox that copies the files is the one `sandbox_for` gives for the original's
/// repository configuration (read at its start commit). The caller holds no lock on the
/// original: a fork reads it, and a running original's log is read up to its last
/// whole line.
pub fn fork(
    source_dir: &Path,
    at: Option<u64>,
    sandbox_for: &dyn Fn(&RepoConfigSource) -> anyhow::Result<SandboxChoice>,
    front: &dyn Front,
) -> Result<Forked, ForkError> {
    let log = source_dir.join("events.jsonl");
    let text = std::fs::read_to_string(&log)
        .with_context(|| format!("cannot read the log {}", log.display()))?;
    let parsed = parse_log(&text).map_err(|(line, message)| Refused::Damaged { line, message })?;
    let last = parsed.events.last().map_or(0, |e| e.id);
    let cut = at.unwrap_or(last);
    if cut > last {
        return Err(Refused::NoSuchEvent { at: cut, last }.into());
    }
    let Some(EventBody::Start(start)) = parsed.events.first().map(|e| &e.body) else {
        return Err(Refused::NoStart.into());
    };
    if let Some(agent) = &start.agent {
        return Err(Refused::ExternalAgent {
            agent: agent.clone(),
        }
        .into());
    }
    let kept = steps::read(source_dir);
    // Without an event, the files as they are now.
    let files = at
        .map(|at| steps::files_at(&parsed.events, &kept, at))
        .unwrap_or(FilesAt::Unknown(Unknown::AsNow));
    if let FilesAt::InsideStep { first, last } = files {
        return Err(Refused::InsideStep {
            at: cut,
            first,
            last,
        }
        .into());
    }
    let changed_after = parsed.events.iter().any(|e| {
        e.id >= cut
            && matches!(&e.body, EventBody::Action { tool, arguments, .. }
                if wright_tools::may_change_files(tool, arguments))
    });

    let id = new_conversation_id();
    let dir = conversations_dir().join(&id);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot make {}", dir.display()))?;
    let old_workspace = start.workspace.clone();
    let made = set_up(
        source_dir,
        &dir,
        &id,
        &old_workspace,
        &files,
        &kept,
        sandbox_for,
        front,
    )
    .and_then(|(workspace, given)| {
        write_prefix(&text, cut, &old_workspace, &workspace, &id, &dir)?;
        Ok(given)
    });
    match made {
        Ok(given) => Ok(Forked {
            id,
            from: start.conversation.clone(),
            at: cut,
            files: given,
            changed_after,
        }),
        Err(err) => {
            crate::working_copy::remove_unstarted(&dir, &id);
            Err(err.into())
        }
    }
}

/// Writes the fork's log: the original's events up to `cut`, the workspace's path moved
/// to the fork's, its start naming where it came from.
fn write_prefix(
    text: &str,
    cut: u64,
    old_workspace: &str,
    new_workspace: &str,
    id: &str,
    dir: &Path,
) -> anyhow::Result<()> {
    let mut lines = Vec::new();
    for line in text.lines() {
        let Ok(event) = serde_json::from_str::<Event>(line) else {
            break;
        };
        if event.id > cut {
            break;
        }
        let moved = line.replace(old_workspace, new_workspace);
        let mut event: Event = serde_json::from_str(&moved)?;
        if let EventBody::Start(start) = &mut event.body {
            start.forked_from = Some(format!("{}@{cut}", start.conversation));
            start.conversation = id.to_string();
        }
        lines.push(event.to_line()?);
    }
    let log = dir.join("events.jsonl");
    std::fs::write(&log, lines.concat()).with_context(|| format!("cannot write {}", log.display()))
}

/// Gives the fork its working copy; returns its workspace and what its files are.
#[allow(clippy::too_many_arguments)]
fn set_up(
    source_dir: &Path,
    dir: &Path,
    id: &str,
    old_workspace: &str,
    files: &FilesAt,
    kept: &[steps::Kept],
    sandbox_for: &dyn Fn(&RepoConfigSource) -> anyhow::Result<SandboxChoice>,
    front: &dyn Front,
) -> anyhow::Result<(String, Given)> {
    match WorkingCopy::reopen(source_dir, Path::new(old_workspace), front)? {
        WorkingCopy::Clone(source) => {
            let sub = Path::new(old_workspace)
                .strip_prefix(&source.clone_root)
                .unwrap_or(Path::new(""));
            let mut start =
                crate::working_copy::StartPoint::find(&source.repo.top().join(sub), front);
            // The second approach starts where the first did.
            start.head = Some(source.base.clone());
            let fork = WorkingCopy::prepare(
                start,
                dir,
                id,
                crate::working_copy::Options {
                    in_place: false,
                    force: false,
                    uncommitted: crate::working_copy::UncommittedChoice::Leave,
                    snapshot: false,
                },
                front,
            )?;
            let WorkingCopy::Clone(clone) = &fork else {
                bail!("the repository {} is gone", source.repo.top().display());
            };
            let choice = sandbox_for(&RepoConfigSource::Commit {
                repo: source.repo.clone(),
                commit: source.base.clone(),
            })?;
            fill_clone(&choice, &source, clone, id, files)?;
            // The fork's clone has the chain up to its files: a fork of the fork finds them.
            if let FilesAt::Kept { after, .. } = files {
                let chain: Vec<steps::Kept> =
                    kept.iter().filter(|k| k.last <= *after).cloned().collect();
                steps::append(dir, &chain)?;
            }
            Ok((
                clone.workspace.display().to_string(),
                Given::Files(files.clone()),
            ))
        }
        WorkingCopy::InPlace(_) | WorkingCopy::Direct { .. } => {
            // The fork works where the original did, and says so in its own record.
            Record::read(source_dir)?.write(dir)?;
            Ok((old_workspace.to_string(), Given::Shared))
        }
    }
}

/// Checks out the fork's clone at the start commit, or gives it the original's files (its
/// clone read-only, the fork's writable, in a sandbox of its own) on a branch there: kept
/// after a step, or as they are now.
fn fill_clone(
    choice: &SandboxChoice,
    source: &AgentClone,
    clone: &AgentClone,
    id: &str,
    files: &FilesAt,
) -> anyhow::Result<()> {
    let setup = SandboxSetup::for_git(
        choice,
        clone.clone_root.clone(),
        vec![
            clone.repo.top().join(".git").join("objects"),
            source.clone_root.clone(),
        ],
        &format!("{id}-fork"),
    )?;
    let git = AgentRepo::new(&setup.sandbox, &setup.env, &clone.clone_root);
    let commit = match files {
        FilesAt::Start => {
            git.check_out_new_branch(&clone.branch, &clone.base)?;
            return Ok(());
        }
        FilesAt::Kept { commit, .. } => Some(commit),
        FilesAt::Unknown(_) | FilesAt::InsideStep { .. } => None,
    };
    git.start_branch_keeping_files(&clone.branch, &clone.base)?;
    if let Some(commit) = commit {
        git.files_from(&source.clone_root, commit, &source.base, steps::REF)
            .context("cannot give the fork the original's files")?;
        return Ok(());
    }
    let target = clone.clone_root.display().to_string();
    let copied = setup.sandbox.capture(
        &source.clone_root,
        &setup.env,
        "bash",
        &[
            "-c",
            r#"tar --exclude=./.git -cf - . | tar -C "$1" -xf -"#,
            "wright-fork",
            &target,
        ],
        b"",
        RunLimits {
            timeout: std::time::Duration::from_secs(600),
            ..RunLimits::default()
        },
    )?;
    if !copied.success() {
        bail!(
            "cannot copy the original's files into the fork: {}",
            copied.said()
        );
    }
    Ok(())
}
