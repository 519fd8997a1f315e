#[test]
fn counts_lines() {
    assert_eq!(countlines::count_lines("a\n\nb\n"), 3);
    assert_eq!(countlines::count_lines(""), 0);
}
