//! The set of tools of one conversation, looked up by name or alias.

use crate::Tool;
use serde_json::Value;
use std::sync::Arc;

/// A tool name known only at run time (an MCP server's `server__tool`) as the `'static`
/// name `Tool::name` returns: each distinct name is kept once for the life of the
/// process, so a server making conversations again and again does not grow.
pub fn intern_name(name: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::Mutex;
    use std::sync::OnceLock;
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(known) = names.get(name) {
        return known;
    }
    let kept: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(kept);
    kept
}

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

    /// The same tools and `more` after them.
    pub fn with(&self, more: Vec<Arc<dyn Tool>>) -> Toolbox {
        Toolbox::new(self.tools.iter().cloned().chain(more).collect())
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
