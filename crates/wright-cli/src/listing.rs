//! `wright ls`: the conversations, newest first, one line each — id, state, age, the
//! repository worked on, the model it is on now, steps, what became of the changes, and
//! the task. Each log is
//! read once; git is asked per repository, not per conversation (see
//! `working_copy::status`).

use crate::history_cmds::conversation_ids;
use crate::progress::clip;
use anyhow::Context;
use anyhow::Result;
use clap::Args;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;
use wright_core::conversations_dir;
use wright_protocol::count;
use wright_session::working_copy::status::Repos;

#[derive(Args)]
pub struct LsArgs {
    /// Only the conversations on the repository (or directory) at PATH.
    #[arg(long, value_name = "PATH", conflicts_with = "here")]
    pub repo: Option<PathBuf>,
    /// Only the conversations on the repository of the current directory.
    #[arg(long)]
    pub here: bool,
}

pub use wright_session::stored::worked_on;
pub use wright_session::stored::Summary;

/// The top of the repository `path` is in, or the directory itself when it is in none:
/// what conversations record as where they worked. A directory that is gone is taken as
/// written (made absolute), so its conversations can still be found.
pub fn repository_of(path: &Path) -> Result<PathBuf> {
    let Ok(real) = path.canonicalize() else {
        return std::path::absolute(path)
            .with_context(|| format!("{} is not a usable path", path.display()));
    };
    Ok(wright_sandbox::git::UserRepo::discover(&real)
        .map(|repo| repo.top().to_path_buf())
        .unwrap_or(real))
}

pub fn list(args: LsArgs) -> Result<()> {
    let only = match (&args.repo, args.here) {
        (Some(path), _) => Some(repository_of(path)?),
        (None, true) => Some(repository_of(Path::new("."))?),
        (None, false) => None,
    };
    let ids = conversation_ids()?;
    if ids.is_empty() {
        say!("no conversations yet in {}", conversations_dir().display());
        return Ok(());
    }
    let mut repos = Repos::default();
    let mut shown = 0;
    // A group's conversations are shown together, where its first one comes.
    let mut rows: Vec<(Option<String>, String)> = Vec::new();
    for id in ids {
        let summary = match Summary::read(&id) {
            Ok(summary) => summary,
            Err(err) => {
                if only.is_none() {
                    say!("{id}  (unreadable: {err})");
                }
                continue;
            }
        };
        if let Some(only) = &only {
            if summary.repository() != Some(only.as_path()) {
                continue;
            }
        }
        let torn = if summary.torn {
            " (log torn at the end)"
        } else {
            ""
        };
        let line = format!(
            "{id}  {:<11} {:>4}  {:<24}  {:<20}  {:>3} {}  {:<12}  {}{torn}",
            summary.state.as_str(),
            summary.age().map(short_age).unwrap_or_default(),
            summary.repository().map(short_path).unwrap_or_default(),
            clip(&summary.model, 19),
            summary.steps,
            if summary.steps == 1 { "step " } else { "steps" },
            summary.change(&mut repos).as_str(),
            clip(&summary.task, 70)
        );
        rows.push((summary.group.clone(), line));
        shown += 1;
    }
    print_grouped(rows);
    if shown == 0 {
        if let Some(only) = only {
            say!("no conversations on {}", only.display());
        }
    }
    Ok(())
}

/// Prints the rows in order, each group's together under a line naming it.
fn print_grouped(rows: Vec<(Option<String>, String)>) {
    let mut done = std::collections::BTreeSet::new();
    for (group, line) in &rows {
        let Some(group) = group else {
            say!("{line}");
            continue;
        };
        if !done.insert(group.clone()) {
            continue;
        }
        let members: Vec<&String> = rows
            .iter()
            .filter(|(g, _)| g.as_ref() == Some(group))
            .map(|(_, line)| line)
            .collect();
        say!(
            "group {group} ({}):",
            count(members.len() as u64, "conversation")
        );
        for member in members {
            say!("  {member}");
        }
    }
}

/// `45s`, `12m`, `3h`, `9d`.
pub fn short_age(age: Duration) -> String {
    let secs = age.as_secs();
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86400),
    }
}

/// A path in at most 24 characters: `~` for the home directory, its end kept.
fn short_path(path: &Path) -> String {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let text = match home
        .as_deref()
        .and_then(|home| path.strip_prefix(home).ok())
    {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    };
    let count = text.chars().count();
    if count <= 24 {
        return text;
    }
    let tail: String = text.chars().skip(count - 23).collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_and_paths_are_short() {
        assert_eq!(short_age(Duration::from_secs(45)), "45s");
        assert_eq!(short_age(Duration::from_secs(720)), "12m");
        assert_eq!(short_age(Duration::from_secs(3 * 3600 + 5)), "3h");
        assert_eq!(short_age(Duration::from_secs(9 * 86400)), "9d");
        assert_eq!(short_path(Path::new("/srv/p")), "/srv/p");
        let long = short_path(Path::new("/srv/a-rather-long-directory/project"));
        assert_eq!(long, "…-long-directory/project");
        assert_eq!(long.chars().count(), 24);
    }
}
