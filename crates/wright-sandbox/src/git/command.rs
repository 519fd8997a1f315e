//! How wright runs git on the host: the hardened options every call gets, the user's
//! environment minus what would point git elsewhere, and a command's output read as text
//! or as a failure that says what git said.
//!
//! What it guarantees: no program named by configuration the agent could have written runs
//! there. Git has no single switch for that, so each kind is closed where git reads it:
//! - Programs picked by attributes — clean, smudge and process filters (git-lfs too),
//!   `diff.*.textconv`, `diff.*.command`, `merge.*.driver` — never run: attributes are read
//!   from the empty tree (`GIT_ATTR_SOURCE`, so no `.gitattributes` of any work tree or
//!   commit counts), with no global (`core.attributesFile=/dev/null`) and no system file.
//!   Only the repository's own `info/attributes`, inside the `.git` the agent cannot
//!   write, is still read.
//! - Programs named by a setting — hooks, fsmonitor, the pager, the editors, an external
//!   diff — are overridden on the command line, which no configuration file, included
//!   or not, outranks; the diffs also say `--no-ext-diff --no-textconv`; `ext::` is
//!   refused; variables of the user's that name programs are dropped.
//! - Programs git runs only to reach a server (`core.sshCommand`, `credential.helper`,
//!   `core.askPass`, `core.gitProxy`, `core.alternateRefsCommand`) are reached only by
//!   `clone_remote`, a new repository with no configuration but the host's own; it sets
//!   ssh and the proxy itself. `uploadpack.packObjectsHook` (the local clone's
//!   upload-pack) is read by git from the user's global and system files only. Aliases
//!   never replace the built-in commands wright runs.
//!
//! What it costs, for git-lfs and other filters of the user's: `wright apply` leaves the
//! files it brings as they are stored (an LFS pointer, text not converted), and the
//! status it checks first compares them so. The user's own git still applies their
//! filters: `git lfs checkout`, or any checkout of theirs, fills the files. (Git older
//! than 2.42 ignores `GIT_ATTR_SOURCE`; there `wright apply`'s guard is what stands.)

use super::GitError;
use super::Oid;
use super::LOCATING_VARIABLES;
use crate::run::Captured;
use std::path::Path;
use std::process::Command;

/// Options every host git gets: no fsmonitor program, no hooks (wright's own operations
/// are not the user's commits), no pager, no editor, no prompt, no `ext::` transport, no
/// attributes file of the user's, names as they are (not octal escapes; what is printed
/// is made safe for a terminal by the front end).
pub(super) const HARDENED: &[&str] = &[
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.pager=cat",
    "-c",
    "core.editor=:",
    "-c",
    "sequence.editor=:",
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "core.attributesFile=/dev/null",
    // A config file included from the work tree could ask for signatures, whose
    // checking runs `gpg.program`.
    "-c",
    "log.showSignature=false",
    "-c",
    "core.quotePath=false",
];

/// `git -C DIR` with the user's environment, minus what would point git elsewhere or name
/// a program, reading attributes from nowhere but `empty_tree` (the empty tree of the
/// repository's object format).
pub(super) fn base_command(dir: &Path, empty_tree: &Oid) -> Command {
    let mut command = Command::new("git");
    command.arg("-C").arg(dir);
    for variable in LOCATING_VARIABLES {
        command.env_remove(variable);
    }
    command.env("GIT_TERMINAL_PROMPT", "0");
    command.env("GIT_ATTR_SOURCE", empty_tree.as_str());
    command.env("GIT_ATTR_NOSYSTEM", "1");
    command
}

pub(super) fn failed(args: &[&str], said: &str) -> GitError {
    GitError::Failed {
        command: args.join(" "),
        said: said.trim().to_string(),
    }
}

/// A diff's text: when it passed the output bound, its beginning and a line saying so.
pub(super) fn diff_text(args: &[&str], captured: Captured) -> Result<String, GitError> {
    if captured.stdout_cut {
        let mut text = String::from_utf8_lossy(&captured.stdout).into_owned();
        text.push_str("\n[the diff goes on; it was cut here]\n");
        return Ok(text);
    }
    text_of(args, captured)
}

pub(super) fn text_of(args: &[&str], captured: Captured) -> Result<String, GitError> {
    if !captured.success() {
        return Err(failed(args, &captured.said()));
    }
    Ok(String::from_utf8_lossy(&captured.stdout).into_owned())
}
