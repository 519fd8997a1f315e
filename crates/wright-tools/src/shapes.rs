//! The shapes a call may take, for a constrained reply: a tool with several commands
//! (`file_editor`'s view, create, str_replace…) gets one shape per command, each
//! requiring what that command needs in the order a model should write it (`command`,
//! `path`, `old_str`, `new_str`), so a sampler held to the schema cannot leave out
//! `new_str` — which the 1.5B did, three times in one run. Tools with one form keep
//! their declared schema.

use crate::Toolbox;
use serde_json::Value;

/// One command of a tool: the parameters it needs and may take, in writing order.
#[derive(Debug, Clone, Copy)]
pub struct CommandShape {
    pub command: &'static str,
    pub required: &'static [&'static str],
    pub optional: &'static [&'static str],
}

impl Toolbox {
    /// Every call shape of every tool: (the tool's name, its arguments' schema as JSON
    /// text with its keys in writing order).
    pub fn call_shapes(&self) -> Vec<(String, String)> {
        let mut shapes = Vec::new();
        for tool in self.tools() {
            let schema = tool.schema();
            let parameters = &schema["function"]["parameters"];
            let commands = tool.command_shapes();
            if commands.is_empty() {
                shapes.push((tool.name().to_string(), parameters.to_string()));
                continue;
            }
            for shape in commands {
                shapes.push((tool.name().to_string(), command_schema(parameters, shape)));
            }
        }
        shapes
    }
}

/// The arguments' schema of one command: `command` as a constant, then its parameters
/// as the tool declares them, nothing else.
fn command_schema(parameters: &Value, shape: &CommandShape) -> String {
    let mut properties = vec![format!(
        "\"command\":{{\"const\":{}}}",
        Value::String(shape.command.to_string())
    )];
    for name in shape.required.iter().chain(shape.optional) {
        let spec = parameters["properties"]
            .get(*name)
            .cloned()
            .unwrap_or_else(|| serde_json::json!({}));
        properties.push(format!("{}:{spec}", Value::String(name.to_string())));
    }
    let required: Vec<Value> = std::iter::once(&"command")
        .chain(shape.required)
        .map(|name| Value::String(name.to_string()))
        .collect();
    format!(
        "{{\"type\":\"object\",\"properties\":{{{}}},\"required\":{},\"additionalProperties\":false}}",
        properties.join(","),
        Value::Array(required)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FileEditorTool;
    use crate::Workspace;
    use std::sync::Arc;

    #[test]
    fn each_command_of_the_editor_requires_what_it_needs_in_writing_order() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let tools = Toolbox::new(vec![Arc::new(FileEditorTool::new(workspace))]);
        let shapes = tools.call_shapes();
        let commands: Vec<String> = shapes
            .iter()
            .map(|(name, schema)| {
                assert_eq!(name, "file_editor");
                let schema: Value = serde_json::from_str(schema).unwrap();
                schema["properties"]["command"]["const"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            commands,
            ["view", "create", "str_replace", "insert", "undo_edit"]
        );
        let (_, replace) = &shapes[2];
        // Written in this order: the file, what to find, what to put instead.
        let at = |key: &str| replace.find(&format!("\"{key}\":")).unwrap();
        assert!(
            at("command") < at("path")
                && at("path") < at("old_str")
                && at("old_str") < at("new_str")
        );
        let replace: Value = serde_json::from_str(replace).unwrap();
        assert_eq!(
            replace["required"],
            serde_json::json!(["command", "path", "old_str", "new_str"])
        );
        assert_eq!(replace["additionalProperties"], false);
        assert!(replace["properties"].get("file_text").is_none());
    }
}
