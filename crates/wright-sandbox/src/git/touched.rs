//! Every path a branch changes since its start, for `wright apply`'s guard: what any of
//! its commits touches, merges included (whose own changes `git log --name-only` does not
//! list), and the difference of the two ends. Read with no configured program run (no
//! textconv, no external diff).

use super::GitError;
use super::Oid;
use super::UserRepo;

impl UserRepo {
    /// Every path the branch `tip` changes since `base`: what any of its commits touches
    /// (a cherry-pick checks out each one), what a merge commit changes against any of its
    /// parents (an "evil merge" hides its own changes from a plain `log`), and the
    /// difference of the two ends.
    pub fn paths_touched(&self, base: &Oid, tip: &str) -> Result<Vec<String>, GitError> {
        let range = format!("{base}..{tip}");
        let logged = self.run(&[
            "log",
            "-m",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            "--name-only",
            "-z",
            "--format=",
            &range,
            "--",
        ])?;
        let ends = self.run(&[
            "diff",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            "--name-only",
            "-z",
            base.as_str(),
            tip,
            "--",
        ])?;
        let mut paths: Vec<String> = logged
            .split(['\0', '\n'])
            .chain(ends.split(['\0', '\n']))
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        paths.sort();
        paths.dedup();
        Ok(paths)
    }
}
