//! `think`: a place for the model to reason in the open; it changes nothing.

use crate::args;
use crate::Tool;
use crate::ToolError;
use crate::ToolOutput;
use serde_json::json;
use serde_json::Value;

pub struct ThinkTool;

#[async_trait::async_trait]
impl Tool for ThinkTool {
    fn name(&self) -> &'static str {
        "think"
    }

    fn schema(&self) -> Value {
        json!({"type": "function", "function": {
            "name": "think",
            "description": "Write down reasoning or a plan. Changes nothing.",
            "parameters": {"type": "object", "properties": {
                "thought": {"type": "string"}
            }, "required": ["thought"]}
        }})
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        args::required_str(arguments, "thought")?;
        Ok(ToolOutput::text("Your thought has been noted."))
    }
}
