//! Tasks with no failing test (`[assist]` piece `file-versions`): "add an option
//! --limit", "the default port must be 3000, overridable by PORT". When the first look
//! found the repository's tests passing, a small model cannot drive the long view-edit
//! loop such a task takes, but it can often write a short file anew (Aider's "whole"
//! format) and a small check of what the task asks (Agentless's reproduction test). So,
//! before the first step, wright finds the file(s) the task is about (`localise`: names
//! and identifiers of the task in the files' names and texts; configuration files —
//! JSON, TOML, YAML, `.env`, config modules — are files like others), asks apart for a
//! check of the requested behaviour (a short shell script) and, in requests of their
//! own, for the file changed, whole. A check that already passes before any change is
//! discarded. Each version is put in place through the `file_editor`, the repository's
//! tests and the check are run in the sandbox, and the first version with which both pass
//! stays; the others are taken out again.
//!
//! The check is wright's own: shown in the report as such (see `AccountAtFinish`), never
//! counted as the repository's tests, and never written into the workspace, so never
//! committed.
//!
//! Guarantees: every decision is a `candidate` event (a version of the whole file: an
//! empty `name`, the check in `check`), so the history shows a kept version as it shows
//! one of a failing function, and a resumed run asks nothing again (the log holds a
//! candidate or a step). A file is recorded before a version goes in (see
//! `first_look::version_try`), so a wright killed meanwhile has it put back on resume.

use crate::first_look::version_try::put_back;
use crate::first_look::version_try::record_before;
use crate::first_look::version_try::settled;
use crate::first_look::version_try::Before;
use crate::FIRST_LOOK_CALL;
use std::time::Instant;
use wright_core::strategy::Context;
use wright_core::strategy::RunStart;
use wright_core::strategy::Strategy;
use wright_core::StoreError;
use wright_llm::ChatMessage;
use wright_llm::StreamDelta;
use wright_protocol::Candidate;
use wright_protocol::CandidateOutcome;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;
use wright_tools::Tool;
use wright_tools::Workspace;

/// Files asked about at most, likeliest first.
const FILES: usize = 2;
/// Versions asked for of each file; checks asked for at most.
const TRIES_PER_FILE: usize = 2;
const CHECK_TRIES: usize = 2;
/// A file written whole must be short (the whole format is for small files).
const MAX_LINES: usize = 200;
const MAX_BYTES: usize = 12_000;
/// An answer's tokens: a file of up to 200 short lines.
const TOKENS: u32 = 2_000;
const TEMPERATURE: f32 = 0.7;
/// The least score a file needs to be asked about (see `localise`).
const MIN_SCORE: u32 = 2;

/// Text files a task may be about, by extension (and `.env` files by name).
const EXTENSIONS: &[&str] = &[
    "py", "rs", "js", "mjs", "cjs", "ts", "go", "rb", "sh", "json", "toml", "yaml", "yml", "ini",
    "cfg", "env", "conf",
];
/// Words of a task that say nothing of where (a few languages).
const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "must", "should", "from", "into", "when", "then",
    "are", "can", "its", "not", "les", "des", "une", "que", "pour", "dans", "der", "die", "das",
    "und", "mit", "con", "para", "por", "una", "per", "che", "del", "add",
];

#[derive(Debug)]
pub struct FileVersions {
    on: bool,
    /// The log holds a candidate or a step of the agent: it is too late, or done.
    engaged: bool,
}

impl Default for FileVersions {
    fn default() -> Self {
        Self {
            on: true,
            engaged: false,
        }
    }
}

impl FileVersions {
    pub const NAME: &'static str = "file-versions";

    pub fn off() -> Self {
        Self {
            on: false,
            ..Self::default()
        }
    }
}

#[async_trait::async_trait]
impl Strategy for FileVersions {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn absorb(&mut self, event: &Event) {
        match &event.body {
            EventBody::Candidate(_) => self.engaged = true,
            EventBody::Action { .. } if event.source == Source::Agent => self.engaged = true,
            _ => {}
        }
    }

    async fn before_first_step(
        &mut self,
        cx: &mut Context<'_>,
        run: &RunStart,
    ) -> Result<(), StoreError> {
        if !self.on || self.engaged {
            return Ok(());
        }
        let Some(tests) = passing_first_look(cx.view().events()) else {
            return Ok(());
        };
        let (workspace, editor, task, client) = {
            let view = cx.view();
            let client = view.client().for_samples(TOKENS, TEMPERATURE);
            let editor = view.tools().get("file_editor").cloned();
            (view.workspace().cloned(), editor, view.task(), client)
        };
        let (Some(workspace), Some(editor)) = (workspace, editor) else {
            return Ok(());
        };
        let files = localise(&workspace, &task);
        if files.is_empty() {
            return Ok(());
        }
        self.engaged = true;
        let asking = Asking {
            tests: &tests,
            client: &client,
            editor: editor.as_ref(),
            task: &task,
            until: run.max_time.map(|max_time| run.started + max_time / 2),
        };
        let Some(check) = asking.check(cx, &files[0]).await? else {
            return Ok(());
        };
        let record = cx.log_path().to_path_buf();
        let mut before: Vec<Before> = Vec::new();
        'files: for (path, text) in &files {
            for _ in 0..TRIES_PER_FILE {
                if asking.out_of_time(cx) {
                    break 'files;
                }
                let question = version_question(&task, path, text);
                let Some(answer) = asking.ask(cx, &question).await else {
                    break 'files;
                };
                let new = answer
                    .failed
                    .is_none()
                    .then(|| fenced(&answer.text, &[lang(path)]))
                    .flatten()
                    .map(|code| with_ending(code, text));
                let mut event = asking.event(path, text, &question, &answer, &check);
                event.new_str = new.clone();
                event.outcome = match (&answer.failed, &new) {
                    (Some(why), _) => CandidateOutcome::NotTried { why: why.clone() },
                    (None, None) => CandidateOutcome::NoCode,
                    (None, Some(new)) if new == text => CandidateOutcome::Unchanged,
                    (None, Some(new)) => {
                        if !record_before(&record, &workspace, &mut before, &event) {
                            CandidateOutcome::NotTried {
                                why: format!("{path} could not be recorded as it was first"),
                            }
                        } else {
                            asking.try_in_place(cx, path, text, new, &check).await
                        }
                    }
                };
                let passed = event.outcome == CandidateOutcome::Passed;
                cx.log(Source::Environment, EventBody::Candidate(event))?;
                if passed {
                    break 'files;
                }
            }
        }
        if !before.is_empty() {
            settled(&record);
        }
        Ok(())
    }
}

/// The first look's command, when it ran and passed: the repository's tests.
fn passing_first_look(events: &[Event]) -> Option<String> {
    let passed = events.iter().any(|event| {
        matches!(&event.body, EventBody::Observation { call_id, exit_code: Some(0), .. }
            if call_id == FIRST_LOOK_CALL)
    });
    if !passed {
        return None;
    }
    events.iter().find_map(|event| match &event.body {
        EventBody::Action {
            call_id, arguments, ..
        } if call_id == FIRST_LOOK_CALL && event.source == Source::Environment => arguments
            .get("command")
            .and_then(|c| c.as_str())
            .map(str::to_string),
        _ => None,
    })
}

/// What every request and try shares.
struct Asking<'a> {
    tests: &'a str,
    client: &'a wright_llm::Client,
    editor: &'a dyn Tool,
    task: &'a str,
    until: Option<Instant>,
}

/// One answer to a request asked apart.
struct Answer {
    text: String,
    usage: wright_llm::TokenUsage,
    failed: Option<String>,
}

impl Asking<'_> {
    fn out_of_time(&self, cx: &Context<'_>) -> bool {
        cx.run_token().is_cancelled() || self.until.is_some_and(|until| Instant::now() >= until)
    }

    /// Asks `question` apart (no tools, no history); `None` when cancelled meanwhile.
    async fn ask(&self, cx: &mut Context<'_>, question: &str) -> Option<Answer> {
        let messages = vec![ChatMessage::User {
            content: question.to_string(),
        }];
        let body = self.client.request_body(&messages, &[]);
        let mut ignore = |_: StreamDelta| {};
        let cancel = cx.run_token().clone();
        let reply = tokio::select! {
            reply = self.client.complete_body(body, "candidate", &mut ignore) => reply,
            _ = cancel.cancelled() => return None,
        };
        let answer = match reply {
            Ok(response) => Answer {
                text: response.text,
                usage: response.usage.unwrap_or_default(),
                failed: None,
            },
            Err(err) => Answer {
                text: String::new(),
                usage: Default::default(),
                failed: Some(err.to_string()),
            },
        };
        cx.count_usage(&answer.usage);
        Some(answer)
    }

    /// A check of the task that fails before any change, asked for up to `CHECK_TRIES`
    /// times; each discarded one logged as a `not_tried` candidate saying why.
    async fn check(
        &self,
        cx: &mut Context<'_>,
        (path, text): &(String, String),
    ) -> Result<Option<String>, StoreError> {
        let question = check_question(self.task, path, text);
        for _ in 0..CHECK_TRIES {
            if self.out_of_time(cx) {
                return Ok(None);
            }
            let Some(answer) = self.ask(cx, &question).await else {
                return Ok(None);
            };
            let script = fenced(&answer.text, &["sh", "bash", "shell", "console"]);
            let why = match (&answer.failed, &script) {
                (Some(why), _) => why.clone(),
                (None, None) => "the answer wrote no check".to_string(),
                (None, Some(script)) => match cx.run_in_root(&without_input(script)).await {
                    None => return Ok(None),
                    Some((_, Some(code))) if code != 0 => return Ok(Some(script.clone())),
                    Some((_, Some(_))) => {
                        "the check passes before any change, so it shows nothing: discarded"
                            .to_string()
                    }
                    Some((_, None)) => "the check did not finish: discarded".to_string(),
                },
            };
            let mut event = self.event(
                path,
                text,
                &question,
                &answer,
                script.as_deref().unwrap_or(""),
            );
            event.outcome = CandidateOutcome::NotTried { why };
            cx.log(Source::Environment, EventBody::Candidate(event))?;
        }
        Ok(None)
    }

    /// Puts `new` in place of `old` in `path`, runs the tests and the check: `Passed` and
    /// in place when both pass, else put back.
    async fn try_in_place(
        &self,
        cx: &mut Context<'_>,
        path: &str,
        old: &str,
        new: &str,
        check: &str,
    ) -> CandidateOutcome {
        let edit = match old.is_empty() {
            true => serde_json::json!({"command": "create", "path": path, "file_text": new}),
            false => serde_json::json!({
                "command": "str_replace", "path": path, "old_str": old, "new_str": new,
            }),
        };
        if let Err(err) = self.editor.run(&edit).await {
            return CandidateOutcome::NotTried {
                why: format!("it could not be put in place: {err}"),
            };
        }
        let tests = cx.run_in_root(self.tests).await;
        let checked = match &tests {
            Some((_, Some(0))) => cx.run_in_root(&without_input(check)).await,
            _ => None,
        };
        if matches!(checked, Some((_, Some(0)))) {
            return CandidateOutcome::Passed;
        }
        if let Some(could_not) = put_back(self.editor, path, 1).await {
            return could_not;
        }
        let exit_code = match (tests, checked) {
            (Some((_, Some(0))), Some((_, code))) => code,
            (Some((_, code)), _) => code,
            (None, _) => None,
        };
        CandidateOutcome::Failed { exit_code }
    }

    /// The event of a try at `path`, before what came of it.
    fn event(
        &self,
        path: &str,
        text: &str,
        question: &str,
        answer: &Answer,
        check: &str,
    ) -> Candidate {
        Candidate {
            call_id: FIRST_LOOK_CALL.to_string(),
            path: path.to_string(),
            name: String::new(),
            command: self.tests.to_string(),
            question: question.to_string(),
            answer: answer.text.clone(),
            old_str: text.to_string(),
            new_str: None,
            imports: None,
            outcome: CandidateOutcome::NotTried { why: String::new() },
            prompt_tokens: answer.usage.prompt_tokens,
            completion_tokens: answer.usage.completion_tokens,
            cached_tokens: answer.usage.cached_tokens,
            destination: wright_llm::destination(&self.client.config().base_url),
            check: (!check.is_empty()).then(|| check.to_string()),
        }
    }
}

fn check_question(task: &str, path: &str, text: &str) -> String {
    format!(
        "Task: {task}\n\n{path}:\n```{}\n{text}\n```\n\nWrite a short shell script that checks the task is done: from the repository's root, it runs the program (or loads {path}) and exits with a non-zero code unless it behaves as the task asks. Reply with one ```sh block.",
        lang(path)
    )
}

fn version_question(task: &str, path: &str, text: &str) -> String {
    let lang = lang(path);
    format!(
        "Task: {task}\n\n{path}:\n```{lang}\n{text}\n```\n\nWrite {path} changed as the task asks, whole, in one ```{lang} block. Change nothing else."
    )
}

/// The fence word of `path`'s language (empty when none).
fn lang(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("py") => "python",
        Some("rs") => "rust",
        Some("js" | "mjs" | "cjs") => "javascript",
        Some("ts") => "typescript",
        Some("go") => "go",
        Some("rb") => "ruby",
        Some("sh") => "sh",
        Some("json") => "json",
        Some("toml") => "toml",
        Some("yaml" | "yml") => "yaml",
        _ => "",
    }
}

/// The body of the first fenced block of `text` whose word is one of `words` (or has
/// none), else of the first block.
fn fenced(text: &str, words: &[&str]) -> Option<String> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    let mut open: Option<(String, Vec<&str>)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                if let Some(word) = trimmed.strip_prefix("```") {
                    open = Some((word.trim().to_lowercase(), Vec::new()));
                }
            }
            Some((word, lines)) => {
                if trimmed.starts_with("```") {
                    blocks.push((std::mem::take(word), lines.join("\n")));
                    open = None;
                } else {
                    lines.push(line);
                }
            }
        }
    }
    let chosen = blocks
        .iter()
        .find(|(word, _)| word.is_empty() || words.contains(&word.as_str()))
        .or_else(|| blocks.first())?;
    (!chosen.1.trim().is_empty()).then(|| chosen.1.clone())
}

/// `code` ending as `old` does (a final line break or none).
fn with_ending(code: String, old: &str) -> String {
    let code = code.trim_end_matches('\n').to_string();
    match old.ends_with('\n') {
        true => format!("{code}\n"),
        false => code,
    }
}

/// The files the task is likeliest about, with their texts: at most `FILES`, best first.
/// A file scores for its name or stem in the task, for the task's words in its text (more
/// for words that look like identifiers: `--limit`, `PORT`, `max_rows`), and, when the
/// task speaks of a default, a setting or the environment, for being a configuration
/// file. Test files are the check's business, not the change's.
pub(crate) fn localise(workspace: &Workspace, task: &str) -> Vec<(String, String)> {
    let input = crate::map::from_directory(workspace);
    let lower_task = task.to_lowercase();
    let words = task_words(task);
    let about_settings = [
        "default",
        "environment",
        "env",
        "config",
        "setting",
        "variable",
        "port",
    ]
    .iter()
    .any(|word| lower_task.contains(word));
    let mut scored: Vec<(u32, String, String)> = Vec::new();
    for path in &input.files {
        if !is_candidate(path) {
            continue;
        }
        let Some(text) = wright_tools::editable_text(workspace, path) else {
            continue;
        };
        if text.len() > MAX_BYTES || text.lines().count() > MAX_LINES {
            continue;
        }
        let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
        let stem = name.split('.').next().unwrap_or_default();
        let mut score = 0;
        if lower_task.contains(&path.to_lowercase()) || lower_task.contains(&name) {
            score += 20;
        } else if stem.len() >= 3 && words.iter().any(|(word, _)| word == stem) {
            score += 8;
        }
        let lower_text = text.to_lowercase();
        for (word, identifier) in &words {
            if lower_text.contains(word.as_str()) {
                score += if *identifier { 3 } else { 1 };
            }
        }
        if about_settings && is_config(&name) {
            score += 3;
        }
        if score >= MIN_SCORE {
            scored.push((score, path.clone(), text));
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.len().cmp(&b.1.len())));
    scored
        .into_iter()
        .take(FILES)
        .map(|(_, path, text)| (path, text))
        .collect()
}

/// The task's words of three letters or more, lowercased, each once, and whether it looks
/// like an identifier (an option, a constant, a name with `_`).
fn task_words(task: &str) -> Vec<(String, bool)> {
    let mut words: Vec<(String, bool)> = Vec::new();
    for raw in task.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-')) {
        let identifier = raw.starts_with("--")
            || raw.contains('_')
            || (raw.len() >= 3 && raw.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
        let word = raw.trim_matches('-').to_lowercase();
        if word.chars().count() < 3 || STOP_WORDS.contains(&word.as_str()) {
            continue;
        }
        match words.iter_mut().find(|(known, _)| *known == word) {
            Some((_, known)) => *known |= identifier,
            None => words.push((word, identifier)),
        }
    }
    words
}

/// A source or configuration file that is not a test's, nor a lock file.
fn is_candidate(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower = name.to_lowercase();
    let in_tests = path
        .split('/')
        .any(|part| matches!(part, "tests" | "test" | "__tests__" | "testdata"));
    let test_name = lower.starts_with("test_")
        || lower.contains("_test.")
        || lower.contains(".test.")
        || lower.contains(".spec.");
    let lock = lower.ends_with(".lock") || lower == "package-lock.json";
    let text = lower.starts_with(".env")
        || name
            .rsplit_once('.')
            .is_some_and(|(_, ext)| EXTENSIONS.contains(&ext));
    text && !in_tests && !test_name && !lock
}

fn is_config(name: &str) -> bool {
    name.starts_with(".env")
        || name.contains("config")
        || name.contains("settings")
        || [".json", ".toml", ".yaml", ".yml", ".ini", ".cfg"]
            .iter()
            .any(|ext| name.ends_with(ext))
}

/// The model's check as it is run: its input closed, so a line that reads it (a bare
/// `sh`, a `cat`, a program waiting for a file on its input) ends at once instead of
/// waiting until the terminal gives up. What is logged and shown is the check as written.
fn without_input(script: &str) -> String {
    format!("{{\n{script}\n}} < /dev/null")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_a_task_names_or_speaks_of_comes_first_and_tests_never() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("report.py", "import sys\nROWS = 5\nprint(ROWS)\n");
        write("util.py", "def pad(s):\n    return s\n");
        write("test_report.py", "import report\n# limit rows\n");
        write("settings.json", "{\"port\": 8080}\n");
        write("README.md", "port limit rows\n");
        let workspace = Workspace::new(dir.path()).unwrap();
        let found = localise(&workspace, "Add an option --rows N to report.py, default 5");
        assert_eq!(found[0].0, "report.py");
        assert!(found.iter().all(|(path, _)| path != "test_report.py"));
        let found = localise(
            &workspace,
            "The default port must be 3000, overridable by PORT",
        );
        assert_eq!(found[0].0, "settings.json");
        assert!(localise(&workspace, "zzz qqq").is_empty());
    }

    #[test]
    fn a_block_is_read_by_its_word_else_the_first() {
        let text = "Here:\n```python\nprint(1)\n```\nand\n```sh\npython3 a.py | grep 1\n```\n";
        assert_eq!(
            fenced(text, &["sh"]).as_deref(),
            Some("python3 a.py | grep 1")
        );
        assert_eq!(fenced(text, &["python"]).as_deref(), Some("print(1)"));
        assert_eq!(fenced("no code", &["sh"]), None);
        assert_eq!(with_ending("a\n\n".into(), "b\n"), "a\n");
    }
}
