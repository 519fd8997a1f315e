//! Arguments a tool does not take are an error that says where they belong, never dropped
//! in silence: a small model told to look at a file may call `terminal` with
//! `{"command": "file_editor", "path": "x.py", "view": true}`, and running that as a shell
//! command helps no one.

use serde_json::Value;
use wright_tools::Tool;
use wright_tools::Toolbox;

/// Parameters every tool tolerates: OpenHands' models state a risk with each call.
const TOLERATED: &[&str] = &["security_risk"];

/// The error for the arguments of `tool` that it has no parameter for, naming the tool
/// each belongs to when another has it (as a parameter, or as a value of its
/// `command`), or for a shell command that is another tool's name; `None` when every
/// argument is the tool's.
pub fn foreign_arguments(tools: &Toolbox, tool: &dyn Tool, arguments: &Value) -> Option<String> {
    let schema = tool.schema();
    let own = parameters(&schema);
    let Value::Object(given) = arguments else {
        return None;
    };
    let unknown: Vec<&String> = given
        .keys()
        .filter(|key| !own.contains(&key.as_str()) && !TOLERATED.contains(&key.as_str()))
        .collect();
    if unknown.is_empty() {
        return tool_as_command(tools, tool, &schema, given);
    }
    let names: Vec<String> = unknown.iter().map(|k| format!("`{k}`")).collect();
    let mut message = format!(
        "{} has no parameter {}; its parameters are {}.",
        tool.name(),
        names.join(", "),
        own.iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for other in tools.tools().filter(|t| t.name() != tool.name()) {
        let schema = other.schema();
        let theirs = parameters(&schema);
        let commands = commands(&schema);
        let as_parameter: Vec<String> = unknown
            .iter()
            .filter(|k| theirs.contains(&k.as_str()))
            .map(|k| format!("`{k}`"))
            .collect();
        let as_command: Vec<&str> = unknown
            .iter()
            .filter(|k| commands.contains(&k.as_str()))
            .map(|k| k.as_str())
            .collect();
        if as_parameter.is_empty() && as_command.is_empty() {
            continue;
        }
        let mut call = format!("call {}", other.name());
        if let Some(command) = as_command.first() {
            call.push_str(&format!(" with command={command}"));
        }
        let whose = match (as_parameter.is_empty(), as_command.is_empty()) {
            (false, _) => format!(
                " {} {} {}'s:",
                as_parameter.join(", "),
                if as_parameter.len() == 1 { "is" } else { "are" },
                other.name()
            ),
            (true, false) => format!(
                " `{}` is a command of {}:",
                as_command.join("`, `"),
                other.name()
            ),
            (true, true) => String::new(),
        };
        message.push_str(&format!("{whose} {call}."));
    }
    Some(message)
}

/// The error for a shell command that is another tool's name (`file_editor(view,
/// path: 'a.py')`, `finish done`): a small model writes tools as commands, and the
/// shell's "syntax error" or "command not found" does not tell it what to do instead.
/// Only for a tool whose `command` is free text (the shell), never for one that lists
/// its commands; and only for a name written as a call (`grep(…)`) or one no program
/// has (`file_editor`), since `grep -n x a.py` is the shell's own grep.
fn tool_as_command(
    tools: &Toolbox,
    tool: &dyn Tool,
    schema: &Value,
    given: &serde_json::Map<String, Value>,
) -> Option<String> {
    let free_text = schema["function"]["parameters"]["properties"]["command"]["type"] == "string"
        && commands(schema).is_empty();
    if !free_text {
        return None;
    }
    let command = given.get("command")?.as_str()?.trim_start();
    let first = command
        .split(|c: char| c.is_whitespace() || c == '(' || c == ':')
        .next()?;
    let other = tools
        .tools()
        .find(|t| t.name() != tool.name() && t.name() == first)?;
    // `grep -c x f` is the shell's grep: only a call written like a function, or a
    // name no program has (`file_editor`), is the tool.
    let called = command[first.len()..].trim_start().starts_with('(');
    if !called && !first.contains('_') {
        return None;
    }
    let other_schema = other.schema();
    let mentioned = commands(&other_schema)
        .into_iter()
        .find(|c| command.contains(c));
    // What the command named needs (`str_replace`: path, old_str, new_str), in writing
    // order; else what the tool requires.
    let needed: Vec<&str> = match other
        .command_shapes()
        .iter()
        .find(|shape| Some(shape.command) == mentioned)
    {
        Some(shape) => shape.required.to_vec(),
        None => required(&other_schema)
            .into_iter()
            .filter(|p| *p != "command")
            .collect(),
    };
    // Written by hand, not by serde_json: the name before the arguments, the command
    // first, as the prompt shows calls.
    let command = parameters(&other_schema)
        .contains(&"command")
        .then(|| format!("\"command\": \"{}\"", mentioned.unwrap_or("…")));
    let example: Vec<String> = command
        .into_iter()
        .chain(needed.iter().map(|p| format!("\"{p}\": \"…\"")))
        .collect();
    let example = format!(
        "{{\"name\": \"{}\", \"arguments\": {{{}}}}}",
        other.name(),
        example.join(", ")
    );
    Some(format!(
        "`{first}` is a tool, not a shell command: nothing was run. Call it as its own tool call, not through {}: {example} (its parameters: {}).",
        tool.name(),
        parameters(&other_schema)
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// The names of a tool's required parameters.
fn required(schema: &Value) -> Vec<&str> {
    schema["function"]["parameters"]["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The names of a tool's parameters, from its schema.
fn parameters(schema: &Value) -> Vec<&str> {
    schema["function"]["parameters"]["properties"]
        .as_object()
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// The values its `command` parameter takes, when it lists them.
fn commands(schema: &Value) -> Vec<&str> {
    schema["function"]["parameters"]["properties"]["command"]["enum"]
        .as_array()
        .map(|values| values.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;
    use wright_tools::ToolError;
    use wright_tools::ToolOutput;

    struct Fake(&'static str, Value);

    #[async_trait::async_trait]
    impl Tool for Fake {
        fn name(&self) -> &'static str {
            self.0
        }
        fn schema(&self) -> Value {
            json!({"type": "function", "function": {"name": self.0, "parameters": self.1}})
        }
        async fn run(&self, _: &Value) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::default())
        }
    }

    fn toolbox() -> Toolbox {
        Toolbox::new(vec![
            Arc::new(Fake(
                "terminal",
                json!({"type": "object", "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}}}),
            )),
            Arc::new(Fake(
                "file_editor",
                json!({"type": "object", "properties": {
                    "command": {"type": "string", "enum": ["view", "create"]},
                    "path": {"type": "string"}
                }, "required": ["command", "path"]}),
            )),
        ])
    }

    #[test]
    fn arguments_of_another_tool_name_it() {
        let tools = toolbox();
        let terminal = tools.get("terminal").unwrap().clone();
        let said = foreign_arguments(
            &tools,
            terminal.as_ref(),
            &json!({"command": "file_editor", "path": "export.py", "view": true}),
        )
        .unwrap();
        assert_eq!(
            said,
            "terminal has no parameter `path`, `view`; its parameters are `command`, `timeout`. `path` is file_editor's: call file_editor with command=view."
        );
        let said = foreign_arguments(
            &tools,
            terminal.as_ref(),
            &json!({"command": "ls", "colour": "red"}),
        )
        .unwrap();
        assert_eq!(
            said,
            "terminal has no parameter `colour`; its parameters are `command`, `timeout`."
        );
    }

    #[test]
    fn a_tool_written_as_a_shell_command_is_named() {
        let tools = toolbox();
        let terminal = tools.get("terminal").unwrap().clone();
        let said = foreign_arguments(
            &tools,
            terminal.as_ref(),
            &json!({"command": "file_editor(create, path: 'a.py', file_text: 'x')"}),
        )
        .unwrap();
        assert_eq!(
            said,
            "`file_editor` is a tool, not a shell command: nothing was run. Call it as its own tool call, not through terminal: {\"name\": \"file_editor\", \"arguments\": {\"command\": \"create\", \"path\": \"…\"}} (its parameters: `command`, `path`)."
        );
        // A program that shares a tool's name is the shell's, unless written as a call.
        let tools = Toolbox::new(vec![
            tools.get("terminal").unwrap().clone(),
            tools.get("file_editor").unwrap().clone(),
            Arc::new(Fake(
                "grep",
                json!({"type": "object", "properties": {"pattern": {"type": "string"}}}),
            )),
        ]);
        assert_eq!(
            foreign_arguments(
                &tools,
                terminal.as_ref(),
                &json!({"command": "grep -n x a.py"})
            ),
            None
        );
        assert!(foreign_arguments(
            &tools,
            terminal.as_ref(),
            &json!({"command": "grep(pattern: 'x')"})
        )
        .unwrap()
        .starts_with("`grep` is a tool"));
        // A command that only starts like a tool's name is the shell's.
        assert_eq!(
            foreign_arguments(
                &tools,
                terminal.as_ref(),
                &json!({"command": "file_editors -v"})
            ),
            None
        );
        // A tool that lists its commands is never read this way.
        let editor = tools.get("file_editor").unwrap().clone();
        assert_eq!(
            foreign_arguments(
                &tools,
                editor.as_ref(),
                &json!({"command": "view", "path": "terminal"})
            ),
            None
        );
    }

    #[test]
    fn own_and_tolerated_arguments_pass() {
        let tools = toolbox();
        let editor = tools.get("file_editor").unwrap().clone();
        assert_eq!(
            foreign_arguments(
                &tools,
                editor.as_ref(),
                &json!({"command": "view", "path": "a", "security_risk": "LOW"})
            ),
            None
        );
    }
}
