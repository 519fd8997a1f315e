//! Stuck detection over the recent steps of a conversation: the same action with the
//! same result again and again, the same action failing again and again, two actions in
//! alternation, three or four in a cycle, or reply after reply with no readable tool call. Weak models loop; the
//! first time wright tells the model what it is repeating, the second time it stops the
//! run as `stuck` (resumable).

use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;

/// How many times a pattern must repeat before it counts.
const REPEATS: usize = 3;
/// The lengths of the cycles looked for beyond an alternation (each seen twice over).
const CYCLES: [usize; 2] = [3, 4];

#[derive(Debug, Clone, PartialEq)]
pub enum Pattern {
    SameActionSameResult {
        action: String,
    },
    SameActionFailing {
        action: String,
    },
    Alternating {
        first: String,
        second: String,
    },
    /// Three actions, again in the same order (an edit that fails, a look, a `finish`).
    Cycle {
        actions: Vec<String>,
    },
    NoReadableCall,
}

impl Pattern {
    pub fn describe(&self) -> String {
        match self {
            Pattern::SameActionSameResult { action } => {
                format!("the same action gave the same result {REPEATS} times in a row: {action}")
            }
            Pattern::SameActionFailing { action } => {
                format!("the same action failed {REPEATS} times in a row: {action}")
            }
            Pattern::Alternating { first, second } => {
                format!("the last steps alternate between two actions: {first} and {second}")
            }
            Pattern::Cycle { actions } => format!(
                "the last steps repeat the same {} actions in the same order: {}",
                actions.len(),
                actions.join(", then ")
            ),
            Pattern::NoReadableCall => {
                format!("{REPEATS} replies in a row had no tool call that could be read")
            }
        }
    }

    /// Whether `description` (a pattern's `describe`, as the model was told it) is of this
    /// pattern's kind: how a nudge is read back from the log.
    pub fn told_in(&self, description: &str) -> bool {
        let mark = match self {
            Pattern::SameActionSameResult { .. } => "the same action gave the same result ",
            Pattern::SameActionFailing { .. } => "the same action failed ",
            Pattern::Alternating { .. } => "the last steps alternate ",
            Pattern::Cycle { .. } => "the last steps repeat the same ",
            Pattern::NoReadableCall => return description.starts_with(&self.describe()),
        };
        description.starts_with(mark)
    }
}

/// One model step as stuck detection sees it.
#[derive(Debug, Default, Clone, PartialEq)]
struct Step {
    /// Actions as `tool {arguments}`.
    actions: Vec<String>,
    /// Their results, with a failure marker.
    results: Vec<String>,
    failed: bool,
    unreadable: bool,
}

fn steps(events: &[Event]) -> Vec<Step> {
    let mut steps: Vec<(u32, Step)> = Vec::new();
    let current = |steps: &mut Vec<(u32, Step)>, step: u32| -> usize {
        if steps.last().map(|(s, _)| *s) != Some(step) {
            steps.push((step, Step::default()));
        }
        steps.len() - 1
    };
    let mut last_step = 0;
    // wright's own calls (the first look) are not the agent's: they make no loop.
    let mut environment_calls: Vec<&str> = Vec::new();
    for event in events {
        match &event.body {
            EventBody::Action { call_id, .. } if event.source == Source::Environment => {
                environment_calls.push(call_id);
            }
            EventBody::Observation { call_id, .. }
                if environment_calls.contains(&call_id.as_str()) => {}
            EventBody::Usage(usage) => {
                last_step = usage.step;
                current(&mut steps, last_step);
            }
            EventBody::Action {
                tool, arguments, ..
            } => {
                let at = current(&mut steps, last_step);
                steps[at].1.actions.push(format!("{tool} {arguments}"));
            }
            EventBody::Observation {
                output,
                is_error,
                exit_code,
                ..
            } => {
                let at = current(&mut steps, last_step);
                let failed = *is_error || exit_code.is_some_and(|code| code != 0);
                steps[at].1.failed |= failed;
                steps[at].1.results.push(format!("{failed} {output}"));
            }
            EventBody::Message { text, .. }
                if event.source == Source::Environment
                    && text.starts_with("Your tool call could not be read") =>
            {
                let at = current(&mut steps, last_step);
                steps[at].1.unreadable = true;
            }
            _ => {}
        }
    }
    steps.into_iter().map(|(_, step)| step).collect()
}

/// The pattern the last steps show, if any.
pub fn detect(events: &[Event]) -> Option<Pattern> {
    let steps = steps(events);
    let recent = steps.get(steps.len().checked_sub(REPEATS)?..)?;
    let first = &recent[0];
    let same_actions =
        !first.actions.is_empty() && recent.iter().all(|s| s.actions == first.actions);
    let action = || clip(&first.actions.join("; "));
    if same_actions && recent.iter().all(|s| s.results == first.results) {
        return Some(Pattern::SameActionSameResult { action: action() });
    }
    if same_actions && recent.iter().all(|s| s.failed) {
        return Some(Pattern::SameActionFailing { action: action() });
    }
    if recent.iter().all(|s| s.unreadable && s.actions.is_empty()) {
        return Some(Pattern::NoReadableCall);
    }
    let window = steps.get(steps.len().checked_sub(2 * REPEATS)?..)?;
    let (a, b) = (&window[0].actions, &window[1].actions);
    let alternating = !a.is_empty()
        && a != b
        && window
            .iter()
            .enumerate()
            .all(|(n, s)| &s.actions == if n % 2 == 0 { a } else { b });
    if alternating {
        return Some(Pattern::Alternating {
            first: clip(&a.join("; ")),
            second: clip(&b.join("; ")),
        });
    }
    cycle(&steps)
}

/// Whether the last steps are one cycle of `CYCLES` steps (not all the same action), twice
/// over: an edit that fails, a `finish` sent back, a look, again in that order.
fn cycle(steps: &[Step]) -> Option<Pattern> {
    CYCLES.iter().find_map(|&period| {
        let window = steps.get(steps.len().checked_sub(2 * period)?..)?;
        let cycle: Vec<&Vec<String>> = window.iter().take(period).map(|s| &s.actions).collect();
        let varied = cycle.iter().all(|actions| !actions.is_empty())
            && cycle.iter().any(|actions| *actions != cycle[0]);
        let repeated = window
            .iter()
            .enumerate()
            .all(|(n, s)| &s.actions == cycle[n % period]);
        (varied && repeated).then(|| Pattern::Cycle {
            actions: cycle
                .iter()
                .map(|actions| clip(&actions.join("; ")))
                .collect(),
        })
    })
}

/// Steps looked back at for the failure a nudge points at.
const FAILURE_LOOKBACK: usize = 2 * REPEATS;

/// The concrete next step after a loop over a failure: the workspace file and line the
/// last failing result names (a traceback's innermost frame, a compiler error), with
/// those lines quoted; `None` when the recent results name no such place.
pub fn next_step(events: &[Event], workspace: &wright_tools::Workspace) -> Option<String> {
    let observations = events.iter().rev().filter_map(|event| match &event.body {
        EventBody::Observation {
            output,
            is_error,
            exit_code,
            ..
        } => Some((output, *is_error || exit_code.is_some_and(|code| code != 0))),
        _ => None,
    });
    let (_, place) = observations
        .take(FAILURE_LOOKBACK)
        .filter(|(_, failed)| *failed)
        .find_map(|(output, _)| {
            let places = wright_tools::failure::places(output, workspace);
            wright_tools::failure::failing_place(output, &places)
        })?;
    let quoted = wright_tools::failure::quote(workspace, &place, 2)?;
    // A test's failing line calls the code under test: that is what to open next.
    let next = wright_tools::failure::called_definitions(workspace, &place)
        .into_iter()
        .next()
        .map(|(_, at, _)| at)
        .unwrap_or_else(|| place.clone());
    let calls = if next == place {
        String::new()
    } else {
        format!(
            "It calls code defined in {} at line {}.\n",
            next.path, next.line
        )
    };
    Some(format!(
        "The last failure points at {path} line {line}:\n{quoted}\n{calls}Next: view {next_path} around line {next_line} (file_editor view), fix the cause there, then run the failing command once more.",
        path = place.path,
        line = place.line,
        next_path = next.path,
        next_line = next.line,
    ))
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(160) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}
