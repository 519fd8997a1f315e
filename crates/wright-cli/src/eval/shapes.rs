//! Passes per shape of task (`add-option`, `config`, `cause-elsewhere` …, as the suite
//! labels its tasks): a model that fixes failing tests but never adds an option shows
//! it here, where one pass rate over the suite hides it. Tasks without a shape (older
//! suites, exercises) count under `unlabelled`. Pure functions of the planned tasks and
//! the records; every planned task is in exactly one shape.

use super::results::Record;
use super::results::Verdict;
use serde::Serialize;

/// The group of the tasks a suite does not label.
pub const UNLABELLED: &str = "unlabelled";

/// A task of the sweep as the report needs it: its name and its shape, if labelled.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub name: String,
    pub shape: Option<String>,
}

impl Planned {
    /// The shape it counts under.
    pub fn group(&self) -> &str {
        self.shape.as_deref().unwrap_or(UNLABELLED)
    }
}

/// One shape's results under one setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShapeCell {
    pub setting: String,
    /// Attempts run (skipped ones excluded).
    pub attempts: usize,
    pub passed: usize,
    pub skipped: usize,
    /// passed / attempts; absent when nothing ran.
    pub pass_rate: Option<f64>,
}

/// One shape: how many tasks it has, and its results per setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShapeSummary {
    pub shape: String,
    pub tasks: usize,
    pub cells: Vec<ShapeCell>,
}

/// The shapes of `tasks` in the order they first appear (`unlabelled` last), each with
/// its results under every setting.
pub fn summarize(settings: &[String], tasks: &[Planned], records: &[Record]) -> Vec<ShapeSummary> {
    let mut order: Vec<&str> = Vec::new();
    for task in tasks {
        if !order.contains(&task.group()) {
            order.push(task.group());
        }
    }
    // Last, whatever the suite's order: the labelled shapes are what it is about.
    if let Some(at) = order.iter().position(|s| *s == UNLABELLED) {
        let unlabelled = order.remove(at);
        order.push(unlabelled);
    }
    order
        .into_iter()
        .map(|shape| {
            let names: Vec<&str> = tasks
                .iter()
                .filter(|t| t.group() == shape)
                .map(|t| t.name.as_str())
                .collect();
            let cells = settings
                .iter()
                .map(|setting| {
                    let mine: Vec<&Record> = records
                        .iter()
                        .filter(|r| &r.setting == setting && names.contains(&r.task.as_str()))
                        .collect();
                    let ran = mine
                        .iter()
                        .filter(|r| r.verdict != Verdict::Skipped)
                        .count();
                    let passed = mine.iter().filter(|r| r.verdict == Verdict::Passed).count();
                    ShapeCell {
                        setting: setting.clone(),
                        attempts: ran,
                        passed,
                        skipped: mine.len() - ran,
                        pass_rate: (ran > 0).then(|| passed as f64 / ran as f64),
                    }
                })
                .collect();
            ShapeSummary {
                shape: shape.to_string(),
                tasks: names.len(),
                cells,
            }
        })
        .collect()
}

/// `3/12 (25%)`, `skipped` when nothing ran, with the skipped attempts when some were.
pub fn cell_text(cell: &ShapeCell) -> String {
    if cell.attempts == 0 && cell.skipped > 0 {
        return "skipped".into();
    }
    let rate = cell
        .pass_rate
        .map_or("-".into(), |rate| format!("{:.0}%", rate * 100.0));
    let mut text = format!("{}/{} ({rate})", cell.passed, cell.attempts);
    if cell.skipped > 0 {
        text.push_str(&format!(" +{} skipped", cell.skipped));
    }
    text
}

/// The rows of the per-shape table: a header, a row per shape, and `totals`: each
/// setting's results over the whole sweep, in the settings' order.
pub fn rows(shapes: &[ShapeSummary], totals: &[ShapeCell]) -> Vec<Vec<String>> {
    let mut rows = vec![["shape", "tasks"]
        .into_iter()
        .map(String::from)
        .chain(totals.iter().map(|t| t.setting.clone()))
        .collect::<Vec<_>>()];
    for shape in shapes {
        rows.push(
            [shape.shape.clone(), shape.tasks.to_string()]
                .into_iter()
                .chain(shape.cells.iter().map(cell_text))
                .collect(),
        );
    }
    let all_tasks: usize = shapes.iter().map(|s| s.tasks).sum();
    rows.push(
        ["total".to_string(), all_tasks.to_string()]
            .into_iter()
            .chain(totals.iter().map(cell_text))
            .collect(),
    );
    rows
}

#[cfg(test)]
mod tests {
    use super::super::results::sample;
    use super::*;
    use pretty_assertions::assert_eq;

    fn planned(name: &str, shape: Option<&str>) -> Planned {
        Planned {
            name: name.into(),
            shape: shape.map(String::from),
        }
    }

    #[test]
    fn every_task_counts_in_its_shape_and_the_unlabelled_come_last() {
        let tasks = vec![
            planned("old", None),
            planned("opt-a", Some("add-option")),
            planned("cfg", Some("config")),
            planned("opt-b", Some("add-option")),
        ];
        let mut skipped = sample("cfg", "default", 1, Verdict::Skipped);
        skipped.reason = Some("no go".into());
        let records = vec![
            sample("old", "default", 1, Verdict::Passed),
            sample("opt-a", "default", 1, Verdict::Passed),
            sample("opt-b", "default", 1, Verdict::Failed),
            skipped,
            // Another setting's record is not counted here.
            sample("opt-b", "map=off", 1, Verdict::Passed),
        ];
        let shapes = summarize(&["default".to_string()], &tasks, &records);
        let seen: Vec<(&str, usize, usize, usize, usize)> = shapes
            .iter()
            .map(|s| {
                let c = &s.cells[0];
                (s.shape.as_str(), s.tasks, c.passed, c.attempts, c.skipped)
            })
            .collect();
        assert_eq!(
            seen,
            vec![
                ("add-option", 2, 1, 2, 0),
                ("config", 1, 0, 0, 1),
                ("unlabelled", 1, 1, 1, 0),
            ]
        );
        assert_eq!(cell_text(&shapes[0].cells[0]), "1/2 (50%)");
        assert_eq!(cell_text(&shapes[1].cells[0]), "skipped");
        let total = ShapeCell {
            setting: "default".into(),
            attempts: 3,
            passed: 2,
            skipped: 1,
            pass_rate: Some(2.0 / 3.0),
        };
        let rows = rows(&shapes, &[total]);
        assert_eq!(rows[0], vec!["shape", "tasks", "default"]);
        assert_eq!(rows[4], vec!["total", "4", "2/3 (67%) +1 skipped"]);
    }
}
