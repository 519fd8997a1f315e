//! The workspace map of a new conversation, made before the agent's first step: from the
//! user's own repository at the commit the agent starts from (its object store, never
//! the agent's clone or a work tree), or from a plain directory walked without following
//! links. See `wright_strategies::map`. Also what the start commit itself changed, shown after
//! a failing first look (see `wright_strategies::map::render_last_change`).

use super::WorkingCopy;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Mutex;
use wright_sandbox::git::Oid;
use wright_sandbox::git::UserRepo;
use wright_strategies::map::MapInput;

/// The last map input read from a commit, by repository, commit and directory: a run asks
/// for it twice before its first request (the map, then the first look's command), and
/// what a commit holds never changes, so the second ask reads no git.
type Remembered = ((PathBuf, Oid, String), MapInput);
static LAST_READ: Mutex<Option<Remembered>> = Mutex::new(None);

/// `from_git`, remembered for the next ask about the same commit.
fn from_commit(repo: &UserRepo, commit: &Oid, sub: &str) -> MapInput {
    let key = (repo.top().to_path_buf(), commit.clone(), sub.to_string());
    let remembered = |slot: &Option<Remembered>| {
        slot.as_ref()
            .filter(|(known, _)| *known == key)
            .map(|(_, input)| input.clone())
    };
    // A plain value: a panic elsewhere cannot leave it half-written.
    let lock = || LAST_READ.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(input) = remembered(&lock()) {
        return input;
    }
    let input = wright_strategies::map::from_git(repo, commit, sub);
    *lock() = Some((key, input.clone()));
    input
}

impl WorkingCopy {
    /// What the map of this working copy is made from, as it is at the start.
    pub fn map_input(&self, workspace: &wright_tools::Workspace) -> MapInput {
        let sub = |inner: &Path, top: &Path| {
            inner
                .strip_prefix(top)
                .unwrap_or(Path::new(""))
                .to_string_lossy()
                .into_owned()
        };
        match self {
            WorkingCopy::Direct { .. } => wright_strategies::map::from_directory(workspace),
            WorkingCopy::InPlace(in_place) => from_commit(
                &in_place.repo,
                &in_place.base,
                &sub(&in_place.workspace, in_place.repo.top()),
            ),
            WorkingCopy::Clone(clone) => from_commit(
                &clone.repo,
                &clone.base,
                &sub(&clone.workspace, &clone.clone_root),
            ),
        }
    }

    /// The map's text, when the settings want one and there is something to show.
    pub fn workspace_map(
        &self,
        wanted: bool,
        workspace: &wright_tools::Workspace,
    ) -> Option<String> {
        if !wanted {
            return None;
        }
        let input = self.map_input(workspace);
        (!input.files.is_empty()).then(|| wright_strategies::map::render(&input).text)
    }

    /// What the start commit changed, as shown after a failing first look: read from the
    /// user's own repository (never the agent's clone); `None` outside git, for a first
    /// commit, or when it cannot be read (a help, not a condition of the run).
    pub fn last_change(&self) -> Option<String> {
        let (repo, base, inner, top) = match self {
            WorkingCopy::Direct { .. } => return None,
            WorkingCopy::InPlace(in_place) => (
                &in_place.repo,
                &in_place.base,
                &in_place.workspace,
                in_place.repo.top(),
            ),
            WorkingCopy::Clone(clone) => (
                &clone.repo,
                &clone.base,
                &clone.workspace,
                clone.clone_root.as_path(),
            ),
        };
        let sub = inner
            .strip_prefix(top)
            .unwrap_or(Path::new(""))
            .to_string_lossy()
            .into_owned();
        let sub = if sub.is_empty() {
            sub
        } else {
            format!("{sub}/")
        };
        let change = repo
            .last_change(base, &sub, wright_strategies::map::MAX_DIFF_BYTES)
            .ok()??;
        Some(wright_strategies::map::render_last_change(&change))
    }
}
