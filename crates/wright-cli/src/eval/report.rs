//! What a sweep comes to: per setting its pass rate, median steps and time, tokens
//! (prompt, processed, cached), and why each failed attempt stopped; per shape of task
//! its passes (`shapes.rs`); per task, with more than one setting, the settings side by
//! side. Pure functions of the records, printed as a table or as JSON.

use super::results::Record;
use super::results::Verdict;
use super::shapes;
use super::shapes::Planned;
use super::shapes::ShapeCell;
use super::shapes::ShapeSummary;
use serde::Serialize;

/// One setting's results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingSummary {
    pub setting: String,
    /// Attempts run (skipped ones excluded).
    pub attempts: usize,
    pub passed: usize,
    pub skipped: usize,
    /// passed / attempts; absent when nothing ran.
    pub pass_rate: Option<f64>,
    pub median_steps: Option<f64>,
    pub median_seconds: Option<f64>,
    /// Means per attempt run.
    pub mean_prompt_tokens: Option<f64>,
    pub mean_processed_tokens: Option<f64>,
    pub mean_cached_tokens: Option<f64>,
    pub total_prompt_tokens: u64,
    pub total_processed_tokens: u64,
    pub total_cached_tokens: u64,
    pub total_completion_tokens: u64,
}

/// A task's result under one setting: passes out of attempts, or why it was skipped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub setting: String,
    pub passed: usize,
    pub attempts: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRow {
    pub task: String,
    /// The suite's label of the task; absent when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    pub cells: Vec<Cell>,
}

/// A failed attempt and why it stopped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    pub task: String,
    pub setting: String,
    pub attempt: u32,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub suite: String,
    pub results: String,
    pub settings: Vec<SettingSummary>,
    /// Passes per shape of task (`unlabelled` for tasks without one), per setting.
    pub shapes: Vec<ShapeSummary>,
    pub tasks: Vec<TaskRow>,
    pub failures: Vec<Failure>,
}

/// The summary of `records` over the planned `settings` and `tasks`, in their order.
pub fn summarize(
    suite: &str,
    results: &str,
    settings: &[String],
    tasks: &[Planned],
    records: &[Record],
) -> Summary {
    let settings_summary = settings
        .iter()
        .map(|setting| summarize_setting(setting, records))
        .collect();
    let rows = tasks
        .iter()
        .map(|planned| TaskRow {
            task: planned.name.clone(),
            shape: planned.shape.clone(),
            cells: settings
                .iter()
                .map(|setting| {
                    let mine: Vec<&Record> = records
                        .iter()
                        .filter(|r| r.task == planned.name && &r.setting == setting)
                        .collect();
                    let skipped = mine
                        .iter()
                        .find(|r| r.verdict == Verdict::Skipped)
                        .map(|r| r.reason.clone().unwrap_or_else(|| "skipped".into()));
                    let ran = mine.iter().filter(|r| r.verdict != Verdict::Skipped);
                    Cell {
                        setting: setting.clone(),
                        passed: ran.clone().filter(|r| r.verdict == Verdict::Passed).count(),
                        attempts: ran.count(),
                        skipped,
                    }
                })
                .collect(),
        })
        .collect();
    let failures = records
        .iter()
        .filter(|r| r.verdict == Verdict::Failed)
        .map(|r| Failure {
            task: r.task.clone(),
            setting: r.setting.clone(),
            attempt: r.attempt,
            reason: r.reason.clone().unwrap_or_else(|| "failed".into()),
            conversation: r.conversation.clone(),
        })
        .collect();
    Summary {
        suite: suite.into(),
        results: results.into(),
        settings: settings_summary,
        shapes: shapes::summarize(settings, tasks, records),
        tasks: rows,
        failures,
    }
}

fn summarize_setting(setting: &str, records: &[Record]) -> SettingSummary {
    let mine: Vec<&Record> = records.iter().filter(|r| r.setting == setting).collect();
    let ran: Vec<&Record> = mine
        .iter()
        .copied()
        .filter(|r| r.verdict != Verdict::Skipped)
        .collect();
    let passed = ran.iter().filter(|r| r.verdict == Verdict::Passed).count();
    let count = ran.len();
    let mean = |total: u64| (count > 0).then(|| total as f64 / count as f64);
    let total = |field: fn(&Record) -> u64| ran.iter().map(|r| field(r)).sum::<u64>();
    let prompt = total(|r| r.prompt_tokens);
    let processed = total(|r| r.processed_tokens);
    let cached = total(|r| r.cached_tokens);
    SettingSummary {
        setting: setting.into(),
        attempts: count,
        passed,
        skipped: mine.len() - count,
        pass_rate: (count > 0).then(|| passed as f64 / count as f64),
        median_steps: median(ran.iter().map(|r| f64::from(r.steps)).collect()),
        median_seconds: median(ran.iter().map(|r| r.seconds).collect()),
        mean_prompt_tokens: mean(prompt),
        mean_processed_tokens: mean(processed),
        mean_cached_tokens: mean(cached),
        total_prompt_tokens: prompt,
        total_processed_tokens: processed,
        total_cached_tokens: cached,
        total_completion_tokens: total(|r| r.completion_tokens),
    }
}

pub fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[middle]
    } else {
        (values[middle - 1] + values[middle]) / 2.0
    })
}

/// Tokens as people read them: 950, 12.3k, 4.1M.
fn tokens(value: Option<f64>) -> String {
    match value {
        None => "-".into(),
        Some(v) if v < 1000.0 => format!("{v:.0}"),
        Some(v) if v < 1_000_000.0 => format!("{:.1}k", v / 1000.0),
        Some(v) => format!("{:.1}M", v / 1_000_000.0),
    }
}

fn number(value: Option<f64>, unit: &str) -> String {
    value.map_or("-".into(), |v| {
        if v.fract() == 0.0 {
            format!("{v:.0}{unit}")
        } else {
            format!("{v:.1}{unit}")
        }
    })
}

/// Columns padded to their widest cell, two spaces apart.
fn columns(rows: &[Vec<String>]) -> Vec<String> {
    let widths: Vec<usize> = (0..rows.first().map_or(0, Vec::len))
        .map(|i| {
            rows.iter()
                .map(|row| row[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|row| {
            row.iter()
                .zip(&widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        })
        .collect()
}

/// The summary as lines for a person.
pub fn table(summary: &Summary) -> Vec<String> {
    let mut rows = vec![[
        "setting",
        "passed",
        "rate",
        "steps",
        "prompt",
        "processed",
        "cached",
        "time",
        "skipped",
    ]
    .map(String::from)
    .to_vec()];
    for s in &summary.settings {
        rows.push(vec![
            s.setting.clone(),
            format!("{}/{}", s.passed, s.attempts),
            s.pass_rate
                .map_or("-".into(), |rate| format!("{:.0}%", rate * 100.0)),
            number(s.median_steps, ""),
            tokens(s.mean_prompt_tokens),
            tokens(s.mean_processed_tokens),
            tokens(s.mean_cached_tokens),
            number(s.median_seconds, " s"),
            s.skipped.to_string(),
        ]);
    }
    let mut lines = columns(&rows);
    lines.push("(steps and time: medians per attempt; tokens: means per attempt)".into());
    // A suite that labels none of its tasks has one group: the table above says it all.
    if summary.tasks.iter().any(|t| t.shape.is_some()) {
        lines.push(String::new());
        let totals: Vec<ShapeCell> = summary
            .settings
            .iter()
            .map(|s| ShapeCell {
                setting: s.setting.clone(),
                attempts: s.attempts,
                passed: s.passed,
                skipped: s.skipped,
                pass_rate: s.pass_rate,
            })
            .collect();
        lines.extend(columns(&shapes::rows(&summary.shapes, &totals)));
    }
    if summary.settings.len() > 1 {
        lines.push(String::new());
        let mut rows = vec![std::iter::once("task".to_string())
            .chain(summary.settings.iter().map(|s| s.setting.clone()))
            .collect::<Vec<_>>()];
        for row in &summary.tasks {
            rows.push(
                std::iter::once(row.task.clone())
                    .chain(row.cells.iter().map(cell_text))
                    .collect(),
            );
        }
        lines.extend(columns(&rows));
    }
    let skipped: Vec<String> = summary
        .tasks
        .iter()
        .filter_map(|row| {
            let reason = row.cells.iter().find_map(|c| c.skipped.clone())?;
            Some(format!("{} ({reason})", row.task))
        })
        .collect();
    if !skipped.is_empty() {
        lines.push(String::new());
        lines.push(format!("skipped: {}", skipped.join(", ")));
    }
    if !summary.failures.is_empty() {
        lines.push(String::new());
        lines.push("failed:".into());
        for f in &summary.failures {
            let which = if summary.settings.len() > 1 {
                format!("{} · {} #{}", f.task, f.setting, f.attempt)
            } else {
                format!("{} #{}", f.task, f.attempt)
            };
            let show = f
                .conversation
                .as_ref()
                .map(|id| format!(" (wright show {id})"))
                .unwrap_or_default();
            lines.push(format!("  {which}: {}{show}", f.reason));
        }
    }
    lines
}

fn cell_text(cell: &Cell) -> String {
    match &cell.skipped {
        Some(_) if cell.attempts == 0 => "skipped".into(),
        _ => format!("{}/{}", cell.passed, cell.attempts),
    }
}

#[cfg(test)]
mod tests {
    use super::super::results::sample;
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }

    #[test]
    fn a_summary_counts_passes_skips_and_reasons_per_setting() {
        let mut failed = sample("b", "map=off", 1, Verdict::Failed);
        failed.reason = Some("stopped: the step limit (50) was reached".into());
        failed.steps = 7;
        let mut skipped = sample("c", "map=on", 1, Verdict::Skipped);
        skipped.reason = Some("no go".into());
        let records = vec![
            sample("a", "map=on", 1, Verdict::Passed),
            sample("b", "map=on", 1, Verdict::Passed),
            skipped.clone(),
            sample("a", "map=off", 1, Verdict::Passed),
            failed,
            Record {
                setting: "map=off".into(),
                ..skipped
            },
        ];
        let settings = vec!["map=on".to_string(), "map=off".to_string()];
        let tasks: Vec<Planned> = ["a", "b", "c"]
            .into_iter()
            .map(|name| Planned {
                name: name.into(),
                shape: None,
            })
            .collect();
        let summary = summarize("basic", "/r", &settings, &tasks, &records);
        let on = &summary.settings[0];
        assert_eq!((on.attempts, on.passed, on.skipped), (2, 2, 1));
        assert_eq!(on.pass_rate, Some(1.0));
        assert_eq!(on.mean_processed_tokens, Some(400.0));
        let off = &summary.settings[1];
        assert_eq!((off.attempts, off.passed), (2, 1));
        assert_eq!(off.median_steps, Some(5.0));
        assert_eq!(summary.failures.len(), 1);
        let lines = table(&summary);
        let text = lines.join("\n");
        assert!(text.contains("map=on   2/2     100%"), "{text}");
        assert!(text.contains("map=off  1/2     50%"), "{text}");
        assert!(
            lines
                .iter()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["b", "1/1", "0/1"]),
            "{text}"
        );
        assert!(text.contains("skipped: c (no go)"), "{text}");
        assert!(
            text.contains("b · map=off #1: stopped: the step limit (50) was reached"),
            "{text}"
        );
    }
}
