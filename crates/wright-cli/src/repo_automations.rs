//! Automations a repository defines (`.wright/automations.toml`), for `wright serve`:
//! read from the configured repository's automations branch only
//! (`server.automations_branch`, by host git from its object store — never the work tree,
//! never another branch), and used only when the user allowed exactly that content
//! (`wright allow repo-automations`, the consent record repository configuration uses).
//! Until then, or once the file changed, it is listed as waiting with its hash and none
//! of its automations is defined, so nothing of it fires.

use anyhow::Context;
use anyhow::Result;
use std::path::Path;
use std::path::PathBuf;
use wright_config::automations::Automation;
use wright_config::automations::REPO_AUTOMATIONS_FILE;
use wright_config::consent;
use wright_sandbox::git::UserRepo;

/// The largest file read.
const MOST: usize = 256 * 1024;

/// The file as its branch holds it.
pub struct RepoFile {
    /// The repository's top level (the consent record's key).
    pub top: PathBuf,
    pub branch: String,
    pub text: String,
    pub hash: String,
}

impl RepoFile {
    /// `.wright/automations.toml` of `repo`'s `branch`; `None` when the branch does not
    /// have it.
    pub fn read(repo: &Path, branch: &str) -> Result<Option<Self>> {
        let top = repo
            .canonicalize()
            .with_context(|| format!("{} must be an existing repository", repo.display()))?;
        let git = UserRepo::at(&top);
        let Some(tip) = git.branch_tip(branch) else {
            anyhow::bail!("{} has no branch {branch}", top.display());
        };
        let Some(bytes) = git.file_at(&tip, REPO_AUTOMATIONS_FILE, MOST)? else {
            return Ok(None);
        };
        let text = String::from_utf8(bytes).with_context(|| {
            format!("{REPO_AUTOMATIONS_FILE} of {} is not UTF-8", top.display())
        })?;
        Ok(Some(Self {
            hash: consent::sha256(text.as_bytes()),
            top,
            branch: branch.to_string(),
            text,
        }))
    }

    /// The name its automations' errors give.
    pub fn name(&self) -> String {
        format!(
            "{}:{REPO_AUTOMATIONS_FILE} (branch {})",
            self.top.display(),
            self.branch
        )
    }
}

/// The repository automations of the user's file at `user_file`: those allowed, and the
/// file waiting for approval.
pub fn load(user_file: &Path) -> Result<(Vec<Automation>, Option<wright_server::Waiting>)> {
    let Some((repo, branch)) = wright_config::server::automations_repository(user_file)? else {
        return Ok((Vec::new(), None));
    };
    let Some(file) = RepoFile::read(&repo, &branch)? else {
        return Ok((Vec::new(), None));
    };
    let record = consent::Consent::open(&consent::Consent::default_path())?;
    if !record.allows(consent::Kind::RepoAutomations, &file.top, &file.hash) {
        return Ok((
            Vec::new(),
            Some(wright_server::Waiting {
                repository: file.top.display().to_string(),
                branch: file.branch.clone(),
                file: REPO_AUTOMATIONS_FILE.to_string(),
                hash: file.hash.clone(),
                allow: format!("wright allow repo-automations -C {}", file.top.display()),
            }),
        ));
    }
    Ok((
        wright_config::automations::parse(&file.text, &file.name())?,
        None,
    ))
}
