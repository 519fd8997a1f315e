//! `grep`: a regular expression over the workspace's files, as `path:line:text` (context
//! lines as `path-line-text`), gitignored files, links and binary files left out, as many
//! matches as fit a share of the context window and a count of the rest.

use super::walk;
use super::FilePattern;
use crate::args;
use crate::Tool;
use crate::ToolError;
use crate::ToolOutput;
use crate::Workspace;
use regex::bytes::Regex;
use regex::bytes::RegexBuilder;
use serde_json::json;
use serde_json::Value;
use std::io::Read;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use wright_protocol::count;
use wright_protocol::count_as;

/// Files larger than this are not searched (a log, a data dump): said in the result.
const MAX_FILE_BYTES: u64 = 4 << 20;
/// Bytes read at most in one call, all files together: a bound on its time (a tree of
/// data files nobody ignored).
const MAX_READ_BYTES: u64 = 256 << 20;
/// A file with a NUL byte in its first this many bytes is binary, and not searched.
const BINARY_PROBE: usize = 8192;
/// Each line shown is cut at this many characters (a minified file has long lines).
const LINE_CHARS: usize = 300;
/// Context lines around a match, at most.
const MAX_CONTEXT: i64 = 10;

pub struct GrepTool {
    workspace: Workspace,
    /// Characters of results shown at most (it shrinks with the context window).
    shown: AtomicUsize,
}

impl GrepTool {
    pub fn new(workspace: Workspace) -> Self {
        Self {
            workspace,
            shown: AtomicUsize::new(super::shown_chars(u64::MAX)),
        }
    }
}

/// One search, as the model asked for it.
struct Search {
    regex: Regex,
    glob: Option<FilePattern>,
    context: usize,
    budget: usize,
}

#[async_trait::async_trait]
impl Tool for GrepTool {
    fn name(&self) -> &'static str {
        "grep"
    }

    fn fit_window(&self, tokens: u64) {
        self.shown
            .store(super::shown_chars(tokens), Ordering::Relaxed);
    }

    fn schema(&self) -> Value {
        json!({"type": "function", "function": {
            "name": "grep",
            "description": "Search file contents with a regex (gitignored and binary files skipped). Prints path:line:text.",
            "parameters": {"type": "object", "properties": {
                "pattern": {"type": "string"},
                "path": {"type": "string", "description": "File or directory (default: the workspace)."},
                "glob": {"type": "string", "description": "Only files matching, e.g. *.py"},
                "case": {"type": "boolean", "description": "Match case (default: only if the pattern has capitals)."},
                "context": {"type": "integer", "description": "Lines shown around each match."}
            }, "required": ["pattern"]}
        }})
    }

    async fn run(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        let pattern = args::required_str(arguments, "pattern")?;
        let path = args::optional_str(arguments, "path")?.map(str::to_string);
        let glob = args::optional_str(arguments, "glob")?
            .filter(|g| !g.trim().is_empty())
            .map(|g| FilePattern::new(g, "glob"))
            .transpose()?;
        let case = args::optional_bool(arguments, "case")?
            .unwrap_or_else(|| pattern.chars().any(char::is_uppercase));
        let context = args::optional_int(arguments, "context")?
            .unwrap_or(0)
            .clamp(0, MAX_CONTEXT) as usize;
        let regex = RegexBuilder::new(pattern)
            .case_insensitive(!case)
            .size_limit(16 << 20)
            .build()
            .map_err(|err| {
                ToolError::Model(format!(
                    "the pattern is not a valid regular expression: {err}\nEscape characters you mean literally, like \\( \\[ \\. \\{{"
                ))
            })?;
        let search = Search {
            regex,
            glob,
            context,
            budget: self.shown.load(Ordering::Relaxed),
        };
        let workspace = self.workspace.clone();
        // The walk blocks: off the runtime's threads, so calls run side by side.
        tokio::task::spawn_blocking(move || search.run(&workspace, path.as_deref()))
            .await
            .map_err(|err| ToolError::Fatal(format!("grep stopped: {err}")))?
            .map(ToolOutput::text)
    }
}

/// What the search found and left out so far.
#[derive(Default)]
struct Found {
    text: String,
    matches: usize,
    files: usize,
    hidden_matches: usize,
    hidden_files: usize,
    binary: usize,
    large: usize,
    /// Bytes read so far.
    read: u64,
}

impl Search {
    fn run(&self, workspace: &Workspace, path: Option<&str>) -> Result<String, ToolError> {
        let mut found = Found::default();
        let (place, ended) = match walk::start(workspace, path)? {
            walk::Start::File(file) => {
                // A file named outright is searched even if it is ignored or its name
                // does not match the glob.
                let name = file
                    .file_name()
                    .map(|n| n.to_os_string())
                    .unwrap_or_default();
                let parent = file.parent().filter(|p| !p.as_os_str().is_empty());
                let dir = match parent {
                    Some(parent) => workspace.dir().open_dir(parent),
                    None => workspace.dir().try_clone(),
                }
                .map_err(|err| workspace.open_error(&file, err))?;
                let meta = dir
                    .symlink_metadata(&name)
                    .map_err(|err| workspace.open_error(&file, err))?;
                let at = walk::FileAt {
                    dir: &dir,
                    name: &name,
                    path: &file,
                    len: meta.len(),
                    modified: std::time::SystemTime::UNIX_EPOCH,
                };
                self.file(&at, &mut found);
                (workspace.display(&file), walk::Ended::Complete)
            }
            walk::Start::Dir(start) => {
                let ended = walk::walk(workspace, &start, |file| {
                    if self
                        .glob
                        .as_ref()
                        .is_none_or(|glob| glob.matches(super::below(file.path, &start)))
                    {
                        self.file(file, &mut found);
                    }
                    match found.read > MAX_READ_BYTES {
                        true => walk::Visit::Stop,
                        false => walk::Visit::Continue,
                    }
                })?;
                (workspace.display(&start), ended)
            }
        };
        Ok(found.report(&place, ended))
    }

    /// Searches one file, adding what fits to `found`.
    fn file(&self, file: &walk::FileAt, found: &mut Found) {
        if file.len > MAX_FILE_BYTES {
            found.large += 1;
            return;
        }
        let Some(handle) = file.open() else {
            return;
        };
        let mut bytes = Vec::new();
        if handle
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .is_err()
        {
            return;
        }
        found.read += bytes.len() as u64;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            found.large += 1;
            return;
        }
        if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
            found.binary += 1;
            return;
        }
        let lines: Vec<&[u8]> = bytes
            .split(|b| *b == b'\n')
            .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
            .collect();
        let hits: Vec<usize> = (0..lines.len())
            .filter(|&n| self.regex.is_match(lines[n]))
            .collect();
        if hits.is_empty() {
            return;
        }
        let shown_path = file.path.display().to_string();
        // Always some matches of the first file, even past the budget; then whole groups
        // of lines while they fit.
        let room = self.budget.saturating_sub(found.text.len());
        let first = found.files == 0;
        let (block, shown) = self.blocks(&shown_path, &lines, &hits, room, first);
        if shown < hits.len() {
            found.hidden_matches += hits.len() - shown;
            found.hidden_files += 1;
        }
        if shown == 0 {
            return;
        }
        if !found.text.is_empty() && self.context > 0 {
            found.text.push_str("--\n");
        }
        found.text.push_str(&block);
        found.matches += shown;
        found.files += 1;
    }

    /// The matching lines of one file with their context, groups apart separated by
    /// `--`, as many groups as fit in `room` characters (the first one anyway when
    /// `first`); and how many of the hits they show.
    fn blocks(
        &self,
        path: &str,
        lines: &[&[u8]],
        hits: &[usize],
        room: usize,
        first: bool,
    ) -> (String, usize) {
        let mut text = String::new();
        let mut shown = 0;
        let mut last_shown: Option<usize> = None;
        let mut at_hit = 0;
        while at_hit < hits.len() {
            let n = hits[at_hit];
            let from = n.saturating_sub(self.context);
            let to = (n + self.context).min(lines.len().saturating_sub(1));
            let from = last_shown.map_or(from, |last| from.max(last + 1));
            let mut group = String::new();
            if last_shown.is_some_and(|last| from > last + 1) {
                group.push_str("--\n");
            }
            for (at, line) in lines.iter().enumerate().take(to + 1).skip(from) {
                let mark = if hits.binary_search(&at).is_ok() {
                    ':'
                } else {
                    '-'
                };
                group.push_str(&format!("{path}{mark}{}{mark}{}\n", at + 1, clip(line)));
            }
            if text.len() + group.len() > room && !(first && shown == 0) {
                break;
            }
            text.push_str(&group);
            last_shown = Some(to.max(last_shown.unwrap_or(0)));
            // Hits shown as context of this one are not started again.
            let before = at_hit;
            while at_hit < hits.len() && hits[at_hit] <= to {
                at_hit += 1;
            }
            shown += at_hit - before;
        }
        (text, shown)
    }
}

/// A line as shown: lossy UTF-8, cut at `LINE_CHARS` characters.
fn clip(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    match text.char_indices().nth(LINE_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.into_owned(),
    }
}

impl Found {
    fn report(mut self, place: &str, ended: walk::Ended) -> String {
        let mut notes = Vec::new();
        if self.matches == 0 && self.hidden_matches == 0 {
            notes.push(format!(
                "No matches in {place} (gitignored files and links are skipped)."
            ));
        }
        if self.hidden_matches > 0 {
            notes.push(format!(
                "[{} in {} not shown; narrow the pattern, path or glob]",
                count_as(self.hidden_matches as u64, "more match", "more matches"),
                count(self.hidden_files as u64, "file")
            ));
        }
        if self.binary > 0 || self.large > 0 {
            let mut skipped = Vec::new();
            if self.binary > 0 {
                skipped.push(count(self.binary as u64, "binary file"));
            }
            if self.large > 0 {
                skipped.push(format!(
                    "{} over {} MB",
                    count(self.large as u64, "file"),
                    MAX_FILE_BYTES >> 20
                ));
            }
            notes.push(format!("[skipped {}]", skipped.join(", ")));
        }
        if ended == walk::Ended::Stopped {
            notes.push(format!(
                "[stopped after reading {} MB; give a narrower path or glob]",
                MAX_READ_BYTES >> 20
            ));
        }
        notes.extend(super::walk_note(ended));
        for note in notes {
            self.text.push_str(&note);
            self.text.push('\n');
        }
        self.text.trim_end().to_string()
    }
}
