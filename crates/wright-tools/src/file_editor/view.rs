//! `view`: a file as numbered lines (a range of it, or its start when it is long), or a
//! directory two levels deep without hidden and build directories.

use super::content::TextFile;
use crate::ToolError;
use std::path::Path;

/// Lines shown when a long file is viewed without a range.
const MAX_LINES: usize = 400;
const MAX_ENTRIES: usize = 300;
const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "target",
    "__pycache__",
    "venv",
    "dist",
    "build",
];

pub fn numbered(text: &str, first_line: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for (offset, line) in text.split('\n').enumerate() {
        out.push_str(&format!("{:>6}\t{}\n", first_line + offset, line));
    }
    out
}

pub fn view_file(path: &Path, shown: &str, range: Option<Vec<i64>>) -> Result<String, ToolError> {
    let file = TextFile::load(path, shown)?;
    let text = file.text.strip_suffix('\n').unwrap_or(&file.text);
    let lines: Vec<&str> = if text.is_empty() {
        Vec::new()
    } else {
        text.split('\n').collect()
    };
    let total = lines.len();
    if total == 0 {
        return Ok(format!("{shown} is empty."));
    }
    let (start, end, cut) = match range {
        Some(range) => {
            let (start, end) = parse_range(&range, total)?;
            (start, end, false)
        }
        None if total > MAX_LINES => (1, MAX_LINES, true),
        None => (1, total, false),
    };
    let mut out = numbered(&lines[start - 1..end].join("\n"), start);
    if cut {
        out.push_str(&format!(
            "[{shown} has {total} lines; shown 1-{MAX_LINES}. Use view_range to see more.]\n"
        ));
    }
    Ok(out)
}

fn parse_range(range: &[i64], total: usize) -> Result<(usize, usize), ToolError> {
    let bad = |why: &str| {
        ToolError::Model(format!(
            "view_range {range:?} {why}; the file has {total} lines. Use [start, end] with 1 <= start <= end, or end = -1 for the last line"
        ))
    };
    let [start, end] = range else {
        return Err(bad("must have two numbers"));
    };
    let start = usize::try_from(*start).map_err(|_| bad("starts before line 1"))?;
    if start == 0 {
        return Err(bad("starts before line 1"));
    }
    if start > total {
        return Err(bad("starts after the last line"));
    }
    let end = if *end == -1 {
        total
    } else {
        usize::try_from(*end)
            .map_err(|_| bad("ends before it starts"))?
            .min(total)
    };
    if end < start {
        return Err(bad("ends before it starts"));
    }
    Ok((start, end))
}

pub fn view_dir(path: &Path, shown: &str) -> Result<String, ToolError> {
    let mut lines = Vec::new();
    let mut truncated = false;
    walk(path, 0, &mut lines, &mut truncated)
        .map_err(|err| ToolError::Model(format!("cannot list {shown}: {err}")))?;
    let mut out = format!("{shown}/ (two levels, hidden and build directories left out)\n");
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    if truncated {
        out.push_str(&format!(
            "[more than {MAX_ENTRIES} entries; list subdirectories one by one]\n"
        ));
    }
    Ok(out)
}

fn walk(
    dir: &Path,
    depth: usize,
    lines: &mut Vec<String>,
    truncated: &mut bool,
) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.flatten().collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if lines.len() >= MAX_ENTRIES {
            *truncated = true;
            return Ok(());
        }
        let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
        let indent = "  ".repeat(depth + 1);
        if is_dir {
            lines.push(format!("{indent}{name}/"));
            if depth == 0 && !SKIPPED_DIRS.contains(&name.as_str()) {
                walk(&entry.path(), depth + 1, lines, truncated)?;
            }
        } else {
            lines.push(format!("{indent}{name}"));
        }
    }
    Ok(())
}
