//! Small helpers for the sentences every layer writes. Owns nothing but wording.

/// `1 replacement`, `3 replacements`: `count` and `noun`, plural (an added `s`) unless it is 1.
pub fn count_noun(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("{count} {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count_noun(1, "file"), "1 file");
        assert_eq!(count_noun(0, "file"), "0 files");
        assert_eq!(count_noun(3, "replacement"), "3 replacements");
    }
}
