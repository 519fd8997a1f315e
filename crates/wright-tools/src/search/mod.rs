//! `grep` and `glob`: searching the workspace from wright's own process, read-only and
//! beneath the workspace's descriptor (see `walk`), so they see exactly the tree the
//! sandboxed shell works in — the same directory, bind-mounted at the same path under
//! Docker — and nothing outside it.

mod glob;
mod grep;
mod walk;

pub use glob::GlobTool;
pub use grep::GrepTool;

use crate::ToolError;
use globset::GlobBuilder;
use globset::GlobMatcher;
use std::path::Path;

/// Characters of results shown at most (on a window of 32k tokens or more).
const MAX_SHOWN: usize = 8000;
/// Characters shown however small the window.
const MIN_SHOWN: usize = 500;

/// Characters of results shown on a context window of `tokens`: about a tenth of it, as
/// for a command's output.
fn shown_chars(tokens: u64) -> usize {
    usize::try_from(tokens / 4)
        .unwrap_or(usize::MAX)
        .clamp(MIN_SHOWN, MAX_SHOWN)
}

/// A file pattern as models write them: one without `/` matches a file's name at any
/// depth (`*.py`), one with `/` its path from where the search starts (`src/**/*.rs`).
struct FilePattern {
    matcher: GlobMatcher,
    by_name: bool,
}

impl FilePattern {
    fn new(pattern: &str, key: &str) -> Result<Self, ToolError> {
        let trimmed = pattern.trim().trim_start_matches("./");
        if trimmed.is_empty() {
            return Err(ToolError::Model(format!("parameter '{key}' is empty")));
        }
        let matcher = GlobBuilder::new(trimmed)
            .literal_separator(true)
            .build()
            .map_err(|err| {
                ToolError::Model(format!(
                    "parameter '{key}' is not a valid glob ({err}); write it like *.py or src/**/*.rs"
                ))
            })?
            .compile_matcher();
        Ok(Self {
            matcher,
            by_name: !trimmed.contains('/'),
        })
    }

    /// Whether the file at `path` (relative to where the search starts) matches.
    fn matches(&self, path: &Path) -> bool {
        match self.by_name {
            true => path
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name)),
            false => self.matcher.is_match(path),
        }
    }
}

/// `path` relative to the search's starting directory (`.` for the workspace root).
fn below<'a>(path: &'a Path, start: &Path) -> &'a Path {
    path.strip_prefix(start).unwrap_or(path)
}

/// What the walk's end adds to a result, if anything.
fn walk_note(ended: walk::Ended) -> Option<String> {
    match ended {
        walk::Ended::TooMany => Some(format!(
            "[stopped after {} files; give a narrower path or glob]",
            walk::MAX_FILES
        )),
        walk::Ended::Complete | walk::Ended::Stopped => None,
    }
}

#[cfg(test)]
mod tests;
