//! Plan titles: normalizing a title into a file-name slug ([`normalize_plan_title`]), finding
//! a plan's title ([`resolve_plan_title`]) and the plan file a slug names.
//!
//! Owned here: the title rules and their reference texts ([`PlanTitleError`]). Not owned:
//! reading or writing plan files (`files`).

/// Why a plan title is unusable; the texts are the reference's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanTitleError {
    /// Nothing but whitespace (or `.md`).
    #[error("Plan title is required and must not be empty.")]
    Empty,
    /// A `/`, `\` or `..`.
    #[error("Plan title must not contain path separators or '..'.")]
    PathSeparator,
    /// Nothing left once disallowed characters are dropped.
    #[error(
        "Plan title must contain at least one letter, number, underscore, or hyphen after sanitization."
    )]
    NothingLeft,
}

/// Normalize a plan title into a file-name slug: trim; drop a `.md` suffix; whitespace becomes
/// `-`; anything outside `[A-Za-z0-9_-]` is dropped; repeated `-` collapse; leading and trailing
/// `-` go.
///
/// ```
/// use resolve_agent::{PlanTitleError, normalize_plan_title};
/// assert_eq!(normalize_plan_title("  Words counter!.md").unwrap(), "Words-counter");
/// assert_eq!(normalize_plan_title("../x"), Err(PlanTitleError::PathSeparator));
/// ```
pub fn normalize_plan_title(title: &str) -> Result<String, PlanTitleError> {
    let trimmed = title.trim();
    let trimmed = trimmed.strip_suffix(".md").unwrap_or(trimmed).trim();
    if trimmed.is_empty() {
        return Err(PlanTitleError::Empty);
    }
    if trimmed.contains(['/', '\\']) || trimmed.contains("..") {
        return Err(PlanTitleError::PathSeparator);
    }
    let mut slug = String::with_capacity(trimmed.len());
    for ch in trimmed.chars() {
        let ch = if ch.is_whitespace() { '-' } else { ch };
        let allowed = ch.is_ascii_alphanumeric() || ch == '_' || ch == '-';
        if allowed && !(ch == '-' && slug.ends_with('-')) {
            slug.push(ch);
        }
    }
    let slug = slug.trim_matches('-');
    if slug.is_empty() {
        return Err(PlanTitleError::NothingLeft);
    }
    Ok(slug.to_owned())
}

/// The title of a plan: the supplied title, else the plan's first `# ` heading (outside code
/// fences), else its file name, else `plan`. Each candidate is normalized with
/// [`normalize_plan_title`] and loses a trailing `-plan`; an unusable supplied title is an
/// error, an unusable heading or file name falls through to the next candidate.
pub fn resolve_plan_title(
    supplied: Option<&str>,
    content: &str,
    file_name: &str,
) -> Result<String, PlanTitleError> {
    if let Some(supplied) = supplied {
        return normalize_plan_title(supplied).map(|title| plan_slug(&title));
    }
    let from_heading = first_heading(content).and_then(|h| normalize_plan_title(h).ok());
    let from_name = || normalize_plan_title(file_name).ok();
    Ok(from_heading
        .or_else(from_name)
        .map_or_else(|| "plan".to_owned(), |title| plan_slug(&title)))
}

/// `title` without a trailing `-plan` (any case), unless nothing would be left.
pub(super) fn plan_slug(title: &str) -> String {
    let cut = title.len().saturating_sub("-plan".len());
    match (title.get(..cut), title.get(cut..)) {
        (Some(head), Some(tail)) if !head.is_empty() && tail.eq_ignore_ascii_case("-plan") => {
            head.to_owned()
        }
        _ => title.to_owned(),
    }
}

/// The plan file named by a slug: `<slug>-plan.md`, or `plan.md` for the slug `plan`.
pub(super) fn plan_file_for(slug: &str) -> String {
    if slug.eq_ignore_ascii_case("plan") {
        "plan.md".to_owned()
    } else {
        format!("{slug}-plan.md")
    }
}

/// The text of the first `# ` heading outside fenced code blocks.
fn first_heading(content: &str) -> Option<&str> {
    let mut in_fence = false;
    for line in content.lines() {
        let line = line.trim_start();
        if line.starts_with("```") || line.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence && let Some(heading) = line.strip_prefix("# ") {
            return Some(heading.trim());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn normalization_trims_drops_md_and_keeps_only_slug_characters() {
        assert_eq!(
            normalize_plan_title("words-counter").unwrap(),
            "words-counter"
        );
        assert_eq!(
            normalize_plan_title("  WordsCounter.md ").unwrap(),
            "WordsCounter"
        );
        assert_eq!(
            normalize_plan_title("Words  counter: v2!").unwrap(),
            "Words-counter-v2"
        );
        assert_eq!(normalize_plan_title("--a -- b--").unwrap(), "a-b");
        assert_eq!(normalize_plan_title("snake_case").unwrap(), "snake_case");
    }

    /// Each of `titles` is refused as `expected`, whose message is `message`.
    fn assert_refused(titles: &[&str], expected: PlanTitleError, message: &str) {
        for title in titles {
            let error = normalize_plan_title(title).unwrap_err();
            assert_eq!(error, expected, "{title:?}");
            assert_eq!(error.to_string(), message);
        }
    }

    #[test]
    fn an_empty_title_is_refused_with_the_reference_text() {
        assert_refused(
            &["", "   ", ".md", " .md "],
            PlanTitleError::Empty,
            "Plan title is required and must not be empty.",
        );
    }

    #[test]
    fn a_title_with_a_path_separator_or_dot_dot_is_refused_with_the_reference_text() {
        assert_refused(
            &["a/b", "a\\b", "../etc", "x..y"],
            PlanTitleError::PathSeparator,
            "Plan title must not contain path separators or '..'.",
        );
    }

    #[test]
    fn a_title_with_nothing_usable_is_refused_with_the_reference_text() {
        assert_refused(
            &["!!!", "---", "日本語", "* *"],
            PlanTitleError::NothingLeft,
            "Plan title must contain at least one letter, number, underscore, or hyphen after sanitization.",
        );
    }

    #[test]
    fn the_supplied_title_wins_and_loses_a_trailing_plan_suffix() {
        let content = "# Something Else\n";
        assert_eq!(
            resolve_plan_title(Some("words-counter"), content, "x-plan.md").unwrap(),
            "words-counter"
        );
        assert_eq!(
            resolve_plan_title(Some("words-counter-plan"), content, "x.md").unwrap(),
            "words-counter"
        );
        assert_eq!(
            resolve_plan_title(Some("a/b"), content, "x.md"),
            Err(PlanTitleError::PathSeparator)
        );
    }

    #[test]
    fn without_a_supplied_title_the_first_heading_outside_code_is_used() {
        let content = "intro\n```sh\n# not a heading\n```\n## Sub\n# Words Counter\n# Later\n";
        assert_eq!(
            resolve_plan_title(None, content, "x-plan.md").unwrap(),
            "Words-Counter"
        );
    }

    #[test]
    fn without_a_usable_heading_the_file_name_is_used_then_plan() {
        assert_eq!(
            resolve_plan_title(None, "no heading\n# !!!\n", "words-counter-plan.md").unwrap(),
            "words-counter"
        );
        assert_eq!(resolve_plan_title(None, "", "plan.md").unwrap(), "plan");
        assert_eq!(resolve_plan_title(None, "", "!!!.md").unwrap(), "plan");
    }

    #[test]
    fn a_slug_names_its_plan_file() {
        assert_eq!(plan_file_for("words-counter"), "words-counter-plan.md");
        assert_eq!(plan_file_for("plan"), "plan.md");
        assert_eq!(plan_slug("plan"), "plan");
        assert_eq!(plan_slug("Words-Plan"), "Words");
    }
}
