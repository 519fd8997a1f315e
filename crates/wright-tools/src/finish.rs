//! `finish`: the model says the task is done and what it did.

use crate::args;
use crate::Tool;
use crate::ToolError;
use crate::ToolOutput;
use serde_json::json;
use serde_json::Value;

pub struct FinishTool;

#[async_trait::async_trait]
impl Tool for FinishTool {
    fn name(&self) -> &'static str {
        "finish"
    }

    fn schema(&self) -> Value {
        json!({"type": "function", "function": {
            "name": "finish",
            "description": "End the task once it is done and verified.",
            "parameters": {"type": "object", "properties": {
                "message": {"type": "string", "description": "Summary for the user: what was wrong, what changed, how it was verified."}
            }, "required": ["message"]}
        }})
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        let message = args::optional_str(arguments, "message")?
            .unwrap_or("")
            .to_string();
        Ok(ToolOutput {
            text: "Task finished.".into(),
            finish: Some(message),
            ..ToolOutput::default()
        })
    }
}
