//! The message of the commit wright makes for the agent: the model's own summary when it
//! gave one (its first line as the subject), the user's task below it, so `git log` says
//! both what was asked and what was done. Control characters are dropped and the text is
//! bounded: the summary is the model's words, and a terminal shows them later.

use wright_protocol::Event;
use wright_protocol::EventBody;
use wright_protocol::Source;

/// The longest subject line, in characters.
const SUBJECT: usize = 72;
/// The longest body, in characters.
const BODY: usize = 4000;

/// The commit message for a conversation's changes: `summary` is the model's closing
/// message (from `finish`), `task` what the user asked.
pub fn commit_message(task: &str, summary: Option<&str>) -> String {
    let task = clean(task);
    let summary = summary.map(clean).filter(|s| !s.trim().is_empty());
    let (subject, rest) = match &summary {
        Some(summary) => {
            let mut lines = summary.trim().lines();
            let first = lines.next().unwrap_or_default().trim().to_string();
            let rest: Vec<&str> = lines.collect();
            (first, rest.join("\n").trim().to_string())
        }
        None => (
            format!(
                "wright: {}",
                task.trim().lines().next().unwrap_or_default().trim()
            ),
            String::new(),
        ),
    };
    let mut body = String::new();
    if !rest.is_empty() {
        body.push_str(&rest);
        body.push_str("\n\n");
    }
    if summary.is_some() || task.trim().lines().count() > 1 || cut(&subject, SUBJECT) != subject {
        body.push_str("Task: ");
        body.push_str(task.trim());
    }
    let body = cut(body.trim(), BODY);
    let subject = cut(&subject, SUBJECT);
    if body.is_empty() {
        subject
    } else {
        format!("{subject}\n\n{body}")
    }
}

/// The conversation's task: its first message from the user.
pub fn task_of(events: &[Event]) -> Option<&str> {
    events.iter().find_map(|event| match &event.body {
        EventBody::Message { text, .. } if event.source == Source::User => Some(text.as_str()),
        _ => None,
    })
}

/// Keeps printable text, newlines and tabs; drops every other control character.
fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .filter(|c| !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
        .collect()
}

/// `text` cut to `max` characters, with an ellipsis when cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut kept: String = text.chars().take(max.saturating_sub(1)).collect();
    kept.push('…');
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_summary_is_the_subject_and_the_task_the_body() {
        assert_eq!(
            commit_message(
                "the test test_export_csv fails, fix it",
                Some("Fixed row_to_csv dropping the last column.\n\nThe slice was row[:-1].")
            ),
            "Fixed row_to_csv dropping the last column.\n\nThe slice was row[:-1].\n\nTask: the test test_export_csv fails, fix it"
        );
    }

    #[test]
    fn without_a_summary_the_task_is_the_subject() {
        assert_eq!(commit_message("fix it", None), "wright: fix it");
        assert_eq!(commit_message("fix it", Some("  \n")), "wright: fix it");
        assert_eq!(
            commit_message("fix it\nplease, carefully", None),
            "wright: fix it\n\nTask: fix it\nplease, carefully"
        );
    }

    #[test]
    fn long_and_hostile_text_is_cut_and_cleaned() {
        let message = commit_message(
            "t",
            Some(&format!("\u{1b}]0;pwned\u{7}{}", "x".repeat(200))),
        );
        let subject = message.lines().next().unwrap();
        assert_eq!(subject.chars().count(), SUBJECT);
        assert!(subject.ends_with('…'));
        assert!(!message.contains('\u{1b}') && !message.contains('\u{7}'));
        assert!(message.ends_with("Task: t"));
    }
}
