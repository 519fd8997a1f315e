//! What the task names and the code lacks (an option, a variable, a value) decides which
//! version of a file stays, and a version kept is not broken by the model's later edits:
//! wright runs the tests after each edit and undoes one that breaks them.

use super::*;

/// The task with a variable the code does not have yet.
const APP_TASK: &str =
    "The default port must be 3000, overridable by the APP_PORT environment variable.";
const APP_CONFIG: &str = "import os\n\nPORT = int(os.environ.get(\"APP_PORT\", \"3000\"))\n";

#[tokio::test]
async fn a_version_that_leaves_out_what_the_task_names_does_not_stay_when_one_holds_it() {
    // No check is left (both pass before any change). The first version keeps the tests
    // passing but has no APP_PORT: it is put back, and the next one, which reads it, stays.
    let passes = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_nothing(self):\n        pass\n";
    let finish = reply().call("finish", json!({"message": "done"}));
    let (h, _) = run_task_as(
        APP_TASK,
        vec![
            python(passes),
            sh("true"),
            python("PORT = 3000\n"),
            python(APP_CONFIG),
            finish,
        ],
    )
    .await;

    let tried = candidates(&h);
    let outcomes: Vec<_> = tried[2..].iter().map(|c| c.outcome.clone()).collect();
    let leaves_out = CandidateOutcome::LeavesOut {
        words: vec!["APP_PORT".into()],
    };
    assert_eq!(outcomes, vec![leaves_out, CandidateOutcome::Unverified]);
    assert!(tried[2]
        .summary()
        .contains("leaves out what the task names (APP_PORT)"));
    assert_eq!(config(&h), APP_CONFIG);

    // When no version holds it, the one that holds most of the task's words stays in
    // the end: the new default, not the version that changed nothing the task names.
    let finish = reply().call("finish", json!({"message": "done"}));
    let (h, _) = run_task_as(
        APP_TASK,
        vec![
            python(passes),
            sh("true"),
            python("PORT = 8080  # the port\n"),
            python("PORT = 3000\n"),
            finish,
        ],
    )
    .await;
    let tried = candidates(&h);
    assert_eq!(tried.len(), 5, "{tried:?}");
    assert_eq!(tried[4].outcome, CandidateOutcome::Unverified);
    assert_eq!(tried[4].new_str.as_deref(), Some("PORT = 3000\n"));
    assert_eq!(config(&h), "PORT = 3000\n");
}

#[tokio::test]
async fn a_version_a_check_passes_that_leaves_out_what_the_task_names_is_not_taken_as_done() {
    // The model's check tests the default only; the first version sets it and nothing
    // reads APP_PORT: the check passes, but it is put back, and the full one passes.
    let default_only = "python3 -c 'import config; assert config.PORT == 3000'";
    let view = reply().call(
        "file_editor",
        json!({"command": "view", "path": "config.py"}),
    );
    let (h, _) = run_task_as(
        APP_TASK,
        vec![
            no_code(),
            sh(default_only),
            python("PORT = 3000\n"),
            python(APP_CONFIG),
            view,
        ],
    )
    .await;

    let outcomes: Vec<_> = candidates(&h).into_iter().map(|c| c.outcome).collect();
    assert_eq!(
        outcomes,
        after_no_check(vec![
            CandidateOutcome::LeavesOut {
                words: vec!["APP_PORT".into()]
            },
            CandidateOutcome::Passed
        ])
    );
    assert_eq!(config(&h), APP_CONFIG);
}

#[tokio::test]
async fn an_edit_that_breaks_the_tests_a_kept_version_passed_is_undone_and_a_finish_sent_back() {
    // The 1.5B, handed a settings module that did the task, renamed its constant in place
    // and broke what read it. wright runs the tests after the edit and undoes it.
    let rename = reply().call(
        "file_editor",
        json!({"command": "str_replace", "path": "config.py", "old_str": "PORT = int", "new_str": "APP_PORT = int"}),
    );
    let finish = reply().call("finish", json!({"message": "done"}));
    let (h, outcome) = run_task_as(
        APP_TASK,
        vec![no_code(), no_code(), python(APP_CONFIG), rename, finish],
    )
    .await;
    assert_eq!(outcome.stop, StopReason::Finished);
    assert_eq!(config(&h), APP_CONFIG);
    let checks: Vec<_> = h
        .events()
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Check(check) => Some(check.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(checks.len(), 2, "{checks:?}");
    assert!(checks[0].undone);
    assert!(
        checks[0].shown.starts_with(
            "[wright ran `python3 -m unittest` again after this edit: it fails (exit 1):]"
        ) && checks[0]
            .shown
            .contains("It passed before this edit, so wright undid the edit"),
        "{}",
        checks[0].shown
    );
    assert!(checks[1].passed());

    // Before any version is kept, an edit is not followed (a change may break the tests
    // on its way), but a finish while the tests fail that passed first is sent back.
    let breaks = reply().call(
        "file_editor",
        json!({"command": "str_replace", "path": "config.py", "old_str": "PORT = 8080", "new_str": "PORT = '8080'"}),
    );
    let finish = || reply().call("finish", json!({"message": "done"}));
    let mut h = Harness::run_mode(vec![breaks, finish(), finish(), finish()]).await;
    passing_repo(&h);
    h.conversation.look_first(TESTS.into());
    let outcome = h.run(APP_TASK).await;
    assert!(!h.results_of("file_editor")[0].contains("wright ran"));
    let finishes = h.results_of("finish");
    assert!(
        finishes[0].contains("it fails (exit 1)")
            && finishes[0].contains(
                "The tests passed when the work began: the task is not done while they fail"
            ),
        "{finishes:?}"
    );
    assert!(
        matches!(outcome.stop, StopReason::ChecksFail { finishes: 3, .. }),
        "{:?}",
        outcome.stop
    );
}
