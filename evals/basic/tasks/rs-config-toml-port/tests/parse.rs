#[test]
fn sections_and_quotes() {
    let values = server::parse("# c\n[a]\nx = \"one\"\n[b]\nx = 2\n");
    assert_eq!(values["a.x"], "one");
    assert_eq!(values["b.x"], "2");
}
