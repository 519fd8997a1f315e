//! What a task names that the code does not have yet: an option (`--top`, `-width`), a
//! name (`HTTP_TIMEOUT`, `per_page`, `maxRows`), a value (`8080`). A change that does
//! the task almost always brings those words into the code; a version that leaves them
//! out most likely does not do it. The 1.5B's versions of "add an option --top N" include
//! one that changed a comment and kept the tests passing, and its checks of the task
//! passed versions that did not do it (one set the variable to the new default, so a
//! default with no override passed): the task's own words are a signal that does not
//! depend on the model.
//!
//! Three strengths: an option and a name with `_` or in camelCase are `Required` (a
//! change that does the task has them); a number is a `Value` (the new default, needed
//! too, though it may be an example the task gives); a word in capitals without `_`
//! (`PORT`, but also `API`, `JSON`) is a `Hint` that only ranks versions. Where the task
//! speaks of the environment, a name in capitals counts as held only where code reads it
//! from there — quoted (`os.getenv("HTTP_TIMEOUT")`, `env::var("APP_PORT")`), after
//! `env.` (`process.env.PORT`), or set at the start of a line (`.env`) — not as a
//! constant of that name (`HTTP_TIMEOUT = 60`).
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
    /// A name in capitals where the task speaks of the environment: held where code
    /// reads it from there (see the module's doc).
    EnvName(String),
    /// A number, matched whole.
    Number(String),
}

impl Word {
    /// The word as the task writes it, for people.
    fn shown(&self) -> String {
        match self {
            Word::Option(name) if name.chars().count() == 1 => format!("-{name}"),
            Word::Option(name) => format!("--{name}"),
            Word::Name(name) | Word::EnvName(name) | Word::Number(name) => name.clone(),
        }
    }

    /// Whether `text`, the file at `path`, has it: an option as `-name`/`--name` or
    /// quoted (Go's `flag.Int("width", …)`), a name or a number as a whole word; a
    /// variable of the environment where code reads it, or in a file of values, where a
    /// line sets it (a TOML or JSON file cannot read the environment: a quoted name in
    /// it reads nothing).
    fn is_in(&self, (path, text): (&str, &str)) -> bool {
        match self {
            Word::Option(name) => {
                ["\"", "'", "`"]
                    .iter()
                    .any(|quote| text.contains(&format!("{quote}{name}{quote}")))
                    || whole(text, &format!("-{name}"), |c| is_ident(c) || c == '-')
            }
            Word::Name(name) => whole(text, name, is_ident),
            Word::EnvName(name) => {
                let reads = !super::localise::is_data(path)
                    && (["\"", "'", "`"]
                        .iter()
                        .any(|quote| text.contains(&format!("{quote}{name}{quote}")))
                        || ["env.", "environ."]
                            .iter()
                            .any(|read| whole(text, &format!("{read}{name}"), is_ident)));
                reads
                    || text.lines().any(|line| {
                        let line = line.trim_start().trim_start_matches("export ");
                        line.strip_prefix(name.as_str())
                            .is_some_and(|rest| rest.trim_start().starts_with('='))
                            && !line.contains(" = ")
                    })
            }
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

/// How much a word of the task weighs (see the module's doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strength {
    Required,
    Value,
    Hint,
}

impl Strength {
    fn weight(self) -> usize {
        match self {
            Strength::Required => 2,
            Strength::Value | Strength::Hint => 1,
        }
    }

    /// A version that does the task has it.
    fn needed(self) -> bool {
        self != Strength::Hint
    }
}

/// The task's words the code does not have yet, with their strengths.
#[derive(Debug, Default, Clone)]
pub(super) struct NewWords {
    words: Vec<(Word, Strength)>,
}

/// How much of the task's new words a set of texts holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Coverage {
    /// Words a version that does the task has (options, names, values) that none of
    /// the texts has, as the task writes them.
    pub missing_needed: Vec<String>,
    /// Words held, weighed: versions compare by it.
    pub score: usize,
}

impl NewWords {
    /// The words of `task` that none of `files` (the repository's, as they are: path and
    /// text) has.
    pub fn of(task: &str, files: &[(&str, &str)]) -> Self {
        let mut new = NewWords::default();
        for (word, strength) in task_words(task) {
            if files.iter().any(|file| word.is_in(*file)) {
                continue;
            }
            if !new.words.iter().any(|(known, _)| *known == word) {
                new.words.push((word, strength));
            }
        }
        new
    }

    /// What `files` (path and text, as a version leaves them) hold of the new words.
    pub fn coverage(&self, files: &[(&str, &str)]) -> Coverage {
        let mut coverage = Coverage {
            missing_needed: Vec::new(),
            score: 0,
        };
        for (word, strength) in &self.words {
            if files.iter().any(|file| word.is_in(*file)) {
                coverage.score += strength.weight();
            } else if strength.needed() {
                coverage.missing_needed.push(word.shown());
            }
        }
        coverage
    }
}

/// The task's words that name something in code, each with its strength.
fn task_words(task: &str) -> Vec<(Word, Strength)> {
    let lower = task.to_lowercase();
    // "environment", "env", "Umgebungsvariable", "variabile d'ambiente", "entorno".
    let environment = ["env", "variab", "ambiente", "entorno"]
        .iter()
        .any(|word| lower.contains(word));
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
                words.push((Word::Option(name.to_string()), Strength::Required));
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
                words.push((Word::Number(raw.to_string()), Strength::Value));
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
        let name = match (capitals || (snake && !has_lower)) && environment {
            true => Word::EnvName(raw.to_string()),
            false => Word::Name(raw.to_string()),
        };
        if snake || camel {
            words.push((name, Strength::Required));
        } else if capitals {
            words.push((name, Strength::Hint));
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
        let new = NewWords::of(task, &[("a.py", code)]);
        let none = new.coverage(&[("a.py", code)]);
        // `top_words` does not hold the option `--top`; `API` is only a hint.
        assert_eq!(
            none.missing_needed,
            ["--top", "3", "HTTP_TIMEOUT", "60", "maxRows"]
        );
        assert_eq!(none.score, 0);
        let version = "p.add_argument(\"--top\", type=int, default=3)\nTIMEOUT = int(os.environ.get(\"HTTP_TIMEOUT\", 60))\nmaxRows = 1\n";
        let all = new.coverage(&[("a.py", version)]);
        assert!(all.missing_needed.is_empty());
        assert_eq!(all.score, 3 * 2 + 2);
        // A constant named as the variable does not read it.
        let constant = "HTTP_TIMEOUT = 60\n";
        assert!(new
            .coverage(&[("a.py", constant)])
            .missing_needed
            .contains(&"HTTP_TIMEOUT".to_string()));
    }

    #[test]
    fn a_variable_counts_where_code_reads_it_from_the_environment() {
        let new = NewWords::of(
            "Change the default port to 8080, and let a PORT environment variable override it; CACHE_TTL too",
            &[("a.py", "")],
        );
        for code in [
            "const port = process.env.PORT || 8080; const ttl = process.env[\"CACHE_TTL\"];",
            "port := os.Getenv(\"PORT\") // 8080\nttl := os.Getenv(\"CACHE_TTL\")",
            "PORT=8080\nexport CACHE_TTL=600\n",
        ] {
            let coverage = new.coverage(&[("a.py", code)]);
            assert!(coverage.missing_needed.is_empty(), "{code}: {coverage:?}");
            assert_eq!(coverage.score, 1 + 1 + 2, "{code}");
        }
        assert_eq!(
            new.coverage(&[("a.py", "PORT = 8080\nCACHE_TTL = 600\n")])
                .missing_needed,
            ["CACHE_TTL"]
        );
        // A file of values sets a variable on a line of its own, and reads none.
        let toml = "port = os.getenv(\"CACHE_TTL\", 8080)\n";
        assert_eq!(
            new.coverage(&[("config.toml", toml)]).missing_needed,
            ["CACHE_TTL"]
        );
        assert!(new
            .coverage(&[(".env", "CACHE_TTL=600\n"), ("a.js", "x = 8080")])
            .missing_needed
            .is_empty());
    }

    #[test]
    fn a_word_the_code_has_already_is_not_asked_for() {
        let code = "const port = process.env.PORT || 3000;\nflag.Int(\"width\", 40, \"\")\n";
        let new = NewWords::of(
            "Change the default port to 8080, PORT overrides it; add a -width flag",
            &[("a.py", code)],
        );
        assert_eq!(new.coverage(&[("a.py", code)]).missing_needed, ["8080"]);
        // The whole word only: 80800 and 8080.5 do not hold 8080.
        assert!(!new
            .coverage(&[("a.py", "x = 80800; y = 8080.5")])
            .missing_needed
            .is_empty());
        assert!(new
            .coverage(&[("a.py", "port: 8080,")])
            .missing_needed
            .is_empty());
    }

    #[test]
    fn options_are_found_however_the_code_parses_them() {
        let new = NewWords::of("Add a --skip-blank option and a -d flag", &[("a.py", "")]);
        assert_eq!(
            new.coverage(&[("a.py", "")]).missing_needed,
            ["--skip-blank", "-d"]
        );
        for code in [
            "if arg == \"--skip-blank\" { }\nflag.String(\"d\", \",\", \"\")",
            "parser.add_argument('--skip-blank'); parser.add_argument('-d')",
        ] {
            assert!(
                new.coverage(&[("a.py", code)]).missing_needed.is_empty(),
                "{code}"
            );
        }
        // A word that merely contains the name does not.
        assert!(!new
            .coverage(&[("a.py", "skip_blank_lines(d)")])
            .missing_needed
            .is_empty());
    }

    #[test]
    fn prose_dashes_and_file_names_are_not_words_of_code() {
        let new = NewWords::of(
            "Fix wordfreq.py - it is slow, and re-run it. Use JSON",
            &[("a.py", "")],
        );
        assert_eq!(new.words, [(Word::Name("JSON".into()), Strength::Hint)]);
        assert!(new.coverage(&[("a.py", "")]).missing_needed.is_empty());
    }
}
