//! The text under parse, with panic-free slicing and a memo of marker searches.
//!
//! Every position handed around is a byte offset that came from a search or from stepping
//! over ASCII, so it sits on a char boundary; the slicing helpers still go through
//! `str::get` and answer "" rather than panic if one ever does not. Searches remember their
//! last answer per needle, so a scanner that walks forward over many markers stays linear.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

/// The reply text plus the search memo.
pub(crate) struct Src<'t> {
    pub text: &'t str,
    /// One entry per needle, keyed by the needle's address and length: the scanner asks
    /// for dozens of needles at every marker, so a list searched by text would make each
    /// marker cost needles² comparisons.
    memo: HashMap<(usize, usize), Memo>,
}

struct Memo {
    /// The answer is valid for every start in `from..=found` (or `from..` when none).
    from: usize,
    found: Option<usize>,
}

impl<'t> Src<'t> {
    pub fn new(text: &'t str) -> Self {
        Src {
            text,
            memo: HashMap::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// The first occurrence of `needle` at or after `from`.
    pub fn find(&mut self, needle: &'static str, from: usize) -> Option<usize> {
        let text = self.text;
        let search = |from: usize| {
            text.get(from..)
                .and_then(|rest| rest.find(needle))
                .map(|at| at + from)
        };
        let key = (needle.as_ptr() as usize, needle.len());
        match self.memo.entry(key) {
            Entry::Occupied(mut entry) => {
                let memo = entry.get_mut();
                let still_valid = from >= memo.from && memo.found.is_none_or(|found| from <= found);
                if !still_valid {
                    memo.from = from;
                    memo.found = search(from);
                }
                memo.found
            }
            Entry::Vacant(entry) => {
                entry
                    .insert(Memo {
                        from,
                        found: search(from),
                    })
                    .found
            }
        }
    }

    /// The earliest occurrence of any of `needles` at or after `from`; on a tie the longest.
    pub fn find_first(
        &mut self,
        needles: &[&'static str],
        from: usize,
    ) -> Option<(usize, &'static str)> {
        let mut best: Option<(usize, &'static str)> = None;
        for needle in needles {
            if let Some(at) = self.find(needle, from) {
                let better = match best {
                    None => true,
                    Some((best_at, best_needle)) => {
                        at < best_at || (at == best_at && needle.len() > best_needle.len())
                    }
                };
                if better {
                    best = Some((at, needle));
                }
            }
        }
        best
    }

    /// The earliest of `needles` at or after `from`, or the end of the text.
    pub fn find_first_or_end(&mut self, needles: &[&'static str], from: usize) -> usize {
        self.find_first(needles, from)
            .map_or(self.len(), |(at, _)| at)
    }

    pub fn tail(&self, from: usize) -> &'t str {
        tail(self.text, from)
    }

    pub fn slice(&self, from: usize, to: usize) -> &'t str {
        slice(self.text, from, to)
    }

    pub fn starts(&self, at: usize, literal: &str) -> bool {
        self.tail(at).starts_with(literal)
    }

    /// Which of `literals` the text has at `at`, if any.
    pub fn starts_any(&self, at: usize, literals: &[&'static str]) -> Option<&'static str> {
        literals
            .iter()
            .find(|literal| self.starts(at, literal))
            .copied()
    }

    /// The position after any whitespace at `at`.
    pub fn skip_ws(&self, at: usize) -> usize {
        let rest = self.tail(at);
        at + (rest.len() - rest.trim_start().len())
    }

    /// The first char at `at`.
    pub fn char_at(&self, at: usize) -> Option<char> {
        self.tail(at).chars().next()
    }

    /// Where a value that runs up to a `close` tag ends: `(value_end, after)`. A `close`
    /// only counts when what follows it (past whitespace) is one of `followers` or the end
    /// of the text, so a value that itself contains the closing tag is not cut short; if no
    /// occurrence qualifies the first one is used, and with none at all (the model stopped
    /// mid-value) the value runs to the next follower or to the end.
    pub fn value_end(
        &mut self,
        start: usize,
        close: &'static str,
        followers: &[&'static str],
    ) -> (usize, usize) {
        let mut first = None;
        let mut from = start;
        for _ in 0..64 {
            let Some(at) = self.find(close, from) else {
                break;
            };
            let after = at + close.len();
            let next = self.skip_ws(after);
            if next >= self.len() || self.starts_any(next, followers).is_some() {
                return (at, after);
            }
            first.get_or_insert((at, after));
            from = after;
        }
        if let Some(found) = first {
            return found;
        }
        let end = self.find_first_or_end(followers, start);
        (end, end)
    }

    /// A name of at most `max` bytes at `at`, ended by `stop` (not included); `None` when
    /// a newline or `<` comes first or `stop` is not found.
    pub fn bounded_name(&self, at: usize, stop: char, max: usize) -> Option<(&'t str, usize)> {
        for (offset, c) in self.tail(at).char_indices() {
            if offset > max || c == '\n' || (c == '<' && stop != '<') {
                return None;
            }
            if c == stop {
                return Some((self.slice(at, at + offset), at + offset));
            }
        }
        None
    }
}

pub(crate) fn tail(text: &str, from: usize) -> &str {
    text.get(from..).unwrap_or("")
}

pub(crate) fn slice(text: &str, from: usize, to: usize) -> &str {
    text.get(from..to).unwrap_or("")
}

/// At most `max` chars of `text`, on one line, for quoting in an error message.
pub(crate) fn snippet(text: &str) -> String {
    const MAX: usize = 160;
    let flat: String = text.trim().chars().take(MAX + 1).collect();
    let flat = flat.replace('\n', "\\n");
    if flat.chars().count() > MAX {
        let cut: String = flat.chars().take(MAX).collect();
        format!("{cut}…")
    } else {
        flat
    }
}

/// `value` with one leading and one trailing newline removed: templates put the value of
/// an XML-ish parameter on its own line (`<parameter=k>\nVALUE\n</parameter>`).
pub(crate) fn trim_one_newline(value: &str) -> &str {
    let value = value
        .strip_prefix("\r\n")
        .or_else(|| value.strip_prefix('\n'))
        .unwrap_or(value);
    value
        .strip_suffix("\r\n")
        .or_else(|| value.strip_suffix('\n'))
        .unwrap_or(value)
}

/// A plausible tool name: non-empty, no whitespace, no markup.
pub(crate) fn plausible_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/'))
}
