//! What a commit of the user's repository holds, for the workspace map and the first
//! look: its tracked paths, the commits before it, and what it changed. All are read from
//! the object store (`ls-tree`, `log`, `diff` of two commits), never from a work tree,
//! and all are bounded: a listing or diff past `max_bytes` is cut there and says so.

use super::command::failed;
use super::GitError;
use super::Oid;
use super::UserRepo;
use crate::run::finish;
use crate::run::RunLimits;
use std::process::Stdio;

/// The tracked paths under one directory of a commit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// Paths relative to that directory, `/`-separated, in git's (byte) order, as git
    /// stores them (not yet made printable).
    pub paths: Vec<String>,
    /// The listing passed its bound: there are more paths than these.
    pub cut: bool,
}

impl UserRepo {
    /// The files (blobs and links; not submodules) of `commit` under `sub` (a directory
    /// relative to the top, `""` for all), reading at most `max_bytes` of git's output.
    pub fn tracked_files(
        &self,
        commit: &Oid,
        sub: &str,
        max_bytes: usize,
    ) -> Result<Listing, GitError> {
        // `COMMIT:SUB` names the tree itself: no pathspec, so no pathspec magic either.
        let tree = if sub.is_empty() {
            commit.to_string()
        } else {
            format!("{commit}:{}", sub.trim_end_matches('/'))
        };
        let args = ["ls-tree", "-r", "-z", "--full-tree", &tree];
        let child = self.spawn(&args, Stdio::null())?;
        let limits = RunLimits {
            max_stdout: max_bytes,
            ..RunLimits::default()
        };
        let captured = finish(child, Vec::new(), limits)?;
        if !captured.stdout_cut && !captured.success() {
            return Err(failed(&args, &captured.said()));
        }
        let mut entries: Vec<&[u8]> = captured.stdout.split(|b| *b == 0).collect();
        // The last entry of a cut listing may be cut too; a whole one ends with NUL.
        if captured.stdout_cut || entries.last().is_some_and(|e| !e.is_empty()) {
            entries.pop();
        }
        let paths = entries
            .iter()
            .filter_map(|entry| {
                // "MODE TYPE OBJECT\tPATH"
                let tab = entry.iter().position(|b| *b == b'\t')?;
                let (head, path) = (&entry[..tab], &entry[tab + 1..]);
                let is_file = head.split(|b| *b == b' ').nth(1) == Some(b"blob");
                is_file.then(|| String::from_utf8_lossy(path).into_owned())
            })
            .collect();
        Ok(Listing {
            paths,
            cut: captured.stdout_cut,
        })
    }

    /// The last `count` commits up to `commit` (first parents), newest first: the short
    /// id and the subject, as stored.
    pub fn recent_commits(
        &self,
        commit: &Oid,
        count: usize,
    ) -> Result<Vec<(String, String)>, GitError> {
        let count = format!("--max-count={count}");
        let args = [
            "-c",
            "log.showSignature=false",
            "log",
            "-z",
            "--first-parent",
            "--no-decorate",
            "--no-color",
            "--format=%h %s",
            &count,
            commit.as_str(),
            "--",
        ];
        let child = self.spawn(&args, Stdio::null())?;
        let limits = RunLimits {
            max_stdout: 64 << 10,
            ..RunLimits::default()
        };
        let captured = finish(child, Vec::new(), limits)?;
        if !captured.success() {
            return Err(failed(&args, &captured.said()));
        }
        Ok(String::from_utf8_lossy(&captured.stdout)
            .split('\0')
            .filter(|line| !line.is_empty())
            .map(|line| match line.split_once(' ') {
                Some((id, subject)) => (id.to_string(), subject.to_string()),
                None => (line.to_string(), String::new()),
            })
            .collect())
    }
}

/// What the commit before the start changed: the start commit's own diff against its
/// first parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastChange {
    /// Its short id and subject, as stored (not yet made printable).
    pub id: String,
    pub subject: String,
    /// The unified diff (two lines of context), paths relative to the workspace's
    /// directory; cut at the bound when `cut`.
    pub diff: String,
    pub cut: bool,
}

impl UserRepo {
    /// The change `commit` made to its first parent under `sub` (relative to the top, `""`
    /// for all), its diff read up to `max_bytes`; `None` for a first commit, or one that
    /// changed nothing there. No textconv, no external diff, no renames followed.
    pub fn last_change(
        &self,
        commit: &Oid,
        sub: &str,
        max_bytes: usize,
    ) -> Result<Option<LastChange>, GitError> {
        let parent = format!("{commit}^");
        if self
            .run(&[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{parent}^{{commit}}"),
            ])
            .is_err()
        {
            return Ok(None);
        }
        let relative = format!("--relative={sub}");
        let mut args = vec![
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--unified=2",
        ];
        if !sub.is_empty() {
            args.push(&relative);
        }
        args.extend([parent.as_str(), commit.as_str(), "--"]);
        let child = self.spawn(&args, Stdio::null())?;
        let limits = RunLimits {
            max_stdout: max_bytes,
            ..RunLimits::default()
        };
        let captured = finish(child, Vec::new(), limits)?;
        if !captured.success() && !captured.stdout_cut {
            return Err(failed(&args, &captured.said()));
        }
        let diff = String::from_utf8_lossy(&captured.stdout).into_owned();
        if diff.trim().is_empty() {
            return Ok(None);
        }
        let (id, subject) = self
            .recent_commits(commit, 1)?
            .into_iter()
            .next()
            .unwrap_or_default();
        Ok(Some(LastChange {
            id,
            subject,
            diff,
            cut: captured.stdout_cut,
        }))
    }
}
