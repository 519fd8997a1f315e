//! Counts in words people read: "1 line", "2 lines", never "1 lines".

/// `n` and the noun, plural unless `n` is 1: `count(1, "step")` is "1 step".
pub fn count(n: u64, one: &str) -> String {
    count_as(n, one, &format!("{one}s"))
}

/// As `count`, for nouns whose plural is not `one` + "s" ("reply", "replies").
pub fn count_as(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_everything_else_plural() {
        assert_eq!(count(0, "line"), "0 lines");
        assert_eq!(count(1, "line"), "1 line");
        assert_eq!(count(2, "step"), "2 steps");
        assert_eq!(count_as(1, "reply", "replies"), "1 reply");
        assert_eq!(count_as(3, "reply", "replies"), "3 replies");
    }
}
