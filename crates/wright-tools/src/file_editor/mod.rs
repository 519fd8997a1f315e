//! The `file_editor` tool: view, create, str_replace, insert, undo_edit — on files inside
//! the workspace only. It runs in wright's own process, so it enforces the workspace rule
//! itself: every file is opened beneath the workspace's descriptor (see `files`), so a
//! link that leads out, even one swapped in while the editor works, is refused.

mod content;
mod edit;
mod files;
mod view;

use crate::args;
use crate::Tool;
use crate::ToolError;
use crate::ToolOutput;
use crate::Workspace;
use content::TextFile;
use files::Kind;
use serde_json::json;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use tokio::sync::Mutex;
use wright_protocol::count;

/// Earlier versions kept per file for `undo_edit`.
const UNDO_DEPTH: usize = 10;

pub struct FileEditorTool {
    workspace: Workspace,
    /// Previous contents per file, newest last; `None` means the file did not exist.
    history: Mutex<HashMap<PathBuf, Vec<Option<Vec<u8>>>>>,
    /// Characters of a file `view` shows at most (it shrinks with the context window).
    shown: AtomicUsize,
}

impl FileEditorTool {
    pub fn new(workspace: Workspace) -> Self {
        Self {
            workspace,
            history: Mutex::new(HashMap::new()),
            shown: AtomicUsize::new(view::shown_chars(u64::MAX)),
        }
    }

    /// Keeps the file's contents for `undo_edit` (`None`: it did not exist).
    async fn remember(&self, path: &Path, previous: Option<Vec<u8>>) {
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

    fn command_shapes(&self) -> &'static [crate::CommandShape] {
        const SHAPES: &[crate::CommandShape] = &[
            crate::CommandShape {
                command: "view",
                required: &["path"],
                optional: &["view_range"],
            },
            crate::CommandShape {
                command: "create",
                required: &["path", "file_text"],
                optional: &[],
            },
            crate::CommandShape {
                command: "str_replace",
                required: &["path", "old_str", "new_str"],
                optional: &[],
            },
            crate::CommandShape {
                command: "insert",
                required: &["path", "insert_line", "new_str"],
                optional: &[],
            },
            crate::CommandShape {
                command: "undo_edit",
                required: &["path"],
                optional: &[],
            },
        ];
        SHAPES
    }

    fn fit_window(&self, tokens: u64) {
        self.shown
            .store(view::shown_chars(tokens), Ordering::Relaxed);
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
                "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2, "description": "view: [start, end] lines, end -1 for the last."}
            }, "required": ["command", "path"]}
        }})
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        let command = args::required_str(arguments, "command")?;
        let raw_path = args::required_str(arguments, "path")?;
        let ws = &self.workspace;
        let path = ws.relative(raw_path)?;
        let shown = ws.display(&path);
        let text = match command {
            "view" => match files::kind(ws, &path)? {
                Kind::Dir => {
                    let dir = ws
                        .dir()
                        .open_dir(&path)
                        .map_err(|err| ws.open_error(&path, err))?;
                    view::view_dir(&dir, &shown)?
                }
                Kind::Missing => return Err(ToolError::Model(format!("{shown} does not exist"))),
                Kind::File | Kind::Other => {
                    let range = args::optional_int_list(arguments, "view_range")?;
                    view::view_file(
                        files::open(ws, &path)?,
                        &shown,
                        range,
                        self.shown.load(Ordering::Relaxed),
                    )?
                }
            },
            "create" => {
                let file_text = args::required_str(arguments, "file_text")?;
                if files::kind(ws, &path)? != Kind::Missing {
                    return Err(ToolError::Model(format!(
                        "{shown} already exists; edit it with str_replace or insert instead of create"
                    )));
                }
                files::create(ws, &path, file_text.as_bytes())?;
                self.remember(&path, None).await;
                format!(
                    "Created {shown} ({}).",
                    count(file_text.lines().count() as u64, "line")
                )
            }
            "str_replace" => {
                let old = args::required_str(arguments, "old_str")?;
                // Required, not taken as "": a model that forgets it (the 1.5B did, three
                // times) would delete the text it meant to fix.
                let new = args::optional_str(arguments, "new_str")?.ok_or_else(|| {
                    ToolError::Model(
                        "str_replace needs new_str, the text that replaces old_str (new_str \"\" deletes it); nothing was changed".into(),
                    )
                })?;
                let (before, mut file) = self.load_for_edit(&path, &shown)?;
                // Models copy text as they saw it: LF, even when the file has CRLF.
                let (old, new) = (old.replace("\r\n", "\n"), new.replace("\r\n", "\n"));
                let edited = match edit::str_replace(&file.text, &old, &new, &shown) {
                    Ok(edited) => edited,
                    Err(err) => {
                        return Err(self
                            .made_already(&path, &file.text, &old, &new, &shown)
                            .await
                            .unwrap_or(err))
                    }
                };
                file.text = edited.text;
                files::overwrite(ws, &path, &file.to_bytes())?;
                self.remember(&path, Some(before)).await;
                let report = edited_report(&shown, &file.text, edited.first_line, edited.last_line);
                match edited.note {
                    Some(note) => format!("{report}\n[{note}.]"),
                    None => report,
                }
            }
            "insert" => {
                let after = args::optional_int(arguments, "insert_line")?.ok_or_else(|| {
                    ToolError::Model("missing required parameter 'insert_line'".into())
                })?;
                let new = args::required_str(arguments, "new_str")?.replace("\r\n", "\n");
                let (before, mut file) = self.load_for_edit(&path, &shown)?;
                let edited = edit::insert(&file.text, after, &new, &shown)?;
                file.text = edited.text;
                files::overwrite(ws, &path, &file.to_bytes())?;
                self.remember(&path, Some(before)).await;
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

/// The text of the file a `file_editor` call naming `path` would edit, as an edit reads
/// it (LF line ends); `None` when there is none it could edit. Read beneath the
/// workspace's descriptor, as every edit is.
pub fn editable_text(workspace: &Workspace, path: &str) -> Option<String> {
    let relative = workspace.relative(path).ok()?;
    let shown = workspace.display(&relative);
    let bytes = files::read(workspace, &relative).ok()?;
    TextFile::from_bytes(bytes, &shown)
        .ok()
        .map(|file| file.text)
}

impl FileEditorTool {
    /// The file's bytes (kept for undo) and its text.
    fn load_for_edit(&self, path: &Path, shown: &str) -> Result<(Vec<u8>, TextFile), ToolError> {
        let bytes = files::read(&self.workspace, path)?;
        let file = TextFile::from_bytes(bytes.clone(), shown)?;
        Ok((bytes, file))
    }

    /// The error for a `str_replace` of `old` by `new` whose `old` the last edit of `path`
    /// took away (its text before that edit is kept for undo; `text` is the file now):
    /// either that edit made this same replacement already, or it rewrote the lines `old`
    /// was in. A small model told only "not found" viewed the file and tried the same
    /// edit again until its run was stuck (the 1.5B, after its own edit and after a
    /// version wright put in place, in 6 runs of 9).
    async fn made_already(
        &self,
        path: &Path,
        text: &str,
        old: &str,
        new: &str,
        shown: &str,
    ) -> Option<ToolError> {
        let history = self.history.lock().await;
        let before = history.get(path)?.last()?.as_ref()?;
        let before = TextFile::from_bytes(before.clone(), shown).ok()?;
        let redone = edit::str_replace(&before.text, old, new, shown).ok()?;
        if redone.text == text {
            return Some(ToolError::Model(format!(
                "old_str was not found in {shown} because your last edit of it made this same replacement already (lines {}-{}): it is done, nothing was changed. Do not make it again; run the tests to check it",
                redone.first_line, redone.last_line
            )));
        }
        let (first, last) = edit::changed_lines(&before.text, text)?;
        Some(ToolError::Model(format!(
            "old_str was not found in {shown} because the last edit of it rewrote the lines it was in: nothing was changed. Lines {first}-{last} now read:\n{}",
            edit::snippet_capped(text, first, last)
        )))
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
                files::remove(&self.workspace, path)?;
                Ok(format!("Undid the creation of {shown}; it is removed."))
            }
            Some(Some(bytes)) => {
                files::overwrite(&self.workspace, path, &bytes)?;
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
