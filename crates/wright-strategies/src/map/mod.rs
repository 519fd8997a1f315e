//! The workspace map: what a person sees in their first ten seconds in a repository —
//! its files as a tree (summarised for a big one), its languages, the test and build
//! commands its project files declare, and its last commits — written once, before the
//! agent's first step, into the first user message.
//!
//! Guarantees: the map is a pure function of what was gathered (sorted, no clock, no
//! environment), so the same start commit gives the same bytes and a local server's cache
//! of the prompt's prefix stays valid across conversations; it stays within `MAX_BYTES`
//! whatever the repository's size; every name and subject in it is made printable and
//! clipped. Gathering (`gather`) reads the user's repository through git's object store
//! or walks a plain directory beneath its descriptor without following links; project
//! files are read as bounded data and never run.

mod change;
mod detect;
mod gather;
mod tree;

pub use change::render_last_change;
pub use change::MAX_DIFF_BYTES;
pub use detect::Command;
pub use detect::CommandKind;
pub use gather::from_directory;
pub use gather::from_git;

/// The most a map may take, in bytes: 400 tokens even at three bytes a token (wright's
/// first estimate before a server reports real counts).
pub const MAX_BYTES: usize = 1200;
/// Recent commits shown.
pub const COMMITS: usize = 5;
/// A file name or a commit subject is clipped at this many characters.
const MAX_NAME_CHARS: usize = 80;
const MAX_SUBJECT_CHARS: usize = 72;
/// A project file is read only up to this size.
pub const MAX_PROJECT_FILE: usize = 64 << 10;

/// What the map is made from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MapInput {
    /// Tracked files (or, outside git, the files found), relative, `/`-separated.
    pub files: Vec<String>,
    /// The listing stopped at its bound: there are more files than these.
    pub more_files: bool,
    /// The project files read at the workspace's top: (name, content).
    pub project_files: Vec<(String, String)>,
    /// Newest first: (short id, subject).
    pub commits: Vec<(String, String)>,
    /// Where the files came from, for the map's first line.
    pub source: Source,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Source {
    /// The tracked files of the commit the conversation starts from.
    #[default]
    Commit,
    /// A directory outside git, as found at the start.
    Directory,
}

/// The parts of a map, for measuring what each costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Heading,
    Languages,
    Commands,
    Files,
    Commits,
}

/// A rendered map and the bytes each part took.
#[derive(Debug, Clone, PartialEq)]
pub struct Map {
    pub text: String,
    pub parts: Vec<(Part, usize)>,
}

/// Renders the map of `input`, at most `MAX_BYTES` long.
pub fn render(input: &MapInput) -> Map {
    let mut files: Vec<String> = input
        .files
        .iter()
        .map(|f| clean(f, MAX_NAME_CHARS))
        .collect();
    files.sort();
    files.dedup();
    let heading = match input.source {
        Source::Commit => "# Workspace map (the tracked files at the start; paths are relative to the workspace)\n",
        Source::Directory => "# Workspace map (the files at the start; paths are relative to the workspace)\n",
    }
    .to_string();
    let languages = detect::languages(&files)
        .map(|line| format!("Languages: {line}\n"))
        .unwrap_or_default();
    let commands = detect::commands(&files, &input.project_files)
        .iter()
        .map(|command| {
            format!(
                "{}: {} (from {})\n",
                command.kind.label(),
                command.line,
                command.from
            )
        })
        .collect::<String>();
    let commits = if input.commits.is_empty() {
        String::new()
    } else {
        let mut text = String::from("Recent commits:\n");
        for (id, subject) in input.commits.iter().take(COMMITS) {
            text.push_str(&format!(
                "{} {}\n",
                clean(id, 12),
                clean(subject, MAX_SUBJECT_CHARS)
            ));
        }
        text
    };
    let fixed = heading.len() + languages.len() + commands.len() + commits.len();
    let files_text = tree::render(&files, input.more_files, MAX_BYTES.saturating_sub(fixed));
    let parts = vec![
        (Part::Heading, heading.len()),
        (Part::Languages, languages.len()),
        (Part::Commands, commands.len()),
        (Part::Files, files_text.len()),
        (Part::Commits, commits.len()),
    ];
    let text = format!("{heading}{languages}{commands}{files_text}{commits}");
    Map {
        text: text.trim_end().to_string(),
        parts,
    }
}

/// The first test command the project's files declare, as the map names it: what wright
/// runs itself before the first step when asked to (`--first-look`). Written by wright
/// from what it found (`cargo test`, `make test`, `python3 -m unittest`…), never a line
/// copied from the workspace; it runs in the sandbox like any command.
pub fn test_command(input: &MapInput) -> Option<String> {
    let mut files = input.files.clone();
    files.sort();
    detect::commands(&files, &input.project_files)
        .into_iter()
        .find(|command| command.kind == CommandKind::Test)
        .map(|command| command.line)
}

/// `text` on one line, printable, at most `max` characters.
fn clean(text: &str, max: usize) -> String {
    let printable: String = wright_protocol::printable(text)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match printable.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &printable[..at]),
        None => printable,
    }
}

#[cfg(test)]
mod tests;
