//! The end of `wright run --parallel`: the table that compares the runs (passed, steps,
//! tokens, time, diff size), the best one offered for `wright apply` with the exact
//! command, the others left as branches (with the command that drops each), and what
//! the server's prefix cache served of all their prompt tokens.

use wright_protocol::count;

/// One run, as the table shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub n: usize,
    pub conversation: Option<String>,
    pub profile: Option<String>,
    /// What judged it said: passed / failed (the check), approved / rejected (the
    /// reviewer), finished / not done (the agent's word).
    pub judged: &'static str,
    pub passed: bool,
    pub steps: u32,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub completion_tokens: u64,
    pub seconds: f64,
    /// Lines added, removed, and files.
    pub diff: (usize, usize, usize),
    pub trouble: Option<String>,
}

impl Row {
    fn diff_lines(&self) -> usize {
        self.diff.0 + self.diff.1
    }
}

/// The best run: one that passed, with the smallest change, then the fewest tokens,
/// then the quickest. None when none passed.
pub fn best(rows: &[Row]) -> Option<&Row> {
    rows.iter()
        .filter(|r| r.passed && r.conversation.is_some() && r.diff_lines() > 0)
        .min_by(|a, b| {
            (a.diff_lines(), a.prompt_tokens + a.completion_tokens)
                .cmp(&(b.diff_lines(), b.prompt_tokens + b.completion_tokens))
                .then(a.seconds.total_cmp(&b.seconds))
        })
}

/// Prints the table and the offer; returns the exit status (0 when one is offered).
pub fn report(rows: &[Row], group: &str) -> u8 {
    say!();
    say!(
        "── {} of one task (group {group})",
        count(rows.len() as u64, "run")
    );
    say!(
        "  {:<3} {:<32} {:<10} {:<9} {:>5} {:>22} {:>8}  {}",
        "#",
        "conversation",
        "profile",
        "result",
        "steps",
        "tokens in/cached/out",
        "time",
        "diff"
    );
    for row in rows {
        let tokens = format!(
            "{}/{}/{}",
            row.prompt_tokens, row.cached_tokens, row.completion_tokens
        );
        say!(
            "  {:<3} {:<32} {:<10} {:<9} {:>5} {:>22} {:>7.1}s  +{} -{} ({})",
            row.n,
            row.conversation.as_deref().unwrap_or("-"),
            row.profile.as_deref().unwrap_or("-"),
            row.judged,
            row.steps,
            tokens,
            row.seconds,
            row.diff.0,
            row.diff.1,
            count(row.diff.2 as u64, "file"),
        );
        if let Some(trouble) = &row.trouble {
            say!("      {trouble}");
        }
    }
    let prompt: u64 = rows.iter().map(|r| r.prompt_tokens).sum();
    let cached: u64 = rows.iter().map(|r| r.cached_tokens).sum();
    if prompt > 0 {
        say!(
            "  prefix cache: {cached} of {prompt} prompt tokens served from the server's cache ({:.0} %)",
            cached as f64 * 100.0 / prompt as f64
        );
    }
    let best = best(rows);
    let others: Vec<&str> = rows
        .iter()
        .filter(|r| Some(r.n) != best.map(|b| b.n))
        .filter_map(|r| r.conversation.as_deref())
        .collect();
    let status = match best {
        Some(row) => {
            let id = row.conversation.as_deref().unwrap_or_default();
            say!(
                "\n── best: #{} ({}, the smallest change among those that {})\n   take it: wright apply {id}",
                row.n,
                row.judged,
                match row.judged {
                    "passed" => "passed the check",
                    "approved" => "the reviewer approved",
                    _ => "finished",
                }
            );
            0
        }
        None => {
            say!("\n── none passed: nothing is offered (`wright diff ID` shows a run's change)");
            1
        }
    };
    if !others.is_empty() {
        say!("   the others stay as branches until you drop them:");
        for id in others {
            say!("   wright discard {id}");
        }
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(n: usize, passed: bool, lines: usize, tokens: u64) -> Row {
        Row {
            n,
            conversation: Some(format!("c{n}")),
            profile: None,
            judged: if passed { "passed" } else { "failed" },
            passed,
            steps: 3,
            prompt_tokens: tokens,
            cached_tokens: 0,
            completion_tokens: 0,
            seconds: 1.0,
            diff: (lines, 0, 1),
            trouble: None,
        }
    }

    #[test]
    fn the_best_passed_with_the_smallest_change() {
        let rows = vec![
            row(1, false, 1, 10),
            row(2, true, 5, 10),
            row(3, true, 2, 99),
            row(4, true, 2, 50),
        ];
        assert_eq!(best(&rows).map(|r| r.n), Some(4));
        assert_eq!(best(&[row(1, false, 1, 1)]), None);
        // A run that passed without changing anything has nothing to offer.
        assert_eq!(best(&[row(1, true, 0, 1)]), None);
    }
}
