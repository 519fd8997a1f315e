//! Where a repository's own `.wright/config.toml` is read from: the user's repository at
//! the commit the conversation starts from (through git's object store, never the work
//! tree or the agent's clone), or a plain directory without leaving it. Whether what it
//! asks for is taken is the front end's decision (see wright-cli's `settings`).

use anyhow::Context;
use anyhow::Result;
use std::path::Path;
use std::path::PathBuf;
use wright_config::REPO_FILE;
use wright_sandbox::git::Oid;
use wright_sandbox::git::UserRepo;

/// The largest repository configuration file read.
const MAX_REPO_FILE: usize = 64 << 10;

/// Where a repository's own configuration file is read from.
#[derive(Debug, Clone)]
pub enum RepoConfigSource {
    /// The user's repository, at the commit the conversation starts from.
    Commit { repo: UserRepo, commit: Oid },
    /// A directory that is not a repository, read beneath it.
    Directory(PathBuf),
    /// A repository without a commit yet: nothing to read.
    Nothing { top: PathBuf },
}

/// A repository's configuration file as read.
pub struct RepoFile {
    pub text: String,
    /// For messages: the path, and the commit it was read at.
    pub name: String,
}

impl RepoConfigSource {
    /// The repository (or directory) consent and `[repos."PATH"]` are keyed by.
    pub fn key(&self) -> &Path {
        match self {
            RepoConfigSource::Commit { repo, .. } => repo.top(),
            RepoConfigSource::Directory(dir) => dir,
            RepoConfigSource::Nothing { top } => top,
        }
    }

    pub fn read(&self) -> Result<Option<RepoFile>> {
        let (bytes, name) = match self {
            RepoConfigSource::Commit { repo, commit } => {
                let bytes = repo
                    .file_at(commit, REPO_FILE, MAX_REPO_FILE)
                    .with_context(|| {
                        format!("cannot read {REPO_FILE} of {}", repo.top().display())
                    })?;
                let short: String = commit.as_str().chars().take(12).collect();
                (
                    bytes,
                    format!("{} at {short}", repo.top().join(REPO_FILE).display()),
                )
            }
            RepoConfigSource::Directory(dir) => {
                let workspace = wright_tools::Workspace::new(dir)?;
                let bytes = workspace.read_file(Path::new(REPO_FILE), MAX_REPO_FILE as u64)?;
                (bytes, dir.join(REPO_FILE).display().to_string())
            }
            RepoConfigSource::Nothing { .. } => (None, String::new()),
        };
        let Some(bytes) = bytes else {
            return Ok(None);
        };
        let text =
            String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{name} is not UTF-8 text"))?;
        Ok(Some(RepoFile { text, name }))
    }
}
