//! An MCP server's tool as a tool the model calls: named `SERVER__TOOL`, its schema the
//! server's input schema with the description trimmed (every schema token is prefilled
//! at each uncached step), its result an observation marked as content from outside
//! wright. A call that fails in any way the server can fail is an error for the model,
//! never one that stops the run.

use crate::render;
use crate::server::ListedTool;
use crate::server::Server;
use serde_json::json;
use serde_json::Value;
use std::sync::Arc;
use wright_protocol::Provenance;
use wright_tools::Tool;
use wright_tools::ToolError;
use wright_tools::ToolOutput;

/// A description is kept to its first paragraph, and at most this many characters.
const MAX_DESCRIPTION: usize = 200;

/// One tool of one server.
pub struct McpTool {
    name: &'static str,
    /// The server's own name for it.
    tool: String,
    schema: Value,
    /// `None` when the server is not connected (a resumed conversation whose server did
    /// not start again): calls say so.
    server: Option<Arc<Server>>,
    server_name: String,
}

/// The name the model calls a server's tool by: `SERVER__TOOL`, in the characters
/// function names may have, at most 64 of them.
pub fn full_name(server: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let mut name = format!("{}__{}", clean(server), clean(tool));
    name.truncate(64);
    name
}

/// A description's first paragraph, cut at a sentence or a word near `MAX_DESCRIPTION`.
pub fn trim_description(text: &str) -> String {
    let first = text.trim().split("\n\n").next().unwrap_or("");
    let first = first.split_whitespace().collect::<Vec<_>>().join(" ");
    if first.chars().count() <= MAX_DESCRIPTION {
        return first;
    }
    let cut: String = first.chars().take(MAX_DESCRIPTION).collect();
    if let Some(end) = cut.rfind(". ") {
        if end > MAX_DESCRIPTION / 3 {
            return cut[..=end].to_string();
        }
    }
    match cut.rfind(' ') {
        Some(space) => format!("{}…", &cut[..space]),
        None => format!("{cut}…"),
    }
}

/// The parameters schema for the model: the server's, without what only validators read
/// (`$schema`), an object always.
fn parameters(schema: &Value) -> Value {
    let mut schema = match schema {
        Value::Object(map) => map.clone(),
        _ => serde_json::Map::new(),
    };
    schema.remove("$schema");
    if !schema.contains_key("type") {
        schema.insert("type".into(), json!("object"));
    }
    if !schema.contains_key("properties") {
        schema.insert("properties".into(), json!({}));
    }
    Value::Object(schema)
}

impl McpTool {
    /// The tool `listed` of the connected `server`.
    pub fn new(server: &Arc<Server>, listed: &ListedTool) -> Self {
        let name = full_name(&server.name, &listed.name);
        let description = match trim_description(&listed.description) {
            text if text.is_empty() => format!("{} (MCP server {})", listed.name, server.name),
            text => text,
        };
        let schema = json!({"type": "function", "function": {
            "name": name,
            "description": description,
            "parameters": parameters(&listed.input_schema),
        }});
        Self {
            name: wright_tools::intern_name(&name),
            tool: listed.name.clone(),
            schema,
            server: Some(server.clone()),
            server_name: server.name.clone(),
        }
    }

    /// A tool of a resumed conversation, its schema exactly as its log has it (the
    /// prefix of every request must not change), called on `server` if it is connected
    /// again and still lists `tool`.
    pub fn logged(
        schema: Value,
        server_name: &str,
        tool: &str,
        server: Option<Arc<Server>>,
    ) -> Self {
        let name = schema["function"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        Self {
            name: wright_tools::intern_name(&name),
            tool: tool.to_string(),
            schema,
            server,
            server_name: server_name.to_string(),
        }
    }

    /// The server's name.
    pub fn server_name(&self) -> &str {
        &self.server_name
    }
}

#[async_trait::async_trait]
impl Tool for McpTool {
    fn name(&self) -> &'static str {
        self.name
    }

    fn schema(&self) -> Value {
        self.schema.clone()
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        let Some(server) = &self.server else {
            return Err(ToolError::Model(format!(
                "the MCP server '{}' is not connected in this run; its tools cannot be used",
                self.server_name
            )));
        };
        let result = server
            .call(&self.tool, arguments)
            .await
            .map_err(|err| ToolError::Model(err.to_string()))?;
        let (text, is_error) = render::result_text(&result);
        Ok(ToolOutput {
            text,
            is_error,
            untrusted: Some(Provenance::Mcp {
                server: self.server_name.clone(),
                tool: self.tool.clone(),
            }),
            ..ToolOutput::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_descriptions_fit_the_prompt() {
        assert_eq!(full_name("everything", "get-sum"), "everything__get-sum");
        assert_eq!(full_name("my server", "a.b"), "my_server__a_b");
        assert_eq!(full_name(&"s".repeat(40), &"t".repeat(40)).len(), 64);
        assert_eq!(
            trim_description("  Echoes back\n the input.\n\nMore detail."),
            "Echoes back the input."
        );
        let long = format!(
            "{}. {}",
            "First sentence is here".repeat(4),
            "word ".repeat(60)
        );
        assert_eq!(
            trim_description(&long),
            format!("{}.", "First sentence is here".repeat(4))
        );
        let words = "word ".repeat(60);
        let trimmed = trim_description(&words);
        assert!(
            trimmed.ends_with("word…") && trimmed.chars().count() <= MAX_DESCRIPTION + 1,
            "{trimmed}"
        );
        assert_eq!(
            parameters(&json!({"$schema": "x", "properties": {"a": {"type": "string"}}})),
            json!({"properties": {"a": {"type": "string"}}, "type": "object"})
        );
        assert_eq!(
            parameters(&json!(null)),
            json!({"type": "object", "properties": {}})
        );
    }
}
