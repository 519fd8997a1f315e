//! A shell command that is only another tool's look at a file, run as that look. Told to
//! read a file, a small model writes `terminal` `{"command": "file_editor test_export.py"}`
//! and, told that `file_editor` is a tool and not a command, writes it again (the 1.5B did
//! six times in one run). There is one reading of `file_editor PATH` or
//! `file_editor view PATH [LINE]`, and it only reads: it runs as `file_editor` `view`, said in the
//! result so the model learns the right call. So does `finish [WORDS]`, the end of the
//! task written as a command (the 1.5B ran `finish` in the shell five times, each time
//! "command not found", with the fix in place): it is the `finish` call, checked as any.
//! Anything else stays an error (see `arguments`).

use serde_json::json;
use serde_json::Value;
use wright_core::strategy::Rerouted;
use wright_tools::Toolbox;

/// `tool`'s call with `arguments` as another tool's read-only call, when it is one
/// written as a command line (see the module).
pub fn reroute(tools: &Toolbox, tool: &str, arguments: &Value) -> Option<Rerouted> {
    if tool != "terminal" {
        return None;
    }
    let command = arguments.get("command")?.as_str()?;
    // Words apart by spaces or commas: the 1.5B wrote `file_editor view,export.py`
    // four times in a row, told each time how to call the tool.
    let words: Vec<&str> = command
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|word| !word.is_empty())
        .collect();
    if words.first() == Some(&"finish") {
        return finish_written_as_a_command(tools, command);
    }
    let number = |word: &str| word.parse::<u32>().is_ok();
    // A line number after the path (`file_editor view export.py 6`, `… at line 6`)
    // asks for no more than the file: it is shown whole, the line among the rest.
    let path = match words.as_slice() {
        [editor, path] | [editor, "view", path] if is_editor(editor) => *path,
        [editor, "view", path, line] if is_editor(editor) && number(line) => *path,
        [editor, "view", path, "line", line] if is_editor(editor) && number(line) => *path,
        [editor, "view", path, "at" | "around", "line", line]
            if is_editor(editor) && number(line) =>
        {
            *path
        }
        _ => return None,
    };
    let plain = |c: char| c.is_alphanumeric() || "._-/+@".contains(c);
    if path.starts_with('-') || !path.chars().all(plain) {
        return None;
    }
    let editor = tools.get("file_editor")?.clone();
    let arguments = json!({"command": "view", "path": path});
    Some(Rerouted {
        tool: editor,
        note: format!(
            "[`file_editor` is a tool, not a shell command: this ran as the call {{\"name\": \"file_editor\", \"arguments\": {arguments}}}. Call it that way next time.]"
        ),
        arguments,
    })
}

/// `finish WORDS` as the `finish` call with WORDS (quotes taken off) as its message;
/// `None` when the words hold anything a shell would read otherwise.
fn finish_written_as_a_command(tools: &Toolbox, command: &str) -> Option<Rerouted> {
    let rest = command.trim().strip_prefix("finish")?;
    if rest.contains(|c: char| ";|&$`<>(){}\\\n".contains(c)) {
        return None;
    }
    let said = rest.trim().trim_matches(|c| c == '"' || c == '\'').trim();
    let message = if said.is_empty() { "Done." } else { said };
    let finish = tools.get("finish")?.clone();
    let arguments = json!({ "message": message });
    Some(Rerouted {
        tool: finish,
        note: format!(
            "[`finish` is a tool, not a shell command: this ran as the call {{\"name\": \"finish\", \"arguments\": {arguments}}}. Call it that way next time.]"
        ),
        arguments,
    })
}

fn is_editor(word: &str) -> bool {
    matches!(word, "file_editor" | "str_replace_editor")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use wright_tools::Tool;
    use wright_tools::ToolOutput;

    struct Editor;

    #[async_trait::async_trait]
    impl Tool for Editor {
        fn name(&self) -> &'static str {
            "file_editor"
        }
        fn schema(&self) -> Value {
            json!({})
        }
        async fn run(&self, _: &Value) -> Result<ToolOutput, wright_tools::ToolError> {
            Ok(ToolOutput::default())
        }
    }

    #[test]
    fn only_a_look_at_one_file_is_rerouted() {
        let toolbox = Toolbox::new(vec![Arc::new(Editor)]);
        for command in [
            "file_editor export.py",
            "file_editor view src/export.py",
            "file_editor view export.py 6",
            "file_editor view,export.py",
            "file_editor view export.py around line 6",
        ] {
            let rerouted = reroute(&toolbox, "terminal", &json!({ "command": command })).unwrap();
            assert_eq!(rerouted.tool.name(), "file_editor");
            assert_eq!(rerouted.arguments["command"], "view");
            assert!(
                rerouted.note.contains("Call it that way"),
                "{}",
                rerouted.note
            );
        }
        for command in [
            "file_editor",
            "file_editor create x.py",
            "file_editor x.py; rm -rf /",
            "file_editor $(cat x)",
            "file_editor -h",
            "file_editor view export.py six",
            "file_editor view export.py around line six",
            "file_editor view,export.py,test.py",
            "cat export.py",
        ] {
            assert!(
                reroute(&toolbox, "terminal", &json!({ "command": command })).is_none(),
                "{command}"
            );
        }
        assert!(reroute(&toolbox, "grep", &json!({"command": "file_editor x.py"})).is_none());
    }

    struct Finish;

    #[async_trait::async_trait]
    impl Tool for Finish {
        fn name(&self) -> &'static str {
            "finish"
        }
        fn schema(&self) -> Value {
            json!({})
        }
        async fn run(&self, _: &Value) -> Result<ToolOutput, wright_tools::ToolError> {
            Ok(ToolOutput::default())
        }
    }

    #[test]
    fn finish_written_as_a_command_is_the_finish_call() {
        let toolbox = Toolbox::new(vec![Arc::new(Editor), Arc::new(Finish)]);
        for (command, message) in [
            ("finish", "Done."),
            ("  finish  ", "Done."),
            (
                "finish \"Fixed the slice in export.py.\"",
                "Fixed the slice in export.py.",
            ),
            ("finish 'tests pass'", "tests pass"),
        ] {
            let rerouted = reroute(&toolbox, "terminal", &json!({ "command": command })).unwrap();
            assert_eq!(rerouted.tool.name(), "finish");
            assert_eq!(rerouted.arguments, json!({ "message": message }));
            assert!(rerouted.note.starts_with("[`finish` is a tool, not a shell command: this ran as the call {\"name\": \"finish\""), "{}", rerouted.note);
        }
        for command in [
            "finish; rm -rf x",
            "finish $(id)",
            "finish > out",
            "finished",
            "./finish",
        ] {
            assert!(
                reroute(&toolbox, "terminal", &json!({ "command": command })).is_none(),
                "{command}"
            );
        }
        // No finish tool in the set: nothing to reroute to.
        let editor_only = Toolbox::new(vec![Arc::new(Editor)]);
        assert!(reroute(&editor_only, "terminal", &json!({"command": "finish"})).is_none());
    }
}
