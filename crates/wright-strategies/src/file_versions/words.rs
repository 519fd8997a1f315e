//! What a task names that the code does not have yet: an option (`--top`, `-width`), a
//! name (`HTTP_TIMEOUT`, `per_page`, `maxRows`), a value (`8080`). A change that does
//! the task almost always brings those words into the code; a version that leaves them
//! out most likely does not do it. The 1.5B's versions of "add an option --top N" include
//! one that changed a comment and kept the tests passing, and its checks of the task
//! rejected right versions as often as wrong ones: the task's own words are a signal that
//! does not depend on the model.
//!
//! Two strengths: an option and a name with `_` or in camelCase are `required` (a
//! change that does the task has them); a word in capitals without `_` (`PORT`, but also
//! `API`, `JSON`) and a number (the new default, but also an example value) only rank
//! versions, since the task may use them without meaning them to be in the code.
//!
//! Guarantees: a word counts as new only when no source or configuration file of the
//! repository (tests aside) has it before the change, so what is already there is never
//! asked for; the words come from the task alone and are the same for every version.

/// One word of the task and how the code would hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Word {
    /// `--top` or `-width`: the name without its dashes.
    Option(String),
    /// An identifier, matched whole and case-sensitively.
    Name(String),
    /// A number, matched whole.
    Number(String),
}

impl Word {
    /// The word as the task writes it, for people.
    fn shown(&self) -> String {
        match self {
            Word::Option(name) if name.chars().count() == 1 => format!("-{name}"),
            Word::Option(name) => format!("--{name}"),
            Word::Name(name) | Word::Number(name) => name.clone(),
        }
    }

    /// Whether `text` has it: an option as `-name`/`--name` or quoted (Go's
    /// `flag.Int("width", …)`), a name or a number as a whole word.
    fn is_in(&self, text: &str) -> bool {
        match self {
            Word::Option(name) => {
                ["\"", "'", "`"]
                    .iter()
                    .any(|quote| text.contains(&format!("{quote}{name}{quote}")))
                    || whole(text, &format!("-{name}"), |c| is_ident(c) || c == '-')
            }
            Word::Name(name) => whole(text, name, is_ident),
            Word::Number(number) => whole(text, number, |c| c.is_ascii_digit() || c == '.'),
        }
    }
}

/// Whether `needle` occurs in `text` with no character `part_of` right after it, nor
/// right before it (an option's leading dash may follow another dash).
fn whole(text: &str, needle: &str, part_of: impl Fn(char) -> bool) -> bool {
    text.match_indices(needle).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + needle.len()..].chars().next();
        let starts_option = needle.starts_with('-');
        let clear_before = match before {
            None => true,
            Some('-') if starts_option => true,
            Some(c) => !part_of(c),
        };
        clear_before && !after.is_some_and(&part_of)
    })
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The task's words the code does not have yet, `required` or only ranking.
#[derive(Debug, Default, Clone)]
pub(super) struct NewWords {
    required: Vec<Word>,
    ranking: Vec<Word>,
}

/// How much of the task's new words a set of texts holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Coverage {
    /// Required words none of the texts has, as the task writes them.
    pub missing_required: Vec<String>,
    /// Every new word none of the texts has.
    pub missing: Vec<String>,
    /// Words held, a required one counting twice: versions compare by it.
    pub score: usize,
}

impl Coverage {
    /// Every new word is there (none when the task named none).
    pub fn complete(&self) -> bool {
        self.missing.is_empty()
    }
}

impl NewWords {
    /// The words of `task` that none of `texts` (the repository's files as they are) has.
    pub fn of(task: &str, texts: &[&str]) -> Self {
        let mut new = NewWords::default();
        for (word, required) in task_words(task) {
            if texts.iter().any(|text| word.is_in(text)) {
                continue;
            }
            let list = match required {
                true => &mut new.required,
                false => &mut new.ranking,
            };
            if !list.contains(&word) {
                list.push(word);
            }
        }
        new
    }

    /// What `texts` (the files as a version leaves them) hold of the new words.
    pub fn coverage(&self, texts: &[&str]) -> Coverage {
        let held = |word: &Word| texts.iter().any(|text| word.is_in(text));
        let missing_required: Vec<String> = self
            .required
            .iter()
            .filter(|word| !held(word))
            .map(Word::shown)
            .collect();
        let missing_ranking = self.ranking.iter().filter(|word| !held(word));
        let score = (self.required.len() - missing_required.len()) * 2
            + (self.ranking.len() - missing_ranking.clone().count());
        let mut missing = missing_required.clone();
        missing.extend(missing_ranking.map(Word::shown));
        Coverage {
            missing_required,
            missing,
            score,
        }
    }
}

/// The task's words that name something in code, each with whether it is required.
fn task_words(task: &str) -> Vec<(Word, bool)> {
    let mut words = Vec::new();
    let raw_words = task
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.' || c == ','));
    for raw in raw_words {
        // Sentence punctuation is not part of a word; a decimal point inside one is.
        let raw = raw.trim_end_matches(['.', ',']);
        if raw.contains(',') {
            continue;
        }
        if let Some(option) = raw.strip_prefix('-') {
            let name = option.trim_start_matches('-');
            let dashes = raw.len() - name.len();
            let short_or_long = dashes == 2 || (dashes == 1 && !name.contains('.'));
            if short_or_long && name.starts_with(|c: char| c.is_ascii_alphabetic()) {
                words.push((Word::Option(name.to_string()), true));
                continue;
            }
        }
        let raw = raw.trim_matches('-');
        if raw.is_empty()
            || raw.contains('.') && !raw.chars().all(|c| c.is_ascii_digit() || c == '.')
        {
            continue;
        }
        if raw.chars().all(|c| c.is_ascii_digit() || c == '.') {
            if raw.chars().any(|c| c.is_ascii_digit()) && !raw.starts_with('.') {
                words.push((Word::Number(raw.to_string()), false));
            }
            continue;
        }
        if raw.contains('-') || !raw.starts_with(|c: char| c.is_alphabetic() || c == '_') {
            continue;
        }
        let has_lower = raw.chars().any(|c| c.is_lowercase());
        let has_upper = raw.chars().any(|c| c.is_uppercase());
        let snake = raw.contains('_') && raw.chars().any(char::is_alphabetic);
        let camel = raw.starts_with(|c: char| c.is_lowercase()) && has_upper;
        let capitals = !has_lower && raw.chars().filter(|c| c.is_alphabetic()).count() >= 3;
        if snake || camel {
            words.push((Word::Name(raw.to_string()), true));
        } else if capitals {
            words.push((Word::Name(raw.to_string()), false));
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_names_and_values_the_code_lacks_are_new() {
        let code = "import sys\nTIMEOUT = 30\ndef top_words(text, count):\n    pass\n";
        let task = "Add an option --top N: default 3. The HTTP_TIMEOUT variable overrides it, 60 s. The API uses maxRows.";
        let new = NewWords::of(task, &[code]);
        let none = new.coverage(&[code]);
        // `top_words` does not hold the option `--top`; `3`... is not in the code either.
        assert_eq!(none.missing_required, ["--top", "HTTP_TIMEOUT", "maxRows"]);
        assert_eq!(
            none.missing,
            ["--top", "HTTP_TIMEOUT", "maxRows", "3", "60", "API"]
        );
        assert!(!none.complete());
        assert_eq!(none.score, 0);
        let version = "p.add_argument(\"--top\", type=int, default=3)\nTIMEOUT = int(os.environ.get(\"HTTP_TIMEOUT\", 60))\nmaxRows = 1\n";
        let all_but_api = new.coverage(&[version]);
        assert!(all_but_api.missing_required.is_empty());
        assert_eq!(all_but_api.missing, ["API"]);
        assert_eq!(all_but_api.score, 3 * 2 + 2);
    }

    #[test]
    fn a_word_the_code_has_already_is_not_asked_for() {
        let code = "const port = process.env.PORT || 3000;\nflag.Int(\"width\", 40, \"\")\n";
        let new = NewWords::of(
            "Change the default port to 8080, PORT overrides it; add a -width flag",
            &[code],
        );
        assert_eq!(new.coverage(&[code]).missing, ["8080"]);
        // The whole word only: 80800 and 8080.5 do not hold 8080.
        assert!(!new.coverage(&["x = 80800; y = 8080.5"]).complete());
        assert!(new.coverage(&["port: 8080,"]).complete());
    }

    #[test]
    fn options_are_found_however_the_code_parses_them() {
        let new = NewWords::of("Add a --skip-blank option and a -d flag", &[""]);
        assert_eq!(new.coverage(&[""]).missing_required, ["--skip-blank", "-d"]);
        for code in [
            "if arg == \"--skip-blank\" { }\nflag.String(\"d\", \",\", \"\")",
            "parser.add_argument('--skip-blank'); parser.add_argument('-d')",
        ] {
            assert!(new.coverage(&[code]).complete(), "{code}");
        }
        // A word that merely contains the name does not.
        assert!(!new.coverage(&["skip_blank_lines(d)"]).complete());
    }

    #[test]
    fn prose_dashes_and_file_names_are_not_words_of_code() {
        let new = NewWords::of(
            "Fix wordfreq.py - it is slow, and re-run it. Use JSON",
            &[""],
        );
        assert!(new.required.is_empty(), "{new:?}");
        assert_eq!(new.coverage(&[""]).missing, ["JSON"]);
    }
}
