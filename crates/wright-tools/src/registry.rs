//! The set of tools of one conversation, looked up by name or alias.

use crate::Tool;
use serde_json::Value;
use std::sync::Arc;

#[derive(Clone, Default)]
pub struct Toolbox {
    tools: Vec<Arc<dyn Tool>>,
}

impl Toolbox {
    pub fn new(tools: Vec<Arc<dyn Tool>>) -> Self {
        Self { tools }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools
            .iter()
            .find(|tool| tool.name() == name || tool.aliases().contains(&name))
    }

    /// Every tool, in order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.iter()
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|tool| tool.name()).collect()
    }

    /// Every name a tool answers to, aliases included.
    pub fn all_names(&self) -> Vec<&'static str> {
        self.tools
            .iter()
            .flat_map(|tool| std::iter::once(tool.name()).chain(tool.aliases().iter().copied()))
            .collect()
    }

    /// Tells every tool the model's context window (see `Tool::fit_window`).
    pub fn fit_window(&self, tokens: u64) {
        for tool in &self.tools {
            tool.fit_window(tokens);
        }
    }

    /// The same tools but `name`.
    pub fn without(&self, name: &str) -> Toolbox {
        Toolbox::new(
            self.tools
                .iter()
                .filter(|tool| tool.name() != name)
                .cloned()
                .collect(),
        )
    }

    /// The `tools` array of a request, in a fixed order.
    pub fn schemas(&self) -> Vec<Value> {
        self.tools.iter().map(|tool| tool.schema()).collect()
    }
}
