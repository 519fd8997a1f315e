/// How many lines `text` has.
pub fn count_lines(text: &str) -> usize {
    text.lines().count()
}
