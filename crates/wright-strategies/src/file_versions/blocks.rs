//! The code blocks of a model's answer: which one holds the file or the check, and the
//! fence word of a file's language.

/// The fence word of `path`'s language (empty when none).
pub(super) fn lang(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("py") => "python",
        Some("rs") => "rust",
        Some("js" | "mjs" | "cjs") => "javascript",
        Some("ts") => "typescript",
        Some("go") => "go",
        Some("rb") => "ruby",
        Some("sh") => "sh",
        Some("json") => "json",
        Some("toml") => "toml",
        Some("yaml" | "yml") => "yaml",
        _ => "",
    }
}

/// The body of the first fenced block of `text` whose word is one of `words` (or has
/// none), else of the first block.
pub(super) fn fenced(text: &str, words: &[&str]) -> Option<String> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    let mut open: Option<(String, Vec<&str>)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                if let Some(word) = trimmed.strip_prefix("```") {
                    open = Some((word.trim().to_lowercase(), Vec::new()));
                }
            }
            Some((word, lines)) => {
                if trimmed.starts_with("```") {
                    blocks.push((std::mem::take(word), lines.join("\n")));
                    open = None;
                } else {
                    lines.push(line);
                }
            }
        }
    }
    let chosen = blocks
        .iter()
        .find(|(word, _)| word.is_empty() || words.contains(&word.as_str()))
        .or_else(|| blocks.first())?;
    (!chosen.1.trim().is_empty()).then(|| chosen.1.clone())
}

/// The body of the first fenced block written in `word` (or with no word): never a block
/// of another language (a shell script is no Python test file).
pub(super) fn fenced_as(text: &str, word: &str) -> Option<String> {
    let first = text
        .lines()
        .map(str::trim_start)
        .find_map(|line| line.strip_prefix("```"))?
        .trim()
        .to_lowercase();
    match first.is_empty() || first == word {
        true => fenced(text, &[word]),
        false => None,
    }
}

/// `code` ending as `old` does (a final line break or none).
pub(super) fn with_ending(code: String, old: &str) -> String {
    let code = code.trim_end_matches('\n').to_string();
    match old.ends_with('\n') {
        true => format!("{code}\n"),
        false => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_read_by_its_word_else_the_first() {
        let text = "Here:\n```python\nprint(1)\n```\nand\n```sh\npython3 a.py | grep 1\n```\n";
        assert_eq!(
            fenced(text, &["sh"]).as_deref(),
            Some("python3 a.py | grep 1")
        );
        assert_eq!(fenced(text, &["python"]).as_deref(), Some("print(1)"));
        assert_eq!(fenced("no code", &["sh"]), None);
        assert_eq!(with_ending("a\n\n".into(), "b\n"), "a\n");
    }
}
