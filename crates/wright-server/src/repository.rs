//! Conversations on a repository URL: cloned with the host's hardening (see
//! `UserRepo::clone_remote`) into a directory of its own beside wright's data, within a
//! deadline; what a failed clone left is removed.

use anyhow::Result;
use wright_sandbox::git::RemoteUrl;
use wright_sandbox::git::UserRepo;

/// How long cloning a repository URL may take.
const CLONE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(600);

/// Clones `url` for conversation `id` (into its own directory of the repositories one),
/// at `branch` (its default branch when none); what a failed clone left is removed.
pub(crate) async fn clone_for(
    id: &str,
    url: &str,
    branch: Option<&str>,
) -> Result<std::path::PathBuf> {
    let url = RemoteUrl::parse(url)?;
    let dest = wright_session::stored::repositories_root().join(id);
    let target = dest.clone();
    let branch = branch.map(str::to_string);
    let cloned = tokio::task::spawn_blocking(move || {
        std::fs::create_dir_all(wright_session::stored::repositories_root())?;
        UserRepo::clone_remote(&url, &target, branch.as_deref(), CLONE_DEADLINE)
            .map_err(|err| anyhow::anyhow!("cannot clone {}: {err}", url.as_str()))
    })
    .await?;
    if let Err(err) = cloned {
        let _ = wright_sandbox::remove_tree(&dest);
        return Err(err);
    }
    Ok(dest)
}
