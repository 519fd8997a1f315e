//! Where a run starts, asked of git once: the repository a directory is in, its object
//! format and the commit HEAD names, printed by one `rev-parse` instead of three (a run's
//! first request waits for them). It guarantees the same answers as the separate calls:
//! where the one call does not print all three as expected, those calls answer.

use super::command::base_command;
use super::command::HARDENED;
use super::user::could_be_in_a_repository;
use super::Oid;
use super::UserRepo;
use std::path::Path;
use std::process::Stdio;

impl UserRepo {
    /// `discover` and `head` in one git process: the repository `dir` is in (if any), its
    /// object format and the commit HEAD names (`None`: unborn). One `rev-parse` prints
    /// the three answers; where it does not say all it should (a git without
    /// `--show-object-format`, a directory that is a `.git`), the separate calls answer,
    /// as they did alone.
    pub fn discover_with_head(dir: &Path) -> Option<(Self, Option<Oid>)> {
        if !could_be_in_a_repository(dir) {
            return None;
        }
        let asked = base_command(dir, &Oid::empty_tree())
            .args(HARDENED)
            .args([
                "rev-parse",
                "--show-toplevel",
                "--show-object-format",
                "--verify",
                "--quiet",
                "HEAD^{commit}",
            ])
            .stdin(Stdio::null())
            .output();
        if let Some(found) = asked.ok().and_then(|output| Self::read_start(&output)) {
            return Some(found);
        }
        let repo = Self::discover(dir)?;
        let head = repo.head().ok();
        Some((repo, head))
    }

    /// The answers of `discover_with_head`'s `rev-parse`: exit 0 with the top, the
    /// format and the commit; exit 1 (HEAD names no commit) with the top and the format.
    fn read_start(output: &std::process::Output) -> Option<(Self, Option<Oid>)> {
        let printed = std::str::from_utf8(&output.stdout).ok()?;
        let lines: Vec<&str> = printed.split_terminator('\n').collect();
        let head = match (output.status.code(), lines.as_slice()) {
            (Some(0), [_, _, head]) => Some(Oid::parse(head)?),
            (Some(1), [_, _]) => None,
            _ => return None,
        };
        let (top, format) = (lines[0], lines[1]);
        let empty_tree = match format {
            "sha1" => Oid::empty_tree(),
            "sha256" => Oid::empty_tree_sha256(),
            _ => return None,
        };
        if top.is_empty() {
            return None;
        }
        let repo = Self::at(Path::new(top));
        let _ = repo.empty_tree.set(empty_tree);
        Some((repo, head))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::git::test_git as git;

    /// What the separate calls say, to compare with.
    fn apart(dir: &Path) -> Option<(std::path::PathBuf, Option<Oid>, Oid)> {
        let repo = UserRepo::discover(dir)?;
        let head = repo.head().ok();
        Some((
            repo.top().to_path_buf(),
            head,
            UserRepo::at(repo.top()).empty_tree(),
        ))
    }

    fn together(dir: &Path) -> Option<(std::path::PathBuf, Option<Oid>, Oid)> {
        let (repo, head) = UserRepo::discover_with_head(dir)?;
        let tree = repo.empty_tree.get().cloned()?;
        Some((repo.top().to_path_buf(), head, tree))
    }

    #[test]
    fn one_call_says_what_the_three_said_unborn_committed_detached_or_sha256() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("repo");
        let sub = top.join("src");
        std::fs::create_dir_all(&sub).unwrap();
        git(&top, &["init", "-q"]);
        // Unborn: no commit, the format known all the same.
        let unborn = together(&sub).unwrap();
        assert_eq!(unborn.1, None);
        assert_eq!(Some(unborn.clone()), apart(&sub));
        std::fs::write(sub.join("a"), "a\n").unwrap();
        git(&top, &["add", "-A"]);
        git(&top, &["commit", "-qm", "a"]);
        let committed = together(&sub).unwrap();
        assert!(committed.1.is_some());
        assert_eq!(Some(committed.clone()), apart(&sub));
        git(&top, &["checkout", "-q", "--detach"]);
        assert_eq!(together(&top), Some(committed.clone()));
        // A `.git` directory has no top: as before, no repository to work in.
        assert_eq!(together(&top.join(".git")), apart(&top.join(".git")));
        assert!(together(&top.join(".git")).is_none());

        let wide = dir.path().join("wide");
        std::fs::create_dir(&wide).unwrap();
        git(&wide, &["init", "-q", "--object-format=sha256"]);
        let sha256 = together(&wide).unwrap();
        assert_eq!(sha256.2, Oid::empty_tree_sha256());
        assert_eq!(Some(sha256), apart(&wide));
        git(&wide, &["commit", "-q", "--allow-empty", "-m", "x"]);
        let head = together(&wide).unwrap().1.unwrap();
        assert_eq!(head.as_str().len(), 64);
    }
}
