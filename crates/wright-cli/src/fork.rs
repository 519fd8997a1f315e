//! `wright fork ID [--at EVENT] [MESSAGE]`: a new conversation from a prefix of another,
//! to try a second approach without touching the first. The fork gets its own clone on its
//! own branch; its files are the original's as they were at EVENT when that can be known
//! (no change before it: the start commit; no change after it: the files as they are now),
//! and otherwise the files as they are now, which the fork is told. With a MESSAGE it goes
//! on at once, as `wright resume` would.

use crate::history_cmds::conversation_dir;
use crate::resume::resume;
use crate::resume::ResumeArgs;
use crate::session::CommonArgs;
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
    let working_copy = WorkingCopy::reopen(&source_dir, Path::new(&old_workspace))?;
    let (new_workspace, note) = match &working_copy {
        WorkingCopy::Clone(source) => {
            let fork = WorkingCopy::prepare(&source.repo_root, &dir, &id, false, false)?;
            let WorkingCopy::Clone(clone) = &fork else {
                bail!("the repository {} is gone", source.repo_root.display());
            };
            let note = if changed_before {
                mirror(&source.clone_root, &clone.clone_root)?;
                changed_after.then_some("the files are the original conversation's as they are now, including changes made after the fork point")
            } else {
                None
            };
            let sub = Path::new(&old_workspace)
                .strip_prefix(&source.clone_root)
                .unwrap_or(Path::new(""))
                .to_path_buf();
            (clone.clone_root.join(sub).display().to_string(), note)
        }
        WorkingCopy::Direct { .. } => (
            old_workspace.clone(),
            Some("the original worked directly in its directory, so the fork shares it"),
        ),
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

/// Makes `to`'s files (outside `.git`) the same as `from`'s: plain copies, no git run on
/// the agent's clone.
fn mirror(from: &Path, to: &Path) -> Result<()> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let path = entry.path();
            let relative = path.strip_prefix(base).unwrap_or(&path).to_path_buf();
            if relative.starts_with(".git") || relative.starts_with(".wright/tmp") {
                continue;
            }
            let kind = entry.file_type()?;
            if kind.is_dir() {
                walk(&path, base, out)?;
            } else {
                out.push(relative);
            }
        }
        Ok(())
    }
    let mut wanted = Vec::new();
    walk(from, from, &mut wanted)?;
    let mut present = Vec::new();
    walk(to, to, &mut present)?;
    for stale in present.iter().filter(|p| !wanted.contains(p)) {
        std::fs::remove_file(to.join(stale))?;
    }
    for file in &wanted {
        let (source, target) = (from.join(file), to.join(file));
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let meta = std::fs::symlink_metadata(&source)?;
        if meta.file_type().is_symlink() {
            let _ = std::fs::remove_file(&target);
            std::os::unix::fs::symlink(std::fs::read_link(&source)?, &target)?;
        } else {
            let _ = std::fs::remove_file(&target);
            std::fs::copy(&source, &target)?;
        }
    }
    Ok(())
}
