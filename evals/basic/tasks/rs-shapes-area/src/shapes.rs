use crate::geometry::square;

pub enum Shape {
    Square { side: f64 },
    Circle { radius: f64 },
}

pub fn area(shape: &Shape) -> f64 {
    match shape {
        Shape::Square { side } => square(*side),
        Shape::Circle { radius } => std::f64::consts::PI * square(*radius),
    }
}
