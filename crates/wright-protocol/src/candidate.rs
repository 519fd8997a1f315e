//! A candidate fix (version 9 on): wright asked the model apart — no tools, no history,
//! only the task, the code under test and the first failure — to write the failing code's
//! function corrected, put that version in place and ran the failing command in the
//! sandbox; it put the file back unless the command passed. Logged as a `candidate` event
//! per try after the observation it answers; the history shows the one that passed (and
//! stayed), so a resumed run sends the same bytes.

use serde::Deserialize;
use serde::Serialize;

/// What became of one candidate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CandidateOutcome {
    /// With it in place, the command passed: it stays in place.
    Passed,
    /// With it in place, the command still failed (no exit code: it did not finish).
    Failed { exit_code: Option<i32> },
    /// With it in place, the command failed further on, in another function (`next`): it
    /// stayed while versions of that one were tried, and stays for good only when one of
    /// those passes (a later `passed` candidate of the same call); otherwise it was taken
    /// out again with them (version 10 on). A file of several stubs is filled one by one.
    FailsFurther { next: String },
    /// The answer held no code block defining the function.
    NoCode,
    /// The answer's function is the code as it is.
    Unchanged,
    /// The same version as an earlier try: not run again.
    Repeated,
    /// The request failed, or the version could not be put in place or taken out again.
    NotTried { why: String },
    /// A version of a whole file for a task whose tests passed before any change: with it
    /// in place the tests still pass, but no check of the task confirmed it (none failed
    /// before the change, or none passed with any version). It stays, said as unchecked,
    /// and the model goes on from it.
    Unverified,
    /// A version of a whole file with which the tests (and maybe a check) pass, but which
    /// leaves out `words` the task names and the code lacks (an option, a variable): put
    /// back, and kept unverified only when no version holds more of them (version 15 on).
    LeavesOut { words: Vec<String> },
}

impl CandidateOutcome {
    /// Whether the version stays in place (passed, or kept unverified).
    pub fn stays(&self) -> bool {
        matches!(
            self,
            CandidateOutcome::Passed | CandidateOutcome::Unverified
        )
    }
}

/// One version of a function the model wrote, asked apart, and how its check went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The call whose failing output it answers.
    pub call_id: String,
    /// The file the function is in, relative to the workspace.
    pub path: String,
    /// The function's name; empty for a version of the whole file (a task with no failing
    /// test, see `check`).
    pub name: String,
    /// The command run with it in place.
    pub command: String,
    pub question: String,
    /// The model's whole answer (empty when the request failed).
    pub answer: String,
    /// The function as the file has it.
    pub old_str: String,
    /// The function as the answer writes it, indented as the file's (none: no code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_str: Option<String>,
    /// Import lines the version needed that the file lacked, added with it (one per line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imports: Option<String>,
    pub outcome: CandidateOutcome,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    pub destination: crate::Destination,
    /// wright's own check of the task (a short shell script the model wrote, asked apart),
    /// run with the version in place besides `command`, when the tests passed before any
    /// change: never the repository's tests, never committed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// Where `check`, when it is a test file in the repository's style rather than a
    /// script, was written while the tests ran (and removed after): a new file beside the
    /// repository's tests, never one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_file: Option<String>,
}

impl Candidate {
    /// One line for people: which try, and what came of it.
    pub fn summary(&self) -> String {
        let what = match self.name.is_empty() {
            true => format!("a version of {} asked apart", self.path),
            false => format!("a version of {} in {} asked apart", self.name, self.path),
        };
        match &self.outcome {
            CandidateOutcome::Passed => {
                format!("{what}: `{}` passes with it; it stays", self.command)
            }
            // With a check of the task, either may have failed (the check runs only
            // once the tests pass): the log does not say which, so neither is blamed.
            CandidateOutcome::Failed {
                exit_code: Some(code),
            } if self.check.is_some() => format!(
                "{what}: `{}` and wright's check of the task do not both pass with it (exit {code})",
                self.command
            ),
            CandidateOutcome::Failed {
                exit_code: Some(code),
            } => format!(
                "{what}: `{}` still fails with it (exit {code})",
                self.command
            ),
            CandidateOutcome::Failed { exit_code: None } => {
                format!("{what}: `{}` did not finish with it", self.command)
            }
            CandidateOutcome::FailsFurther { next } => format!(
                "{what}: `{}` fails further on with it, in {next}: kept while {next} is tried",
                self.command
            ),
            CandidateOutcome::NoCode => format!("{what}: the answer wrote no such function"),
            CandidateOutcome::Unchanged => format!("{what}: the answer left it as it is"),
            CandidateOutcome::Repeated => format!("{what}: the same as an earlier one"),
            CandidateOutcome::NotTried { why } => format!("{what}: not tried ({why})"),
            CandidateOutcome::Unverified => format!(
                "{what}: `{}` passes with it, but no check of the task confirmed it; it stays, unchecked",
                self.command
            ),
            CandidateOutcome::LeavesOut { words } => format!(
                "{what}: `{}` passes with it, but it leaves out what the task names ({})",
                self.command,
                words.join(", ")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Event;
    use crate::EventBody;
    use crate::Source;

    #[test]
    fn a_candidate_event_reads_back_as_written() {
        for outcome in [
            CandidateOutcome::Passed,
            CandidateOutcome::Failed { exit_code: Some(1) },
            CandidateOutcome::Failed { exit_code: None },
            CandidateOutcome::FailsFurther {
                next: "push".into(),
            },
            CandidateOutcome::NotTried {
                why: "the server refused".into(),
            },
            CandidateOutcome::Unverified,
            CandidateOutcome::LeavesOut {
                words: vec!["--top".into(), "HTTP_TIMEOUT".into()],
            },
        ] {
            let candidate = Candidate {
                call_id: "first-look".into(),
                path: "fizz.py".into(),
                name: "fizz".into(),
                command: "python3 -m unittest".into(),
                question: "Write fizz corrected".into(),
                answer: "```python\ndef fizz(n):\n    return n\n```".into(),
                old_str: "def fizz(n):\n    return 0".into(),
                new_str: Some("def fizz(n):\n    return n".into()),
                imports: Some("import re".into()),
                outcome,
                prompt_tokens: 300,
                completion_tokens: 40,
                cached_tokens: Some(5),
                destination: crate::Destination::Loopback,
                check: None,
                check_file: None,
            };
            let event = Event::new(
                6,
                Source::Environment,
                EventBody::Candidate(candidate.clone()),
            );
            let line = serde_json::to_string(&event).unwrap();
            assert!(line.contains("\"kind\":\"candidate\""), "{line}");
            let back: Event = serde_json::from_str(&line).unwrap();
            assert_eq!(back.body, EventBody::Candidate(candidate));
        }
    }

    #[test]
    fn a_failed_version_with_a_check_of_the_task_blames_neither_alone() {
        let version = |check: Option<&str>| Candidate {
            call_id: "first-look".into(),
            path: "settings.py".into(),
            name: String::new(),
            command: "python3 -m unittest".into(),
            question: String::new(),
            answer: String::new(),
            old_str: String::new(),
            new_str: None,
            imports: None,
            outcome: CandidateOutcome::Failed { exit_code: Some(1) },
            prompt_tokens: 0,
            completion_tokens: 0,
            cached_tokens: None,
            destination: crate::Destination::Loopback,
            check: check.map(str::to_string),
            check_file: None,
        };
        assert_eq!(
            version(None).summary(),
            "a version of settings.py asked apart: `python3 -m unittest` still fails with it (exit 1)"
        );
        assert_eq!(
            version(Some("test \"$TIMEOUT\" -eq 60")).summary(),
            "a version of settings.py asked apart: `python3 -m unittest` and wright's check of the task do not both pass with it (exit 1)"
        );
    }
}
