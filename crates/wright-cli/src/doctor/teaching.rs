//! Doctor's look at what a run in a workspace would be taught: the instructions and
//! skills (what they add to every request), and the hooks. Nothing is asked, nothing runs.

use super::Report;
use crate::settings::RepoConfigSource;
use anyhow::Result;
use serde_json::json;

/// What the repository and the user teach a run in `workspace`: the instructions and
/// skills with what they add to every request (a note when that is more than a quarter
/// of the window), and the hooks. Nothing is asked and nothing runs.
pub(super) fn check_teaching(workspace: &std::path::Path, report: &mut Report) -> Result<()> {
    let source = crate::config_cmds::source_of(workspace)?;
    let sub = match &source {
        RepoConfigSource::Commit { repo, .. } => workspace
            .canonicalize()
            .ok()
            .and_then(|dir| {
                dir.strip_prefix(repo.top())
                    .ok()
                    .map(|sub| sub.to_string_lossy().into_owned())
            })
            .unwrap_or_default(),
        RepoConfigSource::Directory(_) | RepoConfigSource::Nothing { .. } => String::new(),
    };
    let paths = [
        wright_session::Teaching::paths(&sub),
        wright_session::hooks::paths(),
    ]
    .concat();
    let files = wright_session::repo_config::RepoFiles::list(&source, &paths);
    let teaching =
        wright_session::Teaching::read(&files, &sub, wright_session::user_skills_dir().as_deref());
    let described = teaching.describe();
    let line = match described.is_empty() {
        true => "teaching   no AGENTS.md (or CLAUDE.md, .cursorrules, …) and no skills".to_string(),
        false => format!("teaching   {}", described.join("\n           ")),
    };
    let tokens = teaching.prompt_tokens();
    report.set(
        "teaching",
        json!({
            "instructions": teaching.instruction_files(),
            "skills": teaching.skills.iter().map(|s| &s.name).collect::<Vec<_>>(),
            "prompt_tokens": tokens,
            "skipped": teaching.skipped,
        }),
        line,
    );
    let window = report
        .fields
        .get("context_window")
        .and_then(|w| w["tokens"].as_u64());
    if let Some(warning) = teaching.budget_warning(window) {
        report.notes.push(warning);
    }
    match wright_session::SessionHooks::load(
        &files,
        wright_session::RepoHooksChoice::Ask,
        &wright_session::Unattended,
    ) {
        Ok(hooks) => {
            let lines: Vec<String> = hooks
                .describe()
                .into_iter()
                .map(|line| line.strip_prefix("hooks ").unwrap_or(&line).to_string())
                .collect();
            if !lines.is_empty() {
                report.set(
                    "hooks",
                    json!(lines),
                    format!("hooks      {}", lines.join("\n           ")),
                );
            }
        }
        Err(err) => report.fail("hooks", "hooks      not usable".into(), format!("{err:#}")),
    }
    Ok(())
}
