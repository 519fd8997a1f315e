//! `wright fork ID [--at EVENT] [MESSAGE]`: a new conversation from a prefix of another,
//! to try a second approach without touching the first. The fork gets its own clone on its
//! own branch; its files are the original's as they were at EVENT when that can be known
//! (no change before it: the start commit; no change after it: the files as they are now),
//! and otherwise the files as they are now, which the fork is told. The files are copied
//! inside a sandbox that reads the original clone and writes the new one: they are the
//! agent's, and may be links, FIFOs or anything else. With a MESSAGE it goes on at once,
//! as `wright resume` would.

use crate::history_cmds::conversation_dir;
use crate::resume::resume;
use crate::resume::ResumeArgs;
use crate::sandbox_setup::Placement;
use crate::sandbox_setup::SandboxSetup;
use crate::session::CommonArgs;
use crate::working_copy::AgentClone;
use crate::working_copy::Record;
use crate::working_copy::WorkingCopy;
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

#[derive(Args)]
pub struct ForkArgs {
    /// The conversation to fork (an id, or a unique prefix of one).
    id: String,
    /// Keep the events up to and including this one (default: all).
    #[arg(long)]
    at: Option<u64>,
    /// Go on at once with this message.
    message: Option<String>,
    #[command(flatten)]
    common: CommonArgs,
}

/// Whether an action may have changed files (anything but viewing).
fn changes_files(event: &Event) -> bool {
    match &event.body {
        EventBody::Action {
            tool, arguments, ..
        } => match tool.as_str() {
            "file_editor" | "str_replace_editor" => arguments["command"] != "view",
            "think" | "finish" => false,
            _ => true,
        },
        _ => false,
    }
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
    let changed_before = parsed
        .events
        .iter()
        .filter(|e| e.id <= at)
        .any(changes_files);
    let changed_after = parsed
        .events
        .iter()
        .filter(|e| e.id > at)
        .any(changes_files);

    let id = new_conversation_id();
    let dir = conversations_dir().join(&id);
    std::fs::create_dir_all(&dir)?;
    let old_workspace = start.workspace.clone();
    let made = set_up(
        &args,
        &source_dir,
        &dir,
        &id,
        &old_workspace,
        changed_before,
        changed_after,
    );
    let (new_workspace, note) = match made {
        Ok(made) => made,
        Err(err) => {
            crate::working_copy::remove_unstarted(&dir, &id);
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
    if let Some(note) = note {
        say!("note: {note}");
    }
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

/// Gives the fork its working copy; returns its workspace and a note for the user.
fn set_up(
    args: &ForkArgs,
    source_dir: &Path,
    dir: &Path,
    id: &str,
    old_workspace: &str,
    changed_before: bool,
    changed_after: bool,
) -> Result<(String, Option<&'static str>)> {
    match WorkingCopy::reopen(source_dir, Path::new(old_workspace))? {
        WorkingCopy::Clone(source) => {
            let sub = Path::new(old_workspace)
                .strip_prefix(&source.clone_root)
                .unwrap_or(Path::new(""));
            let start = crate::working_copy::StartPoint::find(&source.repo.top().join(sub));
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
            )?;
            let WorkingCopy::Clone(clone) = &fork else {
                bail!("the repository {} is gone", source.repo.top().display());
            };
            let note = fill_clone(args, &source, clone, id, changed_before)?;
            let note = note.filter(|_| changed_after);
            Ok((clone.workspace.display().to_string(), note))
        }
        WorkingCopy::InPlace(_) | WorkingCopy::Direct { .. } => {
            // The fork works where the original did, and says so in its own record.
            Record::read(source_dir)?.write(dir)?;
            Ok((
                old_workspace.to_string(),
                Some("the original worked directly in its directory, so the fork shares it"),
            ))
        }
    }
}

/// Checks out the fork's clone, or when the original had changed files by the fork point,
/// copies the original's files in (its clone read-only, the fork's writable, in a sandbox
/// of its own) on a branch at the start commit.
fn fill_clone(
    args: &ForkArgs,
    source: &AgentClone,
    clone: &AgentClone,
    id: &str,
    changed_before: bool,
) -> Result<Option<&'static str>> {
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
    )?;
    let git = AgentRepo::new(&setup.sandbox, &setup.env, &clone.clone_root);
    if !changed_before {
        git.check_out_new_branch(&clone.branch, &clone.base)?;
        return Ok(None);
    }
    git.start_branch_keeping_files(&clone.branch, &clone.base)?;
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
    Ok(Some("the files are the original conversation's as they are now, including changes made after the fork point"))
}
