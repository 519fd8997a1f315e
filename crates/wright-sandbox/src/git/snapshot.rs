//! A commit of the user's uncommitted work, made without touching their checkout: the
//! index is a temporary one, HEAD and the branch do not move, and the commit is reachable
//! only from the agent's branch. Files are stored as they are on disk (`--no-filters`: no
//! clean filter, git-lfs included, runs over them), links as links (never followed), and
//! a path under a linked directory, a submodule or anything that is not a file or a link
//! is left out and named.

use super::command::failed;
use super::GitError;
use super::Oid;
use super::UserRepo;
use crate::run::finish;
use crate::run::RunLimits;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;

/// The most paths a snapshot lists (beyond, it is refused: the work is not a snapshot's).
const MAX_PATHS: usize = 10_000;

/// The user's uncommitted work, as a commit on top of HEAD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub commit: Oid,
    /// Paths taken (changed, added or deleted).
    pub taken: usize,
    /// Paths left out, each with why.
    pub left_out: Vec<String>,
}

impl UserRepo {
    /// The paths whose work-tree state differs from HEAD (staged or not, deletions
    /// included) and the untracked files that are not ignored, relative to the top.
    pub fn uncommitted_paths(&self) -> Result<Vec<String>, GitError> {
        // Side by side (both only read the repository): a run's first request waits for
        // them.
        let (tracked, untracked) = std::thread::scope(|scope| {
            let untracked = scope
                .spawn(|| self.run(&["ls-files", "-z", "--others", "--exclude-standard", "--"]));
            let tracked = self.run(&[
                "diff-index",
                "-z",
                "--name-only",
                "--no-renames",
                "HEAD",
                "--",
            ]);
            let untracked = untracked
                .join()
                .unwrap_or_else(|_| Err(GitError::Spawn("the listing stopped".to_string())));
            (tracked, untracked)
        });
        let mut paths = split_z(&tracked?);
        paths.extend(split_z(&untracked?));
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// Commits `paths` as they are in the work tree on top of `head`, in a temporary
    /// index; at most `max_bytes` of file content in all.
    pub fn snapshot_uncommitted(
        &self,
        head: &Oid,
        paths: &[String],
        max_bytes: u64,
        message: &str,
    ) -> Result<Snapshot, GitError> {
        if paths.len() > MAX_PATHS {
            return Err(too_big(format!(
                "{} changed paths (at most {MAX_PATHS})",
                paths.len()
            )));
        }
        let scratch = tempfile::tempdir().map_err(|e| GitError::Spawn(e.to_string()))?;
        let index = scratch.path().join("index");
        let with_index = |args: &[&str], stdin: Vec<u8>| -> Result<String, GitError> {
            let child = self
                .command()
                .env("GIT_INDEX_FILE", &index)
                // wright makes this commit, whether or not the user has an identity set.
                .env("GIT_AUTHOR_NAME", "wright")
                .env("GIT_AUTHOR_EMAIL", "wright@localhost")
                .env("GIT_COMMITTER_NAME", "wright")
                .env("GIT_COMMITTER_EMAIL", "wright@localhost")
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .spawn()
                .map_err(|e| GitError::Spawn(e.to_string()))?;
            let captured = finish(child, stdin, RunLimits::default())?;
            if !captured.success() {
                return Err(failed(args, &captured.said()));
            }
            Ok(String::from_utf8_lossy(&captured.stdout).into_owned())
        };
        with_index(&["read-tree", head.as_str()], Vec::new())?;

        let mut entries = String::new();
        let mut left_out = Vec::new();
        let mut total: u64 = 0;
        let mut files = Vec::new();
        let mut links = Vec::new();
        for path in paths {
            match self.kind_of(path) {
                Kind::Gone => entries.push_str(&format!("0 {}\t{path}\0", zero_id(head))),
                Kind::File { executable, len } => {
                    total += len;
                    if total > max_bytes {
                        return Err(too_big(format!(
                            "more than {} MiB of changed files",
                            max_bytes >> 20
                        )));
                    }
                    files.push((path.as_str(), executable));
                }
                Kind::Link(target) => links.push((path.as_str(), target)),
                Kind::Other(why) => left_out.push(format!("{path} ({why})")),
            }
        }
        // Files: hashed in one batch, as bytes on disk.
        if !files.is_empty() {
            let names: String = files.iter().map(|(p, _)| format!("{p}\n")).collect();
            if files.iter().any(|(p, _)| p.contains('\n')) {
                return Err(too_big("a file name holds a newline".into()));
            }
            let ids = with_index(
                &["hash-object", "-w", "--no-filters", "--stdin-paths"],
                names.into_bytes(),
            )?;
            let ids: Vec<&str> = ids.lines().collect();
            if ids.len() != files.len() {
                return Err(failed(&["hash-object"], "did not hash every file"));
            }
            for ((path, executable), id) in files.iter().zip(ids) {
                let mode = if *executable { "100755" } else { "100644" };
                entries.push_str(&format!("{mode} {id}\t{path}\0"));
            }
        }
        // Links: their target is the blob, as git stores them.
        for (path, target) in links {
            let id = with_index(&["hash-object", "-w", "--stdin"], target)?;
            entries.push_str(&format!("120000 {}\t{path}\0", id.trim()));
        }
        with_index(
            &["update-index", "-z", "--index-info"],
            entries.into_bytes(),
        )?;
        let tree = with_index(&["write-tree"], Vec::new())?;
        let commit = with_index(
            &[
                "commit-tree",
                "-p",
                head.as_str(),
                "-m",
                message,
                tree.trim(),
            ],
            Vec::new(),
        )?;
        let commit = Oid::parse(&commit).ok_or_else(|| GitError::NotAnId {
            command: "commit-tree".into(),
            printed: commit.clone(),
        })?;
        Ok(Snapshot {
            commit,
            taken: paths.len() - left_out.len(),
            left_out,
        })
    }

    /// What is at `path` in the work tree, never following a link on the way.
    fn kind_of(&self, path: &str) -> Kind {
        let mut here = self.top().to_path_buf();
        let parts: Vec<&str> = path.split('/').collect();
        for (at, part) in parts.iter().enumerate() {
            here.push(part);
            let meta = match here.symlink_metadata() {
                Ok(meta) => meta,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Kind::Gone,
                Err(err) => return Kind::Other(format!("cannot be read: {err}")),
            };
            let last = at + 1 == parts.len();
            let kind = meta.file_type();
            if !last {
                if kind.is_symlink() {
                    return Kind::Other("under a linked directory".into());
                }
                if !kind.is_dir() {
                    return Kind::Gone;
                }
                continue;
            }
            return if kind.is_symlink() {
                match std::fs::read_link(&here) {
                    Ok(target) => Kind::Link(target.as_os_str().as_bytes().to_vec()),
                    Err(err) => Kind::Other(format!("cannot be read: {err}")),
                }
            } else if kind.is_file() {
                Kind::File {
                    executable: meta.permissions().mode() & 0o111 != 0,
                    len: meta.len(),
                }
            } else if kind.is_dir() {
                Kind::Other(if is_repository(&here) {
                    "a submodule or repository of its own".into()
                } else {
                    "a directory".into()
                })
            } else {
                Kind::Other("not a file or a link".into())
            };
        }
        Kind::Gone
    }
}

enum Kind {
    Gone,
    File { executable: bool, len: u64 },
    Link(Vec<u8>),
    Other(String),
}

fn is_repository(dir: &Path) -> bool {
    dir.join(".git").symlink_metadata().is_ok()
}

/// The all-zero id of `head`'s length (update-index removes an entry given it).
fn zero_id(head: &Oid) -> String {
    "0".repeat(head.as_str().len())
}

fn split_z(text: &str) -> Vec<String> {
    text.split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

fn too_big(what: String) -> GitError {
    GitError::Failed {
        command: "snapshot of the uncommitted changes".into(),
        said: what,
    }
}
