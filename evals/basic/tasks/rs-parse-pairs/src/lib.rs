/// "a=1; b = 2" -> [("a", 1), ("b", 2)]; empty items are skipped; None if an item is
/// not KEY=NUMBER.
pub fn parse_pairs(text: &str) -> Option<Vec<(String, i32)>> {
    let mut pairs = Vec::new();
    for item in text.split(';') {
        if item.trim().is_empty() {
            continue;
        }
        let (key, value) = item.split_once('=')?;
        pairs.push((key.to_string(), value.parse().ok()?));
    }
    Some(pairs)
}
