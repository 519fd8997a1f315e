//! What the repository and the user teach a new conversation, read before its first
//! step: the always-on instructions — `AGENTS.md` at the repository's top and in each
//! directory down to the one worked in (`CLAUDE.md` where a directory has no
//! `AGENTS.md`; `.cursorrules` or `.github/copilot-instructions.md` at the top when it has
//! neither), OpenHands' `.openhands/microagents/repo.md` — and the skills:
//! `.agents/skills/*/SKILL.md`, `.openhands/skills/` (folders with `SKILL.md`, or `*.md`),
//! OpenHands' older `.openhands/microagents/*.md`, and the user's own
//! `~/.config/wright/skills/`.
//!
//! The repository's files are read as its configuration is (`repo_config`): from the
//! user's repository at the commit the conversation starts from, never the agent's clone
//! or a work tree, and never through a link; in a plain directory, beneath it. Everything
//! is bounded: each file, the instructions together, each skill, their number.

use crate::repo_config::Read;
use crate::repo_config::RepoFiles;
use std::path::Path;
use wright_core::skills::SkillFile;
use wright_protocol::InstructionFile;
use wright_protocol::SkillEntry;

/// A file larger than this is not read.
const MAX_FILE_BYTES: usize = 64 << 10;
/// At most this many skills.
const MAX_SKILLS: usize = 32;
/// At most this many files are looked at in a skills folder.
const MAX_LISTED: usize = 256;

/// The instructions and skills of a new conversation.
#[derive(Debug, Clone, Default)]
pub struct Teaching {
    /// Always-on instructions, most general first, bounded together.
    pub instructions: Vec<(InstructionFile, String)>,
    pub skills: Vec<SkillEntry>,
    /// Files that were there but not read, and why.
    pub skipped: Vec<String>,
}

impl Teaching {
    /// The paths of the repository this reads for work in `sub` (for `RepoFiles::list`).
    pub fn paths(sub: &str) -> Vec<String> {
        let mut paths: Vec<String> = levels(sub)
            .iter()
            .flat_map(|level| {
                ["AGENTS.md", "CLAUDE.md"].map(|name| match level.as_str() {
                    "" => name.to_string(),
                    _ => format!("{level}/{name}"),
                })
            })
            .collect();
        paths.extend(
            [
                ".cursorrules",
                ".github/copilot-instructions.md",
                ".openhands/microagents",
                ".agents/skills",
                ".openhands/skills",
            ]
            .map(str::to_string),
        );
        paths
    }

    /// Reads what `files` (the repository at the start commit, or a plain directory,
    /// listed with `paths(sub)`) teach for work in its subdirectory `sub` (`""` for the
    /// top), and the user's own skills in `user_skills`.
    pub fn read(files: &RepoFiles, sub: &str, user_skills: Option<&Path>) -> Self {
        let mut reader = Reader {
            source: files,
            skipped: Vec::new(),
            always: Vec::new(),
            skills: Vec::new(),
        };
        let levels = levels(sub);
        for (n, level) in levels.iter().enumerate() {
            reader.instructions_at(level, n == 0);
            if n == 0 {
                reader.instruction(".openhands/microagents/repo.md");
            }
        }
        reader.repository_skills();
        if let Some(dir) = user_skills {
            reader.user_skills(dir);
        }
        let Reader {
            skipped,
            always,
            skills,
            ..
        } = reader;
        Self {
            instructions: wright_core::skills::bound_instructions(always),
            skills,
            skipped,
        }
    }

    /// The system prompt's section for them (empty when there is nothing).
    pub fn prompt_section(&self) -> String {
        wright_core::skills::prompt_section(&self.instructions, &self.skills)
    }

    /// What they add to every request, in tokens (characters / 4).
    pub fn prompt_tokens(&self) -> u64 {
        // A resumed conversation's instructions are known by their size only (their
        // text is in its logged system prompt).
        let unread: u64 = self
            .instructions
            .iter()
            .filter(|(_, text)| text.is_empty())
            .map(|(file, _)| file.chars)
            .sum();
        (self.prompt_section().chars().count() as u64 + unread).div_ceil(4)
    }

    /// A warning when they take more than a quarter of a `window` of tokens: the model
    /// has that much less room to work in, at every step.
    pub fn budget_warning(&self, window: Option<u64>) -> Option<String> {
        let window = window?;
        let tokens = self.prompt_tokens();
        (tokens * 4 > window).then(|| {
            format!(
                "the repository's instructions and skills take ~{tokens} tokens of the prompt, more than a quarter of the {window}-token window"
            )
        })
    }

    /// The instructions' records, for the log.
    pub fn instruction_files(&self) -> Vec<InstructionFile> {
        self.instructions
            .iter()
            .map(|(file, _)| file.clone())
            .collect()
    }

    /// What was read, in a few words per item (for the header and `doctor`).
    pub fn describe(&self) -> Vec<String> {
        let mut lines = Vec::new();
        let files: Vec<String> = self
            .instructions
            .iter()
            .filter(|(file, _)| file.chars > 0)
            .map(|(file, _)| match file.cut {
                true => format!("{} (cut)", file.path),
                false => file.path.clone(),
            })
            .collect();
        if !files.is_empty() {
            lines.push(format!("instructions {}", files.join(", ")));
        }
        if !self.skills.is_empty() {
            let skills: Vec<String> = self
                .skills
                .iter()
                .map(|skill| {
                    let how = match (skill.triggers.is_empty(), skill.paths.is_empty()) {
                        (true, true) => "on demand",
                        (false, true) => "keywords",
                        (true, false) => "paths",
                        (false, false) => "keywords, paths",
                    };
                    format!("{} ({how})", skill.name)
                })
                .collect();
            lines.push(format!("skills {}", skills.join(", ")));
        }
        if !lines.is_empty() {
            let triggered: usize = self
                .skills
                .iter()
                .filter(|s| !s.on_demand())
                .map(|s| s.text.chars().count())
                .sum();
            let mut cost = format!("~{} tokens in the prompt", self.prompt_tokens());
            if triggered > 0 {
                cost.push_str(&format!(
                    ", up to ~{} more as skills are triggered",
                    triggered.div_ceil(4)
                ));
            }
            lines.push(format!("  ({cost})"));
        }
        for skipped in &self.skipped {
            lines.push(format!("not read: {skipped}"));
        }
        lines
    }
}

/// The directories from the top down to `sub`: `""`, `a`, `a/b`.
fn levels(sub: &str) -> Vec<String> {
    let mut levels = vec![String::new()];
    let mut path = String::new();
    for part in sub.split('/').filter(|p| !p.is_empty() && *p != ".") {
        if !path.is_empty() {
            path.push('/');
        }
        path.push_str(part);
        levels.push(path.clone());
    }
    levels
}

struct Reader<'a> {
    source: &'a RepoFiles<'a>,
    skipped: Vec<String>,
    always: Vec<(String, String)>,
    skills: Vec<SkillEntry>,
}

impl Reader<'_> {
    fn read(&mut self, path: &str) -> Option<String> {
        match self.source.read_text(path, MAX_FILE_BYTES) {
            Read::Text(text) => Some(text),
            Read::Missing => None,
            Read::Skipped(why) => {
                self.skipped.push(format!("{path} ({why})"));
                None
            }
        }
    }

    /// `AGENTS.md` in `level`, else `CLAUDE.md`; at the top, else `.cursorrules` or
    /// GitHub Copilot's instructions.
    fn instructions_at(&mut self, level: &str, top: bool) {
        let at = |name: &str| match level {
            "" => name.to_string(),
            _ => format!("{level}/{name}"),
        };
        let mut names = vec!["AGENTS.md", "CLAUDE.md"];
        if top {
            names.extend([".cursorrules", ".github/copilot-instructions.md"]);
        }
        for name in names {
            if self.instruction(&at(name)) {
                return;
            }
        }
    }

    /// Reads `path` as always-on instructions; whether it was there.
    fn instruction(&mut self, path: &str) -> bool {
        match self.read(path) {
            Some(text) if !text.trim().is_empty() => {
                self.always.push((path.to_string(), text));
                true
            }
            _ => false,
        }
    }

    fn repository_skills(&mut self) {
        for (dir, loose) in [
            (".agents/skills", false),
            (".openhands/skills", true),
            (".openhands/microagents", true),
        ] {
            for file in self.source.files_under(dir, MAX_LISTED) {
                let Some((name, path)) = skill_file(&file, loose) else {
                    continue;
                };
                if dir == ".openhands/microagents" && file == "repo.md" {
                    continue;
                }
                let full = format!("{dir}/{path}");
                if let Some(text) = self.read(&full) {
                    self.add(&full, &name, &text);
                }
            }
        }
    }

    /// The user's own skills: folders with `SKILL.md`, or `*.md` files (their own files,
    /// read as they are).
    fn user_skills(&mut self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_str()?.to_string();
                match entry.path().is_dir() {
                    true => Some(format!("{name}/SKILL.md")),
                    false => Some(name),
                }
            })
            .collect();
        names.sort();
        for file in names.into_iter().take(MAX_LISTED) {
            let Some((name, _)) = skill_file(&file, true) else {
                continue;
            };
            let path = dir.join(&file);
            let shown = format!("~/{}", Path::new("skills").join(&file).display());
            match std::fs::metadata(&path) {
                Ok(meta) if meta.is_file() && meta.len() <= MAX_FILE_BYTES as u64 => {}
                Ok(meta) if meta.is_file() => {
                    self.skipped
                        .push(format!("{shown} (larger than {MAX_FILE_BYTES} bytes)"));
                    continue;
                }
                _ => continue,
            }
            match std::fs::read_to_string(&path) {
                Ok(text) => self.add(&shown, &name, &text),
                Err(err) => self.skipped.push(format!("{shown} ({err})")),
            }
        }
    }

    /// A skill file's content: a skill (its name not taken yet, room left) or always-on
    /// instructions.
    fn add(&mut self, path: &str, name: &str, text: &str) {
        match wright_core::skills::parse_skill(path, name, text) {
            Ok(SkillFile::AlwaysOn(text)) => {
                if !text.is_empty() {
                    self.always.push((path.to_string(), text));
                }
            }
            Ok(SkillFile::Skill(skill)) => {
                if self.skills.iter().any(|s| s.name == skill.name) {
                    self.skipped
                        .push(format!("{path} (a skill named {} came first)", skill.name));
                } else if self.skills.len() >= MAX_SKILLS {
                    self.skipped
                        .push(format!("{path} (more than {MAX_SKILLS} skills)"));
                } else {
                    self.skills.push(skill);
                }
            }
            Err(why) => self.skipped.push(why),
        }
    }
}

/// A listed file that is a skill: `NAME/SKILL.md` (its folder's name), or with `loose`
/// a `NAME.md` beside them; its name and its path in the folder.
fn skill_file(file: &str, loose: bool) -> Option<(String, String)> {
    match file.split('/').collect::<Vec<_>>()[..] {
        [folder, "SKILL.md"] => Some((folder.to_string(), file.to_string())),
        [name] if loose && name.ends_with(".md") && !name.eq_ignore_ascii_case("README.md") => {
            Some((name.trim_end_matches(".md").to_string(), file.to_string()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_directory_teaches_from_the_top_down() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |path: &str, text: &str| {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("CLAUDE.md", "Top rules.");
        write("src/AGENTS.md", "Src rules.");
        write("src/CLAUDE.md", "Not read: src has AGENTS.md.");
        write(
            ".agents/skills/deploy/SKILL.md",
            "---\ndescription: Deploying\n---\nmake deploy",
        );
        write(
            ".openhands/microagents/docker.md",
            "---\ntriggers: [docker]\n---\nuse podman",
        );
        write(".openhands/microagents/repo.md", "Repo microagent.");
        std::fs::create_dir_all(root.join("src/lib")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("src/lib/AGENTS.md")).unwrap();
        let source = crate::repo_config::RepoConfigSource::Directory(root.to_path_buf());
        let files = RepoFiles::list(&source, &Teaching::paths("src/lib"));
        let teaching = Teaching::read(&files, "src/lib", None);
        let files: Vec<(&str, &str)> = teaching
            .instructions
            .iter()
            .map(|(file, text)| (file.path.as_str(), text.as_str()))
            .collect();
        assert_eq!(
            files,
            [
                ("CLAUDE.md", "Top rules."),
                (".openhands/microagents/repo.md", "Repo microagent."),
                ("src/AGENTS.md", "Src rules."),
            ]
        );
        let skills: Vec<&str> = teaching.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(skills, ["deploy", "docker"]);
        assert_eq!(
            teaching.skipped,
            ["src/lib/AGENTS.md (a link, not followed)"]
        );
        let section = teaching.prompt_section();
        assert!(section.contains("## CLAUDE.md\nTop rules."), "{section}");
        assert!(section.contains("# Skills\n") && section.contains("- deploy: Deploying"));
        assert!(!section.contains("docker"), "{section}");
    }
}
