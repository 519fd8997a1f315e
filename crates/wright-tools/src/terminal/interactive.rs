//! Full-screen programs that wait for keys (`vi`, `nano`, `less`…) are not started: in the
//! agent's terminal they draw a screen and sit until the timeout — the 1.5B opened `vi`
//! and lost two minutes — and a model cannot drive them. Found by the first word of each
//! simple command of the line, as the risk reader's lexer reads it (quotes respected,
//! command substitutions included; after `sudo`, `env`, keywords and `NAME=value`
//! prefixes, with or without a directory), so `grep vi notes.txt`, a file named
//! `less.txt` or `printf 'a (most b)'` is untouched.

/// Editors and pagers that only work with a person at the keyboard.
const FULL_SCREEN: &[&str] = &[
    "vi", "vim", "nvim", "view", "vimdiff", "nano", "pico", "emacs", "less", "more", "most",
];

/// The full-screen program `command` would start, if any.
pub fn full_screen_program(command: &str) -> Option<&'static str> {
    match crate::risk::simple_commands(command, 4) {
        Some(commands) => commands
            .iter()
            .find_map(|words| started(words.iter().map(String::as_str))),
        // A line the lexer cannot read: split coarsely, which finds more, never fewer.
        None => rough_commands(command).find_map(|words| started(words.into_iter())),
    }
}

/// The full-screen program the words of one simple command start, if any.
fn started<'a>(words: impl Iterator<Item = &'a str>) -> Option<&'static str> {
    let mut words = words.skip_while(|w| {
        matches!(
            *w,
            "sudo"
                | "env"
                | "if"
                | "then"
                | "else"
                | "elif"
                | "do"
                | "while"
                | "until"
                | "!"
                | "{"
                | "time"
                | "exec"
                | "nohup"
                | "command"
        ) || is_assignment(w)
    });
    let program = words.next()?;
    let name = program.rsplit('/').next().unwrap_or(program);
    let found = FULL_SCREEN.iter().find(|p| **p == name)?;
    // `emacs --batch` runs a script and exits.
    if *found == "emacs" && words.any(|w| w == "--batch" || w == "-batch") {
        return None;
    }
    Some(*found)
}

/// The words of each simple command, split at `|`, `;`, `&`, parentheses and line breaks
/// (quotes not parsed: a separator inside quotes only makes more candidates).
fn rough_commands(command: &str) -> impl Iterator<Item = Vec<&str>> {
    command
        .split(['|', ';', '&', '\n', '(', ')'])
        .map(|part| part.split_whitespace().collect())
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// What the model is told instead of running `program`.
pub fn refusal(program: &str) -> String {
    format!(
        "`{program}` is a full-screen program that waits for keys, so it was not run. View a file with file_editor view (or cat -n FILE, sed -n 10,40p FILE), edit it with file_editor str_replace, and page long output with head or tail."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editors_and_pagers_are_found_wherever_they_start_a_command() {
        for (command, found) in [
            ("vi test_fizzbuzz.py", Some("vi")),
            ("/usr/bin/vim a.py", Some("vim")),
            ("sudo nano /etc/hosts", Some("nano")),
            ("TERM=xterm less log.txt", Some("less")),
            ("git log | less", Some("less")),
            ("cd src && vim lib.rs", Some("vim")),
            ("emacs a.el", Some("emacs")),
            ("emacs --batch -l build.el", None),
            ("grep -n vi notes.txt", None),
            ("cat less.txt", None),
            ("python3 -m unittest", None),
            ("echo 'more'", None),
            ("printf 'a (most b)'", None),
            ("echo \"x; less y\"", None),
            ("git log | grep -v 'vi (x)'", None),
            ("echo $(less log.txt)", Some("less")),
            ("if true; then vim a.py; fi", Some("vim")),
            ("(cd src && nano a.py)", Some("nano")),
            ("echo 'unterminated ; vi x", Some("vi")),
        ] {
            assert_eq!(full_screen_program(command), found, "{command}");
        }
    }
}
