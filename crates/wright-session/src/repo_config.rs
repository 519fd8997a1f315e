//! Where a repository's own `.wright/config.toml` is read from: the user's repository at
//! the commit the conversation starts from (through git's object store, never the work
//! tree or the agent's clone), or a plain directory without leaving it. Whether what it
//! asks for is taken is the front end's decision (see wright-cli's `settings`).

use anyhow::Context;
use anyhow::Result;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Mutex;
use wright_config::REPO_FILE;
use wright_sandbox::git::Oid;
use wright_sandbox::git::TreeEntry;
use wright_sandbox::git::UserRepo;

/// The largest repository configuration file read.
const MAX_REPO_FILE: usize = 64 << 10;

/// The listing `RepoConfigSource::prelist` made: of which commit, of which paths.
struct Prelisted {
    top: PathBuf,
    commit: Oid,
    paths: Vec<String>,
    entries: Vec<TreeEntry>,
}

/// The last start's listing (see `prelist`): what a commit holds never changes.
static PRELISTED: Mutex<Option<Prelisted>> = Mutex::new(None);

/// The entries of `commit` at `paths` and under them, taken from the start's listing when
/// it was made of that commit and holds all of `paths`; `None` otherwise (list them).
fn prelisted(repo: &UserRepo, commit: &Oid, paths: &[String]) -> Option<Vec<TreeEntry>> {
    let slot = PRELISTED.lock().unwrap_or_else(|p| p.into_inner());
    let listed = slot.as_ref()?;
    let covered = listed.top == repo.top()
        && listed.commit == *commit
        && paths
            .iter()
            .all(|path| !path.ends_with('/') && listed.paths.contains(path));
    if !covered {
        return None;
    }
    // What `entries_at` of `paths` lists: each path itself, and what is under it.
    Some(
        listed
            .entries
            .iter()
            .filter(|entry| {
                paths.iter().any(|path| {
                    entry.path == *path
                        || entry
                            .path
                            .strip_prefix(path.as_str())
                            .is_some_and(|rest| rest.starts_with('/'))
                })
            })
            .cloned()
            .collect(),
    )
}

/// Every path a conversation starting in `sub` reads from its start commit before its
/// first request: this configuration file, what teaches the agent (instructions, skills),
/// the hooks and MCP files, and the web manifests.
fn start_paths(sub: &str) -> Vec<String> {
    let mut paths = vec![REPO_FILE.to_string()];
    paths.extend(crate::teach::Teaching::paths(sub));
    paths.extend(crate::hooks::paths());
    paths.extend(crate::mcp::paths());
    paths.extend(crate::web_work::manifest_paths(sub));
    paths.sort();
    paths.dedup();
    paths
}

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

    /// How many files the repository holds at the start commit (in a plain directory:
    /// beneath it, links not followed, counted up to `enough`): for the large-repository
    /// routing rule. `None` when they cannot be counted.
    pub fn file_count(&self, enough: u64) -> Option<u64> {
        match self {
            RepoConfigSource::Commit { repo, commit } => repo.file_count_at(commit).ok(),
            RepoConfigSource::Directory(dir) => Some(count_files(dir, enough)),
            RepoConfigSource::Nothing { .. } => Some(0),
        }
    }

    /// Lists at once, in one `ls-tree`, every file of the start commit a conversation
    /// starting in `sub` reads before its first request (`start_paths`): the reads that
    /// follow (`read`, `RepoFiles::list`) take their entries from it instead of a git
    /// process each. A listing that fails is not kept: each read then lists for itself.
    pub fn prelist(&self, sub: &str) {
        let RepoConfigSource::Commit { repo, commit } = self else {
            return;
        };
        let paths = start_paths(sub);
        if prelisted(repo, commit, &paths).is_some() {
            return;
        }
        if let Ok(entries) = repo.entries_at(commit, &paths) {
            *PRELISTED.lock().unwrap_or_else(|p| p.into_inner()) = Some(Prelisted {
                top: repo.top().to_path_buf(),
                commit: commit.clone(),
                paths,
                entries,
            });
        }
    }

    pub fn read(&self) -> Result<Option<RepoFile>> {
        let (bytes, name) = match self {
            RepoConfigSource::Commit { repo, commit } => {
                let listed = prelisted(repo, commit, &[REPO_FILE.to_string()]);
                let bytes = match listed {
                    // As `file_at` reads it: a regular file, or nothing.
                    Some(entries) => match entries.iter().find(|e| e.path == REPO_FILE) {
                        Some(entry) if entry.is_regular_file() => {
                            Some(repo.blob(&entry.object, REPO_FILE, MAX_REPO_FILE))
                        }
                        _ => None,
                    }
                    .transpose(),
                    None => repo.file_at(commit, REPO_FILE, MAX_REPO_FILE),
                }
                .with_context(|| format!("cannot read {REPO_FILE} of {}", repo.top().display()))?;
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

/// Regular files beneath `dir` (`.git` and links left out), counted up to `enough`.
fn count_files(dir: &Path, enough: u64) -> u64 {
    let mut count = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && entry.file_name() != ".git" {
                pending.push(entry.path());
            } else if kind.is_file() {
                count += 1;
                if count >= enough {
                    return count;
                }
            }
        }
    }
    count
}

/// A file of the repository read for what people teach the agent (`AGENTS.md`, a skill,
/// a hooks file), or why it was not.
pub enum Read {
    Missing,
    Text(String),
    /// Not read: a link (never followed), not a regular file, too large, not UTF-8.
    Skipped(String),
}

/// The repository's files wright reads to teach a conversation, listed once: in a
/// commit, one `ls-tree` of every path asked for (files, and directories recursively),
/// then each file's blob by its id — a file not listed costs no process at all; in a
/// plain directory, read beneath it as asked. Links are never followed.
pub struct RepoFiles<'a> {
    source: &'a RepoConfigSource,
    listed: Vec<TreeEntry>,
}

impl<'a> RepoFiles<'a> {
    /// The files of `source` at `paths` and under them.
    pub fn list(source: &'a RepoConfigSource, paths: &[String]) -> Self {
        let listed = match source {
            RepoConfigSource::Commit { repo, commit } => prelisted(repo, commit, paths)
                .unwrap_or_else(|| repo.entries_at(commit, paths).unwrap_or_default()),
            RepoConfigSource::Directory(_) | RepoConfigSource::Nothing { .. } => Vec::new(),
        };
        Self { source, listed }
    }

    /// The repository (or directory) consent is keyed by.
    pub fn key(&self) -> &Path {
        self.source.key()
    }

    /// The file at `path` (relative to the top) as text.
    pub fn read_text(&self, path: &str, max_bytes: usize) -> Read {
        let bytes = match self.source {
            RepoConfigSource::Commit { repo, .. } => {
                let Some(entry) = self.listed.iter().find(|e| e.path == path) else {
                    return Read::Missing;
                };
                if entry.is_link() {
                    return Read::Skipped("a link, not followed".into());
                }
                if !entry.is_regular_file() {
                    return Read::Skipped("not a regular file".into());
                }
                match repo.blob(&entry.object, path, max_bytes) {
                    Ok(bytes) => bytes,
                    Err(err) => return Read::Skipped(err.to_string()),
                }
            }
            RepoConfigSource::Directory(dir) => match read_beneath(dir, path, max_bytes) {
                Ok(Some(bytes)) => bytes,
                Ok(None) => return Read::Missing,
                Err(why) => return Read::Skipped(why),
            },
            RepoConfigSource::Nothing { .. } => return Read::Missing,
        };
        match String::from_utf8(bytes) {
            Ok(text) => Read::Text(text),
            Err(_) => Read::Skipped("not UTF-8 text".into()),
        }
    }

    /// The files under `dir` (relative to it, `/`-separated), at most `max` of them.
    pub fn files_under(&self, dir: &str, max: usize) -> Vec<String> {
        match self.source {
            RepoConfigSource::Commit { .. } => {
                let prefix = format!("{}/", dir.trim_end_matches('/'));
                // Two levels, as in a directory: a skill's folder and its files.
                self.listed
                    .iter()
                    .filter_map(|e| e.path.strip_prefix(&prefix).map(str::to_string))
                    .filter(|path| path.matches('/').count() <= 1)
                    .take(max)
                    .collect()
            }
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

/// A plain directory's file at `path`, beneath it, never through a link.
fn read_beneath(
    dir: &Path,
    path: &str,
    max_bytes: usize,
) -> std::result::Result<Option<Vec<u8>>, String> {
    let workspace = wright_tools::Workspace::new(dir).map_err(|err| err.to_string())?;
    match workspace.dir().symlink_metadata(path) {
        Err(_) => return Ok(None),
        Ok(meta) if meta.file_type().is_symlink() => return Err("a link, not followed".into()),
        Ok(_) => {}
    }
    workspace
        .read_file(Path::new(path), max_bytes as u64)
        .map_err(|err| err.to_string())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let output = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@e"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    }

    /// The start's one listing answers every read as the reads' own listings would: the
    /// configuration file, files and directories asked for, a directory named like a file
    /// asked for, links as links; a path it did not list is listed apart.
    #[test]
    fn the_start_listing_answers_as_each_listing_would() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        for (path, text) in [
            (".wright/config.toml", "max_steps = 3\n"),
            ("AGENTS.md", "top\n"),
            ("web/AGENTS.md", "web\n"),
            ("web/package.json", "{}\n"),
            (".agents/skills/fix/SKILL.md", "skill\n"),
            (".agents/skillset/other.md", "not under skills\n"),
            ("CLAUDE.md/inside", "a directory\n"),
            ("elsewhere.md", "x\n"),
        ] {
            let path = top.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::os::unix::fs::symlink("/etc/passwd", top.join(".cursorrules")).unwrap();
        git(top, &["init", "-q"]);
        git(top, &["add", "-A"]);
        git(top, &["commit", "-qm", "x"]);
        let repo = UserRepo::at(top);
        let commit = Oid::parse(&git(top, &["rev-parse", "HEAD"])).unwrap();
        let source = RepoConfigSource::Commit {
            repo: repo.clone(),
            commit: commit.clone(),
        };
        source.prelist("web");
        let asked: Vec<Vec<String>> = vec![
            crate::teach::Teaching::paths("web"),
            crate::web_work::manifest_paths("web"),
            crate::hooks::paths(),
            vec![REPO_FILE.to_string()],
            vec![".agents/skills".to_string(), "CLAUDE.md".to_string()],
        ];
        for paths in &asked {
            let apart = repo.entries_at(&commit, paths).unwrap();
            assert_eq!(prelisted(&repo, &commit, paths), Some(apart), "{paths:?}");
        }
        let listed = prelisted(&repo, &commit, &crate::teach::Teaching::paths("web")).unwrap();
        assert!(listed
            .iter()
            .any(|e| e.path == ".cursorrules" && e.is_link()));
        assert!(!listed
            .iter()
            .any(|e| e.path.starts_with(".agents/skillset")));
        // Not among the start's paths, or another commit: listed apart.
        assert_eq!(
            prelisted(&repo, &commit, &["elsewhere.md".to_string()]),
            None
        );
        let other = Oid::parse(&"0".repeat(40)).unwrap();
        assert_eq!(prelisted(&repo, &other, &[REPO_FILE.to_string()]), None);
        let read = source.read().unwrap().unwrap();
        assert_eq!(read.text, "max_steps = 3\n");
    }
}
