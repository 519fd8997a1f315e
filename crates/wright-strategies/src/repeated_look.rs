//! A look made again gets what comes next (`[assist]` piece `next-look`): a small model
//! that views a file it has already viewed, or runs a command it already ran, learns
//! nothing new, and the stuck detector ends the run a few such steps later (the 1.5B
//! viewed a script and its test in turn for 9 actions, then was stopped). So the result
//! of such a call says so and gives what it has not seen: the lines of that file it has
//! not viewed yet, or, when it has seen all of it, the files the task names that it has
//! not viewed, and to make the change.
//!
//! Guarantees: the note is part of the call's observation, which the log holds; what it
//! decides from (the views and commands of this run, the task) is a fold over the log, so
//! a resumed run says the same.

use serde_json::Value;
use wright_core::strategy::starts_a_run;
use wright_core::strategy::Call;
use wright_core::strategy::Ran;
use wright_core::strategy::Strategy;
use wright_core::strategy::View;
use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;

#[derive(Debug)]
pub struct RepeatedLook {
    on: bool,
    /// This run's views, by path: the line ranges seen (whole file: `None`).
    views: Vec<(String, Option<(u64, u64)>)>,
    /// This run's terminal commands.
    commands: Vec<String>,
}

impl Default for RepeatedLook {
    fn default() -> Self {
        Self {
            on: true,
            views: Vec::new(),
            commands: Vec::new(),
        }
    }
}

impl RepeatedLook {
    pub const NAME: &'static str = "next-look";

    pub fn off() -> Self {
        Self {
            on: false,
            ..Self::default()
        }
    }

    /// The lines of `path` (of `total`) not viewed this run, as ranges.
    fn unseen(&self, path: &str, total: u64) -> Vec<(u64, u64)> {
        let mut seen = vec![false; total as usize];
        for (viewed, range) in &self.views {
            if viewed != path {
                continue;
            }
            let (from, to) = range.unwrap_or((1, total));
            for line in from.max(1)..=to.min(total) {
                seen[(line - 1) as usize] = true;
            }
        }
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        for (at, seen) in seen.iter().enumerate() {
            let line = at as u64 + 1;
            match ranges.last_mut() {
                _ if *seen => {}
                Some((_, to)) if *to + 1 == line => *to = line,
                _ => ranges.push((line, line)),
            }
        }
        ranges
    }

    /// Files the task names that this run has not viewed.
    fn named_unviewed(&self, view: &View<'_>) -> Vec<String> {
        let Some(workspace) = view.workspace() else {
            return Vec::new();
        };
        let task = view.task();
        let mut named: Vec<String> = Vec::new();
        for word in task.split(|c: char| c.is_whitespace() || "`'\"(),;:".contains(c)) {
            let word = word.trim_end_matches(['.', '!', '?']);
            if !word.contains('.') || named.iter().any(|n| n == word) {
                continue;
            }
            let viewed = self.views.iter().any(|(path, _)| path == word);
            if !viewed && wright_tools::editable_text(workspace, word).is_some() {
                named.push(word.to_string());
            }
        }
        named
    }
}

/// A `file_editor` view's path and range (`None`: the whole file).
fn as_view(tool: &str, arguments: &Value) -> Option<(String, Option<(u64, u64)>)> {
    if tool != "file_editor" || arguments.get("command").and_then(Value::as_str) != Some("view") {
        return None;
    }
    let path = arguments
        .get("path")?
        .as_str()?
        .trim_start_matches("./")
        .to_string();
    let range = arguments
        .get("view_range")
        .and_then(Value::as_array)
        .and_then(|range| Some((range.first()?.as_u64()?, range.get(1)?.as_i64()?)))
        .map(|(from, to)| (from, if to < 0 { u64::MAX } else { to as u64 }));
    Some((path, range))
}

impl Strategy for RepeatedLook {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn absorb(&mut self, event: &Event) {
        match &event.body {
            EventBody::Action {
                tool, arguments, ..
            } if event.source == Source::Agent => {
                if let Some(view) = as_view(tool, arguments) {
                    self.views.push(view);
                } else if tool == "terminal" {
                    if let Some(command) = arguments.get("command").and_then(Value::as_str) {
                        self.commands.push(command.trim().to_string());
                    }
                }
            }
            _ if starts_a_run(event) => {
                self.views.clear();
                self.commands.clear();
            }
            _ => {}
        }
    }

    fn annotate(&mut self, view: &View<'_>, call: &Call<'_>, ran: Ran) -> Option<String> {
        if !self.on || ran != Ran::Fine {
            return None;
        }
        // The call itself was absorbed already: a repeat is a second one.
        let repeated = match as_view(call.tool, call.arguments) {
            Some(this) => self.views.iter().filter(|seen| **seen == this).count() > 1,
            None if call.tool == "terminal" => {
                let command = call.arguments.get("command")?.as_str()?.trim();
                self.commands
                    .iter()
                    .filter(|c| c.as_str() == command)
                    .count()
                    > 1
            }
            None => false,
        };
        if !repeated {
            return None;
        }
        let next = match as_view(call.tool, call.arguments) {
            Some((path, _)) => {
                let text = wright_tools::editable_text(view.workspace()?, &path)?;
                let unseen = self.unseen(&path, text.lines().count() as u64);
                unseen.first().map(|(from, to)| format!(
                    "You have not viewed lines {from}-{to} of {path} yet: view those (view_range [{from}, {to}]), or make the change."
                ))
            }
            None => None,
        };
        let next = next.or_else(|| {
            let named = self.named_unviewed(view);
            Some(match named.is_empty() {
                true => "Nothing new will come of it: make the change the task asks for with the file_editor, or call finish if it is done.".to_string(),
                false => format!(
                    "The task names {}, which you have not viewed: view it, then make the change.",
                    named.join(", ")
                ),
            })
        })?;
        Some(format!(
            "[You made this same call before in this run, and it shows the same. {next}]"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unseen_lines_are_the_ranges_no_view_covered() {
        let mut look = RepeatedLook::default();
        look.views.push(("a.py".into(), Some((1, 10))));
        look.views.push(("a.py".into(), Some((15, 20))));
        look.views.push(("b.py".into(), None));
        assert_eq!(look.unseen("a.py", 25), vec![(11, 14), (21, 25)]);
        assert!(look.unseen("b.py", 5).is_empty());
    }
}
