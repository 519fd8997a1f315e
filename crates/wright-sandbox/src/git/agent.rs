//! Git inside the sandbox, on a repository the agent can write: its clone, or an in-place
//! work tree. Whatever the agent configured there runs confined, if at all; output is
//! bounded and every command has a deadline.

use super::command::diff_text;
use super::command::text_of;
use super::GitError;
use super::Oid;
use super::UserRepo;
use crate::run::Captured;
use crate::run::RunLimits;
use crate::Sandbox;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::process::Stdio;

/// Options every confined git gets: no hooks, no fsmonitor, no pager, no signing, names
/// as they are (not octal escapes: `café.txt`, never `caf\303\251.txt`; the front end
/// makes what it prints safe for a terminal), and wright's identity for the commits it
/// makes for the agent.
const HARDENED: &[&str] = &[
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.pager=cat",
    "-c",
    "core.quotePath=false",
    "-c",
    "commit.gpgSign=false",
    "-c",
    "user.name=wright",
    "-c",
    "user.email=wright@localhost",
];

/// Prints the changes since `$1` as a diff, new files included: regular files as diffs
/// against /dev/null, anything else (a link, a FIFO) named only, never read. The rest of
/// the arguments are git's options. (Arguments, not variables: a container's processes
/// get the environment it was made with, not the client's.)
const CHANGES: &str = r#"
base=$1; shift
git "$@" diff --no-color --no-ext-diff --no-textconv "$base" -- . || exit
git "$@" ls-files -z --others --exclude-standard -- . | while IFS= read -r -d '' f; do
  if [ -f "$f" ] && [ ! -L "$f" ]; then
    git "$@" diff --no-color --no-ext-diff --no-textconv --no-index -- /dev/null "$f"
  else
    printf 'new file (not a regular file): %s\n' "$f"
  fi
done
exit 0
"#;

/// Commits the work tree under this directory on top of `$1` with message `$2`, without
/// writing the repository (its `.git` may be read-only): the index and the new objects go
/// to a new directory of the sandbox's own, whose path is printed after the commit's id.
/// Repositories the agent made and wright set aside (`.git.wright-quarantined`) are left
/// out. The rest of the arguments are git's options.
const COMMIT_ASIDE: &str = r#"
set -e
base=$1; msg=$2; shift 2
common=$(git "$@" rev-parse --path-format=absolute --git-common-dir)
d=$(mktemp -d)
mkdir "$d/objects"
export GIT_INDEX_FILE="$d/index" GIT_OBJECT_DIRECTORY="$d/objects" GIT_ALTERNATE_OBJECT_DIRECTORIES="$common/objects"
# The agent's own gitconfig (its HOME's) has no say in this commit: no filter of its.
export GIT_CONFIG_GLOBAL=/dev/null
git "$@" read-tree "$base"
git "$@" add --all -- . ':(exclude,glob)**/.git.wright-quarantined*' ':(exclude,glob)**/.git.wright-quarantined*/**' ':(exclude,top,icase).wright/config.toml'
tree=$(git "$@" write-tree)
# wright's own configuration, as the agent left it, is never committed for the user.
left=-
[ -z "$(git "$@" status --porcelain --untracked-files=all -- ':(top,icase).wright/config.toml')" ] || left=config
if [ "$base" = 4b825dc642cb6eb9a060e54bf8d69288fbee4904 ]; then
  commit=$(git "$@" commit-tree -m "$msg" "$tree")
else
  commit=$(git "$@" commit-tree -p "$base" -m "$msg" "$tree")
fi
printf '%s %s %s
' "$commit" "$left" "$d"
"#;

/// Packs the revisions on stdin; with `$1`, objects also come from the directory
/// `COMMIT_ASIDE` printed. The rest of the arguments are git's options.
const PACK: &str = r#"
aside=$1; shift
if [ -n "$aside" ]; then
  common=$(git "$@" rev-parse --path-format=absolute --git-common-dir) || exit
  export GIT_OBJECT_DIRECTORY="$aside/objects" GIT_ALTERNATE_OBJECT_DIRECTORIES="$common/objects"
fi
exec git "$@" pack-objects --revs --stdout --quiet
"#;

/// Commits the whole work tree (run at the repository's top) on top of `$1` (whose tree
/// is `$2`, or `-` when not known) with message `$3`, without touching the agent's index:
/// a private index of wright's in the git directory keeps the files' stat data from one
/// step to the next, so only what changed is read again. The commit is kept by the hidden
/// ref `$4`; when the tree is `$1`'s, nothing is made and `$1` is printed. Prints the
/// commit and its tree. As few programs as can be: this runs after every step that may
/// have changed files. The rest of the arguments are git's options.
const SNAPSHOT_STEP: &str = r#"
set -e
previous=$1; known=$2; msg=$3; ref=$4; shift 4
export GIT_INDEX_FILE=.git/wright-steps.index GIT_CONFIG_GLOBAL=/dev/null
# Copies of steps' files left by a process killed before committing them.
rm -rf -- .git/wright-stage
# The first time, the agent's index is the quickest start (any start is right: the
# index is made to match the work tree below).
[ -f "$GIT_INDEX_FILE" ] || cp -- .git/index "$GIT_INDEX_FILE" 2>/dev/null || :
take() {
  git "$@" add --all -- . ':(exclude,glob)**/.git.wright-quarantined*' ':(exclude,glob)**/.git.wright-quarantined*/**'
}
take "$@" 2>/dev/null || { rm -f -- "$GIT_INDEX_FILE"; git "$@" read-tree "$previous"; take "$@"; }
tree=$(git "$@" write-tree)
[ "$known" != - ] || known=$(git "$@" rev-parse "$previous^{tree}")
if [ "$known" = "$tree" ]; then
  printf '%s %s\n' "$previous" "$tree"
  exit 0
fi
commit=$(git "$@" commit-tree -p "$previous" -m "$msg" "$tree")
git "$@" update-ref "$ref" "$commit"
printf '%s %s\n' "$commit" "$tree"
"#;

/// The same from the step's files as they were copied at its end (`$5`, a directory in
/// `.git` standing for the work tree): the `$6` first paths on stdin (NUL-separated) were
/// written, the rest removed. Git reads the copy, never the work tree the next step is
/// already changing; the rules that decide what it keeps (the `.gitignore` and
/// `.gitattributes` files above each path) are in the copy as they were. The index holds
/// the last commit's tree (`$2`), made by the step before. The copy is removed after.
const SNAPSHOT_STAGED: &str = r#"
set -e -o pipefail
previous=$1; known=$2; msg=$3; ref=$4; stage=$PWD/$5; count=$6; shift 6
trap 'rm -rf -- "$stage" "$stage.ignored"' EXIT
# Absolute: git reads the copy from inside it (paths are relative to the copy's top).
export GIT_INDEX_FILE=$PWD/.git/wright-steps.index GIT_CONFIG_GLOBAL=/dev/null GIT_DIR=$PWD/.git
mapfile -d '' paths
present=("${paths[@]:0:count}"); removed=("${paths[@]:count}")
[ "$(git "$@" write-tree 2>/dev/null)" = "$known" ] || git "$@" read-tree "$previous"
if [ ${#removed[@]} -gt 0 ]; then
  printf '%s\0' "${removed[@]}" | git "$@" update-index -z --force-remove --stdin
fi
if [ ${#present[@]} -gt 0 ]; then
  status=0
  printf '%s\0' "${present[@]}" | GIT_WORK_TREE="$stage" git -C "$stage" "$@" check-ignore -z --stdin >"$stage.ignored" || status=$?
  [ "$status" -le 1 ]
  mapfile -d '' ignored <"$stage.ignored"
  declare -A skip=()
  for p in "${ignored[@]}"; do skip["$p"]=1; done
  keep=()
  for p in "${present[@]}"; do [ -n "${skip["$p"]+x}" ] || keep+=("$p"); done
  [ ${#keep[@]} -eq 0 ] || GIT_LITERAL_PATHSPECS=1 GIT_WORK_TREE="$stage" git -C "$stage" "$@" add --all -- "${keep[@]}"
fi
tree=$(git "$@" write-tree)
if [ "$known" = "$tree" ]; then
  printf '%s %s\n' "$previous" "$tree"
  exit 0
fi
commit=$(git "$@" commit-tree -p "$previous" -m "$msg" "$tree")
git "$@" update-ref "$ref" "$commit"
printf '%s %s\n' "$commit" "$tree"
"#;

/// Fills an empty work tree (this repository's, HEAD at the branch's start) with the files
/// of commit `$2` of the repository at `$1`, leaving HEAD and the index where they are: the
/// objects `$2` has beyond `$3` (which this repository has) are packed there and indexed
/// here, the ref `$4` keeps them, and the files are checked out. The rest of the arguments
/// are git's options.
const FILES_FROM: &str = r#"
set -e -o pipefail
source=$1; commit=$2; known=$3; ref=$4; shift 4
printf '%s\n^%s\n' "$commit" "$known" | git "$@" -C "$source" pack-objects --revs --stdout --quiet | git "$@" index-pack --stdin >/dev/null
git "$@" update-ref "$ref" "$commit"
head=$(git "$@" rev-parse --verify HEAD)
git "$@" read-tree -u --reset "$commit"
git "$@" read-tree "$head"
"#;

/// A commit of a step's files (`snapshot_step`), and its tree when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepCommit {
    pub commit: Oid,
    pub tree: Option<Oid>,
}

/// A commit made by `commit_aside`: its id, and where its new objects are in the sandbox.
pub struct AsideCommit {
    pub tip: Oid,
    /// The agent changed the repository's `.wright/config.toml`: left out of the commit,
    /// in the work tree for the user to read.
    pub left_config: bool,
    aside: String,
}

pub struct AgentRepo<'a> {
    sandbox: &'a Sandbox,
    env: &'a [(String, String)],
    dir: PathBuf,
}

impl<'a> AgentRepo<'a> {
    /// Git in `dir` (the repository's top level, or a directory in it), run in `sandbox`
    /// with its environment `env`.
    pub fn new(sandbox: &'a Sandbox, env: &'a [(String, String)], dir: &Path) -> Self {
        Self {
            sandbox,
            env,
            dir: dir.to_path_buf(),
        }
    }

    fn git(&self, args: &[&str], stdin: &[u8], limits: RunLimits) -> Result<Captured, GitError> {
        let mut full: Vec<&str> = HARDENED.to_vec();
        full.push("--no-optional-locks");
        full.extend_from_slice(args);
        Ok(self
            .sandbox
            .capture(&self.dir, self.env, "git", &full, stdin, limits)?)
    }

    /// Runs one of this module's bash scripts in the sandbox: `$0` is `name`, then `args`,
    /// then git's hardening options (which the script passes to every git it runs).
    fn script(
        &self,
        script: &str,
        name: &str,
        args: &[&str],
        limits: RunLimits,
    ) -> Result<Captured, GitError> {
        let mut full = vec!["-c", script, name];
        full.extend_from_slice(args);
        full.extend_from_slice(HARDENED);
        full.push("--no-optional-locks");
        Ok(self
            .sandbox
            .capture(&self.dir, self.env, "bash", &full, b"", limits)?)
    }

    fn run(&self, args: &[&str]) -> Result<String, GitError> {
        text_of(args, self.git(args, b"", RunLimits::default())?)
    }

    /// `git checkout -b BRANCH BASE`: the clone's work tree, made in the sandbox.
    pub fn check_out_new_branch(&self, branch: &str, base: &Oid) -> Result<(), GitError> {
        self.run(&["checkout", "--quiet", "-b", branch, base.as_str()])
            .map(drop)
    }

    /// Makes `BRANCH` at `BASE` the current branch and `BASE` the index, leaving the work
    /// tree alone (a fork brings its own files).
    pub fn start_branch_keeping_files(&self, branch: &str, base: &Oid) -> Result<(), GitError> {
        let reference = format!("refs/heads/{branch}");
        self.run(&["update-ref", &reference, base.as_str()])?;
        self.run(&["symbolic-ref", "HEAD", &reference])?;
        self.run(&["read-tree", base.as_str()]).map(drop)
    }

    /// Commits everything in the work tree (the agent's changes) on the current branch,
    /// when there is anything to commit (the agent may have committed it all itself).
    pub fn commit_all(&self, message: &str) -> Result<(), GitError> {
        self.run(&["add", "--all"])?;
        let staged = self.git(&["diff", "--cached", "--quiet"], b"", RunLimits::default())?;
        match staged.code {
            Some(0) => Ok(()),
            Some(1) => self
                .run(&["commit", "--quiet", "--no-verify", "-m", message])
                .map(drop),
            _ => Err(GitError::Failed {
                command: "diff --cached".into(),
                said: staged.said(),
            }),
        }
    }

    /// A commit of the work tree under this directory (an in-place workspace, which may
    /// be a part of its repository) on top of `base`, made without writing the repository:
    /// its `.git` stays read-only to everything the sandbox runs.
    pub fn commit_aside(&self, base: &Oid, message: &str) -> Result<AsideCommit, GitError> {
        let captured = self.script(
            COMMIT_ASIDE,
            "wright-commit",
            &[base.as_str(), message],
            RunLimits::default(),
        )?;
        let printed = text_of(&["commit-tree"], captured)?;
        let mut fields = printed.trim().splitn(3, ' ');
        let (tip, left, aside) = (fields.next(), fields.next(), fields.next());
        let tip = tip.and_then(Oid::parse).ok_or_else(|| GitError::NotAnId {
            command: "commit-tree".into(),
            printed: printed.clone(),
        })?;
        Ok(AsideCommit {
            tip,
            left_config: left == Some("config"),
            aside: aside.unwrap_or_default().to_string(),
        })
    }

    /// Commits the files of the work tree (this must be its top) as they are now on top
    /// of `previous` (an earlier snapshot, or the start commit; its tree, when known),
    /// kept by the hidden ref `reference`; neither the agent's index nor its branch moves.
    /// Returns `previous` when nothing changed since.
    pub fn snapshot_step(
        &self,
        previous: &StepCommit,
        message: &str,
        reference: &str,
    ) -> Result<StepCommit, GitError> {
        let captured = self.script(
            SNAPSHOT_STEP,
            "wright-step",
            &[
                previous.commit.as_str(),
                previous.tree.as_ref().map_or("-", Oid::as_str),
                message,
                reference,
            ],
            RunLimits {
                timeout: std::time::Duration::from_secs(60),
                ..RunLimits::default()
            },
        )?;
        let printed = text_of(&["add --all (a step's snapshot)"], captured)?;
        parse_step_commit(printed)
    }

    /// Commits a step's files from their copy `stage` (relative to the top, inside
    /// `.git`): `written` as the copy has them, `removed` gone; on top of `previous`,
    /// whose tree the private index holds. Returns `previous` when nothing changed for git
    /// (only ignored files were written).
    pub fn snapshot_staged(
        &self,
        previous: &StepCommit,
        stage: &str,
        written: &[String],
        removed: &[String],
        message: &str,
        reference: &str,
    ) -> Result<StepCommit, GitError> {
        let known = previous.tree.as_ref().map_or("-", Oid::as_str);
        let count = written.len().to_string();
        let mut input = Vec::new();
        for path in written.iter().chain(removed) {
            input.extend_from_slice(path.as_bytes());
            input.push(0);
        }
        let mut full = vec![
            "-c",
            SNAPSHOT_STAGED,
            "wright-step-staged",
            previous.commit.as_str(),
            known,
            message,
            reference,
            stage,
            &count,
        ];
        full.extend_from_slice(HARDENED);
        full.push("--no-optional-locks");
        let captured = self.sandbox.capture(
            &self.dir,
            self.env,
            "bash",
            &full,
            &input,
            RunLimits {
                timeout: std::time::Duration::from_secs(60),
                ..RunLimits::default()
            },
        )?;
        let printed = text_of(&["add --all (a step's copied files)"], captured)?;
        parse_step_commit(printed)
    }

    /// Gives this repository's empty work tree the files of `commit` of the repository at
    /// `source` (readable in this sandbox), whose objects beyond `known` are copied here
    /// and kept by `reference`; HEAD and the index stay as they are.
    pub fn files_from(
        &self,
        source: &Path,
        commit: &Oid,
        known: &Oid,
        reference: &str,
    ) -> Result<(), GitError> {
        let source = source.display().to_string();
        let captured = self.script(
            FILES_FROM,
            "wright-files-from",
            &[source.as_str(), commit.as_str(), known.as_str(), reference],
            RunLimits {
                timeout: std::time::Duration::from_secs(600),
                ..RunLimits::default()
            },
        )?;
        text_of(&["read-tree (a snapshot's files)"], captured).map(drop)
    }

    /// The commit HEAD names.
    pub fn head(&self) -> Result<Oid, GitError> {
        let args = ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"];
        let printed = self.run(&args)?;
        Oid::parse(&printed).ok_or_else(|| GitError::NotAnId {
            command: args.join(" "),
            printed,
        })
    }

    /// Whether the work tree and index hold nothing but HEAD (untracked files count).
    pub fn is_clean(&self) -> Result<bool, GitError> {
        Ok(self
            .run(&["status", "--porcelain", "--", "."])?
            .trim()
            .is_empty())
    }

    /// The changes in the work tree since `base`, new files included, as diff text (cut
    /// at the output bound, never read through a link or from a FIFO).
    pub fn changes_since(&self, base: &Oid) -> Result<String, GitError> {
        let captured = self.script(
            CHANGES,
            "wright-changes",
            &[base.as_str()],
            RunLimits::default(),
        )?;
        // A diff too long to show whole is still worth its beginning.
        diff_text(&["diff"], captured)
    }

    /// Sends the objects of `tip` that `base` lacks, packed inside the sandbox (so only
    /// objects the sandbox can read — never another repository's, whatever alternates say)
    /// into `user`'s repository, checked there; at most `max_bytes` of pack. `aside` names
    /// a commit made by `commit_aside`, whose new objects are in the sandbox's scratch.
    pub fn send_objects(
        &self,
        tip: &Oid,
        base: &Oid,
        aside: Option<&AsideCommit>,
        user: &UserRepo,
        max_bytes: u64,
    ) -> Result<(), GitError> {
        let mut full = vec![
            "-c",
            PACK,
            "wright-pack",
            aside.map_or("", |a| a.aside.as_str()),
        ];
        full.extend_from_slice(HARDENED);
        let mut command = self.sandbox.command(&self.dir, self.env, "bash", &full)?;
        // A copied workspace: the sandbox's copy is what wright's last writes made it.
        self.sandbox.before_command()?;
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .map_err(|e| GitError::Spawn(e.to_string()))?;
        if let Some(mut stdin) = child.stdin.take() {
            let revs = if *base == Oid::empty_tree() {
                format!("{tip}\n")
            } else {
                format!("{tip}\n^{base}\n")
            };
            let _ = stdin.write_all(revs.as_bytes());
        }
        let Some(pack) = child.stdout.take() else {
            return Err(GitError::Spawn("no pipe from pack-objects".into()));
        };
        let imported = user.import_pack(pack, max_bytes);
        let packed = crate::run::finish(child, Vec::new(), RunLimits::default())?;
        if !packed.success() {
            return Err(GitError::Failed {
                command: "pack-objects (in the sandbox)".into(),
                said: packed.said(),
            });
        }
        imported
    }
}

/// The commit and tree a step's snapshot script printed.
fn parse_step_commit(printed: String) -> Result<StepCommit, GitError> {
    let mut ids = printed.split_whitespace().map(Oid::parse);
    match (ids.next().flatten(), ids.next().flatten()) {
        (Some(commit), Some(tree)) => Ok(StepCommit {
            commit,
            tree: Some(tree),
        }),
        _ => Err(GitError::NotAnId {
            command: "commit-tree".into(),
            printed,
        }),
    }
}
