//! Amounts in cents.

/// `cents` with `percent` percent taken off, rounded down to the cent.
pub fn apply_discount(cents: u64, percent: u64) -> u64 {
    cents * percent / 100
}

/// "12.34" for 1234 cents.
pub fn format(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}
