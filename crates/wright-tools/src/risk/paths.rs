//! Where a path a call writes lies: inside the workspace, in a scratch place (the
//! sandbox's private tmp, `/dev/null`), in `.git` (hooks and configuration git runs), or
//! outside. Judged lexically from the text, since the call has not run yet.

use super::shell::Word;
use super::Finding;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;
use wright_protocol::Risk;

/// Where a written path lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Where {
    Inside,
    /// `/dev/null`, the standard streams, the private tmp: nothing is kept.
    Scratch,
    /// Inside the workspace's `.git` or `.wright`: what git or wright itself reads.
    Control,
    Outside,
    /// Named by a variable or substitution: not known until it runs.
    Unknown,
}

/// The workspace, and the directory a command line has `cd`'d to so far.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    pub root: PathBuf,
    pub cwd: Option<PathBuf>,
}

impl Place {
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            cwd: Some(root.to_path_buf()),
        }
    }

    /// Follows a `cd` (lexically; to a path not known, the place is not known either).
    pub(crate) fn change_dir(&mut self, to: Option<&Word>) {
        self.cwd = match to {
            None => None,
            Some(word) if word.expands || word.text.starts_with('~') || word.text == "-" => None,
            Some(word) => self.resolve(&word.text),
        };
    }

    fn resolve(&self, text: &str) -> Option<PathBuf> {
        let path = Path::new(text);
        let joined = match path.is_absolute() {
            true => path.to_path_buf(),
            false => self.cwd.as_ref()?.join(path),
        };
        let mut normal = PathBuf::new();
        for component in joined.components() {
            match component {
                Component::ParentDir => {
                    normal.pop();
                }
                Component::CurDir => {}
                other => normal.push(other),
            }
        }
        Some(normal)
    }

    /// Where `word`, written by a command, lies.
    pub(crate) fn judge(&self, word: &Word) -> Where {
        let text = word.text.as_str();
        if text.starts_with('~') || text.starts_with("$HOME") || text.starts_with("${HOME}") {
            return Where::Outside;
        }
        if text.starts_with("$TMPDIR") || text.starts_with("${TMPDIR}") {
            return Where::Scratch;
        }
        if word.expands {
            return Where::Unknown;
        }
        if matches!(
            text,
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
        ) || text.starts_with("/dev/fd/")
        {
            return Where::Scratch;
        }
        let Some(path) = self.resolve(text) else {
            return Where::Unknown;
        };
        // The workspace first: it may itself lie under /tmp (a clone, or the user's own
        // checkout there with `--in-place`), and its files are kept, not scratch.
        if let Ok(inside) = path.strip_prefix(&self.root) {
            return match inside.components().next() {
                Some(Component::Normal(first)) if first == ".git" || first == ".wright" => {
                    Where::Control
                }
                _ => Where::Inside,
            };
        }
        if path.starts_with("/tmp") || path.starts_with("/var/tmp") || path.starts_with("/dev/shm")
        {
            return Where::Scratch;
        }
        Where::Outside
    }

    /// What writing `word` (by `verb`: "writes", "deletes", …) comes to.
    pub(crate) fn written_word(&self, word: &Word, verb: &str) -> Finding {
        let shown = &word.text;
        match self.judge(word) {
            Where::Inside => Finding::new(Risk::Medium, format!("{verb} {shown} in the workspace")),
            Where::Scratch => Finding::new(Risk::Low, format!("{verb} {shown}, a scratch place")),
            Where::Control => Finding::new(
                Risk::High,
                format!("{verb} {shown}: git's or wright's own files (hooks, configuration)"),
            ),
            Where::Outside => {
                Finding::new(Risk::High, format!("{verb} {shown}, outside the workspace"))
            }
            Where::Unknown => Finding::new(
                Risk::Unknown,
                format!("{verb} {shown}, a path known only when it runs"),
            ),
        }
    }

    /// `written_word` for a plain path (the file editor's).
    pub(crate) fn written(&self, path: &str, verb: &str) -> Finding {
        self.written_word(
            &Word {
                text: path.to_string(),
                expands: false,
            },
            verb,
        )
    }
}
