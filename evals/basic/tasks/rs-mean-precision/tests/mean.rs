#[test]
fn mean_of_numbers() {
    assert_eq!(mean::mean(&[1.0, 2.0, 4.0]), Some(7.0 / 3.0));
    assert_eq!(mean::mean(&[]), None);
}
