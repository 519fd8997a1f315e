//! How one of wright's tool calls looks to an editor: its title, its kind (the icon and
//! treatment the editor gives it), the file it touches, and its output as text. All of
//! it is read from the call as the model made it and from what the tool printed —
//! hostile text, so it is only ever shown: outputs go inside a code fence longer than
//! any run of backticks they hold, so no output renders as the editor's markdown.

use agent_client_protocol::v1::schema::ToolKind;
use serde_json::Value;
use std::path::PathBuf;
use wright_protocol::Source;
use wright_tools::ToolName;

/// What an editor is told about a call when it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Described {
    pub(crate) title: String,
    pub(crate) kind: ToolKind,
    /// The file it reads or edits, relative to the workspace.
    pub(crate) file: Option<PathBuf>,
    /// An edit of `file`, whose contents before and after make its diff.
    pub(crate) edits: bool,
}

/// The longest a title is: the first line of a command, say.
const TITLE_CHARS: usize = 120;

pub(crate) fn describe(tool: &str, arguments: &Value, source: Source) -> Described {
    let text = |key: &str| arguments[key].as_str().unwrap_or_default();
    let plain = |title: String, kind: ToolKind| Described {
        title,
        kind,
        file: None,
        edits: false,
    };
    let described = match ToolName::parse(tool) {
        Some(ToolName::Terminal) => plain(clip(text("command")), ToolKind::Execute),
        Some(ToolName::FileEditor) => {
            let path = text("path");
            let (verb, kind, edits) = match text("command") {
                "view" => ("Read", ToolKind::Read, false),
                "create" => ("Create", ToolKind::Edit, true),
                "undo_edit" => ("Undo the last edit of", ToolKind::Edit, true),
                _ => ("Edit", ToolKind::Edit, true),
            };
            Described {
                title: clip(&format!("{verb} {path}")),
                kind,
                file: (!path.is_empty()).then(|| PathBuf::from(path)),
                edits,
            }
        }
        Some(ToolName::Grep) => plain(search("grep", arguments), ToolKind::Search),
        Some(ToolName::Glob) => plain(search("glob", arguments), ToolKind::Search),
        Some(ToolName::TaskTracker) => plain("Update the plan".into(), ToolKind::Think),
        Some(ToolName::Think) => plain("Think".into(), ToolKind::Think),
        Some(ToolName::Finish) => plain("Finish".into(), ToolKind::Other),
        Some(ToolName::Fetch) => plain(clip(&format!("Fetch {}", text("url"))), ToolKind::Fetch),
        Some(ToolName::Browser) => plain(
            clip(format!("Browser {} {}", text("action"), text("url")).trim_end()),
            ToolKind::Fetch,
        ),
        None => plain(clip(tool), ToolKind::Other),
    };
    match source {
        // wright's own call before the first step (the first look), not the model's.
        Source::Environment => Described {
            title: clip(&format!("wright runs the tests first: {}", described.title)),
            ..described
        },
        Source::Agent | Source::User => described,
    }
}

fn search(tool: &str, arguments: &Value) -> String {
    let pattern = arguments["pattern"].as_str().unwrap_or_default();
    match arguments["path"].as_str() {
        Some(path) => clip(&format!("{tool} {pattern} in {path}")),
        None => clip(&format!("{tool} {pattern}")),
    }
}

/// The first line of `text`, at most `TITLE_CHARS` characters.
fn clip(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut title: String = line.chars().take(TITLE_CHARS).collect();
    if title.len() < line.len() || text.lines().nth(1).is_some() {
        title.push('…');
    }
    title
}

/// `text` as a fenced code block the markdown around it cannot be broken out of.
pub(crate) fn fenced(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    format!("{fence}\n{text}{newline}{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn calls_are_titled_by_what_they_do() {
        let got: Vec<(String, ToolKind)> = [
            ("terminal", json!({"command": "python3 -m unittest\necho done"})),
            ("file_editor", json!({"command": "view", "path": "export.py"})),
            (
                "file_editor",
                json!({"command": "str_replace", "path": "export.py", "old_str": "a", "new_str": "b"}),
            ),
            ("grep", json!({"pattern": "row_to_csv", "path": "src"})),
            ("glob", json!({"pattern": "*.py"})),
            ("finish", json!({"message": "done"})),
            ("no_such_tool", json!({})),
        ]
        .iter()
        .map(|(tool, arguments)| {
            let d = describe(tool, arguments, Source::Agent);
            (d.title, d.kind)
        })
        .collect();
        assert_eq!(
            got,
            vec![
                ("python3 -m unittest…".to_string(), ToolKind::Execute),
                ("Read export.py".to_string(), ToolKind::Read),
                ("Edit export.py".to_string(), ToolKind::Edit),
                ("grep row_to_csv in src".to_string(), ToolKind::Search),
                ("glob *.py".to_string(), ToolKind::Search),
                ("Finish".to_string(), ToolKind::Other),
                ("no_such_tool".to_string(), ToolKind::Other),
            ]
        );
        let edit = describe(
            "file_editor",
            &json!({"command": "create", "path": "new.py", "file_text": "x"}),
            Source::Agent,
        );
        assert_eq!(
            (edit.file, edit.edits),
            (Some(PathBuf::from("new.py")), true)
        );
        let first_look = describe(
            "terminal",
            &json!({"command": "make test"}),
            Source::Environment,
        );
        assert_eq!(first_look.title, "wright runs the tests first: make test");
    }

    #[test]
    fn no_output_breaks_out_of_its_fence() {
        assert_eq!(fenced("ok"), "```\nok\n```");
        let hostile = "```\n# not a heading\n````";
        let shown = fenced(hostile);
        assert!(
            shown.starts_with("`````\n") && shown.ends_with("\n`````"),
            "{shown}"
        );
    }
}
