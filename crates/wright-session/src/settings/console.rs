//! The terminal of the program around the library, where it has one: settings
//! resolution asks there (a repository's file that asks for more than the defaults, a
//! model server not on this machine, the download of the default model) and nowhere
//! else. The program registers its console once, at its start (`set_console`); until it
//! does, and in a program without one, nobody is there: nothing is asked, every question
//! is answered no, and nothing is downloaded unless the settings say so (`--pull`), in
//! which case the absence of a console is the error. The library itself never reads
//! stdin nor writes the terminal.

use anyhow::bail;
use anyhow::Result;
use std::sync::OnceLock;

/// What settings resolution needs of a terminal.
#[async_trait::async_trait]
pub trait Console: Send + Sync + 'static {
    /// Whether a person is there to answer (never when the output is `json`).
    fn can_ask(&self, json: bool) -> bool;
    /// Shows `question` and reads one answer: yes only when the person says so.
    fn yes(&self, question: &str) -> bool;
    /// Something to show the person before a question (a file's content, say).
    fn tell(&self, text: &str);
    /// The question asked before `pull_default`, with the size and source of the download.
    fn pull_question(&self) -> String;
    /// Downloads the default model for the embedded engine, when no server answers.
    async fn pull_default(&self) -> Result<()>;
}

/// A program without a terminal: asks nothing, downloads nothing.
struct Nobody;

#[async_trait::async_trait]
impl Console for Nobody {
    fn can_ask(&self, _json: bool) -> bool {
        false
    }
    fn yes(&self, _question: &str) -> bool {
        false
    }
    fn tell(&self, _text: &str) {}
    fn pull_question(&self) -> String {
        String::new()
    }
    async fn pull_default(&self) -> Result<()> {
        bail!("no model server answers here, no model is stored, and this program cannot download one")
    }
}

static CONSOLE: OnceLock<Box<dyn Console>> = OnceLock::new();

/// Registers the program's console; the first registration is kept (a program has one
/// terminal), and `false` says this one was not.
pub fn set_console(console: Box<dyn Console>) -> bool {
    CONSOLE.set(console).is_ok()
}

/// The registered console, else nobody.
pub fn console() -> &'static dyn Console {
    static NOBODY: Nobody = Nobody;
    match CONSOLE.get() {
        Some(console) => console.as_ref(),
        None => &NOBODY,
    }
}
