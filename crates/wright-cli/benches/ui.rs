//! placeholder being written
fn main() {}
