//! The rules for commands that delete, copy or move files: what they write is judged by
//! where it lies, and deleting recursively or many files at once is `high`.

use super::paths::Place;
use super::shell::Word;
use super::Finding;
use wright_protocol::Risk;

/// The words that are not options (nor the values of `valued` options).
pub(crate) fn operands<'w>(args: &'w [Word], valued: &[&str]) -> Vec<&'w Word> {
    let mut found = Vec::new();
    let mut skip = false;
    let mut after_dashes = false;
    for word in args {
        if skip {
            skip = false;
            continue;
        }
        if !after_dashes && word.text == "--" {
            after_dashes = true;
            continue;
        }
        if !after_dashes && word.text.starts_with('-') && word.text.len() > 1 {
            skip = valued.contains(&word.text.as_str());
            continue;
        }
        found.push(word);
    }
    found
}

/// `rm`: recursive or many files is high; else what it deletes, by where it lies.
pub(crate) fn remove(name: &str, args: &[Word], place: &Place) -> Vec<Finding> {
    let recursive = args.iter().any(|w| {
        w.text == "--recursive"
            || (w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains(['r', 'R']))
    });
    let files = operands(args, &[]);
    let globbed = files
        .iter()
        .any(|w| w.text.contains(['*', '?', '[']) || w.expands);
    let mut findings: Vec<Finding> = files
        .iter()
        .map(|w| place.written_word(w, "deletes"))
        .collect();
    if recursive {
        findings.push(Finding::new(
            Risk::High,
            format!("{name} -r: deletes whole directories"),
        ));
    }
    if files.len() > 3 || globbed {
        findings.push(Finding::new(
            Risk::High,
            format!("{name}: deletes many files"),
        ));
    }
    if name == "shred" {
        findings.push(Finding::new(Risk::High, "shred: destroys files"));
    }
    findings
}

/// `cp`, `mv`, `install`, `ln`, `rsync`: the destination is written (and `mv`'s sources
/// taken away); an `rsync` to or from a host needs the network.
pub(crate) fn copy(name: &str, args: &[Word], place: &Place) -> Vec<Finding> {
    let files = operands(
        args,
        &[
            "-t",
            "--target-directory",
            "-S",
            "--suffix",
            "-m",
            "--mode",
            "-e",
        ],
    );
    if name == "rsync" && files.iter().any(|w| w.text.contains(':')) {
        return vec![Finding::new(
            Risk::High,
            "rsync with a host: needs the network",
        )];
    }
    let target_flag = args
        .iter()
        .position(|w| matches!(w.text.as_str(), "-t" | "--target-directory"))
        .and_then(|at| args.get(at + 1));
    let mut findings = Vec::new();
    match (target_flag, files.last()) {
        (Some(target), _) => findings.push(place.written_word(target, "writes")),
        (None, Some(last)) if files.len() > 1 => findings.push(place.written_word(last, "writes")),
        _ => findings.push(Finding::new(Risk::Medium, name.to_string())),
    }
    if name == "mv" {
        let sources = match target_flag {
            Some(_) => &files[..],
            None => &files[..files.len().saturating_sub(1)],
        };
        findings.extend(sources.iter().map(|w| place.written_word(w, "moves away")));
    }
    findings
}
