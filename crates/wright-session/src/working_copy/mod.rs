//! The user's working copy is never touched directly. In a git repository the agent works
//! in its own clone of HEAD on a new branch `wright/<conversation>` (in wright's
//! workspaces directory, sharing the repository's objects read-only); at the end its
//! changes are committed there and handed to the user's repository as that branch, to
//! take (`wright apply`) or drop (`wright discard`). `--in-place` opts out: the agent
//! works in the checkout itself, with `.git` read-only to it.
//!
//! The trust boundary (see `wright_sandbox::git`): git runs on what the agent wrote only
//! inside the sandbox — the checkout of the clone, the commit, the packing of its objects,
//! every diff of a work tree. The user's repository only receives data: a pack it checks
//! (`index-pack --strict`) and a commit id taken by value. A step that fails is an error
//! that keeps the clone; there is no fallback to doing it outside.

mod direct;
pub use direct::changes as direct_changes;
mod finish;
mod git_entries;
mod map;
mod message;
mod record;
mod stage;
mod start;
pub mod status;
pub mod steps;
mod take;

pub use finish::InPlaceCommit;
pub use finish::Outcome;
pub use git_entries::Quarantine;
pub use git_entries::Scan;
pub use message::commit_message;
pub use message::task_of;
pub use record::Record;
pub(crate) use start::mark_settled;
use start::settle_earlier_runs;
use start::take_uncommitted;
pub use start::StartPoint;
pub use start::Uncommitted;
pub use start::UncommittedChoice;
pub use take::apply;
pub(crate) use take::configures_git;
pub use take::discard;
pub use take::drop_work;
pub use take::Dropped;

use crate::front::Front;
use crate::repo_config::RepoConfigSource;
use crate::sandbox_setup::Placement;
use crate::sandbox_setup::SandboxSetup;
use anyhow::bail;
use anyhow::Context;
use anyhow::Result;
use std::path::Path;
use std::path::PathBuf;
use wright_sandbox::git::AgentRepo;
use wright_sandbox::git::Oid;
use wright_sandbox::git::Pointed;
use wright_sandbox::git::UserRepo;
use wright_sandbox::Protected;
use wright_sandbox::ProtectedWhy;

pub enum WorkingCopy {
    /// Not a git repository: the agent works in the directory itself.
    Direct {
        root: PathBuf,
        /// The repositories there when the conversation began (any other is the agent's).
        git_before: Scan,
        /// The conversation's own directory (where its record is).
        record_dir: PathBuf,
    },
    /// `--in-place`: the agent works in the repository's own work tree.
    InPlace(InPlace),
    Clone(AgentClone),
}

pub struct InPlace {
    pub repo: UserRepo,
    pub workspace: PathBuf,
    pub base: Oid,
    /// `.git` and, for a linked worktree, the common git directory: read-only to the agent.
    pub git_dirs: Vec<PathBuf>,
    /// `--force`: uncommitted changes of the user's may be in the tree.
    pub forced: bool,
    /// The repositories under the workspace when the conversation began.
    pub git_before: Scan,
    /// The conversation's own directory (where its record is).
    pub record_dir: PathBuf,
    /// Work-tree files the user's git configuration runs or reads (a hooks directory,
    /// husky's hooks, included config, a filter's script): read-only to the agent, as
    /// `.git` is.
    pub configured: Vec<Pointed>,
}

impl InPlace {
    /// What the agent may not write, in words for the run's header.
    pub fn read_only_words(&self) -> String {
        let mut listed = vec![".git".to_string()];
        for pointed in &self.configured {
            let shown = pointed
                .path
                .strip_prefix(self.repo.top())
                .unwrap_or(&pointed.path)
                .display()
                .to_string();
            listed.push(format!("{shown} ({})", pointed.used.words()));
        }
        format!("read-only to the agent: {}", listed.join(", "))
    }
}

/// The work-tree files the user's git configuration (read before the agent runs) makes
/// git run or read, but those in its git directories (protected already). In place, one
/// that cannot be kept read-only — not there yet, or reached through a link — refuses the
/// run: the user's next git command would run what the agent put there.
fn configured_in_tree(repo: &UserRepo, git_dirs: &[PathBuf]) -> Result<Vec<Pointed>> {
    let found = repo
        .configured_in_tree()
        .context("cannot read your git configuration")?;
    if !found.unprotectable.is_empty() {
        bail!(
            "--in-place cannot keep read-only what your git configuration runs or reads in the work tree: {}; your next git command would run what the agent put there. Work in a clone (drop --in-place), or point the configuration elsewhere",
            found.unprotectable.join("; ")
        );
    }
    let dot_git = repo.top().join(".git");
    Ok(found
        .pointed
        .into_iter()
        .filter(|p| {
            !p.path.starts_with(&dot_git) && !git_dirs.iter().any(|d| p.path.starts_with(d))
        })
        .collect())
}

pub struct AgentClone {
    pub repo: UserRepo,
    /// The user's uncommitted work at the start, and what became of it.
    pub uncommitted: Uncommitted,
    pub clone_root: PathBuf,
    /// The workspace inside the clone (the same subdirectory the user pointed at).
    pub workspace: PathBuf,
    pub branch: String,
    pub base: Oid,
}

/// How a new conversation's working copy is made.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// `--in-place`: in the checkout itself.
    pub in_place: bool,
    /// `--force`: in place even over uncommitted changes.
    pub force: bool,
    /// The user's uncommitted work, for a clone.
    pub uncommitted: UncommittedChoice,
    /// Outside git: keep a snapshot to diff and undo (`--no-snapshot` turns it off).
    pub snapshot: bool,
}

/// What must stay read-only for the repositories of a scan to stay the user's.
fn guarded(scan: &Scan) -> Vec<PathBuf> {
    scan.repositories
        .iter()
        .map(|r| r.guarded_path().to_path_buf())
        .collect()
}

/// The same, as the sandbox and wright's own tools take it.
fn protection(scan: &Scan) -> Protected {
    let mut protected = Protected::new();
    for path in guarded(scan) {
        protected.add(path, ProtectedWhy::GitDir);
    }
    protected
}

/// Removes what a conversation that never ran left: its directory and its clone.
pub fn remove_unstarted(conversation_dir: &Path, id: &str) {
    let _ = std::fs::remove_dir_all(conversation_dir);
    let _ = std::fs::remove_dir_all(wright_core::workspaces_dir().join(id));
}

impl WorkingCopy {
    /// Decides where a new conversation works and records it. Only the user's own
    /// repository is read here; the clone is made without a work tree (`start` checks it
    /// out, in the sandbox).
    pub fn prepare(
        start: StartPoint,
        conversation_dir: &Path,
        id: &str,
        options: Options,
        front: &dyn Front,
    ) -> Result<Self> {
        let Options {
            in_place,
            force,
            uncommitted,
            snapshot,
        } = options;
        let StartPoint {
            workspace,
            repo,
            head,
        } = start;
        let workspace = workspace.as_path();
        let Some(repo) = repo else {
            let git_before = git_entries::scan(workspace, false, &[]);
            Record::Direct {
                workspace: workspace.to_path_buf(),
                git_before: git_before.clone(),
            }
            .write(conversation_dir)?;
            if snapshot {
                direct::take(workspace, conversation_dir, &git_before)?;
            }
            return Ok(WorkingCopy::Direct {
                root: workspace.to_path_buf(),
                git_before,
                record_dir: conversation_dir.to_path_buf(),
            });
        };
        let base = match head {
            Some(head) => head,
            None if in_place => Oid::empty_tree(),
            None => {
                return Err(crate::error::WorkspaceError::NoCommit {
                    repo: repo.top().to_path_buf(),
                }
                .into())
            }
        };
        if in_place {
            let git_dirs = repo.git_dirs()?;
            let configured = configured_in_tree(&repo, &git_dirs)?;
            let git_before = git_entries::scan(workspace, false, &[]);
            Record::InPlace {
                repo_root: repo.top().to_path_buf(),
                workspace: workspace.to_path_buf(),
                base_commit: base.to_string(),
                forced: force,
                git_before: git_before.clone(),
            }
            .write(conversation_dir)?;
            return Ok(WorkingCopy::InPlace(InPlace {
                repo,
                workspace: workspace.to_path_buf(),
                base,
                git_dirs,
                forced: force,
                git_before,
                record_dir: conversation_dir.to_path_buf(),
                configured,
            }));
        }
        let (base, uncommitted) = take_uncommitted(&repo, base, uncommitted, front)?;
        let sub = workspace
            .strip_prefix(repo.top())
            .unwrap_or(Path::new(""))
            .to_path_buf();
        let clone_root = wright_core::workspaces_dir().join(id);
        if let Some(parent) = clone_root.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        repo.clone_shared(&clone_root)?;
        let clone = AgentClone {
            workspace: clone_root.join(sub),
            repo,
            uncommitted,
            clone_root,
            branch: format!("wright/{id}"),
            base,
        };
        clone.record().write(conversation_dir)?;
        Ok(WorkingCopy::Clone(clone))
    }

    /// Readies the working copy once the sandbox exists: a clone's work tree is checked
    /// out (in the sandbox); an in-place checkout must be clean unless forced. A clone
    /// worked in at its top is checked out in the background (`CheckingOut`: the sandbox
    /// and the conversation wait for it); one worked in a subdirectory is checked out
    /// here, as the tools open that directory, which only the checkout makes.
    pub(crate) fn start(
        &self,
        setup: &mut SandboxSetup,
    ) -> Result<Option<crate::checkout::CheckingOut>> {
        if matches!(self, WorkingCopy::Direct { .. }) {
            return Ok(None);
        }
        if let WorkingCopy::Clone(clone) = self {
            if clone.workspace == clone.clone_root {
                return crate::checkout::CheckingOut::start(clone, setup).map(Some);
            }
        }
        // git runs in the sandbox: not before its check has said yes.
        setup.settle_check()?;
        match self {
            WorkingCopy::Direct { .. } => Ok(None),
            WorkingCopy::InPlace(in_place) => {
                let git = AgentRepo::new(&setup.sandbox, &setup.env, &in_place.workspace);
                if !in_place.forced && !git.is_clean()? {
                    bail!("--in-place refuses to work in a tree with uncommitted changes (commit or stash them, or add --force)");
                }
                Ok(None)
            }
            WorkingCopy::Clone(clone) => {
                AgentRepo::new(&setup.sandbox, &setup.env, &clone.clone_root)
                    .check_out_new_branch(&clone.branch, &clone.base)
                    .context("cannot check out the agent's clone")?;
                Ok(None)
            }
        }
    }

    /// A resumed run begins (before the agent has a shell): outside git, what changed
    /// since the last run is recorded as the user's, so `wright discard` never undoes it.
    pub fn begin_resumed_run(&self) -> Result<()> {
        match self {
            WorkingCopy::Direct {
                root,
                git_before,
                record_dir,
            } => direct::begin(root, record_dir, git_before),
            WorkingCopy::InPlace(_) | WorkingCopy::Clone(_) => Ok(()),
        }
    }

    /// The working copy of an existing conversation, from its record; the log's idea of
    /// its workspace must agree with it.
    pub fn reopen(
        conversation_dir: &Path,
        logged_workspace: &Path,
        front: &dyn Front,
    ) -> Result<Self> {
        let record = Record::read(conversation_dir)?;
        record.check_logged_workspace(logged_workspace)?;
        let parse = |base: &str| Oid::parse(base).context("the record's base commit is damaged");
        Ok(match record {
            Record::Direct {
                workspace,
                git_before,
            } => {
                settle_earlier_runs(&workspace, conversation_dir, front);
                WorkingCopy::Direct {
                    root: workspace,
                    git_before,
                    record_dir: conversation_dir.to_path_buf(),
                }
            }
            Record::InPlace {
                repo_root,
                workspace,
                base_commit,
                forced,
                git_before,
            } => {
                settle_earlier_runs(&workspace, conversation_dir, front);
                let repo = UserRepo::at(&repo_root);
                let git_dirs = repo.git_dirs()?;
                WorkingCopy::InPlace(InPlace {
                    configured: configured_in_tree(&repo, &git_dirs)?,
                    git_dirs,
                    repo,
                    workspace,
                    base: parse(&base_commit)?,
                    forced,
                    git_before,
                    record_dir: conversation_dir.to_path_buf(),
                })
            }
            Record::Clone {
                repo_root,
                clone_root,
                workspace,
                branch,
                base_commit,
            } => {
                if !clone_root.is_dir() {
                    bail!(
                        "the agent's clone {} is gone (discarded?); nothing to resume in",
                        clone_root.display()
                    );
                }
                WorkingCopy::Clone(AgentClone {
                    repo: UserRepo::at(&repo_root),
                    uncommitted: Uncommitted::Nothing,
                    clone_root,
                    workspace,
                    branch,
                    base: parse(&base_commit)?,
                })
            }
        })
    }

    /// Where the conversation's repository configuration is read: at its start commit.
    pub fn config_source(&self) -> RepoConfigSource {
        match self {
            WorkingCopy::Direct { root, .. } => RepoConfigSource::Directory(root.clone()),
            WorkingCopy::InPlace(in_place) => RepoConfigSource::Commit {
                repo: in_place.repo.clone(),
                commit: in_place.base.clone(),
            },
            WorkingCopy::Clone(clone) => RepoConfigSource::Commit {
                repo: clone.repo.clone(),
                commit: clone.base.clone(),
            },
        }
    }

    /// The directory worked in, relative to the top of what `config_source` reads
    /// (`""` for the top): where the repository's instructions are looked for, from the
    /// top down to it.
    pub fn sub_directory(&self) -> String {
        let (inner, top) = match self {
            WorkingCopy::Direct { .. } => return String::new(),
            WorkingCopy::InPlace(in_place) => (&in_place.workspace, in_place.repo.top()),
            WorkingCopy::Clone(clone) => (&clone.workspace, clone.clone_root.as_path()),
        };
        inner
            .strip_prefix(top)
            .unwrap_or(Path::new(""))
            .to_string_lossy()
            .into_owned()
    }

    /// The workspace, opened: a clone's subdirectory is reached from the clone's root
    /// without following a link (the agent may have replaced it with one).
    pub fn open_workspace(&self) -> Result<wright_tools::Workspace> {
        let opened = match self {
            WorkingCopy::Clone(clone) => {
                let sub = clone
                    .workspace
                    .strip_prefix(&clone.clone_root)
                    .unwrap_or(Path::new(""));
                wright_tools::Workspace::within(&clone.clone_root, sub)
            }
            WorkingCopy::Direct { root, .. } => wright_tools::Workspace::new(root),
            WorkingCopy::InPlace(in_place) => wright_tools::Workspace::new(&in_place.workspace),
        };
        opened.map_err(|err| anyhow::anyhow!("{err}"))
    }

    /// The directory the agent works in.
    pub fn workspace(&self) -> &Path {
        match self {
            WorkingCopy::Direct { root, .. } => root,
            WorkingCopy::InPlace(in_place) => &in_place.workspace,
            WorkingCopy::Clone(clone) => &clone.workspace,
        }
    }

    /// What the sandbox must allow: the directory the agent may write (its whole clone,
    /// or the workspace), what it may read besides (the shared objects, an in-place
    /// repository's git directories), and what stays read-only inside it (`.git`).
    pub fn placement(&self) -> Placement {
        match self {
            WorkingCopy::Direct {
                root, git_before, ..
            } => Placement {
                // The user's own repositories in it stay theirs: read-only to the agent.
                protected: protection(git_before),
                needs_git: false,
                users_tree: true,
                ..Placement::writable(root)
            },
            WorkingCopy::InPlace(in_place) => {
                let writable = in_place.workspace.clone();
                let (inside, outside): (Vec<PathBuf>, Vec<PathBuf>) = in_place
                    .git_dirs
                    .iter()
                    .cloned()
                    .partition(|dir| dir.starts_with(&writable));
                // A `.git` file (a linked worktree's) inside is protected too, and so is
                // every other repository of the user's in the workspace (submodules), and
                // what the user's git configuration runs in the work tree.
                let mut protected = protection(&in_place.git_before);
                for dir in inside {
                    protected.add(dir, ProtectedWhy::GitDir);
                }
                protected.add(in_place.repo.top().join(".git"), ProtectedWhy::GitDir);
                for pointed in &in_place.configured {
                    protected.add(pointed.path.clone(), ProtectedWhy::GitConfigured);
                }
                Placement {
                    protected: protected.inside(&writable),
                    writable,
                    read_only: outside,
                    needs_git: true,
                    users_tree: true,
                }
            }
            WorkingCopy::Clone(clone) => Placement {
                writable: clone.clone_root.clone(),
                read_only: vec![clone.repo.top().join(".git").join("objects")],
                protected: Protected::new(),
                needs_git: true,
                users_tree: false,
            },
        }
    }

    /// Where to run git to see the agent's changes, and against which commit.
    pub fn changes_base(&self) -> Option<(PathBuf, Oid)> {
        match self {
            WorkingCopy::Direct { .. } => None,
            WorkingCopy::InPlace(in_place) => {
                Some((in_place.workspace.clone(), in_place.base.clone()))
            }
            WorkingCopy::Clone(clone) => Some((clone.clone_root.clone(), clone.base.clone())),
        }
    }
}

impl AgentClone {
    fn record(&self) -> Record {
        Record::Clone {
            repo_root: self.repo.top().to_path_buf(),
            clone_root: self.clone_root.clone(),
            workspace: self.workspace.clone(),
            branch: self.branch.clone(),
            base_commit: self.base.to_string(),
        }
    }
}
