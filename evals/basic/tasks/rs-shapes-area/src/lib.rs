pub mod geometry;
pub mod shapes;
