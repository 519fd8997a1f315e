//! How many lines of an output a cut view leaves out. The output a tool returned may be
//! itself a cut of a larger one (its marker line says how much was omitted, or what the
//! whole was), so the lines the view drops are not the count: the markers among them are
//! read and added. This is a count for people only; a command can print a line that looks
//! like a marker, so nothing else relies on it.

/// What a view leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeftOut {
    Exactly(u64),
    /// The output said something was omitted without saying how much.
    AtLeast(u64),
}

impl std::fmt::Display for LeftOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LeftOut::Exactly(n) => write!(f, "{n}"),
            LeftOut::AtLeast(n) => write!(f, "at least {n}"),
        }
    }
}

/// A tool's marker line (see `wright_tools::text`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    /// `[... N characters (M lines) omitted …]`: M lines in place of this one.
    Omitted(u64),
    /// `[... the middle is omitted; the output was N bytes (M lines) in all …]`.
    Whole(u64),
    /// A marker with no count that can be read.
    Unknown,
}

/// The lines left out when `cut` is dropped from an output of which `shown` lines stay.
pub fn count(cut: &[&str], shown: usize) -> LeftOut {
    let mut plain = 0u64;
    let mut omitted = 0u64;
    let mut whole = None;
    let mut unknown = false;
    for line in cut {
        match marker(line) {
            None => plain += 1,
            Some(Marker::Omitted(n)) => omitted += n,
            Some(Marker::Whole(n)) => whole = Some(whole.unwrap_or(0).max(n)),
            Some(Marker::Unknown) => unknown = true,
        }
    }
    let counted = plain + omitted;
    let total = whole.map_or(counted, |whole| {
        whole.saturating_sub(shown as u64).max(counted)
    });
    if unknown && whole.is_none() {
        LeftOut::AtLeast(total)
    } else {
        LeftOut::Exactly(total)
    }
}

fn marker(line: &str) -> Option<Marker> {
    let line = line.trim();
    if !(line.starts_with("[... ") && line.ends_with("...]") && line.contains(" omitted")) {
        return None;
    }
    // "(M lines) omitted" or "(M lines) in all", the count in the first such brackets.
    for (at, _) in line.match_indices('(') {
        let rest = &line[at + 1..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(n) = digits.parse::<u64>() else {
            continue;
        };
        let after = &rest[digits.len()..];
        let after = after
            .strip_prefix(" lines)")
            .or_else(|| after.strip_prefix(" line)"));
        match after {
            Some(after) if after.starts_with(" omitted") => return Some(Marker::Omitted(n)),
            Some(after) if after.starts_with(" in all") => return Some(Marker::Whole(n)),
            _ => {}
        }
    }
    Some(Marker::Unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_markers_of_a_cut_output_are_counted() {
        // Plain lines only.
        assert_eq!(count(&["a", "b"], 6), LeftOut::Exactly(2));
        // A tool's cut: the lines it omitted count, not its marker.
        let cut = [
            "1397",
            "[... 13888894 characters (1998600 lines) omitted; full output in /tmp/o.txt ...]",
            "1998602",
        ];
        assert_eq!(count(&cut, 6), LeftOut::Exactly(1998602));
        let failed = ["[... 10 characters (1 line) omitted; full output in f; the beginning of the output: ...]"];
        assert_eq!(count(&failed, 6), LeftOut::Exactly(1));
        // Only the two ends were kept: the whole says it.
        let whole = [
            "x",
            "[... the middle is omitted; the output was 52428800 bytes (3326000 lines) in all, its first 1048576 bytes saved to /tmp/o ...]",
        ];
        assert_eq!(count(&whole, 6), LeftOut::Exactly(3325994));
        // Something was omitted, how much is not said.
        let vague = ["x", "[... some of it omitted ...]"];
        assert_eq!(count(&vague, 6), LeftOut::AtLeast(1));
        assert_eq!(LeftOut::AtLeast(1).to_string(), "at least 1");
    }
}
