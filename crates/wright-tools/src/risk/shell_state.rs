//! What the persistent shell has been given that changes what a name runs: aliases,
//! functions, traps, `PROMPT_COMMAND`, `BASH_ENV`, hashed paths, a `PATH` of its own.
//!
//! A command line says `ls`; what runs is whatever the shell makes of `ls`. So:
//!
//! - a command that gives the shell any of these (`alias`, `NAME() {…}`, `trap`,
//!   `PATH=…`, `hash -p`, `source`, `eval`, a program named at run time, …) is `unknown`,
//!   and asks, whatever else it does;
//! - once one has run, the shell is tracked as changed: an alias or function of a known
//!   name makes every line that mentions that name `unknown`; anything else (a trap, a
//!   new `PATH`, a sourced script, an eval) makes every line `unknown`, until the shell
//!   is replaced by a fresh one;
//! - a `PATH` that starts out holding a directory the agent can write (the workspace,
//!   a tmp, a relative entry) counts as changed from the start.
//!
//! It is tracked from the commands that ran, not asked of the shell, whose own answers
//! (`alias -p`, `declare -F`) a changed shell could fake. What it cannot see through it
//! counts as a change, so a clean shell's `ls` stays `low` and a changed one's asks.

use super::commands;
use super::paths::Place;
use super::shell::Command;
use super::shell::Word;
use super::Finding;
use std::collections::BTreeSet;
use std::path::Path;
use wright_protocol::Risk;

/// Variables whose value decides what the shell (or what it starts) runs: setting one
/// changes the shell for every later command.
const SENSITIVE: &[&str] = &[
    "PATH",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PS0",
    "PS1",
    "PS2",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "IFS",
    "BASH_ALIASES",
    "BASH_CMDS",
    "BASH_LOADABLES_PATH",
    "EXECIGNORE",
    "CDPATH",
    "TMPDIR",
    "HOME",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
];

/// What a command does to the shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ShellChange {
    /// Aliases or functions of these names.
    Names(Vec<String>),
    /// Anything: what every later name runs is not known.
    Everything,
}

/// The persistent shell as the commands it ran left it (see the module's comment).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellState {
    /// Why any name may run something else, once something did that.
    everything: Option<String>,
    /// Aliases and functions it was given, by name.
    names: BTreeSet<String>,
}

impl ShellState {
    /// A fresh shell started with `env`, working in `root`: changed from the start when
    /// its `PATH` holds a directory the agent can write.
    pub fn fresh(env: &[(String, String)], root: &Path) -> Self {
        let var = |key: &str| env.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        let mut writable: Vec<&Path> = vec![
            root,
            Path::new("/tmp"),
            Path::new("/var/tmp"),
            Path::new("/dev/shm"),
        ];
        writable.extend(var("HOME").map(Path::new));
        writable.extend(var("TMPDIR").map(Path::new));
        let everything = var("PATH").and_then(|path| {
            path.split(':').find_map(|dir| {
                let dir_path = Path::new(dir);
                let agents =
                    !dir_path.is_absolute() || writable.iter().any(|w| dir_path.starts_with(w));
                agents.then(|| {
                    format!("PATH holds {dir:?}, where the agent can put a program of any name")
                })
            })
        });
        Self {
            everything,
            names: BTreeSet::new(),
        }
    }

    /// Takes in what the command line `line`, which ran in this shell, gave it.
    pub fn ran(&mut self, line: &str, root: &Path) {
        for finding in commands::read_line(line, &Place::new(root), 0) {
            match finding.shell {
                None => {}
                // bash runs it for every name it cannot find.
                Some(ShellChange::Names(names))
                    if names.iter().any(|n| n == "command_not_found_handle") =>
                {
                    self.everything.get_or_insert(finding.reason);
                }
                Some(ShellChange::Names(names)) => self.names.extend(names),
                Some(ShellChange::Everything) => {
                    self.everything.get_or_insert(finding.reason);
                }
            }
        }
    }

    /// What the shell's state makes of the command line `line`, if anything.
    pub(crate) fn finding(&self, line: &str) -> Option<Finding> {
        if let Some(why) = &self.everything {
            return Some(Finding::new(
                Risk::Unknown,
                format!("an earlier command changed the shell ({why}): what a name runs here is not known"),
            ));
        }
        let named = line
            .split(|c: char| c.is_whitespace() || "|&;()<>'\"`$={}\\/,".contains(c))
            .find(|token| self.names.contains(*token))?;
        Some(Finding::new(
            Risk::Unknown,
            format!("{named} is an alias or function an earlier command gave the shell"),
        ))
    }
}

fn changes(change: ShellChange, reason: impl Into<String>) -> Finding {
    Finding {
        shell: Some(change),
        ..Finding::new(Risk::Unknown, reason)
    }
}

/// The variable an argument such as `PATH=x`, `BASH_ALIASES[ls]=x` or `PATH` names.
fn variable(text: &str) -> &str {
    let name = text.split_once('=').map_or(text, |(name, _)| name);
    let name = name.strip_suffix('+').unwrap_or(name);
    name.split_once('[').map_or(name, |(array, _)| array)
}

fn sensitive(text: &str) -> bool {
    let name = variable(text);
    // `BASH_FUNC_NAME%%`: a function bash imports from its environment.
    SENSITIVE.contains(&name) || name.starts_with("BASH_FUNC_")
}

/// What a simple command's assignments and function definition do to the shell.
pub(crate) fn of_command(command: &Command) -> Vec<Finding> {
    let mut findings: Vec<Finding> = command
        .assigned
        .iter()
        .filter(|name| sensitive(name))
        .map(|name| {
            changes(
                ShellChange::Everything,
                format!("sets {name}, which decides what the shell runs"),
            )
        })
        .collect();
    if let Some(name) = &command.defines_function {
        findings.push(changes(
            ShellChange::Names(vec![name.clone()]),
            format!("defines the shell function {name}"),
        ));
    }
    findings
}

/// A builtin that changes the shell, or a command named by an expansion; `None` for a
/// command that does not (it is read by the other rules).
pub(crate) fn of_words(name: &str, words: &[Word]) -> Option<Finding> {
    let args = &words[1..];
    let texts = || args.iter().map(|w| w.text.as_str());
    let first = words.first()?;
    if first.expands {
        return Some(changes(
            ShellChange::Everything,
            format!("runs {}, a program chosen at run time", first.text),
        ));
    }
    // A pattern or braces the shell expands into the command's name (`/bin/r?`,
    // `{alias,ls=x}`).
    let braces =
        first.text.contains('{') && (first.text.contains(',') || first.text.contains(".."));
    // (A word ending in `)` is a `case` pattern, not a command.)
    if !matches!(first.text.as_str(), "[" | "[[" | "{")
        && !first.text.ends_with(')')
        && (first.text.contains(['*', '?', '[']) || braces)
    {
        return Some(changes(
            ShellChange::Everything,
            format!("runs {}, a name the shell expands", first.text),
        ));
    }
    if first.text.contains('=') && sensitive(&first.text) {
        return Some(changes(
            ShellChange::Everything,
            format!(
                "sets {}, which decides what the shell runs",
                variable(&first.text)
            ),
        ));
    }
    let options_only = |allowed: &[&str]| texts().all(|t| allowed.contains(&t));
    let option_with = |letters: &[char]| {
        texts().any(|t| t.starts_with('-') && t != "--" && letters.iter().all(|l| t.contains(*l)))
    };
    match name {
        "alias" if texts().any(|t| t.contains('=')) => {
            let names = texts()
                .filter_map(|t| t.split_once('=').map(|(n, _)| n.to_string()))
                .collect();
            Some(changes(ShellChange::Names(names), "defines an alias"))
        }
        "function" => {
            let defined = args
                .first()
                .map(|w| w.text.trim_end_matches("()").to_string());
            Some(changes(
                ShellChange::Names(defined.into_iter().collect()),
                "defines a shell function",
            ))
        }
        "trap" if !options_only(&["-p", "-l"]) => Some(changes(
            ShellChange::Everything,
            "sets a trap, a command the shell runs by itself",
        )),
        "hash" if texts().any(|t| t.starts_with('-') && t.contains('p')) => {
            let names = texts().skip_while(|t| t.starts_with('-')).skip(1);
            Some(changes(
                ShellChange::Names(names.map(str::to_string).collect()),
                "hash -p: names a program by any path",
            ))
        }
        "enable" if !options_only(&["-a", "-p", "-s"]) => Some(changes(
            ShellChange::Everything,
            "enable: loads or turns off the shell's builtins",
        )),
        "source" | "." => Some(changes(
            ShellChange::Everything,
            "runs a script in the shell, which may define anything there",
        )),
        "eval" => Some(changes(
            ShellChange::Everything,
            "eval: the shell reads text as commands",
        )),
        "declare" | "typeset" | "local" if option_with(&['n']) => Some(changes(
            ShellChange::Everything,
            format!("{name} -n: a name standing for another variable"),
        )),
        // Functions handed to every bash it starts (`bash build.sh` runs them).
        "export" if option_with(&['f']) => Some(changes(
            ShellChange::Everything,
            "export -f: hands functions to every bash started",
        )),
        "declare" | "typeset" if option_with(&['f', 'x']) => Some(changes(
            ShellChange::Everything,
            format!("{name} -fx: hands functions to every bash started"),
        )),
        "declare" | "typeset" | "local" | "export" | "readonly" | "read" | "mapfile"
        | "readarray" | "printf" | "getopts" | "let" => {
            let set = texts().find(|t| !t.starts_with('-') && sensitive(t))?;
            Some(changes(
                ShellChange::Everything,
                format!(
                    "{name} sets {}, which decides what the shell runs",
                    variable(set)
                ),
            ))
        }
        _ => None,
    }
}

/// `env NAME=value … PROGRAM`: a variable that decides what runs, for that program.
pub(crate) fn of_env(words: &[Word]) -> Option<Finding> {
    let set = words[1..]
        .iter()
        .take_while(|w| w.text.starts_with('-') || w.text.contains('='))
        .find(|w| w.text.contains('=') && sensitive(&w.text))?;
    Some(Finding::new(
        Risk::Unknown,
        format!("env sets {}, which decides what runs", variable(&set.text)),
    ))
}
