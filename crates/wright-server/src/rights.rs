//! What the admin lets a user (with `--database`): workspaces under their roots, and a
//! number of runs at once.
//!
//! What it guarantees: a user's workspace is taken only as its canonical path (symbolic
//! links and `..` resolved by the kernel) lying under one of their roots, and every other
//! path — outside, missing, not a directory, relative, unreadable — is answered with the
//! very same error, so a user learns nothing of the server's files by asking. The path
//! is checked again as the run starts (a link put in its place meanwhile, a root taken
//! away meanwhile: refused). A user over their run limit is answered 429
//! `quota_exceeded`, naming the limit; the database admits each run (`Store::admit`), so
//! replicas racing never both take the last place.

use crate::error::ApiError;
use crate::routes::AppState;
use crate::tenancy::Caller;
use axum::http::StatusCode;
use std::path::Path;
use std::path::PathBuf;
use wright_session::database::Store;

/// The one answer to a user's workspace that is not under their roots, whatever the
/// reason.
fn outside(given: &str) -> ApiError {
    ApiError::bad_request(format!(
        "the workspace must be a directory under one of your roots (wright user show): {given}"
    ))
}

/// The canonical path of `given` when it is a directory under one of `roots`.
pub fn under_roots(given: &str, roots: &[String]) -> Option<PathBuf> {
    let path = Path::new(given);
    if !path.is_absolute() {
        return None;
    }
    let canonical = std::fs::canonicalize(path).ok()?;
    let inside = roots
        .iter()
        .any(|root| canonical.starts_with(Path::new(root)));
    (inside && canonical.is_dir() && canonical.to_str().is_some()).then_some(canonical)
}

/// The workspace a user's request names, as the canonical path to run on.
pub async fn workspace_of(
    state: &AppState,
    caller: &Caller,
    given: &str,
) -> Result<String, ApiError> {
    let store = state.runs.store().ok_or_else(|| outside(given))?;
    let roots = store
        .roots(caller.0.id)
        .await
        .map_err(|err| ApiError::internal(&err.into()))?;
    let given_owned = given.to_string();
    let found = tokio::task::spawn_blocking(move || under_roots(&given_owned, &roots))
        .await
        .map_err(|err| ApiError::internal(&err.into()))?;
    found
        .and_then(|path| path.to_str().map(str::to_string))
        .ok_or_else(|| outside(given))
}

/// Checked again as user `user`'s run starts on `workspace` (canonical when accepted):
/// still a root of theirs, still the same path once resolved.
pub async fn recheck(store: &Store, user: i64, workspace: &str) -> anyhow::Result<()> {
    let roots = store.roots(user).await?;
    match under_roots(workspace, &roots) {
        Some(path) if path == Path::new(workspace) => Ok(()),
        _ => anyhow::bail!(
            "the workspace is no longer a directory under one of the user's roots: {workspace}"
        ),
    }
}

/// A user's run refused for their limit.
#[derive(Debug, thiserror::Error)]
#[error("your limit of {limit} conversation{} running at once is reached ({running} running): wait for one to end, or ask the admin to raise it (wright user limit)", if *limit == 1 { "" } else { "s" })]
pub struct QuotaFull {
    pub limit: i32,
    pub running: i64,
}

impl From<&QuotaFull> for ApiError {
    fn from(full: &QuotaFull) -> Self {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "quota_exceeded",
            full.to_string(),
        )
    }
}

/// Refuses at once a user's request to run (`id`: the conversation, when it exists) while
/// their limit is reached; the admin has none.
pub async fn may_run(state: &AppState, caller: Option<&Caller>, id: &str) -> Result<(), ApiError> {
    let (Some(caller), Some(store)) = (caller, state.runs.store()) else {
        return Ok(());
    };
    match store.has_room(caller.0.id, id).await {
        Ok(None) => Ok(()),
        Ok(Some((limit, running))) => Err(ApiError::from(&QuotaFull { limit, running })),
        Err(err) => Err(ApiError::internal(&err.into())),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn links_and_dots_do_not_lead_out_of_a_root() {
        let dir = std::env::temp_dir().join(format!("wright-roots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let base = std::fs::canonicalize(&dir).unwrap();
        let root = base.join("root");
        let project = root.join("project");
        let elsewhere = base.join("elsewhere");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("link")).unwrap();
        std::os::unix::fs::symlink(&project, base.join("into")).unwrap();
        let roots = vec![root.to_str().unwrap().to_string()];
        let text = |path: &Path| path.to_str().unwrap().to_string();
        assert_eq!(under_roots(&text(&project), &roots), Some(project.clone()));
        assert_eq!(under_roots(&text(&root), &roots), Some(root.clone()));
        // A link out, `..` out, a sibling whose name begins as the root's, a file.
        assert_eq!(under_roots(&text(&root.join("link")), &roots), None);
        assert_eq!(under_roots(&text(&root.join("../elsewhere")), &roots), None);
        std::fs::create_dir_all(base.join("rootless")).unwrap();
        assert_eq!(under_roots(&text(&base.join("rootless")), &roots), None);
        std::fs::write(project.join("file"), "x").unwrap();
        assert_eq!(under_roots(&text(&project.join("file")), &roots), None);
        assert_eq!(under_roots(&text(&root.join("missing")), &roots), None);
        assert_eq!(under_roots("root/project", &roots), None);
        // A link from outside into a root is taken as where it leads.
        assert_eq!(
            under_roots(&text(&base.join("into")), &roots),
            Some(project)
        );
        // `..` that stays inside is fine.
        assert!(under_roots(&text(&root.join("project/../project")), &roots).is_some());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
