//! `glob`: the workspace's files whose names match a pattern, newest first, gitignored
//! files and links left out, as many as fit a share of the context window and a count of
//! the rest.

use super::walk;
use super::FilePattern;
use crate::args;
use crate::Tool;
use crate::ToolError;
use crate::ToolOutput;
use crate::Workspace;
use serde_json::json;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::time::SystemTime;
use wright_protocol::count;

pub struct GlobTool {
    workspace: Workspace,
    /// Characters of results shown at most (it shrinks with the context window).
    shown: AtomicUsize,
}

impl GlobTool {
    pub fn new(workspace: Workspace) -> Self {
        Self {
            workspace,
            shown: AtomicUsize::new(super::shown_chars(u64::MAX)),
        }
    }
}

#[async_trait::async_trait]
impl Tool for GlobTool {
    fn name(&self) -> &'static str {
        "glob"
    }

    fn fit_window(&self, tokens: u64) {
        self.shown
            .store(super::shown_chars(tokens), Ordering::Relaxed);
    }

    fn schema(&self) -> Value {
        json!({"type": "function", "function": {
            "name": "glob",
            "description": "Find files by name, newest first (gitignored files skipped).",
            "parameters": {"type": "object", "properties": {
                "pattern": {"type": "string", "description": "e.g. *.py or src/**/test_*.rs"},
                "path": {"type": "string", "description": "Directory to search (default: the workspace)."}
            }, "required": ["pattern"]}
        }})
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        let pattern = args::required_str(arguments, "pattern")?.to_string();
        let path = args::optional_str(arguments, "path")?.map(str::to_string);
        let workspace = self.workspace.clone();
        let budget = self.shown.load(Ordering::Relaxed);
        // The walk blocks: off the runtime's threads, so calls run side by side.
        tokio::task::spawn_blocking(move || find(&workspace, &pattern, path.as_deref(), budget))
            .await
            .map_err(|err| ToolError::Fatal(format!("glob stopped: {err}")))?
            .map(ToolOutput::text)
    }
}

/// The matching files as the model reads them.
fn find(
    workspace: &Workspace,
    pattern: &str,
    path: Option<&str>,
    budget: usize,
) -> Result<String, ToolError> {
    let pattern = pattern
        .strip_prefix(&format!("{}/", workspace.root().display()))
        .unwrap_or(pattern);
    let matcher = FilePattern::new(pattern, "pattern")?;
    let start = match walk::start(workspace, path)? {
        walk::Start::Dir(dir) => dir,
        walk::Start::File(file) => {
            return Err(ToolError::Model(format!(
                "{} is a file; give glob a directory as path",
                workspace.display(&file)
            )))
        }
    };
    let mut found: Vec<(SystemTime, PathBuf)> = Vec::new();
    let ended = walk::walk(workspace, &start, |file| {
        if matcher.matches(super::below(file.path, &start)) {
            found.push((file.modified, file.path.to_path_buf()));
        }
        walk::Visit::Continue
    })?;
    let place = workspace.display(&start);
    if found.is_empty() {
        let mut text = format!(
            "No files match {pattern} in {place} (gitignored files and links are skipped)."
        );
        if let Some(note) = super::walk_note(ended) {
            text.push_str(&format!("\n{note}"));
        }
        return Ok(text);
    }
    // Newest first; equal times by name, so the answer does not depend on the walk.
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = found.len();
    let mut text = String::new();
    let mut shown = 0;
    for (_, file) in &found {
        let line = workspace.display(file);
        if shown > 0 && text.len() + line.len() + 1 > budget {
            break;
        }
        text.push_str(&line);
        text.push('\n');
        shown += 1;
    }
    if shown < total {
        text.push_str(&format!(
            "[{} not shown ({total} match); give a narrower pattern or path]\n",
            count((total - shown) as u64, "more file")
        ));
    }
    if let Some(note) = super::walk_note(ended) {
        text.push_str(&format!("{note}\n"));
    }
    Ok(text.trim_end().to_string())
}
