//! The end of a run: outcome, the model's summary, what changed in the workspace (as a
//! git diff, new files included, read in the sandbox) and what it cost.

use crate::hints::stop_words;
use crate::hints::Front;
use std::path::Path;
use std::time::Duration;
use wright_core::Outcome;
use wright_session::working_copy;
use wright_session::working_copy::InPlaceCommit;

pub fn print_report(
    outcome: &Outcome,
    elapsed: Duration,
    changes: &working_copy::Outcome,
    id: &str,
    log_path: &Path,
) {
    let totals = &outcome.totals;
    // What the review found comes first: the user should see it before anything else.
    if let Some(review) = outcome.review.as_ref().filter(|r| !r.is_empty()) {
        let heading = if review.is_suspicious() {
            "── look before you take this: the agent changed tests"
        } else {
            "── review"
        };
        say!("{heading}");
        for line in review.lines() {
            say!("   {line}");
        }
        say!();
    }
    // Then the reviewer's last verdict, before the summary and the diff.
    if let Some(look) = &outcome.second_look {
        say!("── {}", look.heading());
        for finding in &look.findings {
            say!("   - {finding}");
        }
        if let Some(reviewer) = &look.reviewer {
            say!("   (its conversation: wright show {reviewer})");
        }
        say!();
    }
    say!(
        "── {}: {} · {} step{} · {:.1} s",
        outcome.state.as_str(),
        stop_words(&outcome.stop, outcome.remedy, Front::CommandLine, id),
        totals.steps,
        if totals.steps == 1 { "" } else { "s" },
        elapsed.as_secs_f64()
    );
    if let Some(summary) = &outcome.summary {
        say!("{}", summary.trim());
    }
    for flag in &outcome.flags {
        say!("── flagged: {flag}");
    }
    match changes {
        working_copy::Outcome::Branch {
            branch,
            diff,
            configuring,
            ..
        } => {
            say!(
                "\n── changes, on branch {branch} (your checkout is untouched)\n{}\n\n   take them: wright apply {id}\n   drop them: wright discard {id}",
                diff.trim_end()
            );
            if !configuring.is_empty() {
                say!(
                    "   note: it changes {}, which configure git, git-lfs or wright; read them first (`wright apply` asks for --with-git-config)",
                    configuring.join(", ")
                );
            }
        }
        working_copy::Outcome::NoChanges => say!("\n── no changes"),
        working_copy::Outcome::InPlace {
            diff,
            commit,
            quarantine,
            left_config,
        } => {
            in_place_changes(diff, commit);
            if *left_config {
                say!("   note: the agent changed .wright/config.toml, wright's configuration for this repository; that change is not committed (read it: git diff -- .wright/config.toml)");
            }
            print_quarantine(quarantine);
        }
        working_copy::Outcome::NotGit { quarantine, diff } => {
            match diff {
                None => say!("\n── the workspace is not a git repository, and no snapshot was kept (--no-snapshot): no diff to show"),
                Some(diff) if diff.trim().is_empty() => say!("\n── no changes (the workspace is not a git repository: compared with the copy wright kept at the start)"),
                Some(diff) => say!(
                    "\n── changes in the workspace (not a git repository: against the copy wright kept at the start)\n{}\n\n   undo them: wright discard {id}",
                    diff.trim_end()
                ),
            }
            print_quarantine(quarantine);
        }
        working_copy::Outcome::Failed { .. } => {
            say!("\n── the changes could not be handed over (see below)")
        }
    }
    let cached = if totals.cached_tokens > 0 {
        format!(" ({} cached)", totals.cached_tokens)
    } else {
        String::new()
    };
    let mut rate = String::new();
    if totals.model_ms > 0.0 {
        rate.push_str(&format!(" · model time {:.1} s", totals.model_ms / 1000.0));
    }
    if let Some(prefill) = totals.prefill_rate() {
        rate.push_str(&format!(" · prefill {prefill:.0} tokens/s"));
    }
    if let Some(generation) = totals.generation_rate() {
        rate.push_str(&format!(" · generation {generation:.0} tokens/s"));
    }
    if totals.condensations > 0 {
        rate.push_str(&format!(
            " · {} condensation{}",
            totals.condensations,
            if totals.condensations == 1 { "" } else { "s" }
        ));
    }
    say!(
        "\n── tokens: {} prompt{cached} · {} generated{rate}\n   log: {}",
        totals.prompt_tokens,
        totals.completion_tokens,
        log_path.display()
    );
}

fn in_place_changes(diff: &str, commit: &InPlaceCommit) {
    match commit {
        InPlaceCommit::NothingToCommit => say!("\n── no changes in the workspace"),
        InPlaceCommit::Made(tip) => say!(
            "\n── changes in your checkout, committed by wright as {} on your current branch\n{}\n\n   take it back: git reset HEAD~1 (the changes stay in your files)",
            &tip.as_str()[..12],
            diff.trim_end()
        ),
        InPlaceCommit::LeftWithYours => say!(
            "\n── changes in your checkout, left uncommitted (the tree had changes of yours when the run began)\n{}",
            diff.trim_end()
        ),
    }
}

/// Says which repositories the agent made were set aside, or that not all could be checked.
fn print_quarantine(quarantine: &working_copy::Quarantine) {
    for (dir, moved) in &quarantine.moved {
        say!(
            "\n── the agent made a git repository in {}: its .git is now {}, so neither wright nor git takes it for yours (look at its hooks and config before using it)",
            dir.display(),
            moved.display()
        );
    }
    for (dir, why) in &quarantine.failed {
        say!(
            "\n── the agent made a git repository in {}, and wright could not set it aside ({why}): do not run git there; its hooks and config are the agent's",
            dir.display()
        );
    }
    for dir in &quarantine.unreadable {
        say!(
            "\n── {} could not be looked into for git repositories the agent may have made; do not run git there without looking first",
            dir.display()
        );
    }
    if quarantine.truncated {
        say!("\n── the workspace has too many files to check all of them for git repositories the agent may have made; do not run git in its subdirectories without looking first");
    }
}
