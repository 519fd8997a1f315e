//! Git on the host, in the user's own repository (see the module above for why that is
//! safe and what it never does).

use super::command::base_command;
use super::command::diff_text;
use super::command::failed;
use super::command::text_of;
use super::command::HARDENED;
use super::GitError;
use super::Oid;
use crate::run::finish;
use crate::run::RunLimits;
use std::io::Read;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::sync::OnceLock;

/// An entry of a commit's tree, as `ls-tree` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// `100644`, `100755` (files), `120000` (a link), `160000` (a submodule), …
    pub mode: String,
    pub object: Oid,
    /// From the top, as stored.
    pub path: String,
}

impl TreeEntry {
    /// One `MODE TYPE OBJECT\tPATH` record of `ls-tree -z`.
    fn parse(record: &str) -> Option<Self> {
        let (head, path) = record.split_once('\t')?;
        let mut fields = head.split(' ');
        let (mode, _kind, object) = (fields.next()?, fields.next()?, fields.next()?);
        Some(Self {
            mode: mode.to_string(),
            object: Oid::parse(object)?,
            path: path.to_string(),
        })
    }

    /// A regular file (not a link, a submodule or a tree).
    pub fn is_regular_file(&self) -> bool {
        matches!(self.mode.as_str(), "100644" | "100755")
    }

    pub fn is_link(&self) -> bool {
        self.mode == "120000"
    }
}

/// Whether git, started in `dir` without its locating variables (as `base_command`
/// starts it), could find a repository: some directory from `dir` up holds a `.git`, or
/// is itself shaped like a repository's directory (`HEAD`, `objects`, `refs`: a bare one
/// may name a work tree). Where none does, git finds none either. A relative `dir`
/// depends on the current directory: said to be possible, so git is asked.
pub(super) fn could_be_in_a_repository(dir: &Path) -> bool {
    if !dir.is_absolute() {
        return true;
    }
    dir.ancestors().any(|dir| {
        dir.join(".git").symlink_metadata().is_ok()
            || (dir.join("HEAD").is_file()
                && dir.join("objects").is_dir()
                && dir.join("refs").is_dir())
    })
}

/// A branch of the user's repository, as `UserRepo::branches_under` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchTip {
    /// Its name, without `refs/heads/`.
    pub name: String,
    pub tip: Oid,
    /// Whether the tip is in HEAD's history.
    pub in_head: bool,
}

#[derive(Debug, Clone)]
pub struct UserRepo {
    top: PathBuf,
    /// The empty tree of the repository's object format, once known: where its git reads
    /// attributes from (see `command`).
    pub(super) empty_tree: OnceLock<Oid>,
}

impl UserRepo {
    /// The repository `dir` is in (its top level), if any.
    pub fn discover(dir: &Path) -> Option<Self> {
        if !could_be_in_a_repository(dir) {
            // git would find none: no process for it (a run's start waits for this).
            return None;
        }
        let output = base_command(dir, &Oid::empty_tree())
            .args(["rev-parse", "--show-toplevel"])
            .output()
            .ok()?;
        if !output.status.success() {
            return None;
        }
        let top = String::from_utf8(output.stdout).ok()?;
        Some(Self::at(Path::new(top.trim_end_matches('\n'))))
    }

    /// A repository known to be at `top` (a conversation's record).
    pub fn at(top: &Path) -> Self {
        Self {
            top: top.to_path_buf(),
            empty_tree: OnceLock::new(),
        }
    }

    /// The empty tree of this repository's object format: SHA-1's unless it says it is a
    /// SHA-256 repository (a repository not made yet is SHA-1's for now, and asked again).
    pub(super) fn empty_tree(&self) -> Oid {
        if let Some(known) = self.empty_tree.get() {
            return known.clone();
        }
        let sha1 = Oid::empty_tree();
        let asked = base_command(&self.top, &sha1)
            .args(["rev-parse", "--show-object-format"])
            .stdin(Stdio::null())
            .output();
        let Ok(output) = asked else {
            return sha1;
        };
        if !output.status.success() {
            return sha1;
        }
        let tree = match String::from_utf8_lossy(&output.stdout).trim() {
            "sha256" => Oid::empty_tree_sha256(),
            _ => sha1,
        };
        self.empty_tree.get_or_init(|| tree).clone()
    }

    pub fn top(&self) -> &Path {
        &self.top
    }

    /// A new repository at `top` (an existing directory of files wright put there, not
    /// the agent's) with all its files in one first commit on `main`, by a fixed author:
    /// what `wright eval` makes each attempt's repository from.
    pub fn init_committed(top: &Path, message: &str) -> Result<Self, GitError> {
        let repo = Self::at(top);
        repo.run(&["init", "--quiet", "--initial-branch=main"])?;
        repo.run(&["add", "--all"])?;
        repo.run(&[
            "-c",
            "user.name=wright eval",
            "-c",
            "user.email=eval@wright.invalid",
            "-c",
            "commit.gpgSign=false",
            "commit",
            "--quiet",
            "--no-verify",
            "--message",
            message,
        ])?;
        Ok(repo)
    }

    /// Git in this repository, hardened (see `command`'s module): no attribute of any tree
    /// picks a filter or a driver for it.
    pub(super) fn command(&self) -> Command {
        let mut command = base_command(&self.top, &self.empty_tree());
        command.args(HARDENED);
        command
    }

    /// `git ARGS` on pipes, its output read as it comes.
    pub(super) fn spawn(
        &self,
        args: &[&str],
        stdin: Stdio,
    ) -> Result<std::process::Child, GitError> {
        self.command()
            .args(args)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| GitError::Spawn(e.to_string()))
    }

    /// `git ARGS` to its end, its output bounded.
    pub(super) fn run(&self, args: &[&str]) -> Result<String, GitError> {
        let child = self.spawn(args, Stdio::null())?;
        text_of(args, finish(child, Vec::new(), RunLimits::default())?)
    }

    fn oid(&self, args: &[&str]) -> Result<Oid, GitError> {
        let printed = self.run(args)?;
        Oid::parse(&printed).ok_or_else(|| GitError::NotAnId {
            command: args.join(" "),
            printed,
        })
    }

    /// The commit HEAD names.
    pub fn head(&self) -> Result<Oid, GitError> {
        self.oid(&["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
    }

    /// The repository's git directory and common directory (the same unless the work
    /// tree is a linked worktree), as absolute paths.
    pub fn git_dirs(&self) -> Result<Vec<PathBuf>, GitError> {
        let printed = self.run(&[
            "rev-parse",
            "--path-format=absolute",
            "--git-dir",
            "--git-common-dir",
        ])?;
        let mut dirs: Vec<PathBuf> = printed.lines().map(PathBuf::from).collect();
        dirs.dedup();
        Ok(dirs)
    }

    /// A clone at `dest` sharing this repository's objects (read-only to it), with no
    /// work tree checked out: the agent's side makes that, in the sandbox.
    pub fn clone_shared(&self, dest: &Path) -> Result<(), GitError> {
        let (source, dest) = (self.top.display().to_string(), dest.display().to_string());
        self.run(&[
            "clone",
            "--quiet",
            "--shared",
            "--no-checkout",
            "--no-tags",
            &source,
            &dest,
        ])
        .map(drop)
    }

    /// The content of `path` in commit `oid` when it is a regular file there (not a link
    /// or a submodule), and no larger than `max_bytes`; `None` when there is no such
    /// file. Read from the object store: no work tree file, link or filter is involved.
    pub fn file_at(
        &self,
        oid: &Oid,
        path: &str,
        max_bytes: usize,
    ) -> Result<Option<Vec<u8>>, GitError> {
        let listed = self.run(&["ls-tree", "-z", "--full-tree", oid.as_str(), "--", path])?;
        let Some(entry) = listed.split('\0').find_map(TreeEntry::parse) else {
            return Ok(None);
        };
        if !entry.is_regular_file() {
            return Ok(None);
        }
        self.blob(&entry.object, path, max_bytes).map(Some)
    }

    /// The entries of commit `oid` at `paths` (files) and under them (directories,
    /// recursively), in one listing: links and submodules included, as they are.
    pub fn entries_at(&self, oid: &Oid, paths: &[String]) -> Result<Vec<TreeEntry>, GitError> {
        // Paths as they are: a directory named `[ab]` is not a pattern.
        let mut args = vec![
            "--literal-pathspecs",
            "ls-tree",
            "-r",
            "-z",
            "--full-tree",
            oid.as_str(),
            "--",
        ];
        args.extend(paths.iter().map(String::as_str));
        let child = self.spawn(&args, Stdio::null())?;
        let limits = RunLimits {
            max_stdout: 1 << 20,
            ..RunLimits::default()
        };
        let captured = finish(child, Vec::new(), limits)?;
        if !captured.success() {
            return Err(failed(&args, &captured.said()));
        }
        Ok(String::from_utf8_lossy(&captured.stdout)
            .split('\0')
            .filter_map(TreeEntry::parse)
            .collect())
    }

    /// How many files the tree of commit `oid` holds (for routing by size; the names are
    /// counted, never read as anything).
    pub fn file_count_at(&self, oid: &Oid) -> Result<u64, GitError> {
        let args = [
            "ls-tree",
            "-r",
            "-z",
            "--name-only",
            "--full-tree",
            oid.as_str(),
        ];
        let child = self.spawn(&args, Stdio::null())?;
        let limits = RunLimits {
            max_stdout: 64 << 20,
            ..RunLimits::default()
        };
        let captured = finish(child, Vec::new(), limits)?;
        if !captured.success() {
            return Err(failed(&args, &captured.said()));
        }
        Ok(captured.stdout.iter().filter(|b| **b == 0).count() as u64)
    }

    /// The content of the blob `object` (`path` names it in messages), no larger than
    /// `max_bytes`.
    pub fn blob(&self, object: &Oid, path: &str, max_bytes: usize) -> Result<Vec<u8>, GitError> {
        let args = ["cat-file", "blob", object.as_str()];
        let child = self.spawn(&args, Stdio::null())?;
        let limits = RunLimits {
            max_stdout: max_bytes + 1,
            ..RunLimits::default()
        };
        let captured = finish(child, Vec::new(), limits)?;
        if captured.stdout.len() > max_bytes {
            return Err(GitError::Failed {
                command: format!("cat-file blob {object}"),
                said: format!("{path} is larger than {max_bytes} bytes"),
            });
        }
        if !captured.success() {
            return Err(failed(&args, &captured.said()));
        }
        Ok(captured.stdout)
    }

    /// Whether `oid` is a commit of this repository.
    pub fn has_commit(&self, oid: &Oid) -> bool {
        let spec = format!("{oid}^{{commit}}");
        self.run(&["cat-file", "-e", &spec]).is_ok()
    }

    /// `index-pack --strict`: takes a pack made in the sandbox, stopping past `max_bytes`.
    /// Objects are checked as they arrive (fsck), and every link must resolve.
    pub fn import_pack(
        &self,
        mut pack: impl Read + Send + 'static,
        max_bytes: u64,
    ) -> Result<(), GitError> {
        let args = ["index-pack", "--stdin", "--strict"];
        let mut child = self.spawn(&args, Stdio::piped())?;
        let stdin = child.stdin.take();
        let copier = std::thread::spawn(move || match stdin {
            Some(mut stdin) => copy_bounded(&mut pack, &mut stdin, max_bytes),
            None => Err("no pipe to the importer".to_string()),
        });
        let limits = RunLimits {
            timeout: std::time::Duration::from_secs(600),
            ..RunLimits::default()
        };
        let captured = finish(child, Vec::new(), limits)?;
        let copied = copier
            .join()
            .unwrap_or_else(|_| Err("the copy of the pack failed".to_string()));
        match copied {
            Ok(()) if captured.success() => Ok(()),
            Ok(()) => Err(failed(&args, &captured.said())),
            Err(reason) => Err(failed(&args, &reason)),
        }
    }

    /// Points `refs/heads/BRANCH` at `tip` (a value: no symbolic ref is followed).
    pub fn set_branch(&self, branch: &str, tip: &Oid) -> Result<(), GitError> {
        let reference = format!("refs/heads/{branch}");
        self.run(&["update-ref", "--no-deref", &reference, tip.as_str()])
            .map(drop)
    }

    /// Moves the current branch (or a detached HEAD) from `base` to `tip` — refused if
    /// it moved meanwhile — and makes `tip` the index. The work tree is not touched: in
    /// place, it already holds the changes.
    pub fn advance_head(&self, base: &Oid, tip: &Oid) -> Result<(), GitError> {
        // An unborn branch must not exist yet.
        let old = if *base == Oid::empty_tree() {
            ""
        } else {
            base.as_str()
        };
        match self.run(&["symbolic-ref", "--quiet", "HEAD"]) {
            Ok(reference) => self.run(&["update-ref", reference.trim(), tip.as_str(), old])?,
            Err(_) => self.run(&["update-ref", "--no-deref", "HEAD", tip.as_str(), old])?,
        };
        self.run(&["read-tree", tip.as_str()]).map(drop)
    }

    pub fn branch_exists(&self, branch: &str) -> bool {
        let reference = format!("refs/heads/{branch}");
        self.run(&["rev-parse", "--verify", "--quiet", &reference])
            .is_ok()
    }

    /// The commit `refs/heads/BRANCH` names, if the branch exists.
    pub fn branch_tip(&self, branch: &str) -> Option<Oid> {
        let spec = format!("refs/heads/{branch}^{{commit}}");
        self.oid(&["rev-parse", "--verify", "--quiet", &spec]).ok()
    }

    /// The branches under `refs/heads/PREFIX/`, with their tips and whether HEAD holds
    /// them (each tip an ancestor of HEAD): two git calls, however many branches.
    pub fn branches_under(&self, prefix: &str) -> Result<Vec<BranchTip>, GitError> {
        let pattern = format!("refs/heads/{}/", prefix.trim_end_matches('/'));
        let listed = self.run(&[
            "for-each-ref",
            "--format=%(objectname) %(refname:strip=2)",
            &pattern,
        ])?;
        // An unborn HEAD holds nothing.
        let merged = self
            .run(&[
                "for-each-ref",
                "--merged",
                "HEAD",
                "--format=%(refname:strip=2)",
                &pattern,
            ])
            .unwrap_or_default();
        let merged: Vec<&str> = merged.lines().collect();
        Ok(listed
            .lines()
            .filter_map(|line| {
                let (oid, name) = line.split_once(' ')?;
                Some(BranchTip {
                    name: name.to_string(),
                    tip: Oid::parse(oid)?,
                    in_head: merged.contains(&name),
                })
            })
            .collect())
    }

    /// Whether every commit of `base..tip` has its equivalent (the same patch) in HEAD:
    /// a branch taken with `cherry-pick`. False when there is no such commit.
    pub fn picked_into_head(&self, base: &Oid, tip: &Oid) -> bool {
        match self.run(&["cherry", "HEAD", tip.as_str(), base.as_str()]) {
            Ok(printed) => {
                let mut lines = printed.lines().peekable();
                lines.peek().is_some() && lines.all(|line| line.starts_with("- "))
            }
            Err(_) => false,
        }
    }

    pub fn delete_branch(&self, branch: &str) -> Result<(), GitError> {
        self.run(&["branch", "--quiet", "-D", branch]).map(drop)
    }

    /// Whether two commits have the same tree.
    pub fn same_tree(&self, a: &Oid, b: &Oid) -> Result<bool, GitError> {
        let tree = |oid: &Oid| self.oid(&["rev-parse", "--verify", &format!("{oid}^{{tree}}")]);
        Ok(tree(a)? == tree(b)?)
    }

    /// The diff between two commits as text: no textconv, no external diff, bounded.
    pub fn diff(&self, base: &Oid, tip: &Oid) -> Result<String, GitError> {
        let args = [
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            base.as_str(),
            tip.as_str(),
            "--",
        ];
        let child = self.spawn(&args, Stdio::null())?;
        diff_text(&args, finish(child, Vec::new(), RunLimits::default())?)
    }

    /// Whether `ancestor` is in `tip`'s history.
    pub fn is_ancestor(&self, ancestor: &Oid, tip: &str) -> bool {
        self.run(&["merge-base", "--is-ancestor", ancestor.as_str(), tip])
            .is_ok()
    }
}

/// Copies `from` into `to`, at most `max_bytes` (then `to` is dropped, closing it).
fn copy_bounded(from: &mut impl Read, to: &mut impl Write, max_bytes: u64) -> Result<(), String> {
    let mut buffer = vec![0u8; 256 * 1024];
    let mut total: u64 = 0;
    loop {
        let n = from.read(&mut buffer).map_err(|e| e.to_string())?;
        if n == 0 {
            return Ok(());
        }
        total += n as u64;
        if total > max_bytes {
            return Err(format!(
                "the agent's changes make a pack of more than {} MiB",
                max_bytes >> 20
            ));
        }
        to.write_all(&buffer[..n]).map_err(|e| e.to_string())?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::git::test_git as git;

    fn commit(dir: &Path, file: &str, text: &str) -> Oid {
        std::fs::write(dir.join(file), text).unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", file]);
        Oid::parse(&git(dir, &["rev-parse", "HEAD"])).unwrap()
    }

    #[test]
    fn branches_merged_picked_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        git(top, &["init", "-q"]);
        let base = commit(top, "a", "a\n");
        git(top, &["checkout", "-qb", "wright/merged"]);
        let merged = commit(top, "b", "b\n");
        git(top, &["checkout", "-q", "main"]);
        git(top, &["checkout", "-qb", "wright/picked"]);
        let picked = commit(top, "c", "c\n");
        git(top, &["checkout", "-q", "main"]);
        git(top, &["checkout", "-qb", "wright/open"]);
        let open = commit(top, "d", "d\n");
        git(top, &["checkout", "-q", "main"]);
        git(top, &["checkout", "-qb", "other"]);
        git(top, &["checkout", "-q", "main"]);
        git(top, &["merge", "-q", "wright/merged"]);
        git(top, &["cherry-pick", picked.as_str()]);

        let repo = UserRepo::at(top);
        let mut branches = repo.branches_under("wright").unwrap();
        branches.sort_by(|a, b| a.name.cmp(&b.name));
        let expected = vec![
            BranchTip {
                name: "wright/merged".into(),
                tip: merged.clone(),
                in_head: true,
            },
            BranchTip {
                name: "wright/open".into(),
                tip: open.clone(),
                in_head: false,
            },
            BranchTip {
                name: "wright/picked".into(),
                tip: picked.clone(),
                in_head: false,
            },
        ];
        assert_eq!(branches, expected);
        assert!(repo.picked_into_head(&base, &picked));
        assert!(!repo.picked_into_head(&base, &open));
        // Nothing between them: nothing was picked.
        assert!(!repo.picked_into_head(&base, &base));
        assert_eq!(repo.branch_tip("wright/open"), Some(open));
        assert_eq!(repo.branch_tip("wright/none"), None);
    }

    #[test]
    fn a_repository_is_found_as_git_finds_it_and_git_is_not_asked_where_there_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain/deep");
        std::fs::create_dir_all(&plain).unwrap();
        // /tmp is in no repository here, as on any machine the tests run on.
        assert!(!could_be_in_a_repository(&plain));
        assert!(UserRepo::discover(&plain).is_none());

        let top = dir.path().join("repo");
        let sub = top.join("src/deep");
        std::fs::create_dir_all(&sub).unwrap();
        git(&top, &["init", "-q"]);
        assert!(could_be_in_a_repository(&sub));
        let found = UserRepo::discover(&sub).unwrap();
        assert_eq!(
            found.top().canonicalize().unwrap(),
            top.canonicalize().unwrap()
        );

        // A bare repository naming a work tree: only git knows, so git is asked.
        let bare = dir.path().join("bare");
        git(dir.path(), &["init", "-q", "--bare", "bare"]);
        assert!(could_be_in_a_repository(&bare.join("refs")));
        // A relative directory depends on where this runs: git is asked.
        assert!(could_be_in_a_repository(Path::new("relative")));
    }
}
