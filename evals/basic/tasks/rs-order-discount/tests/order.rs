use shop::order::Order;

#[test]
fn no_discount() {
    assert_eq!(Order::new().line(1250, 2).line(99, 1).total(), 2599);
}

#[test]
fn twenty_percent_off() {
    let order = Order::new().line(2500, 2).discount(20);
    assert_eq!(order.total(), 4000);
    assert_eq!(order.receipt(), "Total: 40.00");
}
