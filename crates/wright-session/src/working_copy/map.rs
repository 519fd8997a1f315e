//! The workspace map of a new conversation, made before the agent's first step: from the
//! user's own repository at the commit the agent starts from (its object store, never
//! the agent's clone or a work tree), or from a plain directory walked without following
//! links. See `wright_strategies::map`. Also what the start commit itself changed, shown after
//! a failing first look (see `wright_strategies::map::render_last_change`).

use super::WorkingCopy;
use std::path::Path;
use wright_strategies::map::MapInput;

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
            WorkingCopy::InPlace(in_place) => wright_strategies::map::from_git(
                &in_place.repo,
                &in_place.base,
                &sub(&in_place.workspace, in_place.repo.top()),
            ),
            WorkingCopy::Clone(clone) => wright_strategies::map::from_git(
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
