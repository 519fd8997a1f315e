//! The rules for shell command lines: each simple command is judged by the program it
//! names and its arguments, each file it writes by where that lies, each pipeline by what
//! flows into a shell, and every command substitution as a command line of its own.
//! Wrappers (`sudo`, `env`, `timeout`, `xargs`, `bash -c`, `find -exec`, …) are looked
//! through to the command they run.

use super::files::copy;
use super::files::operands;
use super::files::remove;
use super::lists::*;
use super::packages::inline_code;
use super::paths::Place;
use super::shell;
use super::shell::Command;
use super::shell::Word;
use super::shell_state;
use super::Finding;
use wright_protocol::Risk;

/// How deep wrappers and substitutions are followed before the rest counts as unknown.
const MAX_DEPTH: usize = 4;

/// Every finding about the command line `line`.
pub(crate) fn read_line(line: &str, place: &Place, depth: usize) -> Vec<Finding> {
    if depth > MAX_DEPTH {
        return vec![Finding::new(
            Risk::Unknown,
            "commands nested too deep to read",
        )];
    }
    let script = match shell::parse(line) {
        Ok(script) => script,
        Err(why) => {
            return vec![Finding::new(
                Risk::Unknown,
                format!("the command line cannot be read ({why})"),
            )]
        }
    };
    let mut place = place.clone();
    let mut findings = Vec::new();
    for command in &script.commands {
        findings.extend(read_command(command, &mut place, depth));
    }
    findings.extend(pipelines(&script.commands));
    for inner in &script.substitutions {
        findings.extend(read_line(inner, &place, depth + 1));
    }
    if findings.is_empty() {
        findings.push(Finding::new(Risk::Low, "no command"));
    }
    findings
}

/// A download piped into a shell, or any text piped into one: what runs is not in the
/// command line.
fn pipelines(commands: &[Command]) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (at, command) in commands.iter().enumerate() {
        if !command.piped || !reads_script_from_stdin(&command.words) {
            continue;
        }
        let fetched = commands[..at]
            .iter()
            .filter(|c| c.pipeline == command.pipeline)
            .any(|c| program(&c.words).is_some_and(|p| DOWNLOADERS.contains(&p)));
        findings.push(match fetched {
            true => Finding::new(Risk::High, "pipes a download into a shell"),
            false => Finding::new(
                Risk::Unknown,
                "pipes text into a shell: what runs is not in the command line",
            ),
        });
    }
    findings
}

/// Whether a command is an interpreter reading its script from stdin (`sh`, `bash -s`,
/// `python3 -`, `sudo bash`).
fn reads_script_from_stdin(words: &[Word]) -> bool {
    let words = strip_wrappers(words);
    let Some(name) = program(words) else {
        return false;
    };
    if !is_interpreter(name) {
        return false;
    }
    let operands: Vec<&Word> = words[1..]
        .iter()
        .filter(|w| !w.text.starts_with('-') || w.text == "-")
        .collect();
    operands.is_empty() || operands[0].text == "-"
}

/// The program a command runs (its first word's last path component).
fn program(words: &[Word]) -> Option<&str> {
    let first = words.first()?;
    Some(first.text.rsplit('/').next().unwrap_or(&first.text))
}

/// The words of the command a wrapper runs (`env A=1 nice -n 5 make` → `make`).
fn strip_wrappers(words: &[Word]) -> &[Word] {
    let mut rest = words;
    loop {
        let Some(name) = program(rest) else {
            return rest;
        };
        let skip = match name {
            "nice" | "ionice" | "stdbuf" | "nohup" | "time" | "command" | "builtin" | "exec"
            | "env" | "timeout" | "setsid" | "unbuffer" => options_end(name, &rest[1..]) + 1,
            _ => return rest,
        };
        if skip >= rest.len() {
            return &rest[rest.len()..];
        }
        rest = &rest[skip..];
    }
}

/// How many words of a wrapper's own options (and `NAME=value`s, and `timeout`'s
/// duration) come before the command it runs.
fn options_end(wrapper: &str, words: &[Word]) -> usize {
    let mut at = 0;
    let takes_value = |w: &str| match wrapper {
        "nice" => w == "-n",
        "ionice" => matches!(w, "-c" | "-n"),
        "timeout" => matches!(w, "-s" | "-k" | "--signal" | "--kill-after"),
        "env" => matches!(w, "-u" | "-C" | "--unset" | "--chdir"),
        _ => false,
    };
    while let Some(word) = words.get(at) {
        let text = word.text.as_str();
        if takes_value(text) {
            at += 2;
        } else if text.starts_with('-') || (wrapper == "env" && text.contains('=')) {
            at += 1;
        } else {
            break;
        }
    }
    if wrapper == "timeout" && at < words.len() {
        at += 1;
    }
    at
}

/// Findings of one simple command: its program and its redirections.
fn read_command(command: &Command, place: &mut Place, depth: usize) -> Vec<Finding> {
    let mut findings: Vec<Finding> = command
        .redirects
        .iter()
        .filter(|r| r.writes)
        .map(|r| place.written_word(&r.target, "writes"))
        .collect();
    findings.extend(shell_state::of_command(command));
    // A function's name is not run where it is defined.
    if command.defines_function.is_none() {
        findings.extend(read_words(&command.words, command, place, depth));
    }
    findings
}

/// Findings of the command `words` (with `command` for its input).
fn read_words(words: &[Word], command: &Command, place: &mut Place, depth: usize) -> Vec<Finding> {
    if words.is_empty() {
        return Vec::new();
    }
    let name = program(words).unwrap_or("");
    if let Some(finding) = shell_state::of_words(name, words) {
        return vec![finding];
    }
    let args = &words[1..];
    // A keyword that opens a compound command: what follows is the command.
    if matches!(
        name,
        "do" | "then" | "else" | "elif" | "if" | "while" | "until" | "!" | "{"
    ) && !args.is_empty()
    {
        return read_words(args, command, place, depth);
    }
    let has = |flags: &[&str]| args.iter().any(|w| flags.contains(&w.text.as_str()));
    let wrapped = strip_wrappers(words);
    if wrapped.len() != words.len() {
        if name == "env" {
            if let Some(finding) = shell_state::of_env(words) {
                return vec![finding];
            }
        }
        return match wrapped.is_empty() {
            // `env` alone prints the environment; `nohup` alone does nothing.
            true if name == "env" => vec![environment()],
            true => vec![Finding::new(Risk::Low, format!("{name} alone"))],
            false => read_words(wrapped, command, place, depth),
        };
    }
    if args
        .iter()
        .any(|w| matches!(w.text.as_str(), "--version" | "--help"))
        && args.len() == 1
    {
        return vec![Finding::new(Risk::Low, format!("asks {name} about itself"))];
    }
    if AS_ROOT.contains(&name) {
        let mut findings = vec![Finding::new(Risk::High, format!("{name}: runs as root"))];
        let inner = args
            .iter()
            .position(|w| !w.text.starts_with('-'))
            .map(|at| &args[at..])
            .unwrap_or(&[]);
        findings.extend(read_words(inner, command, place, depth + 1));
        return findings;
    }
    if NETWORK.contains(&name) {
        return vec![Finding::new(
            Risk::High,
            format!("{name}: needs the network"),
        )];
    }
    if PERMISSIONS.contains(&name) {
        return vec![Finding::new(
            Risk::High,
            format!("{name}: changes permissions"),
        )];
    }
    if SYSTEM.contains(&name) || name.starts_with("mkfs") {
        return vec![Finding::new(
            Risk::High,
            format!("{name}: acts on the machine beyond the workspace"),
        )];
    }
    match name {
        "cd" => {
            place.change_dir(args.iter().find(|w| !w.text.starts_with('-')));
            vec![Finding::new(Risk::Low, "changes directory")]
        }
        "printenv" => vec![environment()],
        "set" | "export" | "declare" | "typeset"
            if args.is_empty() || args.iter().all(|w| matches!(w.text.as_str(), "-p" | "-x")) =>
        {
            vec![environment()]
        }
        "set" | "export" | "declare" | "typeset" | "umask" | "ulimit" => {
            vec![Finding::new(Risk::Low, "sets the shell's state")]
        }
        "sh" | "bash" | "zsh" | "dash" | "ksh" => shell_command(name, args, command, place, depth),
        "xargs" => xargs(args, place, depth),
        "find" => find(args, command, place, depth),
        "rm" | "shred" => remove(name, args, place),
        "rmdir" | "unlink" | "touch" | "mkdir" | "truncate" => {
            operands(args, &["-s", "--size", "-m", "--mode"])
                .iter()
                .map(|w| place.written_word(w, verb(name)))
                .collect()
        }
        "cp" | "mv" | "install" | "ln" | "rsync" => copy(name, args, place),
        "tee" => {
            let files = operands(args, &[]);
            match files.is_empty() {
                true => vec![Finding::new(Risk::Low, "tee to the output only")],
                false => files
                    .iter()
                    .map(|w| place.written_word(w, "writes"))
                    .collect(),
            }
        }
        "dd" => {
            let target = args
                .iter()
                .find_map(|w| w.text.strip_prefix("of=").map(|t| (t, w.expands)));
            match target {
                Some((text, expands)) => vec![place.written_word(
                    &Word {
                        text: text.to_string(),
                        expands,
                    },
                    "writes",
                )],
                None => vec![Finding::new(Risk::Medium, "dd")],
            }
        }
        "sed" | "perl"
            if has(&["-i", "--in-place"]) || args.iter().any(|w| w.text.starts_with("-i")) =>
        {
            let mut findings = vec![Finding::new(
                Risk::Medium,
                format!("{name} edits files in place"),
            )];
            findings.extend(
                operands(args, &["-e", "-f", "--expression", "--file"])
                    .iter()
                    .skip(usize::from(!has(&["-e", "--expression"])))
                    .map(|w| place.written_word(w, "edits")),
            );
            findings
        }
        "sort" if has(&["-o", "--output"]) => {
            let at = args
                .iter()
                .position(|w| matches!(w.text.as_str(), "-o" | "--output"));
            match at.and_then(|at| args.get(at + 1)) {
                Some(target) => vec![place.written_word(target, "writes")],
                None => vec![Finding::new(Risk::Medium, "sort writes a file")],
            }
        }
        "awk" | "gawk" | "mawk" | "nawk" => {
            let script = args.iter().find(|w| !w.text.starts_with('-'));
            match script.is_some_and(|s| {
                s.text.contains("system") || s.text.contains('>') || s.text.contains('|')
            }) {
                true => vec![Finding::new(
                    Risk::Medium,
                    "awk that writes or runs commands",
                )],
                false => vec![Finding::new(Risk::Low, "awk reads")],
            }
        }
        "kill" | "pkill" | "killall" => vec![Finding::new(Risk::Medium, "stops processes")],
        "git" => super::git::git(args, place),
        _ if READ_ONLY.contains(&name) => {
            let reads_environ = args
                .iter()
                .any(|w| w.text.starts_with("/proc/") && w.text.ends_with("/environ"));
            match reads_environ {
                true => vec![environment()],
                false => vec![Finding::new(Risk::Low, format!("{name} reads"))],
            }
        }
        _ => {
            if let Some(finding) = super::packages::packages(name, args) {
                return vec![finding];
            }
            if let Some(finding) = inline_code(name, args) {
                return vec![finding];
            }
            let url = args.iter().find(|w| names_url(&w.text));
            match url {
                Some(url) => vec![Finding::new(
                    Risk::High,
                    format!("{name} with {}: needs the network", clip(&url.text)),
                )],
                None => vec![Finding::new(Risk::Medium, format!("runs {name}"))],
            }
        }
    }
}

fn verb(name: &str) -> &'static str {
    match name {
        "rmdir" | "unlink" => "deletes",
        "mkdir" => "makes",
        "truncate" => "truncates",
        _ => "writes",
    }
}

fn environment() -> Finding {
    Finding::new(
        Risk::Medium,
        "prints the environment (a granted secret shows masked)",
    )
}

fn names_url(text: &str) -> bool {
    [
        "http://", "https://", "ftp://", "ssh://", "git://", "s3://", "rsync://",
    ]
    .iter()
    .any(|scheme| text.contains(scheme))
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// `bash -c "…"` is read as a command line; `bash script.sh` runs the workspace's script;
/// `bash` with a here-document runs its body.
fn shell_command(
    name: &str,
    args: &[Word],
    command: &Command,
    place: &Place,
    depth: usize,
) -> Vec<Finding> {
    if let Some(at) = args.iter().position(|w| {
        w.text == "-c"
            || (w.text.starts_with('-') && !w.text.starts_with("--") && w.text.ends_with('c'))
    }) {
        return match args.get(at + 1) {
            Some(script) if script.expands => vec![Finding::new(
                Risk::Unknown,
                format!("{name} -c with a script known only when it runs"),
            )],
            Some(script) => read_line(&script.text, place, depth + 1),
            None => vec![Finding::new(
                Risk::Unknown,
                format!("{name} -c without a script"),
            )],
        };
    }
    match operands(args, &["-o", "-O"]).first() {
        Some(script) => vec![Finding::new(
            Risk::Medium,
            format!("runs the script {}", script.text),
        )],
        None if !command.stdin_text.is_empty() => {
            let mut findings = Vec::new();
            for body in &command.stdin_text {
                findings.extend(read_line(body, place, depth + 1));
            }
            findings
        }
        // Reading a pipe is judged with the pipeline.
        None => vec![Finding::new(Risk::Medium, format!("starts {name}"))],
    }
}

/// `xargs [options] CMD ARGS…`: CMD, given more arguments from its input.
fn xargs(args: &[Word], place: &mut Place, depth: usize) -> Vec<Finding> {
    let valued = ["-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a"];
    let mut at = 0;
    while let Some(word) = args.get(at) {
        if valued.contains(&word.text.as_str()) {
            at += 2;
        } else if word.text.starts_with('-') {
            at += 1;
        } else {
            break;
        }
    }
    let inner = &args[at.min(args.len())..];
    if inner.is_empty() {
        return vec![Finding::new(Risk::Low, "xargs echo")];
    }
    let mut findings = read_words(inner, &Command::default(), place, depth + 1);
    // What it deletes or writes comes from its input: not known here.
    if let Some(name) = program(inner) {
        if matches!(name, "rm" | "shred" | "mv" | "cp" | "chmod" | "chown") {
            findings.push(Finding::new(
                Risk::High,
                format!("xargs {name}: acts on every path of its input"),
            ));
        }
    }
    findings
}

/// `find`: reads, unless it deletes (`-delete`), writes (`-fprint`) or runs a command
/// on each file (`-exec`, read as that command).
fn find(args: &[Word], command: &Command, place: &mut Place, depth: usize) -> Vec<Finding> {
    let mut findings = vec![Finding::new(Risk::Low, "find reads")];
    let mut at = 0;
    while let Some(word) = args.get(at) {
        match word.text.as_str() {
            "-delete" => {
                findings.push(Finding::new(Risk::High, "find -delete: deletes many files"))
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                if let Some(target) = args.get(at + 1) {
                    findings.push(place.written_word(target, "writes"));
                }
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let end = args[at + 1..]
                    .iter()
                    .position(|w| w.text == ";" || w.text == "+")
                    .map_or(args.len(), |n| at + 1 + n);
                let inner = &args[at + 1..end];
                findings.extend(read_words(inner, command, place, depth + 1));
                if let Some(name) = program(inner) {
                    if matches!(name, "rm" | "shred" | "mv" | "chmod" | "chown") {
                        findings.push(Finding::new(
                            Risk::High,
                            format!("find -exec {name}: acts on every file found"),
                        ));
                    }
                }
                at = end;
            }
            _ => {}
        }
        at += 1;
    }
    findings
}
