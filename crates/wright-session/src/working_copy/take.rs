//! What the user does with a conversation's changes once it has ended: `wright apply`
//! takes its branch into their current branch — never over a dirty tree or an operation
//! in progress, a conflict undone — and `wright discard` drops the branch and the clone,
//! or puts a directory worked in directly back as it was.

use super::direct;
use super::status::Repos;
use super::status::DISCARDED;
use super::Record;
use crate::front::Front;
use anyhow::bail;
use anyhow::Context;
use anyhow::Result;
use std::path::Path;
use wright_protocol::Notice;
use wright_sandbox::git::Oid;
use wright_sandbox::git::UserRepo;

/// `wright apply ID`: merges the conversation's branch into the user's current branch.
pub fn apply(
    conversation_dir: &Path,
    cherry_pick: bool,
    with_git_config: bool,
    front: &dyn Front,
) -> Result<()> {
    // Not while the conversation runs (its branch may still move), nor two at once.
    let _lock = lock(conversation_dir)?;
    let (repo_root, branch, base_commit) = match Record::read(conversation_dir)? {
        Record::Clone {
            repo_root,
            branch,
            base_commit,
            ..
        } => (repo_root, branch, base_commit),
        Record::Direct { workspace, .. } => bail!(
            "this conversation worked directly in {}: its changes are already there (`wright discard` puts the directory back as it was)",
            workspace.display()
        ),
        Record::InPlace { .. } => bail!(
            "this conversation worked in place: its changes are already in your checkout, committed on your branch"
        ),
    };
    let repo = UserRepo::at(&repo_root);
    let base = Oid::parse(&base_commit).context("the record's base commit is damaged")?;
    if conversation_dir.join(DISCARDED).exists() {
        bail!("this conversation's branch {branch} was discarded: there is nothing to take");
    }
    if !repo.branch_exists(&branch) {
        // As `wright diff` says it: a run that never handed over keeps its work in its
        // clone, which is not "no changes".
        let id = conversation_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let change = crate::stored::Summary::read(&id)?.change(&mut Repos::default());
        bail!(
            "conversation {id} has no branch {branch}: {}",
            change.why_no_branch(&id)
        );
    }
    // Never mixed with what the user has in progress, and never left half done.
    if let Some(what) = repo.operation_in_progress() {
        bail!(
            "{} is in the middle of {what}: finish it or abort it first, then run `wright apply` again",
            repo_root.display()
        );
    }
    if repo.has_uncommitted_changes()? {
        bail!(
            "{} has uncommitted changes: commit or stash them first, so the agent's changes are never mixed with yours",
            repo_root.display()
        );
    }
    if !repo.is_ancestor(&base, &branch) {
        bail!("{branch} does not grow from the commit the conversation started at ({base_commit}): its history was rewritten in the agent's clone, so wright will not take it; look at it with `git log {branch}`");
    }
    // These make the git of the merge (and git-lfs) run programs or reach servers of
    // their choosing on the agent's files: the user reads them first. Every commit
    // counts: a cherry-pick checks each one out.
    let pointed = repo.configured_paths();
    let configuring: Vec<String> = repo
        .paths_touched(&base, &branch)?
        .into_iter()
        .filter(|path| configures_git(path, &pointed))
        .collect();
    if !configuring.is_empty() && !with_git_config {
        bail!(
            "{branch} changes {}, which tell git, git-lfs or wright which filters, drivers, servers and settings to use on your files; read them (`git diff {base_commit} {branch} -- {}`), then take the branch with `wright apply --with-git-config`",
            configuring.join(", "),
            configuring.join(" ")
        );
    }
    let result = if cherry_pick {
        repo.cherry_pick(&base, &branch)
    } else {
        repo.merge(&branch)
    };
    if let Err(err) = result {
        let by_hand = if cherry_pick {
            format!("git cherry-pick {base_commit}..{branch}")
        } else {
            format!("git merge {branch}")
        };
        bail!(
            "could not take {branch} into {}: {err}\n  to take it by hand and resolve the conflicts yourself: {by_hand}, fix the files, then git add and git {}",
            repo_root.display(),
            if cherry_pick { "cherry-pick --continue" } else { "commit" }
        );
    }
    front.notice(Notice::Took {
        branch,
        into: repo_root,
    });
    Ok(())
}

/// Files that tell a hook manager what to run at the user's next commit (pre-commit,
/// lefthook, husky's old rc), by name wherever they are.
const HOOK_MANAGER_FILES: &[&str] = &[
    ".pre-commit-config.yaml",
    ".pre-commit-config.yml",
    "lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yml",
    ".lefthook.yaml",
    "lefthook-local.yml",
    "lefthook-local.yaml",
    ".lefthook-local.yml",
    ".lefthook-local.yaml",
    ".huskyrc",
    ".simple-git-hooks.json",
    ".simple-git-hooks.cjs",
    ".simple-git-hooks.js",
];

/// Directories whose files hook managers run as hooks (husky's `.husky/pre-commit`,
/// which the shims in `.husky/_` call; `.githooks`; lefthook's scripts), wherever they are.
const HOOK_DIRECTORIES: &[&str] = &[
    ".husky",
    ".githooks",
    ".git-hooks",
    ".lefthook",
    ".lefthook-local",
];

/// Whether a path of a tree configures git, git-lfs, a hook manager or wright: by its
/// name (in any case, as a case-insensitive file system would read it), or because the
/// repository's config points at it or at a directory holding it (`pointed`, relative to
/// the top: hooks, included files, the scripts of its filters and drivers).
pub(crate) fn configures_git(path: &str, pointed: &[String]) -> bool {
    let lower = path.to_lowercase();
    let parts: Vec<&str> = lower
        .split('/')
        .map(|p| p.trim_end_matches(['.', ' ']))
        .collect();
    let name = parts.last().copied().unwrap_or_default();
    let in_hook_directory = parts[..parts.len().saturating_sub(1)]
        .iter()
        .any(|dir| HOOK_DIRECTORIES.contains(dir));
    matches!(name, ".gitattributes" | ".gitmodules" | ".lfsconfig")
        || HOOK_MANAGER_FILES.contains(&name)
        || in_hook_directory
        || lower == wright_config::REPO_FILE
        || lower == wright_config::automations::REPO_AUTOMATIONS_FILE
        || pointed
            .iter()
            .any(|p| path == p || path.starts_with(&format!("{}/", p.trim_end_matches('/'))))
}

fn lock(conversation_dir: &Path) -> Result<wright_core::RunLock> {
    let id = conversation_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(wright_core::RunLock::conversation(conversation_dir, &id)?)
}

/// What `drop_work` did.
pub enum Dropped {
    /// The branch (named) and the clone were removed.
    Removed(String),
    /// Nothing was left of the branch (named) or the clone.
    AlreadyGone(String),
    /// A directory worked in directly was put back as it was.
    Restored,
}

/// `wright discard ID`: deletes the conversation's branch and the agent's clone.
pub fn discard(conversation_dir: &Path, front: &dyn Front) -> Result<()> {
    match drop_work(conversation_dir, front)? {
        Dropped::Removed(branch) => front.notice(Notice::Discarded { branch }),
        Dropped::AlreadyGone(branch) => front.notice(Notice::AlreadyDiscarded { branch }),
        Dropped::Restored => {}
    }
    Ok(())
}

/// Deletes the conversation's branch and the agent's clone (or puts a directory worked in
/// directly back, saying how on `front`).
pub fn drop_work(conversation_dir: &Path, front: &dyn Front) -> Result<Dropped> {
    let _lock = lock(conversation_dir)?;
    let (repo_root, clone_root, branch) = match Record::read(conversation_dir)? {
        Record::Clone {
            repo_root,
            clone_root,
            branch,
            ..
        } => (repo_root, clone_root, branch),
        Record::Direct {
            workspace,
            git_before,
        } => {
            direct::restore(&workspace, conversation_dir, &git_before, front)?;
            let _ = std::fs::write(conversation_dir.join(DISCARDED), "");
            return Ok(Dropped::Restored);
        }
        Record::InPlace { .. } => bail!(
            "this conversation worked in place and its changes were committed on your branch: take them back with git (`git reset HEAD~1` keeps the files)"
        ),
    };
    let repo = UserRepo::at(&repo_root);
    let had_branch = repo.branch_exists(&branch);
    if had_branch {
        repo.delete_branch(&branch)?;
    }
    let had_clone = clone_root.exists();
    if had_clone {
        // remove_dir_all does not follow symbolic links out of the clone.
        std::fs::remove_dir_all(&clone_root)
            .with_context(|| format!("cannot remove {}", clone_root.display()))?;
    }
    let _ = std::fs::write(conversation_dir.join(DISCARDED), "");
    Ok(if had_branch || had_clone {
        Dropped::Removed(branch)
    } else {
        Dropped::AlreadyGone(branch)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_managers_and_pointed_scripts_configure_git() {
        let pointed = vec![".husky/_".to_string(), "tools/smudge.sh".to_string()];
        for path in [
            ".husky/pre-commit",
            ".husky/_/h",
            "web/.husky/pre-push",
            ".githooks/post-merge",
            ".pre-commit-config.yaml",
            "lefthook.yml",
            ".lefthook/pre-commit/lint.sh",
            "tools/smudge.sh",
            "sub/.GitAttributes",
            ".wright/config.toml",
            ".wright/automations.toml",
            ".Wright/Automations.toml",
        ] {
            assert!(configures_git(path, &pointed), "{path}");
        }
        for path in [
            "src/husky.rs",
            "tools/other.sh",
            ".husky",
            "docs/lefthook.md",
            "docs/.wright/automations.toml.md",
        ] {
            assert!(!configures_git(path, &pointed), "{path}");
        }
    }
}
