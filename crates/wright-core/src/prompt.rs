//! The system prompt: how to work, in as few tokens as possible — a local model prefills
//! every one of them on the user's own hardware at every uncached step.

pub fn system_prompt(workspace: &str) -> String {
    prompt(
        workspace,
        "Nobody answers questions during the task: never ask, decide and go on.",
    )
}

/// The prompt of an interactive chat: the user is there, so a real question may be asked.
pub fn chat_system_prompt(workspace: &str) -> String {
    prompt(
        workspace,
        "The user is here: when you truly need a decision from them, ask briefly and stop. For a plain question, answer without tools.",
    )
}

fn prompt(workspace: &str, asking: &str) -> String {
    format!(
        "You are wright, a coding agent. You work in the repository at {workspace} through the tools. \
{asking}

Work in this order:
1. Explore: find the files that matter (ls, grep, file_editor view).
2. Reproduce: run the failing test or command and read the error.
3. Fix the cause in the code: view the lines, then str_replace with the exact text. Never weaken or delete tests to make them pass.
4. Verify: rerun the tests until they pass.
5. Call finish with a short summary: the cause, the change, how you verified it.

Commands must not wait for input. Answer in the language of the task."
    )
}

/// The tools as text, for models without native function calling: one call format (the
/// Hermes/Qwen `<tool_call>` block most open models are trained on) and a compact
/// signature per tool built from its JSON schema.
pub fn text_tools_section(schemas: &[serde_json::Value]) -> String {
    text_tools_section_as(schemas, CallFormat::Tagged)
}

/// How the model writes its calls in text mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallFormat {
    /// In a `<tool_call>` block (what most open models are trained on).
    Tagged,
    /// As one bare JSON object, which a server holding replies to a JSON schema enforces:
    /// the prompt must show that object, `reasoning` first when the schema has it, or
    /// the model is told one format and held to another.
    Json { reasoning: bool },
}

/// `text_tools_section` for the calls written in `format`.
pub fn text_tools_section_as(schemas: &[serde_json::Value], format: CallFormat) -> String {
    let mut out = String::from(match format {
        CallFormat::Tagged => "\n\n# Tools\nYou act only through tools. Every reply is exactly one tool call, written like this, and nothing after it:\n<tool_call>\n{\"name\": \"terminal\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>\nThe result comes in the next message. Do not write plans or commands outside a tool call.\n",
        CallFormat::Json { reasoning: true } => "\n\n# Tools\nYou act only through tools. Every reply is exactly one tool call: one JSON object, its reasoning first (one or two sentences: what you learned, what you do next; no code), then the tool's name and its arguments:\n{\"reasoning\": \"<what the last result showed; what you do next>\", \"name\": \"<one of the tools below>\", \"arguments\": {<its arguments>}}\nThe result comes in the next message. Code and commands go in the arguments, never in the reasoning.\n",
        CallFormat::Json { reasoning: false } => "\n\n# Tools\nYou act only through tools. Every reply is exactly one tool call: one JSON object with the tool's name and its arguments:\n{\"name\": \"<one of the tools below>\", \"arguments\": {<its arguments>}}\nThe result comes in the next message.\n",
    });
    for schema in schemas {
        let function = &schema["function"];
        let name = function["name"].as_str().unwrap_or("");
        let parameters = &function["parameters"];
        let required: Vec<&str> = parameters["required"]
            .as_array()
            .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        let mut signature = Vec::new();
        let mut details = Vec::new();
        if let Some(properties) = parameters["properties"].as_object() {
            // Required parameters first, in the schema's order; then the optional ones.
            let mut names: Vec<&String> = properties.keys().collect();
            names.sort_by_key(|param| {
                required
                    .iter()
                    .position(|r| r == param)
                    .unwrap_or(required.len())
            });
            for param in names {
                let spec = &properties[param];
                let optional = if required.contains(&param.as_str()) {
                    ""
                } else {
                    "?"
                };
                signature.push(format!("{param}{optional}: {}", kind_of(spec)));
                if let Some(description) = spec["description"].as_str() {
                    details.push(format!("  {param}: {description}"));
                }
            }
        }
        out.push_str(&format!(
            "\n{name}({})\n  {}\n",
            signature.join(", "),
            function["description"].as_str().unwrap_or("")
        ));
        for line in details {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// A parameter's type as the signature shows it: its values when it has an enum, the
/// shape of its items when it is a list of objects (`[{title, status: todo|done, notes?}]`),
/// else its JSON type.
fn kind_of(spec: &serde_json::Value) -> String {
    if let Some(values) = spec["enum"].as_array() {
        return values
            .iter()
            .filter_map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join("|");
    }
    let items = &spec["items"];
    if let (Some("array"), Some(fields)) = (spec["type"].as_str(), items["properties"].as_object())
    {
        let required: Vec<&str> = items["required"]
            .as_array()
            .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        let mut fields: Vec<(&String, &serde_json::Value)> = fields.iter().collect();
        // Required fields first, in the schema's order; then the optional ones.
        fields.sort_by_key(|(name, _)| {
            required
                .iter()
                .position(|r| r == name)
                .unwrap_or(required.len())
        });
        let fields: Vec<String> = fields
            .into_iter()
            .map(|(name, field)| {
                let optional = if required.contains(&name.as_str()) {
                    ""
                } else {
                    "?"
                };
                match field["enum"].is_array() {
                    true => format!("{name}{optional}: {}", kind_of(field)),
                    false => format!("{name}{optional}"),
                }
            })
            .collect();
        return format!("[{{{}}}]", fields.join(", "));
    }
    spec["type"].as_str().unwrap_or("any").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wright_tools::Tool;

    #[test]
    fn a_list_of_objects_shows_its_items_shape() {
        let section = text_tools_section(&[
            wright_tools::TaskTrackerTool::new().schema(),
            wright_tools::ThinkTool.schema(),
        ]);
        assert!(
            section.contains(
                "\ntask_tracker(command: view|plan, tasks?: [{title, status: todo|doing|done, notes?}])\n"
            ),
            "{section}"
        );
        assert!(section.contains("\nthink(thought: string)\n"), "{section}");
    }

    #[test]
    fn the_example_call_is_written_as_the_server_holds_replies() {
        let schemas = [wright_tools::ThinkTool.schema()];
        let tagged = text_tools_section_as(&schemas, CallFormat::Tagged);
        assert!(
            tagged.contains("<tool_call>\n{\"name\": \"terminal\""),
            "{tagged}"
        );
        let json = text_tools_section_as(&schemas, CallFormat::Json { reasoning: true });
        assert!(!json.contains("<tool_call>"), "{json}");
        // Under a schema the example is a template: nothing in it passes for a call, so a
        // small model cannot copy it as one (the 1.5B ran the example's `ls`, its
        // reasoning word for word, three or four times in a row in 4 runs of 6).
        assert!(
            json.contains("\n{\"reasoning\": \"<what the last result showed; what you do next>\", \"name\": \"<one of the tools below>\", \"arguments\": {<its arguments>}}\n"),
            "{json}"
        );
        let bare = text_tools_section_as(&schemas, CallFormat::Json { reasoning: false });
        assert!(
            bare.contains(
                "\n{\"name\": \"<one of the tools below>\", \"arguments\": {<its arguments>}}\n"
            ) && !bare.contains("\"reasoning\""),
            "{bare}"
        );
    }
}
