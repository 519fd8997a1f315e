//! The `file_editor` tool: view, create, str_replace, insert, undo_edit — on files inside
//! the workspace only. It runs in wright's own process, so it enforces the workspace rule
//! itself (`Workspace::resolve`: `..` and symlinks resolved before the check).

mod content;
mod edit;
mod view;

use crate::args;
use crate::Tool;
use crate::ToolError;
use crate::ToolOutput;
use crate::Workspace;
use content::TextFile;
use serde_json::json;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;
use tokio::sync::Mutex;

/// Earlier versions kept per file for `undo_edit`.
const UNDO_DEPTH: usize = 10;

pub struct FileEditorTool {
    workspace: Workspace,
    /// Previous contents per file, newest last; `None` means the file did not exist.
    history: Mutex<HashMap<PathBuf, Vec<Option<Vec<u8>>>>>,
}

impl FileEditorTool {
    pub fn new(workspace: Workspace) -> Self {
        Self {
            workspace,
            history: Mutex::new(HashMap::new()),
        }
    }

    async fn remember(&self, path: &Path) {
        let previous = std::fs::read(path).ok();
        let mut history = self.history.lock().await;
        let versions = history.entry(path.to_path_buf()).or_default();
        versions.push(previous);
        if versions.len() > UNDO_DEPTH {
            versions.remove(0);
        }
    }
}

#[async_trait::async_trait]
impl Tool for FileEditorTool {
    fn name(&self) -> &'static str {
        "file_editor"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["str_replace_editor"]
    }

    fn schema(&self) -> Value {
        json!({"type": "function", "function": {
            "name": "file_editor",
            "description": "View, create and edit files in the workspace. view: numbered lines of a file, or a directory tree. str_replace: old_str must match exactly once (copy it with its indentation). insert: new_str after line insert_line (0 = top). undo_edit: revert the last edit of path.",
            "parameters": {"type": "object", "properties": {
                "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "undo_edit"]},
                "path": {"type": "string", "description": "File or directory, relative to the workspace or absolute."},
                "file_text": {"type": "string", "description": "create: the file's content."},
                "old_str": {"type": "string", "description": "str_replace: exact text to replace."},
                "new_str": {"type": "string", "description": "str_replace / insert: the new text."},
                "insert_line": {"type": "integer", "description": "insert: line number to insert after."},
                "view_range": {"type": "array", "items": {"type": "integer"}, "description": "view: [start, end] lines, end -1 for the last."}
            }, "required": ["command", "path"]}
        }})
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        let command = args::required_str(arguments, "command")?;
        let raw_path = args::required_str(arguments, "path")?;
        let path = self.workspace.resolve(raw_path)?;
        let shown = self.workspace.display(&path);
        let text = match command {
            "view" => {
                if path.is_dir() {
                    view::view_dir(&path, &shown)?
                } else {
                    let range = args::optional_int_list(arguments, "view_range")?;
                    view::view_file(&path, &shown, range)?
                }
            }
            "create" => {
                let file_text = args::required_str(arguments, "file_text")?;
                if path.exists() {
                    return Err(ToolError::Model(format!(
                        "{shown} already exists; edit it with str_replace or insert instead of create"
                    )));
                }
                self.remember(&path).await;
                content::write_text(&path, &shown, file_text)?;
                format!("Created {shown} ({} lines).", file_text.lines().count())
            }
            "str_replace" => {
                let old = args::required_str(arguments, "old_str")?;
                let new = args::optional_str(arguments, "new_str")?.unwrap_or("");
                let mut file = self.load_for_edit(&path, &shown)?;
                // Models copy text as they saw it: LF, even when the file has CRLF.
                let (old, new) = (old.replace("\r\n", "\n"), new.replace("\r\n", "\n"));
                let edited = edit::str_replace(&file.text, &old, &new, &shown)?;
                self.remember(&path).await;
                file.text = edited.text;
                file.save(&path, &shown)?;
                edited_report(&shown, &file.text, edited.first_line, edited.last_line)
            }
            "insert" => {
                let after = args::optional_int(arguments, "insert_line")?.ok_or_else(|| {
                    ToolError::Model("missing required parameter 'insert_line'".into())
                })?;
                let new = args::required_str(arguments, "new_str")?.replace("\r\n", "\n");
                let mut file = self.load_for_edit(&path, &shown)?;
                let edited = edit::insert(&file.text, after, &new, &shown)?;
                self.remember(&path).await;
                file.text = edited.text;
                file.save(&path, &shown)?;
                edited_report(&shown, &file.text, edited.first_line, edited.last_line)
            }
            "undo_edit" => self.undo(&path, &shown).await?,
            other => {
                return Err(ToolError::Model(format!(
                    "unknown command '{other}'; use view, create, str_replace, insert or undo_edit"
                )))
            }
        };
        Ok(ToolOutput::text(text))
    }
}

impl FileEditorTool {
    fn load_for_edit(&self, path: &Path, shown: &str) -> Result<TextFile, ToolError> {
        if path.is_dir() {
            return Err(ToolError::Model(format!(
                "{shown} is a directory, not a file"
            )));
        }
        TextFile::load(path, shown)
    }

    async fn undo(&self, path: &Path, shown: &str) -> Result<String, ToolError> {
        let previous = {
            let mut history = self.history.lock().await;
            history.get_mut(path).and_then(Vec::pop)
        };
        match previous {
            None => Err(ToolError::Model(format!(
                "there is no edit of {shown} to undo"
            ))),
            Some(None) => {
                std::fs::remove_file(path)
                    .map_err(|err| ToolError::Model(format!("cannot remove {shown}: {err}")))?;
                Ok(format!("Undid the creation of {shown}; it is removed."))
            }
            Some(Some(bytes)) => {
                std::fs::write(path, &bytes)
                    .map_err(|err| ToolError::Model(format!("cannot write {shown}: {err}")))?;
                Ok(format!("Reverted the last edit of {shown}."))
            }
        }
    }
}

fn edited_report(shown: &str, text: &str, first: usize, last: usize) -> String {
    format!(
        "Edited {shown}. Lines {first}-{last} with context:\n{}",
        edit::snippet(text, first, last)
    )
}
