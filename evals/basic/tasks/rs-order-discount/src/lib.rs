pub mod money;
pub mod order;
