//! Finding the model name a user probably meant.

use wright_protocol::edit_distance;

/// The available name closest to `wanted`: a case-insensitive containment match first,
/// else the smallest edit distance if it is within a third of the name's length.
pub fn closest_name(wanted: &str, available: &[String]) -> Option<String> {
    let wanted_lower = wanted.to_lowercase();
    if let Some(hit) = available.iter().find(|name| {
        let name = name.to_lowercase();
        name.contains(&wanted_lower) || wanted_lower.contains(&name)
    }) {
        return Some(hit.clone());
    }
    available
        .iter()
        .map(|name| (edit_distance(&wanted_lower, &name.to_lowercase()), name))
        .filter(|(distance, _)| *distance <= wanted.chars().count().max(3) / 3)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_typos_and_tags() {
        let names = vec![
            "qwen2.5-coder:7b".to_string(),
            "llama3.2:latest".to_string(),
        ];
        assert_eq!(
            closest_name("llama3.2", &names).as_deref(),
            Some("llama3.2:latest")
        );
        assert_eq!(
            closest_name("qwen2.5-codr:7b", &names).as_deref(),
            Some("qwen2.5-coder:7b")
        );
        assert_eq!(closest_name("mistral", &names), None);
    }
}
