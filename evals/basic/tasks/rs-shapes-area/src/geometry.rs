/// `x` squared.
pub fn square(x: f64) -> f64 {
    x * 2.0
}
