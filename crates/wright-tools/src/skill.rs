//! `skill`: the text of a skill the system prompt lists (one with only a description,
//! no trigger), when the model asks for it by name. The texts are the conversation's own
//! (its start event's, read from the user's repository before the first step), never a
//! file read now: what the agent wrote since cannot pass for a skill.

use crate::args;
use crate::Tool;
use crate::ToolError;
use crate::ToolOutput;
use serde_json::json;
use serde_json::Value;
use wright_protocol::SkillEntry;

pub struct SkillTool {
    skills: Vec<SkillEntry>,
}

impl SkillTool {
    /// The tool over the skills of `catalog` read on demand; `None` when there are none.
    pub fn over(catalog: &[SkillEntry]) -> Option<Self> {
        let skills: Vec<SkillEntry> = catalog.iter().filter(|s| s.on_demand()).cloned().collect();
        (!skills.is_empty()).then_some(Self { skills })
    }
}

#[async_trait::async_trait]
impl Tool for SkillTool {
    fn name(&self) -> &'static str {
        "skill"
    }

    fn schema(&self) -> Value {
        let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
        json!({"type": "function", "function": {
            "name": "skill",
            "description": "Read a skill listed under # Skills.",
            "parameters": {"type": "object", "properties": {
                "name": {"type": "string", "enum": names}
            }, "required": ["name"]}
        }})
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        let name = args::required_str(arguments, "name")?;
        let skill = self
            .skills
            .iter()
            .find(|s| s.name == name)
            .or_else(|| {
                self.skills
                    .iter()
                    .find(|s| s.name.eq_ignore_ascii_case(name))
            })
            .ok_or_else(|| {
                let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
                ToolError::Model(format!(
                    "no skill '{name}'; the skills are: {}",
                    names.join(", ")
                ))
            })?;
        Ok(ToolOutput::text(format!(
            "[Skill {} ({}):]\n{}",
            skill.name, skill.path, skill.text
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, triggers: &[&str]) -> SkillEntry {
        SkillEntry {
            name: name.into(),
            description: "d".into(),
            path: format!(".agents/skills/{name}/SKILL.md"),
            triggers: triggers.iter().map(|t| t.to_string()).collect(),
            paths: vec![],
            text: format!("how to {name}"),
        }
    }

    #[tokio::test]
    async fn reads_the_listed_skills_only() {
        let tool = SkillTool::over(&[entry("deploy", &[]), entry("docker", &["docker"])]).unwrap();
        assert_eq!(
            tool.schema()["function"]["parameters"]["properties"]["name"]["enum"],
            json!(["deploy"])
        );
        let read = tool.run(&json!({"name": "Deploy"})).await.unwrap();
        assert_eq!(
            read.text,
            "[Skill deploy (.agents/skills/deploy/SKILL.md):]\nhow to deploy"
        );
        let err = tool.run(&json!({"name": "docker"})).await.unwrap_err();
        assert!(err.to_string().contains("the skills are: deploy"), "{err}");
        assert!(SkillTool::over(&[entry("docker", &["docker"])]).is_none());
    }
}
