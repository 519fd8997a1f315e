//! A session's hooks: the user's own (`~/.config/wright/hooks.json`), which run as the
//! user on the host, and the repository's (`.wright/hooks.json`, `.openhands/hooks.json`,
//! the `hooks` of `.claude/settings.json`) with its setup script (`.wright/setup.sh`, else
//! `.openhands/setup.sh`), which run inside the sandbox and only once the user allowed
//! those files' exact content — recorded in the consent store by its SHA-256, for one run
//! by the front end's choice, or asked through the `Front`. A repository's files are read
//! as its configuration is: at the commit the conversation starts from, never from the
//! agent's clone, never through a link.

use crate::front::Front;
use crate::repo_config::Read;
use crate::repo_config::RepoFiles;
use anyhow::Result;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::path::PathBuf;
use std::process::Stdio;
use wright_config::consent;
use wright_config::consent::Consent;
use wright_core::hooks::HookCommand;
use wright_core::hooks::HookProcess;
use wright_core::hooks::HookRunner;
use wright_core::hooks::HookSet;
use wright_protocol::HookOrigin;
use wright_sandbox::RunLimits;
use wright_sandbox::Sandbox;

/// The repository's files that hold hooks, in the order their hooks run.
pub const REPO_HOOK_FILES: [&str; 3] = [
    ".wright/hooks.json",
    ".openhands/hooks.json",
    ".claude/settings.json",
];
/// The repository's setup script: the first of these that is there.
pub const SETUP_SCRIPTS: [&str; 2] = [".wright/setup.sh", ".openhands/setup.sh"];
/// A hooks file or setup script larger than this is not read.
const MAX_FILE_BYTES: usize = 64 << 10;
/// What a hook prints is read up to this much.
const MAX_OUTPUT: usize = 1 << 20;

/// Whether the repository's hooks may run when the user has not allowed them for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepoHooksChoice {
    /// Ask through the front (a front with nobody to answer says no).
    Ask,
    /// Allowed for this run only (nothing recorded).
    AllowOnce,
}

/// What became of the repository's hooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepoHooks {
    /// It has none.
    None,
    /// They run (in the sandbox): the files.
    Allowed(Vec<String>),
    /// They do not run: the user has not allowed these files' content.
    NotAllowed(Vec<String>),
}

/// The hooks of a session, and the setup script due before a new conversation's first
/// step.
#[derive(Debug, Clone, Default)]
pub struct SessionHooks {
    pub set: HookSet,
    /// The setup script's path and text, when allowed.
    pub setup: Option<(String, String)>,
    /// The repository's: allowed or not, and its files.
    pub repo: Option<RepoHooks>,
    /// Files not read, and why.
    pub skipped: Vec<String>,
}

/// The user's hooks file.
pub fn user_file() -> Option<PathBuf> {
    wright_config::Config::user_file()
        .and_then(|file| file.parent().map(|dir| dir.join("hooks.json")))
}

/// The paths of the repository hooks are read from (for `RepoFiles::list`).
pub fn paths() -> Vec<String> {
    REPO_HOOK_FILES
        .iter()
        .chain(SETUP_SCRIPTS.iter())
        .map(|path| path.to_string())
        .collect()
}

impl SessionHooks {
    /// Reads the user's hooks and the repository's (from `source`); the repository's
    /// are taken when the user allowed their content (`choice`, the record, or `front`).
    /// A user's file that is not valid is an error (their own guard must not silently go
    /// missing); a repository's is skipped with the reason.
    pub fn load(source: &RepoFiles, choice: RepoHooksChoice, front: &dyn Front) -> Result<Self> {
        let mut hooks = SessionHooks::default();
        if let Some(path) = user_file() {
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let shown = path.display().to_string();
                    hooks
                        .set
                        .extend(HookSet::parse(&text, &shown, HookOrigin::User)?);
                }
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => anyhow::bail!("cannot read {}: {err}", path.display()),
            }
        }
        let mut files: Vec<(String, String)> = Vec::new();
        let mut repo_set = HookSet::default();
        for path in REPO_HOOK_FILES {
            match source.read_text(path, MAX_FILE_BYTES) {
                Read::Missing => {}
                Read::Skipped(why) => hooks.skipped.push(format!("{path} ({why})")),
                Read::Text(text) => match HookSet::parse(&text, path, HookOrigin::Repository) {
                    Ok(set) if set.is_empty() => {}
                    Ok(set) => {
                        repo_set.extend(set);
                        files.push((path.to_string(), text));
                    }
                    Err(err) => hooks.skipped.push(err.to_string()),
                },
            }
        }
        let mut setup = None;
        for path in SETUP_SCRIPTS {
            match source.read_text(path, MAX_FILE_BYTES) {
                Read::Missing => continue,
                Read::Skipped(why) => hooks.skipped.push(format!("{path} ({why})")),
                Read::Text(text) => {
                    files.push((path.to_string(), text.clone()));
                    setup = Some((path.to_string(), text));
                }
            }
            break;
        }
        if files.is_empty() {
            hooks.repo = Some(RepoHooks::None);
            return Ok(hooks);
        }
        let names: Vec<String> = files.iter().map(|(path, _)| path.clone()).collect();
        if allowed(source.key(), &files, choice, front)? {
            hooks.set.extend(repo_set);
            hooks.setup = setup;
            hooks.repo = Some(RepoHooks::Allowed(names));
        } else {
            hooks.repo = Some(RepoHooks::NotAllowed(names));
        }
        Ok(hooks)
    }

    /// The hooks in a few words (for the header).
    pub fn describe(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(mine) = self.set.summary(HookOrigin::User) {
            lines.push(format!("hooks yours: {mine}, run as you"));
        }
        match &self.repo {
            Some(RepoHooks::Allowed(files)) => lines.push(format!(
                "hooks the repository's: {} ({}), run in the sandbox",
                self.set
                    .summary(HookOrigin::Repository)
                    .unwrap_or_else(|| "a setup script".into()),
                files.join(", ")
            )),
            Some(RepoHooks::NotAllowed(files)) => lines.push(format!(
                "hooks the repository's ({}) do not run: you have not allowed their content",
                files.join(", ")
            )),
            Some(RepoHooks::None) | None => {}
        }
        for skipped in &self.skipped {
            lines.push(format!("not read: {skipped}"));
        }
        lines
    }
}

/// The consent subject for a repository's hook files: their paths and contents, hashed.
pub fn subject(files: &[(String, String)]) -> String {
    let mut all = Vec::new();
    for (path, text) in files {
        all.extend_from_slice(path.as_bytes());
        all.push(0);
        all.extend_from_slice(text.as_bytes());
        all.push(0);
    }
    consent::sha256(&all)
}

/// The repository's hook files and setup script as a conversation starting now would
/// read them (for `wright allow repo-hooks`): each path and its text.
pub fn repo_files(source: &RepoFiles) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for path in REPO_HOOK_FILES {
        if let Read::Text(text) = source.read_text(path, MAX_FILE_BYTES) {
            if HookSet::parse(&text, path, HookOrigin::Repository).is_ok_and(|s| !s.is_empty()) {
                files.push((path.to_string(), text));
            }
        }
    }
    if let Some(script) =
        SETUP_SCRIPTS
            .iter()
            .find_map(|path| match source.read_text(path, MAX_FILE_BYTES) {
                Read::Text(text) => Some((path.to_string(), text)),
                _ => None,
            })
    {
        files.push(script);
    }
    files
}

fn allowed(
    repo: &Path,
    files: &[(String, String)],
    choice: RepoHooksChoice,
    front: &dyn Front,
) -> Result<bool> {
    let question = wright_protocol::Question::RunRepoHooks {
        repo: repo.to_path_buf(),
        files: files.to_vec(),
    };
    consented(
        consent::Kind::RepoHooks,
        repo,
        &subject(files),
        question,
        choice,
        front,
    )
}

/// Whether the repository's files that `subject` hashes may be followed: for this run
/// by the front end's choice, by the consent store (allowed before, these exact bytes),
/// or by the person asked `question` now — their yes recorded for next time.
pub(crate) fn consented(
    kind: consent::Kind,
    repo: &Path,
    subject: &str,
    question: wright_protocol::Question,
    choice: RepoHooksChoice,
    front: &dyn Front,
) -> Result<bool> {
    if choice == RepoHooksChoice::AllowOnce {
        return Ok(true);
    }
    let mut record = Consent::open(&Consent::default_path())?;
    if record.allows(kind, repo, subject) {
        return Ok(true);
    }
    if !front.confirm(&question) {
        return Ok(false);
    }
    record.allow(kind, repo, subject)?;
    Ok(true)
}

/// Runs hooks: the user's on the host, as the user, in the workspace (unless one asked
/// for the sandbox); the repository's and the setup script in the conversation's
/// sandbox, with its scrubbed environment.
pub struct Runner {
    pub sandbox: Sandbox,
    /// The sandbox's environment for wright's own commands.
    pub env: Vec<(String, String)>,
    pub workspace: PathBuf,
}

impl HookRunner for Runner {
    fn run(
        &self,
        hook: &HookCommand,
        stdin: &[u8],
        env: &[(String, String)],
    ) -> std::result::Result<HookProcess, String> {
        let limits = RunLimits {
            max_stdout: MAX_OUTPUT,
            max_stderr: 64 << 10,
            timeout: hook.timeout,
        };
        let captured = if hook.sandboxed {
            let mut all = self.env.clone();
            all.extend(env.iter().cloned());
            self.sandbox
                .capture(
                    &self.workspace,
                    &all,
                    "bash",
                    &["-c", &hook.command],
                    stdin,
                    limits,
                )
                .map_err(|err| format!("cannot start it in the sandbox: {err}"))?
        } else {
            let child = std::process::Command::new("bash")
                .args(["-c", &hook.command])
                .current_dir(&self.workspace)
                .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .spawn()
                .map_err(|err| format!("cannot start it: {err}"))?;
            wright_sandbox::finish(child, stdin.to_vec(), limits)
                .map_err(|err| format!("cannot run it: {err}"))?
        };
        Ok(HookProcess {
            code: captured.code,
            stdout: captured.stdout,
            stderr: captured.stderr,
            timed_out: captured.timed_out,
        })
    }
}
