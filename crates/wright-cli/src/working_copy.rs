//! The user's working copy is never touched directly. In a git repository the agent works
//! in its own clone of HEAD on a new branch `wright/<conversation>` (under the
//! conversation's data directory, sharing the repository's objects read-only); at the end
//! its changes are committed there and fetched into the user's repository as that branch,
//! to take (`wright apply`) or drop (`wright discard`). `--in-place` opts out, and refuses
//! a dirty tree unless forced.
//!
//! Git runs on the agent's clone only inside the sandbox: hooks, filters or config the
//! agent wrote there never execute outside it.

use anyhow::bail;
use anyhow::Context;
use anyhow::Result;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use wright_sandbox::Sandbox;

pub enum WorkingCopy {
    /// Not a git repository, or `--in-place`: the agent works in the directory itself.
    Direct {
        root: PathBuf,
    },
    Clone(AgentClone),
}

pub struct AgentClone {
    pub repo_root: PathBuf,
    pub clone_root: PathBuf,
    /// The workspace inside the clone (the same subdirectory the user pointed at).
    pub workspace: PathBuf,
    pub branch: String,
    pub base_commit: String,
}

/// What the run left, for the report.
pub enum Outcome {
    Direct,
    NoChanges,
    Branch { branch: String, diff: String },
}

/// Where a conversation records its branch, for `wright apply` and `wright discard`.
const RECORD: &str = "working_copy.json";

/// `wright apply ID`: merges the conversation's branch into the user's current branch.
pub fn apply(conversation_dir: &Path, cherry_pick: bool) -> Result<()> {
    let (repo, branch, base) = read_record(conversation_dir)?;
    let result = if cherry_pick {
        let range = format!("{base}..{branch}");
        git(&repo, &["cherry-pick", &range])
    } else {
        git(&repo, &["merge", "--no-edit", &branch])
    };
    result.with_context(|| format!("could not take {branch} into {}", repo.display()))?;
    say!("took {branch} into {}", repo.display());
    Ok(())
}

/// `wright discard ID`: deletes the conversation's branch and the agent's clone.
pub fn discard(conversation_dir: &Path) -> Result<()> {
    let (repo, branch, _) = read_record(conversation_dir)?;
    if git(&repo, &["rev-parse", "--verify", "--quiet", &branch]).is_ok() {
        git(&repo, &["branch", "--quiet", "-D", &branch])?;
    }
    let clone = conversation_dir.join("workspace");
    if clone.exists() {
        std::fs::remove_dir_all(&clone)
            .with_context(|| format!("cannot remove {}", clone.display()))?;
    }
    say!("discarded {branch}");
    Ok(())
}

fn read_record(conversation_dir: &Path) -> Result<(PathBuf, String, String)> {
    let path = conversation_dir.join(RECORD);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "this conversation did not work on a branch ({} is missing)",
            path.display()
        )
    })?;
    let value: serde_json::Value = serde_json::from_str(&text)?;
    let field = |key: &str| value[key].as_str().unwrap_or_default().to_string();
    Ok((
        PathBuf::from(field("repo_root")),
        field("branch"),
        field("base_commit"),
    ))
}

fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .context("cannot run git")?;
    if !output.status.success() {
        bail!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .trim_end()
        .to_string())
}

fn repo_root(dir: &Path) -> Option<PathBuf> {
    git(dir, &["rev-parse", "--show-toplevel"])
        .ok()
        .map(PathBuf::from)
}

impl WorkingCopy {
    pub fn prepare(
        workspace: &Path,
        conversation_dir: &Path,
        id: &str,
        in_place: bool,
        force: bool,
    ) -> Result<Self> {
        let Some(repo_root) = repo_root(workspace) else {
            return Ok(WorkingCopy::Direct {
                root: workspace.to_path_buf(),
            });
        };
        if in_place {
            let dirty = git(&repo_root, &["status", "--porcelain"])?;
            if !dirty.is_empty() && !force {
                bail!("--in-place refuses to work in a tree with uncommitted changes (commit or stash them, or add --force)");
            }
            return Ok(WorkingCopy::Direct {
                root: workspace.to_path_buf(),
            });
        }
        let base_commit = git(&repo_root, &["rev-parse", "--verify", "HEAD"])
            .context("the repository has no commit yet; commit once, or use --in-place")?;
        let sub = workspace
            .strip_prefix(&repo_root)
            .unwrap_or(Path::new(""))
            .to_path_buf();
        let clone_root = conversation_dir.join("workspace");
        let branch = format!("wright/{id}");
        let clone_arg = clone_root.display().to_string();
        let repo_arg = repo_root.display().to_string();
        git(
            conversation_dir,
            &[
                "clone",
                "--quiet",
                "--shared",
                "--no-checkout",
                &repo_arg,
                &clone_arg,
            ],
        )?;
        git(
            &clone_root,
            &["checkout", "--quiet", "-b", &branch, &base_commit],
        )?;
        let record = serde_json::json!({
            "repo_root": repo_root, "branch": branch, "base_commit": base_commit,
        });
        std::fs::write(conversation_dir.join(RECORD), record.to_string())
            .context("cannot record the agent's branch")?;
        Ok(WorkingCopy::Clone(AgentClone {
            workspace: clone_root.join(sub),
            repo_root,
            clone_root,
            branch,
            base_commit,
        }))
    }

    /// The directory the agent works in.
    pub fn workspace(&self) -> &Path {
        match self {
            WorkingCopy::Direct { root } => root,
            WorkingCopy::Clone(clone) => &clone.workspace,
        }
    }

    /// The directory the agent may write in: its whole clone, or the workspace itself.
    pub fn writable_root(&self) -> &Path {
        match self {
            WorkingCopy::Direct { root } => root,
            WorkingCopy::Clone(clone) => &clone.clone_root,
        }
    }

    /// Paths the sandbox must let the agent read: the shared object store.
    pub fn shared_read_only(&self) -> Vec<PathBuf> {
        match self {
            WorkingCopy::Direct { .. } => Vec::new(),
            WorkingCopy::Clone(clone) => vec![clone.repo_root.join(".git").join("objects")],
        }
    }

    /// Commits the agent's changes in its clone (inside the sandbox) and fetches them
    /// into the user's repository as the conversation's branch.
    pub fn finish(
        &self,
        task: &str,
        sandbox: &Sandbox,
        env: &[(String, String)],
    ) -> Result<Outcome> {
        let WorkingCopy::Clone(clone) = self else {
            return Ok(Outcome::Direct);
        };
        let title: String = task.lines().next().unwrap_or("").chars().take(72).collect();
        let message = format!("wright: {title}");
        let confined_git = |args: &[&str]| -> Result<()> {
            let mut full = vec![
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "user.name=wright",
                "-c",
                "user.email=wright@localhost",
            ];
            full.extend_from_slice(args);
            let (program, wrapped) = sandbox.wrap("git", &full);
            let output = Command::new(program)
                .args(wrapped)
                .current_dir(&clone.clone_root)
                .env_clear()
                .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .output()
                .context("cannot run git in the sandbox")?;
            if !output.status.success() {
                bail!(
                    "git {} in the agent's clone failed: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&output.stderr).trim()
                );
            }
            Ok(())
        };
        confined_git(&["add", "--all"])?;
        confined_git(&["commit", "--quiet", "--allow-empty", "-m", &message])?;
        let clone_arg = clone.clone_root.display().to_string();
        let refspec = format!("+{0}:refs/heads/{0}", clone.branch);
        git(
            &clone.repo_root,
            &["fetch", "--quiet", "--no-tags", &clone_arg, &refspec],
        )?;
        let range = format!("{}..{}", clone.base_commit, clone.branch);
        let diff = git(
            &clone.repo_root,
            &["diff", "--no-color", "--no-ext-diff", &range],
        )?;
        if diff.trim().is_empty() {
            git(
                &clone.repo_root,
                &["branch", "--quiet", "-D", &clone.branch],
            )?;
            return Ok(Outcome::NoChanges);
        }
        Ok(Outcome::Branch {
            branch: clone.branch.clone(),
            diff,
        })
    }
}

impl WorkingCopy {
    /// The working copy of an existing conversation: its clone when it has a record of
    /// one, else the directory it worked in.
    pub fn reopen(conversation_dir: &Path, workspace: &Path) -> Result<Self> {
        match read_record(conversation_dir) {
            Ok((repo_root, branch, base_commit)) => {
                let clone_root = conversation_dir.join("workspace");
                if !clone_root.exists() {
                    bail!(
                        "the agent's clone {} is gone (discarded?); nothing to resume in",
                        clone_root.display()
                    );
                }
                Ok(WorkingCopy::Clone(AgentClone {
                    repo_root,
                    clone_root,
                    workspace: workspace.to_path_buf(),
                    branch,
                    base_commit,
                }))
            }
            Err(_) => Ok(WorkingCopy::Direct {
                root: workspace.to_path_buf(),
            }),
        }
    }
}
