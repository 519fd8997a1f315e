//! Full-screen programs that wait for keys (`vi`, `nano`, `less`…) are not started: in the
//! agent's terminal they draw a screen and sit until the timeout — the 1.5B opened `vi`
//! and lost two minutes — and a model cannot drive them. Found by the first word of each
//! simple command of the line (after `sudo`, `env` and `NAME=value` prefixes, with or
//! without a directory), so `grep vi notes.txt` or a file named `less.txt` is untouched.

/// Editors and pagers that only work with a person at the keyboard.
const FULL_SCREEN: &[&str] = &[
    "vi", "vim", "nvim", "view", "vimdiff", "nano", "pico", "emacs", "less", "more", "most",
];

/// The full-screen program `command` would start, if any.
pub fn full_screen_program(command: &str) -> Option<&'static str> {
    simple_commands(command).find_map(|words| {
        let mut words = words
            .into_iter()
            .skip_while(|w| *w == "sudo" || *w == "env" || is_assignment(w));
        let program = words.next()?;
        let name = program.rsplit('/').next().unwrap_or(program);
        let found = FULL_SCREEN.iter().find(|p| **p == name)?;
        // `emacs --batch` runs a script and exits.
        if *found == "emacs" && words.any(|w| w == "--batch" || w == "-batch") {
            return None;
        }
        Some(*found)
    })
}

/// The words of each simple command: split at `|`, `;`, `&` and line breaks (quotes are
/// not parsed: a separator inside quotes only makes more candidates, never fewer).
fn simple_commands(command: &str) -> impl Iterator<Item = Vec<&str>> {
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
        ] {
            assert_eq!(full_screen_program(command), found, "{command}");
        }
    }
}
