#[test]
fn greets_by_name() {
    assert_eq!(greet::greeting("Ann"), "Hello, Ann!");
}
