//! Skills and the repository's instructions, as text: a skill file (`SKILL.md` with its
//! YAML front matter — `name`, `description`, `triggers`, `paths` or `globs` — or an
//! OpenHands microagent) read into a `SkillEntry`, the system prompt's section for the
//! always-on instructions and the on-demand skills, and which skills a user message or a
//! touched file calls for.
//!
//! Everything here is bounded (a skill's text, a description, the instructions together)
//! and deterministic: the same files give the same prompt bytes, so a server's prefix
//! cache holds across conversations.

use std::collections::HashSet;
use wright_protocol::InstructionFile;
use wright_protocol::SkillEntry;
use yaml_rust2::Yaml;
use yaml_rust2::YamlLoader;

/// The always-on instructions together take at most this many characters of the prompt.
pub const INSTRUCTIONS_MAX_CHARS: usize = 8_000;
/// A skill's text is cut at this many characters.
pub const SKILL_MAX_CHARS: usize = 6_000;
/// A description in the prompt's list is cut at this many characters.
const DESCRIPTION_MAX_CHARS: usize = 200;
/// A name is cut at this many characters.
const NAME_MAX_CHARS: usize = 64;
/// A skill has at most this many triggers and globs each.
const MAX_TRIGGERS: usize = 32;

/// What a skill file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillFile {
    /// A skill: triggered, or listed for the model to read on demand.
    Skill(SkillEntry),
    /// Instructions for every conversation (OpenHands' `type: repo`, Cursor's
    /// `alwaysApply: true`, or a file with nothing to trigger or list it by).
    AlwaysOn(String),
}

/// Reads a skill file at `path` (for messages), named `fallback_name` (its directory's,
/// or its file's stem) unless its front matter names it. A front matter that is not YAML
/// is an error naming the file.
pub fn parse_skill(path: &str, fallback_name: &str, text: &str) -> Result<SkillFile, String> {
    let (front, body) = split_front_matter(text);
    let fields = match front {
        Some(front) => match YamlLoader::load_from_str(front) {
            Ok(mut documents) if !documents.is_empty() => documents.swap_remove(0),
            Ok(_) => Yaml::Null,
            Err(err) => return Err(format!("{path}: its front matter is not YAML: {err}")),
        },
        None => Yaml::Null,
    };
    let body = body.trim().to_string();
    let name = scalar(&fields["name"])
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| fallback_name.to_string());
    let description = scalar(&fields["description"]).unwrap_or_default();
    let triggers = list(&fields["triggers"])
        .into_iter()
        .chain(list(&fields["keywords"]))
        .filter(|word| !word.trim().is_empty())
        .take(MAX_TRIGGERS)
        .collect::<Vec<_>>();
    let paths = list(&fields["paths"])
        .into_iter()
        .chain(list(&fields["globs"]))
        .filter(|glob| !glob.trim().is_empty())
        .take(MAX_TRIGGERS)
        .collect::<Vec<_>>();
    let always = fields["alwaysApply"].as_bool() == Some(true)
        || scalar(&fields["type"]).as_deref() == Some("repo");
    if always || (triggers.is_empty() && paths.is_empty() && description.trim().is_empty()) {
        return Ok(SkillFile::AlwaysOn(body));
    }
    Ok(SkillFile::Skill(SkillEntry {
        name: clip(name.trim(), NAME_MAX_CHARS),
        description: clip(&one_line(&description), DESCRIPTION_MAX_CHARS),
        path: path.to_string(),
        triggers: triggers.iter().map(|t| t.trim().to_string()).collect(),
        paths: paths.iter().map(|p| p.trim().to_string()).collect(),
        text: cut(&body, SKILL_MAX_CHARS).0,
    }))
}

/// The front matter (between `---` lines at the very top) and the rest.
fn split_front_matter(text: &str) -> (Option<&str>, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text);
    };
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return (Some(&rest[..at]), &rest[at + line.len()..]);
        }
        at += line.len();
    }
    (None, text)
}

/// A scalar field as text (a number or a boolean written as a word counts).
fn scalar(value: &Yaml) -> Option<String> {
    match value {
        Yaml::String(text) | Yaml::Real(text) => Some(text.clone()),
        Yaml::Integer(n) => Some(n.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A list field: a YAML list, or one string (Cursor writes globs as `*.ts, *.tsx`).
fn list(value: &Yaml) -> Vec<String> {
    match value {
        Yaml::Array(items) => items.iter().filter_map(scalar).collect(),
        other => scalar(other)
            .map(|text| text.split(',').map(|s| s.trim().to_string()).collect())
            .unwrap_or_default(),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// `text` cut at `max` characters, and whether it was.
pub fn cut(text: &str, max: usize) -> (String, bool) {
    match text.char_indices().nth(max) {
        Some((at, _)) => (text[..at].to_string(), true),
        None => (text.to_string(), false),
    }
}

/// The always-on instructions as they go into the prompt, within
/// `INSTRUCTIONS_MAX_CHARS` together: `files` are (where, text), most general first; a
/// file that does not fit whole is cut, and those after it are left out (and recorded as
/// cut with nothing of them in).
pub fn bound_instructions(files: Vec<(String, String)>) -> Vec<(InstructionFile, String)> {
    let mut room = INSTRUCTIONS_MAX_CHARS;
    files
        .into_iter()
        .map(|(path, text)| {
            let text = text.trim().to_string();
            let (kept, was_cut) = cut(&text, room);
            room -= kept.chars().count();
            let file = InstructionFile {
                path,
                chars: kept.chars().count() as u64,
                cut: was_cut,
            };
            (file, kept)
        })
        .collect()
}

/// The system prompt's section for the repository's instructions and the skills read on
/// demand; empty when there are neither.
pub fn prompt_section(instructions: &[(InstructionFile, String)], skills: &[SkillEntry]) -> String {
    let mut out = String::new();
    let shown: Vec<&(InstructionFile, String)> = instructions
        .iter()
        .filter(|(_, text)| !text.is_empty())
        .collect();
    if !shown.is_empty() {
        out.push_str(
            "\n\n# Repository instructions\nFollow these instructions from the repository's files.",
        );
        for (file, text) in shown {
            out.push_str(&format!("\n\n## {}\n{text}", file.path));
            if file.cut {
                out.push_str("\n[… the rest was left out: instructions are bounded]");
            }
        }
    }
    let listed: Vec<&SkillEntry> = skills.iter().filter(|s| s.on_demand()).collect();
    if !listed.is_empty() {
        out.push_str("\n\n# Skills\nWhen one fits the task, read it with the skill tool first:");
        for skill in listed {
            out.push_str(&format!("\n- {}: {}", skill.name, skill.description));
        }
    }
    out
}

/// The skills not yet added (`added` names them) that a user message calls for by a
/// trigger, each with the trigger it says: whole words, case ignored.
pub fn by_keyword<'a>(
    skills: &'a [SkillEntry],
    message: &str,
    added: &HashSet<String>,
) -> Vec<(&'a SkillEntry, String)> {
    let message = message.to_lowercase();
    skills
        .iter()
        .filter(|skill| !added.contains(&skill.name))
        .filter_map(|skill| {
            skill
                .triggers
                .iter()
                .find(|word| says(&message, &word.to_lowercase()))
                .map(|word| (skill, word.clone()))
        })
        .collect()
}

/// Whether `text` holds `word` as a whole word (both already lowercase).
fn says(text: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric() && c != '_');
    text.match_indices(word).any(|(at, found)| {
        boundary(text[..at].chars().next_back())
            && boundary(text[at + found.len()..].chars().next())
    })
}

/// The skills not yet added that a touched file calls for, each with the path: a glob
/// without `/` matches the file's name, one with `/` its path from the workspace.
pub fn by_path<'a>(
    skills: &'a [SkillEntry],
    touched: &[String],
    added: &HashSet<String>,
) -> Vec<(&'a SkillEntry, String)> {
    skills
        .iter()
        .filter(|skill| !added.contains(&skill.name) && !skill.paths.is_empty())
        .filter_map(|skill| {
            let globs: Vec<globset::GlobMatcher> = skill
                .paths
                .iter()
                .filter_map(|glob| {
                    globset::GlobBuilder::new(glob.trim_start_matches("./"))
                        .literal_separator(glob.contains('/'))
                        .build()
                        .ok()
                })
                .map(|glob| glob.compile_matcher())
                .collect();
            touched
                .iter()
                .find(|path| {
                    let name = path.rsplit('/').next().unwrap_or(path);
                    skill.paths.iter().zip(&globs).any(|(glob, matcher)| {
                        matcher.is_match(if glob.contains('/') { path } else { name })
                    })
                })
                .map(|path| (skill, path.clone()))
        })
        .collect()
}

/// The workspace-relative paths a tool call touches: a `path` argument, and in a
/// terminal command each word that looks like a file path. `root` is the workspace's
/// absolute path (absolute paths inside it are made relative; others are ignored).
pub fn touched_paths(tool: &str, arguments: &serde_json::Value, root: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    if let Some(path) = arguments["path"].as_str() {
        words.push(path.to_string());
    }
    if matches!(tool, "terminal" | "bash" | "execute_bash") {
        if let Some(command) = arguments["command"].as_str() {
            words.extend(
                command
                    .split(|c: char| {
                        c.is_whitespace()
                            || matches!(c, ';' | '|' | '&' | '\'' | '"' | '(' | ')' | '<' | '>')
                    })
                    .filter(|word| word.contains('.') || word.contains('/'))
                    .map(str::to_string),
            );
        }
    }
    let root = root.trim_end_matches('/');
    words
        .into_iter()
        .filter_map(|word| {
            let relative = match word.strip_prefix('/') {
                Some(_) => word
                    .strip_prefix(root)
                    .and_then(|rest| rest.strip_prefix('/'))?
                    .to_string(),
                None => word.trim_start_matches("./").to_string(),
            };
            let clean = !relative.is_empty()
                && !relative.starts_with('-')
                && relative.split('/').all(|part| part != "..");
            clean.then_some(relative)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn skill(text: &str) -> SkillEntry {
        match parse_skill(".agents/skills/x/SKILL.md", "x", text).unwrap() {
            SkillFile::Skill(skill) => skill,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn front_matter_in_the_shapes_people_write() {
        let listed = skill("---\nname: deploy\ndescription: >\n  How we deploy\n  to staging.\n---\n# Deploy\nRun make deploy.\n");
        assert_eq!(
            listed,
            SkillEntry {
                name: "deploy".into(),
                description: "How we deploy to staging.".into(),
                path: ".agents/skills/x/SKILL.md".into(),
                triggers: vec![],
                paths: vec![],
                text: "# Deploy\nRun make deploy.".into(),
            }
        );
        assert!(listed.on_demand());
        let triggered = skill("---\ntriggers:\n- Docker\n- compose file\n---\nUse podman.");
        assert_eq!(triggered.name, "x");
        assert_eq!(triggered.triggers, ["Docker", "compose file"]);
        let cursor = skill("---\nglobs: \"*.ts, src/**/*.tsx\"\n---\nTypes first.");
        assert_eq!(cursor.paths, ["*.ts", "src/**/*.tsx"]);
        assert_eq!(
            parse_skill("AGENTS.md", "a", "Always test.").unwrap(),
            SkillFile::AlwaysOn("Always test.".into())
        );
        assert_eq!(
            parse_skill(
                "r.md",
                "r",
                "---\ntype: repo\ntriggers: [x]\n---\nRepo rules"
            )
            .unwrap(),
            SkillFile::AlwaysOn("Repo rules".into())
        );
        assert!(parse_skill("bad.md", "b", "---\nname: [unclosed\n---\n")
            .unwrap_err()
            .starts_with("bad.md: its front matter is not YAML"));
    }

    #[test]
    fn keywords_are_whole_words_in_any_case() {
        let skills = vec![skill("---\nname: docker\ntriggers: [Docker, c++]\n---\nD")];
        let none = HashSet::new();
        let hit = |text: &str| by_keyword(&skills, text, &none).len();
        assert_eq!(hit("Fix the DOCKER build"), 1);
        assert_eq!(hit("fix the dockerfile"), 0);
        assert_eq!(hit("a c++ bug."), 1);
        assert_eq!(hit("nothing here"), 0);
        let added = HashSet::from(["docker".to_string()]);
        assert!(by_keyword(&skills, "docker", &added).is_empty());
    }

    #[test]
    fn paths_match_by_name_or_by_path() {
        let skills = vec![skill(
            "---\nname: py\npaths: [\"*.py\", \"docs/**\"]\n---\nP",
        )];
        let none = HashSet::new();
        let hit = |path: &str| by_path(&skills, &[path.to_string()], &none).len();
        assert_eq!(hit("src/deep/mod.py"), 1);
        assert_eq!(hit("docs/a/b.md"), 1);
        assert_eq!(hit("src/docs/b.md"), 0);
        assert_eq!(hit("main.rs"), 0);
        assert_eq!(
            touched_paths(
                "terminal",
                &serde_json::json!({"command": "python3 -m pytest tests/test_x.py -k 'a'"}),
                "/w"
            ),
            ["tests/test_x.py"]
        );
        assert_eq!(
            touched_paths(
                "file_editor",
                &serde_json::json!({"path": "/w/src/a.py"}),
                "/w"
            ),
            ["src/a.py"]
        );
        assert!(touched_paths(
            "file_editor",
            &serde_json::json!({"path": "/etc/passwd"}),
            "/w"
        )
        .is_empty());
    }

    #[test]
    fn instructions_are_bounded_together() {
        let long = "x".repeat(INSTRUCTIONS_MAX_CHARS - 10);
        let bounded = bound_instructions(vec![
            ("AGENTS.md".into(), long.clone()),
            ("sub/AGENTS.md".into(), "y".repeat(50)),
            ("deep/AGENTS.md".into(), "z".into()),
        ]);
        let files: Vec<(u64, bool)> = bounded.iter().map(|(f, _)| (f.chars, f.cut)).collect();
        assert_eq!(files, [(long.len() as u64, false), (10, true), (0, true)]);
        let section = prompt_section(&bounded, &[]);
        assert!(section.contains("## sub/AGENTS.md\nyyyyyyyyyy\n[… the rest was left out"));
        assert!(!section.contains("deep/AGENTS.md"));
    }
}
