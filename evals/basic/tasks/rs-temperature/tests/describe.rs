use temperature::describe;

#[test]
fn freezing_and_boiling() {
    assert_eq!(describe(32.0), "0.0°C");
    assert_eq!(describe(212.0), "100.0°C");
}
