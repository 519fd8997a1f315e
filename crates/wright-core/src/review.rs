//! Ending honestly: before a `finish` is accepted, the agent's own changes are reviewed.
//! Edits to test files, removed tests or assertions and skipped tests are sent back to
//! the model once, to justify or undo; they and the files the task never mentions are
//! shown to the user before anything else. A small model asked to fix a failing test will
//! sometimes delete the test: this is what catches it.

mod places;

use wright_protocol::Review;

/// One changed file, as the front end's inspector reads it (a diff against the start).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileChange {
    pub path: String,
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

/// Reads the workspace's changes; the front end implements it (it knows the sandbox).
pub trait Inspector: Send + Sync {
    fn changes(&self) -> Vec<FileChange>;
}

pub use wright_tools::is_test_file;

const TEST_OR_ASSERTION: &[&str] = &[
    "def test",
    "assert",
    "#[test]",
    "it(",
    "test(",
    "@test",
    "expect(",
    "func test",
    "self.assert",
];

const SKIP_MARKERS: &[&str] = &[
    "@unittest.skip",
    "pytest.mark.skip",
    "pytest.skip(",
    "#[ignore]",
    "xit(",
    "it.skip(",
    "test.skip(",
    "describe.skip(",
    "t.skip(",
    "@disabled",
    "@ignore",
    "skiptest",
    "self.skiptest",
];

/// Reviews `changes` for `task`: the words of every message of the user's and of the
/// failing tests' output (what names the places the work belongs in).
pub fn analyze(task: &str, changes: &[FileChange]) -> Review {
    let mut review = Review::default();
    for change in changes {
        if is_test_file(&change.path) {
            review.test_files_changed.push(change.path.clone());
        }
        let added: Vec<String> = change
            .added
            .iter()
            .map(|l| l.trim().to_lowercase())
            .collect();
        for line in &change.removed {
            let lower = line.trim().to_lowercase();
            // A line rewritten in place (still there among the added ones) is not removed.
            if TEST_OR_ASSERTION.iter().any(|m| lower.contains(m)) && !added.contains(&lower) {
                review
                    .tests_removed
                    .push(format!("{}: {}", change.path, line.trim()));
            }
        }
        for line in &change.added {
            let lower = line.trim().to_lowercase();
            if SKIP_MARKERS.iter().any(|m| lower.contains(m)) {
                review
                    .tests_skipped
                    .push(format!("{}: {}", change.path, line.trim()));
            }
        }
    }
    review.unmentioned_files = places::Places::of(task).outside(changes);
    review
}

/// What the model is told when its `finish` is sent back for review.
pub fn request_justification(review: &Review) -> String {
    format!(
        "Before finishing, look at your own changes. {}. Changing or removing tests to make them pass does not fix the code. If these changes are right, call finish again and say why in the message; otherwise undo them (file_editor undo_edit, or restore the lines) and fix the code instead.",
        review
            .lines()
            .into_iter()
            .filter(|l| !l.starts_with("files changed that"))
            .collect::<Vec<_>>()
            .join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deleted_assertion_in_a_test_file_is_found() {
        let changes = vec![
            FileChange {
                path: "test_export.py".into(),
                added: vec![],
                removed: vec!["        self.assertEqual(export_csv(rows), \"1,2,3\\n\")".into()],
            },
            FileChange {
                path: "export.py".into(),
                added: vec!["    return \",\".join(row)".into()],
                removed: vec!["    return \",\".join(row[:-1])".into()],
            },
        ];
        let review = analyze("the test test_export_csv fails, fix it", &changes);
        assert_eq!(review.test_files_changed, vec!["test_export.py"]);
        assert_eq!(review.tests_removed.len(), 1);
        assert!(review.is_suspicious());
        assert_eq!(
            review.unmentioned_files,
            Vec::<String>::new(),
            "export is in test_export_csv"
        );
    }

    #[test]
    fn plain_source_fixes_are_not_suspicious() {
        let changes = vec![FileChange {
            path: "src/lib.rs".into(),
            added: vec!["    a + b".into()],
            removed: vec!["    a - b".into()],
        }];
        let review = analyze("fix the addition", &changes);
        assert!(!review.is_suspicious());
        // The task names no place: every file would be "unmentioned", which says nothing.
        assert!(review.unmentioned_files.is_empty());
        let review = analyze("fix the addition in src/math/add.rs", &changes);
        assert_eq!(review.unmentioned_files, vec!["src/lib.rs"]);
        assert!(
            is_test_file("tests/all.rs")
                && is_test_file("pkg/foo_test.go")
                && !is_test_file("src/testing_utils.rs")
        );
    }
}
