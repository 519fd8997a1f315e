/// The words of `text` in reverse order, separated by single spaces:
/// "  hello   big world " -> "world big hello".
pub fn reverse_words(text: &str) -> String {
    todo!("reverse the words of {text}")
}
