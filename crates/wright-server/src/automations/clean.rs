//! The text wright hands to a forge on the agent's behalf (a pull request's body, an
//! issue's comment), cleaned: it can neither notify anyone (`@name`) nor close an issue
//! (closing keywords before `#N`, `OWNER/NAME#N` or an issue's URL) — the agent did not
//! earn either.

const CLOSING: &[&str] = &[
    "close", "closes", "closed", "fix", "fixes", "fixed", "resolve", "resolves", "resolved",
];

/// Whether `word` names an issue the way a closing keyword takes it.
fn names_an_issue(word: &str) -> bool {
    let word = word.trim_end_matches(['.', ',', ';', ')']);
    let number_after_hash = |w: &str| {
        w.rsplit_once('#')
            .is_some_and(|(_, n)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    number_after_hash(word)
        || (word.starts_with("http") && word.contains("/issues/"))
        || (word.starts_with("http") && word.contains("/pull/"))
}

/// The agent's summary, unable to notify anyone or close an issue.
pub fn clean(summary: &str) -> String {
    // `@name` → `@\u{200b}name`: shown the same, notifies nobody.
    let mut out = String::with_capacity(summary.len());
    let mut previous: Option<char> = None;
    let mut chars = summary.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        let starts_mention = c == '@'
            && !previous.is_some_and(|p| p.is_alphanumeric())
            && chars.peek().is_some_and(|n| n.is_alphanumeric());
        if starts_mention {
            out.push('\u{200b}');
        }
        previous = Some(c);
    }
    // A closing keyword followed by an issue's reference: the keyword is kept, the
    // reference is no longer one (`#12` → `# 12`, a URL in backquotes).
    let words: Vec<&str> = out.split_inclusive(char::is_whitespace).collect();
    let mut cleaned = String::with_capacity(out.len());
    let mut after_keyword = false;
    for word in words {
        let bare = word.trim().trim_end_matches(':').to_lowercase();
        if after_keyword && names_an_issue(word.trim()) {
            let space = &word[word.trim_end().len()..];
            let reference = word.trim();
            if reference.starts_with("http") {
                cleaned.push_str(&format!("`{reference}`{space}"));
            } else {
                cleaned.push_str(&format!("{}{space}", reference.replace('#', "# ")));
            }
            after_keyword = false;
            continue;
        }
        after_keyword = CLOSING.contains(&bare.as_str());
        cleaned.push_str(word);
    }
    cleaned
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_and_closing_keywords_are_defused() {
        assert_eq!(clean("thanks @octocat!"), "thanks @\u{200b}octocat!");
        assert_eq!(clean("mail a@b.c"), "mail a@b.c");
        assert_eq!(
            clean("Fixes #12 and closes: o/r#3."),
            "Fixes # 12 and closes: o/r# 3."
        );
        assert_eq!(
            clean("resolves https://github.com/o/r/issues/4 now"),
            "resolves `https://github.com/o/r/issues/4` now"
        );
        assert_eq!(clean("see #12, it was fixed"), "see #12, it was fixed");
    }
}
