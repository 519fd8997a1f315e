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

/// A file of the repository read for what people teach the agent (`AGENTS.md`, a skill,
/// a hooks file), or why it was not.
pub enum Read {
    Missing,
    Text(String),
    /// Not read: a link (never followed), not a regular file, too large, not UTF-8.
    Skipped(String),
}

impl RepoConfigSource {
    /// The file at `path` (relative to the top) as text, read as the configuration file
    /// is: from the commit's objects, or beneath the directory; a link is never followed.
    pub fn read_text(&self, path: &str, max_bytes: usize) -> Read {
        let bytes = match self {
            RepoConfigSource::Commit { repo, commit } => {
                match repo.file_at(commit, path, max_bytes) {
                    Ok(Some(bytes)) => bytes,
                    Ok(None) => return self.link_or_missing(path),
                    Err(err) => return Read::Skipped(err.to_string()),
                }
            }
            RepoConfigSource::Directory(dir) => {
                let workspace = match wright_tools::Workspace::new(dir) {
                    Ok(workspace) => workspace,
                    Err(err) => return Read::Skipped(err.to_string()),
                };
                match workspace.dir().symlink_metadata(path) {
                    Err(_) => return Read::Missing,
                    Ok(meta) if meta.file_type().is_symlink() => {
                        return Read::Skipped("a link, not followed".into())
                    }
                    Ok(_) => {}
                }
                match workspace.read_file(Path::new(path), max_bytes as u64) {
                    Ok(Some(bytes)) => bytes,
                    Ok(None) => return Read::Missing,
                    Err(err) => return Read::Skipped(err.to_string()),
                }
            }
            RepoConfigSource::Nothing { .. } => return Read::Missing,
        };
        match String::from_utf8(bytes) {
            Ok(text) => Read::Text(text),
            Err(_) => Read::Skipped("not UTF-8 text".into()),
        }
    }

    /// In a commit, a path that is not a regular file: a link (said, since a planted link
    /// is worth knowing of) or nothing.
    fn link_or_missing(&self, path: &str) -> Read {
        match self {
            RepoConfigSource::Commit { repo, commit } if repo.is_link_at(commit, path) => {
                Read::Skipped("a link, not followed".into())
            }
            _ => Read::Missing,
        }
    }

    /// The files under `dir` (relative to it, `/`-separated), at most `max` of them; none
    /// when there is no such directory.
    pub fn files_under(&self, dir: &str, max: usize) -> Vec<String> {
        match self {
            RepoConfigSource::Commit { repo, commit } => repo
                .tracked_files(commit, dir, 256 << 10)
                .map(|listing| listing.paths.into_iter().take(max).collect())
                .unwrap_or_default(),
            RepoConfigSource::Directory(root) => {
                let Ok(workspace) = wright_tools::Workspace::new(root) else {
                    return Vec::new();
                };
                let mut found = Vec::new();
                walk(workspace.dir(), Path::new(dir), "", 0, max, &mut found);
                found
            }
            RepoConfigSource::Nothing { .. } => Vec::new(),
        }
    }
}

/// Lists the regular files under `dir` beneath `root` two levels deep at most (a skill's
/// folder and its `SKILL.md`), never through a link.
fn walk(
    root: &cap_std::fs::Dir,
    dir: &Path,
    prefix: &str,
    depth: usize,
    max: usize,
    found: &mut Vec<String>,
) {
    let Ok(entries) = root.read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        if found.len() >= max {
            return;
        }
        let (Ok(kind), Some(name)) = (
            entry.file_type(),
            entry.file_name().to_str().map(str::to_string),
        ) else {
            continue;
        };
        let shown = format!("{prefix}{name}");
        if kind.is_file() {
            found.push(shown);
        } else if kind.is_dir() && depth < 1 {
            walk(
                root,
                &dir.join(&name),
                &format!("{shown}/"),
                depth + 1,
                max,
                found,
            );
        }
    }
}
