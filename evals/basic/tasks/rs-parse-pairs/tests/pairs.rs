use pairs::parse_pairs;

#[test]
fn plain() {
    assert_eq!(parse_pairs("a=1;b=2"), Some(vec![("a".into(), 1), ("b".into(), 2)]));
}

#[test]
fn spaced() {
    assert_eq!(
        parse_pairs(" a = 1 ; b=-2; "),
        Some(vec![("a".into(), 1), ("b".into(), -2)])
    );
}

#[test]
fn bad() {
    assert_eq!(parse_pairs("a=x"), None);
    assert_eq!(parse_pairs("a"), None);
}
