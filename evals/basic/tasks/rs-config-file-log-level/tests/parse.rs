#[test]
fn keys_values_and_comments() {
    let values = applog::parse("# c\n a = 1 \n\nb=two\n");
    assert_eq!(values.len(), 2);
    assert_eq!(values["a"], "1");
    assert_eq!(values["b"], "two");
}
