use parcel::total_weight;
use parcel::Item;

#[test]
fn adds_every_item() {
    let items = [
        Item { grams: 300, count: 2 },
        Item { grams: 1000, count: 1 },
        Item { grams: 50, count: 4 },
    ];
    assert_eq!(total_weight(&items), 1800);
}

#[test]
fn empty_parcel() {
    assert_eq!(total_weight(&[]), 0);
}
