//! Gathering what a map is made from, before the agent's first step. A repository is
//! read through the user's own repository's object store (`ls-tree` and `log` of the
//! start commit, project files as blobs of it): no work tree, no agent-written `.git`. A
//! plain directory is walked beneath the workspace's descriptor, never following a link,
//! bounded in entries and depth. Whatever cannot be read is left out of the map, which
//! is a help, not a condition of the run.

use super::MapInput;
use super::Source;
use super::MAX_PROJECT_FILE;
use cap_std::fs::Dir;
use std::io::Read;
use wright_sandbox::git::Oid;
use wright_sandbox::git::UserRepo;
use wright_tools::open_dir_nofollow;
use wright_tools::open_regular;
use wright_tools::Workspace;

/// The project files read at the workspace's top (by name), for the commands.
const PROJECT_FILES: &[&str] = &[
    "GNUmakefile",
    "Makefile",
    "makefile",
    "package.json",
    "pyproject.toml",
    "pytest.ini",
    "requirements-dev.txt",
    "requirements.txt",
    "setup.cfg",
    "setup.py",
    "tox.ini",
];

/// `ls-tree` output read at most (about 100,000 paths).
const MAX_LISTING_BYTES: usize = 8 << 20;
/// Entries a directory walk visits at most, and how deep it goes.
const MAX_WALK_ENTRIES: usize = 20_000;
const MAX_WALK_DEPTH: usize = 16;
/// Directories a walk does not enter: version control, dependencies and build output
/// (a person glancing at a project skips them too).
const SKIPPED_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "target",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
];

/// The map's input for the workspace `sub` (relative to the top, `""` for the top) of the
/// user's repository at `commit`.
pub fn from_git(repo: &UserRepo, commit: &Oid, sub: &str) -> MapInput {
    // The recent commits are read beside the listing: a run's first request waits for both.
    std::thread::scope(|scope| {
        let commits = scope.spawn(|| {
            repo.recent_commits(commit, super::COMMITS)
                .unwrap_or_default()
        });
        let mut input = from_git_listing(repo, commit, sub);
        input.commits = commits.join().unwrap_or_default();
        input
    })
}

/// `from_git` but the commits: the files and the project files read.
fn from_git_listing(repo: &UserRepo, commit: &Oid, sub: &str) -> MapInput {
    let listing = repo
        .tracked_files(commit, sub, MAX_LISTING_BYTES)
        .unwrap_or_default();
    let prefix = if sub.is_empty() {
        String::new()
    } else {
        format!("{}/", sub.trim_end_matches('/'))
    };
    let project_files = PROJECT_FILES
        .iter()
        .filter(|name| listing.paths.iter().any(|p| p == *name))
        .filter_map(|name| {
            let bytes = repo
                .file_at(commit, &format!("{prefix}{name}"), MAX_PROJECT_FILE)
                .ok()??;
            Some((
                name.to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ))
        })
        .collect();
    MapInput {
        files: listing.paths,
        more_files: listing.cut,
        project_files,
        commits: Vec::new(),
        source: Source::Commit,
    }
}

/// The map's input for a directory outside git, walked beneath `workspace`.
pub fn from_directory(workspace: &Workspace) -> MapInput {
    let mut walk = Walk::default();
    if let Ok(dir) = workspace.dir().try_clone() {
        walk.dir(&dir, "", 0);
    }
    let project_files = PROJECT_FILES
        .iter()
        .filter(|name| walk.files.iter().any(|p| p == *name))
        .filter_map(|name| {
            let mut bytes = Vec::new();
            open_regular(
                workspace.dir(),
                std::ffi::OsStr::new(name),
                MAX_PROJECT_FILE as u64,
            )
            .ok()?
            .take(MAX_PROJECT_FILE as u64)
            .read_to_end(&mut bytes)
            .ok()?;
            Some((
                name.to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ))
        })
        .collect();
    MapInput {
        files: walk.files,
        more_files: walk.stopped,
        project_files,
        commits: Vec::new(),
        source: Source::Directory,
    }
}

#[derive(Default)]
struct Walk {
    files: Vec<String>,
    visited: usize,
    stopped: bool,
}

impl Walk {
    fn dir(&mut self, dir: &Dir, prefix: &str, depth: usize) {
        let Ok(entries) = dir.entries() else {
            return;
        };
        let mut names: Vec<(std::ffi::OsString, bool)> = Vec::new();
        for entry in entries.flatten() {
            self.visited += 1;
            if self.visited > MAX_WALK_ENTRIES {
                self.stopped = true;
                break;
            }
            // The entry's own type: a link is neither a file nor a directory here.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() || kind.is_file() {
                names.push((entry.file_name(), kind.is_dir()));
            }
        }
        // Directory order is the file system's: sort for a map that does not depend on it.
        names.sort();
        for (name, is_dir) in names {
            let shown = name.to_string_lossy();
            let path = format!("{prefix}{shown}");
            if !is_dir {
                self.files.push(path);
                continue;
            }
            if SKIPPED_DIRS.contains(&shown.as_ref()) || depth + 1 >= MAX_WALK_DEPTH {
                continue;
            }
            if let Ok(sub) = open_dir_nofollow(dir, &name) {
                self.dir(&sub, &format!("{path}/"), depth + 1);
            }
        }
    }
}
