//! The end of a run: outcome, the model's summary, what changed in the workspace (as a
//! git diff, new files included) and what it cost.

use crate::working_copy;
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use wright_core::Outcome;

/// The workspace's changes against HEAD, untracked files included; `None` outside git.
pub fn git_changes(workspace: &Path) -> Option<String> {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(workspace)
            .args(args)
            .output()
            .ok()
    };
    let inside = git(&["rev-parse", "--is-inside-work-tree"])?;
    if !inside.status.success() {
        return None;
    }
    let has_head =
        git(&["rev-parse", "--verify", "-q", "HEAD"]).is_some_and(|o| o.status.success());
    let diff_args: &[&str] = if has_head {
        &["diff", "--no-color", "--no-ext-diff", "HEAD", "--"]
    } else {
        &["diff", "--no-color", "--no-ext-diff", "--"]
    };
    let mut out = git(diff_args)
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let untracked = git(&["ls-files", "--others", "--exclude-standard", "-z"])
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    for file in untracked.split('\0').filter(|f| !f.is_empty()) {
        // `--no-index` exits 1 when the files differ, which they always do here.
        if let Some(new) = git(&["diff", "--no-color", "--no-index", "--", "/dev/null", file]) {
            out.push_str(&String::from_utf8_lossy(&new.stdout));
        }
    }
    Some(out)
}

pub fn print_report(
    outcome: &Outcome,
    elapsed: Duration,
    changes: &working_copy::Outcome,
    id: &str,
    workspace: &Path,
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
    say!(
        "── {}: {} · {} step{} · {:.1} s",
        outcome.state.as_str(),
        outcome.reason,
        totals.steps,
        if totals.steps == 1 { "" } else { "s" },
        elapsed.as_secs_f64()
    );
    if let Some(summary) = &outcome.summary {
        say!("{}", summary.trim());
    }
    match changes {
        working_copy::Outcome::Branch { branch, diff } => say!(
            "\n── changes, on branch {branch} (your checkout is untouched)\n{}\n\n   take them: wright apply {id}\n   drop them: wright discard {id}",
            diff.trim_end()
        ),
        working_copy::Outcome::NoChanges => say!("\n── no changes"),
        working_copy::Outcome::Direct => match git_changes(workspace) {
            Some(diff) if diff.trim().is_empty() => say!("\n── no changes in the workspace"),
            Some(diff) => say!("\n── changes in the workspace\n{}", diff.trim_end()),
            None => say!("\n── the workspace is not a git repository: no diff to show"),
        },
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
