/// `value` brought into `low..=high`.
pub fn clamp(value: i64, low: i64, high: i64) -> i64 {
    if value < low {
        high
    } else if value > high {
        low
    } else {
        value
    }
}
