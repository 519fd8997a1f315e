//! `wright fork ID [--at EVENT] [MESSAGE]`: a new conversation from a prefix of another,
//! to try a second approach without touching the first. The fork gets its own clone, on
//! its own branch from the original's start commit. With `--at`, its files are the
//! original's as they were at EVENT: the start commit when nothing had changed by then,
//! else the files kept after the last step that changed them (see
//! `working_copy::steps`), copied from the original's clone; when they were not kept (a
//! conversation from before wright kept them), the files as they are now, which the fork
//! is told. Without `--at`, the files as they are now. Those are copied inside a sandbox
//! that reads the original clone and writes the new one: they are the agent's, and may be
//! links, FIFOs or anything else. With a MESSAGE it goes on at once, as `wright resume`
//! would.

use crate::history_cmds::conversation_dir;
use crate::resume::resume;
use crate::resume::ResumeArgs;
use crate::settings::CommonArgs;
use anyhow::bail;
use anyhow::Context;
use anyhow::Result;
use clap::Args;
use std::path::Path;
use wright_core::conversations_dir;
use wright_core::new_conversation_id;
use wright_protocol::parse_log;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_sandbox::git::AgentRepo;
use wright_sandbox::RunLimits;
use wright_session::sandbox_setup::Placement;
use wright_session::sandbox_setup::SandboxSetup;
use wright_session::working_copy::steps;
use wright_session::working_copy::steps::FilesAt;
use wright_session::working_copy::steps::Unknown;
use wright_session::working_copy::AgentClone;
use wright_session::working_copy::Record;
use wright_session::working_copy::WorkingCopy;

#[derive(Args)]
pub struct ForkArgs {
    /// The conversation to fork (an id, or a unique prefix of one).
    id: String,
    /// Keep the events up to and including this one (default: all), and the files as
    /// they were then (an action is logged before it runs: at one, before it ran).
    #[arg(long)]
    at: Option<u64>,
    /// Go on at once with this message.
    message: Option<String>,
    #[command(flatten)]
    common: CommonArgs,
}

pub async fn fork(args: ForkArgs) -> Result<u8> {
    args.common.check()?;
    if let Some(message) = &args.message {
        crate::settings::check_text(
            message,
            "message",
            &format!("wright fork {} \"try another approach\"", args.id),
        )?;
    }
    let source_dir = conversation_dir(&args.id)?;
    let text = std::fs::read_to_string(source_dir.join("events.jsonl"))
        .with_context(|| format!("cannot read the log of {}", args.id))?;
    let parsed = parse_log(&text).map_err(|(line, message)| {
        anyhow::anyhow!("the log is damaged at line {line}: {message}")
    })?;
    let last = parsed.events.last().map_or(0, |e| e.id);
    let at = args.at.unwrap_or(last);
    if at > last {
        bail!("event {at} does not exist; the conversation has events 0 to {last}");
    }
    let Some(EventBody::Start(start)) = parsed.events.first().map(|e| &e.body) else {
        bail!("the log has no start event");
    };
    let kept = steps::read(&source_dir);
    // Without --at, the files as they are now.
    let files = args
        .at
        .map(|at| steps::files_at(&parsed.events, &kept, at))
        .unwrap_or(FilesAt::Unknown(Unknown::AsNow));
    if let FilesAt::InsideStep { first, last } = files {
        bail!(
            "event {at} is inside a step that changed files (events {first} to {last}): fork at {first} for the files before it, or at {last} for the files after it"
        );
    }
    let changed_after = parsed.events.iter().any(|e| {
        e.id >= at
            && matches!(&e.body, EventBody::Action { tool, arguments, .. }
                if wright_tools::may_change_files(tool, arguments))
    });

    let id = new_conversation_id();
    let dir = conversations_dir().join(&id);
    std::fs::create_dir_all(&dir)?;
    let old_workspace = start.workspace.clone();
    let made = set_up(&args, &source_dir, &dir, &id, &old_workspace, &files, &kept);
    let (new_workspace, said) = match made {
        Ok(made) => made,
        Err(err) => {
            wright_session::working_copy::remove_unstarted(&dir, &id);
            return Err(err);
        }
    };

    // The prefix, with the workspace's path moved to the fork's clone.
    let mut lines = Vec::new();
    for line in text.lines().take_while(|_| true) {
        let Ok(event) = serde_json::from_str::<Event>(line) else {
            break;
        };
        if event.id > at {
            break;
        }
        let moved = line.replace(&old_workspace, &new_workspace);
        let mut event: Event = serde_json::from_str(&moved)?;
        if let EventBody::Start(start) = &mut event.body {
            start.forked_from = Some(format!("{}@{at}", start.conversation));
            start.conversation = id.clone();
        }
        lines.push(event.to_line()?);
    }
    std::fs::write(dir.join("events.jsonl"), lines.concat())?;
    say!("forked {} at event {at} as {id}", start.conversation);
    say!("files: {}", said.describe(at, changed_after));
    match args.message {
        Some(message) => {
            resume(ResumeArgs {
                id,
                message: Some(message),
                common: args.common,
            })
            .await
        }
        None => {
            say!("go on with: wright resume {id} \"what to try\"");
            Ok(0)
        }
    }
}

/// What the fork's files are, for the user.
enum Given {
    /// As `FilesAt` says, in the fork's own clone.
    Files(FilesAt),
    /// Shared with the original, which worked directly in its directory.
    Shared,
}

impl Given {
    fn describe(&self, at: u64, changed_after: bool) -> String {
        let now = if changed_after {
            "the original's as they are now, including changes made after the fork point"
        } else {
            "the original's as they are now (nothing changed after the fork point)"
        };
        match self {
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
            Given::Shared => "shared with the original, which worked directly in its directory: they are as they are now, whatever --at says".to_string(),
        }
    }
}

/// Gives the fork its working copy; returns its workspace and what its files are.
fn set_up(
    args: &ForkArgs,
    source_dir: &Path,
    dir: &Path,
    id: &str,
    old_workspace: &str,
    files: &FilesAt,
    kept: &[steps::Kept],
) -> Result<(String, Given)> {
    let front = crate::drive::Terminal {
        json: args.common.json,
    };
    match WorkingCopy::reopen(source_dir, Path::new(old_workspace), &front)? {
        WorkingCopy::Clone(source) => {
            let sub = Path::new(old_workspace)
                .strip_prefix(&source.clone_root)
                .unwrap_or(Path::new(""));
            let mut start = wright_session::working_copy::StartPoint::find(
                &source.repo.top().join(sub),
                &front,
            );
            // The second approach starts where the first did.
            start.head = Some(source.base.clone());
            let fork = WorkingCopy::prepare(
                start,
                dir,
                id,
                wright_session::working_copy::Options {
                    in_place: false,
                    force: false,
                    uncommitted: wright_session::working_copy::UncommittedChoice::Leave,
                    snapshot: false,
                },
                &front,
            )?;
            let WorkingCopy::Clone(clone) = &fork else {
                bail!("the repository {} is gone", source.repo.top().display());
            };
            fill_clone(args, &source, clone, id, files)?;
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
    args: &ForkArgs,
    source: &AgentClone,
    clone: &AgentClone,
    id: &str,
    files: &FilesAt,
) -> Result<()> {
    let placement = Placement {
        writable: clone.clone_root.clone(),
        read_only: vec![
            clone.repo.top().join(".git").join("objects"),
            source.clone_root.clone(),
        ],
        protected: Vec::new(),
        needs_git: true,
    };
    let settings = crate::settings::SessionSettings::resolve(
        &args.common,
        Some(&crate::settings::RepoConfigSource::Commit {
            repo: source.repo.clone(),
            commit: source.base.clone(),
        }),
    )?;
    let setup = SandboxSetup::new(
        settings.sandbox_mode()?,
        settings.sandbox_options(),
        &placement,
        &format!("{id}-fork"),
        &wright_session::Launcher::this_program()?,
        &wright_session::Grants::none(),
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
