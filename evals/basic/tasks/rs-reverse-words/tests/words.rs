use words::reverse_words;

#[test]
fn reverses() {
    assert_eq!(reverse_words("hello big world"), "world big hello");
}

#[test]
fn squeezes_spaces() {
    assert_eq!(reverse_words("  hello   big world "), "world big hello");
}

#[test]
fn empty() {
    assert_eq!(reverse_words("   "), "");
}
