//! The rules for `git`: reading the history is `low`; committing, branching and other
//! changes of the workspace's repository `medium`; pushing, reaching a remote, changing
//! git's configuration (remotes included), deleting untracked files and discarding
//! changes `high`.

use super::paths::Place;
use super::shell::Word;
use super::Finding;
use wright_protocol::Risk;

/// Findings of `git ARGS`.
pub(crate) fn git(args: &[Word], place: &Place) -> Vec<Finding> {
    let mut at = 0;
    let mut findings = Vec::new();
    // Global options before the subcommand.
    while let Some(word) = args.get(at) {
        match word.text.as_str() {
            "-c" | "--config-env" => {
                findings.push(Finding::new(
                    Risk::High,
                    "git -c: sets git's configuration for the command",
                ));
                at += 2;
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" => at += 2,
            text if text.starts_with('-') => at += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(at) else {
        findings.push(Finding::new(Risk::Low, "git alone"));
        return findings;
    };
    let rest = &args[at + 1..];
    let has = |flags: &[&str]| rest.iter().any(|w| flags.contains(&w.text.as_str()));
    let plain: Vec<&str> = rest
        .iter()
        .filter(|w| !w.text.starts_with('-'))
        .map(|w| w.text.as_str())
        .collect();
    let sub = sub.text.as_str();
    let finding = match sub {
        "status" | "log" | "diff" | "show" | "blame" | "rev-parse" | "ls-files" | "ls-tree"
        | "grep" | "describe" | "shortlog" | "reflog" | "cat-file" | "help" | "version"
        | "whatchanged" | "name-rev" | "merge-base" | "count-objects" | "check-ignore"
        | "rev-list" | "annotate" | "for-each-ref" | "show-ref" | "difftool" | "range-diff" => {
            Finding::new(Risk::Low, format!("git {sub} reads"))
        }
        "push" | "send-email" | "request-pull" => {
            Finding::new(Risk::High, format!("git {sub}: sends to a remote"))
        }
        "clone" | "fetch" | "pull" | "ls-remote" | "archive"
            if sub != "archive" || has(&["--remote"]) =>
        {
            Finding::new(Risk::High, format!("git {sub}: needs the network"))
        }
        "submodule"
            if matches!(
                plain.first(),
                Some(&"update" | &"add" | &"sync" | &"foreach")
            ) =>
        {
            Finding::new(Risk::High, "git submodule: may fetch from the network")
        }
        "lfs" if matches!(plain.first(), Some(&"push" | &"fetch" | &"pull" | &"clone")) => {
            Finding::new(Risk::High, "git lfs: needs the network")
        }
        "config" => {
            let reads = has(&[
                "--get",
                "--get-all",
                "--get-regexp",
                "--list",
                "-l",
                "--show-origin",
                "--get-urlmatch",
            ]) || (plain.len() == 1
                && !has(&["--unset", "--unset-all", "--add", "--replace-all"]));
            match reads {
                true => Finding::new(Risk::Low, "git config reads"),
                false => Finding::new(Risk::High, "git config: changes git's configuration"),
            }
        }
        "remote" => match plain.first() {
            None | Some(&"show" | &"get-url") => Finding::new(Risk::Low, "git remote reads"),
            Some(action) => Finding::new(
                Risk::High,
                format!("git remote {action}: changes git's configuration (remotes)"),
            ),
        },
        "credential" | "credential-store" | "credential-cache" => {
            Finding::new(Risk::High, "git credential: reads stored credentials")
        }
        "clean" if !has(&["-n", "--dry-run"]) => {
            Finding::new(Risk::High, "git clean: deletes untracked files")
        }
        "clean" => Finding::new(Risk::Low, "git clean --dry-run reads"),
        "reset" if has(&["--hard", "--merge", "--keep"]) => {
            Finding::new(Risk::High, "git reset --hard: discards uncommitted changes")
        }
        "checkout" | "restore" if plain.contains(&".") && !has(&["-b", "-B"]) => Finding::new(
            Risk::High,
            format!("git {sub} .: discards uncommitted changes"),
        ),
        "stash" if matches!(plain.first(), Some(&"drop" | &"clear")) => {
            Finding::new(Risk::High, "git stash drop: discards saved changes")
        }
        "stash" if matches!(plain.first(), None | Some(&"list" | &"show")) && !plain.is_empty() => {
            Finding::new(Risk::Low, "git stash list reads")
        }
        "filter-branch" | "filter-repo" | "replace" | "hook" | "daemon" | "http-backend"
        | "instaweb" | "update-server-info" => Finding::new(
            Risk::High,
            format!("git {sub}: beyond the workspace's own work"),
        ),
        "rm" if has(&["-r", "-rf", "-fr"]) => {
            Finding::new(Risk::High, "git rm -r: deletes whole directories")
        }
        "branch" | "tag"
            if plain.is_empty()
                || has(&[
                    "-l",
                    "--list",
                    "-a",
                    "-r",
                    "-v",
                    "-vv",
                    "--show-current",
                    "--contains",
                ]) =>
        {
            Finding::new(Risk::Low, format!("git {sub} lists"))
        }
        "worktree" if plain.first() == Some(&"list") => {
            Finding::new(Risk::Low, "git worktree list")
        }
        "worktree" => match plain.get(1) {
            Some(path) => place.written(path, "makes a worktree at"),
            None => Finding::new(Risk::Medium, "git worktree"),
        },
        _ => Finding::new(Risk::Medium, format!("git {sub} changes the repository")),
    };
    findings.push(finding);
    findings
}
