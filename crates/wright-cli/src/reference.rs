//! The option reference, `docs/reference/options.md`, generated from the clap
//! definitions so that `--help` and the page can never say different things. A test
//! compares the page with what this module makes from the code; with
//! `UPDATE_REFERENCE=1` it rewrites the page instead.

use clap::Command;
use std::fmt::Write;

/// The whole page for `wright`, one section per visible subcommand (nested ones too).
pub fn options_page(root: &Command) -> String {
    let mut page = String::from(
        "# Option reference\n\n\
         [Back to the README](../../README.md)\n\n\
         Generated from the code (`crates/wright-cli/src/reference.rs`): every command and \
         option, as `wright COMMAND --help` shows them. Do not edit by hand: run \
         `UPDATE_REFERENCE=1 cargo test -p wright-cli --bin wright reference`.\n",
    );
    for sub in root.get_subcommands().filter(|s| !s.is_hide_set()) {
        section(&mut page, sub, root.get_name());
    }
    page
}

fn section(page: &mut String, command: &Command, parent: &str) {
    let name = format!("{parent} {}", command.get_name());
    let _ = write!(page, "\n## `{name}`\n\n");
    if let Some(about) = command.get_long_about().or(command.get_about()) {
        let _ = writeln!(page, "{}", one_paragraph(&about.to_string()));
    }
    let args: Vec<_> = command
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"))
        .collect();
    if !args.is_empty() {
        page.push_str("\n| option | value | what it does |\n| --- | --- | --- |\n");
        for arg in args {
            let _ = writeln!(
                page,
                "| {} | {} | {} |",
                flag(arg),
                value(arg),
                cell(&arg.get_help().map(ToString::to_string).unwrap_or_default())
            );
        }
    }
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        section(page, sub, &name);
    }
}

/// `--long` / `-s, --long`, or the positional's name.
fn flag(arg: &clap::Arg) -> String {
    match (arg.get_short(), arg.get_long()) {
        (Some(short), Some(long)) => format!("`-{short}`, `--{long}`"),
        (None, Some(long)) => format!("`--{long}`"),
        (Some(short), None) => format!("`-{short}`"),
        (None, None) => format!("`{}`", positional_name(arg)),
    }
}

fn positional_name(arg: &clap::Arg) -> String {
    arg.get_value_names()
        .and_then(|names| names.first())
        .map_or_else(|| arg.get_id().as_str().to_uppercase(), |n| n.to_string())
}

/// What the option takes: its choices, its value's name, and its default.
fn value(arg: &clap::Arg) -> String {
    if !arg.get_action().takes_values() {
        return String::new();
    }
    let choices: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| v.get_name().to_string())
        .collect();
    let mut shown = if !choices.is_empty() {
        choices.join(" | ")
    } else if arg.get_long().is_some() || arg.get_short().is_some() {
        positional_name(arg)
    } else {
        String::new()
    };
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if !defaults.is_empty() {
        let _ = write!(shown, " (default {})", defaults.join(","));
    }
    if matches!(arg.get_action(), clap::ArgAction::Append) {
        shown.push_str(", repeatable");
    }
    cell(shown.trim())
}

/// Text for one table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    one_paragraph(text).replace('|', "\\|")
}

fn one_paragraph(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// docs/reference/options.md is what the code says; `UPDATE_REFERENCE=1` rewrites it.
    #[test]
    fn the_option_reference_is_the_one_the_code_gives() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/reference/options.md"
        );
        let generated = options_page(&crate::Cli::command());
        if std::env::var_os("UPDATE_REFERENCE").is_some() {
            std::fs::write(path, &generated).unwrap();
            return;
        }
        let page = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            page == generated,
            "docs/reference/options.md is not what the code gives: run \
             UPDATE_REFERENCE=1 cargo test -p wright-cli --bin wright reference"
        );
    }

    #[test]
    fn every_visible_option_of_run_is_in_the_page() {
        let page = options_page(&crate::Cli::command());
        for long in [
            "--max-steps",
            "--in-place",
            "--sandbox",
            "--assist",
            "--assist-piece",
            "--review",
        ] {
            assert!(page.contains(&format!("`{long}`")), "{long} missing");
        }
        // The old switches of the help are aliases now, out of `--help`.
        for old in [
            "--first-look",
            "--reading",
            "--candidates",
            "--map",
            "--retest",
            "--last-change",
        ] {
            assert!(!page.contains(&format!("`{old}`")), "{old} is shown");
        }
        assert!(!page.contains("eval-check"), "hidden commands stay out");
    }
}
