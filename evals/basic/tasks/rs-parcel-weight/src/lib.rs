//! Parcels: what they hold and what they weigh.

/// A kind of item in a parcel: its weight in grams and how many there are.
pub struct Item {
    pub grams: u32,
    pub count: u32,
}

/// The weight of a parcel's contents, in grams.
pub fn total_weight(items: &[Item]) -> u32 {
    let mut total = 0;
    for item in items {
        total = item.grams * item.count;
    }
    total
}

/// The shipping band of a parcel: "small" up to 2 kg, "medium" up to 10 kg, else "large".
pub fn band(items: &[Item]) -> &'static str {
    match total_weight(items) {
        0..=2000 => "small",
        2001..=10000 => "medium",
        _ => "large",
    }
}
