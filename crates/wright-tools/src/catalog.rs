//! Which built-in tools a conversation gets (`--tools`, the `tools` key): a list of names,
//! or a preset. Every schema is prefilled at each uncached step, so a small model gets
//! the small set unless asked otherwise.

use std::fmt;

/// A built-in tool, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ToolName {
    Terminal,
    FileEditor,
    Grep,
    Glob,
    TaskTracker,
    Think,
    Finish,
    /// Given only to a run with the network on (`--network` or `--allow-host`).
    Fetch,
    /// A headless Chromium in the sandbox: in `full` (or by name), and by `auto` only
    /// where the task looks like web work (wright-session's `web_work`).
    Browser,
}

impl ToolName {
    /// Every built-in tool, in the order their schemas are sent.
    pub const ALL: [ToolName; 9] = [
        ToolName::Terminal,
        ToolName::FileEditor,
        ToolName::Grep,
        ToolName::Glob,
        ToolName::TaskTracker,
        ToolName::Think,
        ToolName::Finish,
        ToolName::Fetch,
        ToolName::Browser,
    ];

    /// What `auto` gives a model that is not small: everything but the browser, whose
    /// schema every step would pay for while few tasks need it (it joins where the task
    /// looks like web work).
    pub const AUTO: [ToolName; 8] = [
        ToolName::Terminal,
        ToolName::FileEditor,
        ToolName::Grep,
        ToolName::Glob,
        ToolName::TaskTracker,
        ToolName::Think,
        ToolName::Finish,
        ToolName::Fetch,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::Terminal => "terminal",
            ToolName::FileEditor => "file_editor",
            ToolName::Grep => "grep",
            ToolName::Glob => "glob",
            ToolName::TaskTracker => "task_tracker",
            ToolName::Think => "think",
            ToolName::Finish => "finish",
            ToolName::Fetch => "fetch",
            ToolName::Browser => "browser",
        }
    }

    /// A tool by its name or one of its aliases.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "terminal" | "execute_bash" | "bash" => Some(ToolName::Terminal),
            "file_editor" | "str_replace_editor" => Some(ToolName::FileEditor),
            other => Self::ALL.into_iter().find(|tool| tool.as_str() == other),
        }
    }
}

/// The tools asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolSet {
    /// `small` for a model whose name says 8B or less, `full` otherwise.
    Auto,
    /// These tools (`finish` always among them: a run ends only by it).
    Named(Vec<ToolName>),
}

/// `small`: what a model of a few billion parameters handles best, the fewest tokens.
pub const SMALL: &[ToolName] = &[
    ToolName::Terminal,
    ToolName::FileEditor,
    ToolName::Think,
    ToolName::Finish,
];

impl ToolSet {
    /// `auto`, `small`, `full`, or names separated by commas (`terminal,grep,finish`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        match text {
            "auto" => return Ok(ToolSet::Auto),
            "small" => return Ok(ToolSet::Named(SMALL.to_vec())),
            "full" => return Ok(ToolSet::Named(ToolName::ALL.to_vec())),
            _ => {}
        }
        let mut tools = vec![ToolName::Finish];
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let tool = ToolName::parse(name).ok_or_else(|| {
                format!(
                    "unknown tool '{name}' in the tool set; choose auto, small, full or names among {}",
                    ToolName::ALL.map(ToolName::as_str).join(", ")
                )
            })?;
            tools.push(tool);
        }
        if tools.len() == 1 {
            return Err("the tool set is empty; choose auto, small, full or tool names".into());
        }
        tools.sort();
        tools.dedup();
        Ok(ToolSet::Named(tools))
    }

    /// The tools, in schema order, for a model that is `small` (8B or less by its name).
    pub fn resolve(&self, small: bool) -> Vec<ToolName> {
        match self {
            ToolSet::Auto if small => SMALL.to_vec(),
            ToolSet::Auto => ToolName::AUTO.to_vec(),
            ToolSet::Named(tools) => tools.clone(),
        }
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn sets_by_preset_or_by_name() {
        assert_eq!(ToolSet::parse("small").unwrap().resolve(false), SMALL);
        assert_eq!(ToolSet::parse("auto").unwrap().resolve(true), SMALL);
        assert_eq!(
            ToolSet::parse("auto").unwrap().resolve(false),
            ToolName::AUTO
        );
        assert!(ToolSet::parse("full")
            .unwrap()
            .resolve(true)
            .contains(&ToolName::Browser));
        // Finish is always there, and the order is the schema order, whatever was written.
        assert_eq!(
            ToolSet::parse("grep, bash,grep").unwrap().resolve(true),
            vec![ToolName::Terminal, ToolName::Grep, ToolName::Finish]
        );
        assert!(ToolSet::parse(" , ").unwrap_err().contains("empty"));
        assert!(ToolSet::parse("terminal,browse")
            .unwrap_err()
            .contains("unknown tool 'browse'"));
    }
}
