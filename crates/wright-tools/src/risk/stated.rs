//! The optional `security_risk` argument, as OpenHands gives it: the model states how
//! risky its command is, and the higher of its level and wright's own reading counts.
//! Only the terminal takes it (a file edit is judged by its path, which wright reads
//! exactly), and only in conversations that ask before risky actions: every schema token
//! is prefilled at each uncached step, and a small model gains nothing from it otherwise.

use crate::OutputSink;
use crate::Tool;
use crate::ToolError;
use crate::ToolOutput;
use crate::Toolbox;
use serde_json::json;
use serde_json::Value;
use std::sync::Arc;

/// The tools that take `security_risk`.
const TAKES_IT: &[&str] = &["terminal"];

/// A tool whose schema offers `security_risk`; everything else is the tool's own.
struct WithStatedRisk(Arc<dyn Tool>);

#[async_trait::async_trait]
impl Tool for WithStatedRisk {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn aliases(&self) -> &'static [&'static str] {
        self.0.aliases()
    }
    fn schema(&self) -> Value {
        let mut schema = self.0.schema();
        if let Some(properties) = schema["function"]["parameters"]["properties"].as_object_mut() {
            properties.insert(
                "security_risk".into(),
                json!({"type": "string", "enum": ["LOW", "MEDIUM", "HIGH"], "description": "How risky the command is."}),
            );
        }
        schema
    }
    fn command_shapes(&self) -> &'static [crate::CommandShape] {
        self.0.command_shapes()
    }
    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        self.0.run(arguments).await
    }
    fn restore(&self, events: &[wright_protocol::Event]) {
        self.0.restore(events)
    }
    fn fit_window(&self, tokens: u64) {
        self.0.fit_window(tokens)
    }
    fn shell_state(&self) -> Option<crate::risk::ShellState> {
        self.0.shell_state()
    }
    async fn run_watched(
        &self,
        arguments: &Value,
        output: &OutputSink,
    ) -> Result<ToolOutput, ToolError> {
        self.0.run_watched(arguments, output).await
    }
}

impl Toolbox {
    /// The same tools, the terminal's schema offering `security_risk`.
    pub fn with_stated_risk(&self) -> Toolbox {
        Toolbox::new(
            self.tools()
                .map(|tool| -> Arc<dyn Tool> {
                    match TAKES_IT.contains(&tool.name()) && !offers_stated_risk(&tool.schema()) {
                        true => Arc::new(WithStatedRisk(tool.clone())),
                        false => tool.clone(),
                    }
                })
                .collect(),
        )
    }
}

/// Whether a tool's schema (as a conversation's log has it) offers `security_risk`.
pub fn offers_stated_risk(schema: &Value) -> bool {
    schema["function"]["parameters"]["properties"]
        .get("security_risk")
        .is_some()
}
