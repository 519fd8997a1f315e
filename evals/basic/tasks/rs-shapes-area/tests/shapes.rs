use shapes::shapes::area;
use shapes::shapes::Shape;

#[test]
fn square_area() {
    assert_eq!(area(&Shape::Square { side: 3.0 }), 9.0);
}

#[test]
fn circle_area() {
    let got = area(&Shape::Circle { radius: 2.0 });
    assert!((got - 4.0 * std::f64::consts::PI).abs() < 1e-9, "{got}");
}
