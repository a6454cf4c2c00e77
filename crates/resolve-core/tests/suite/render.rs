//! The merged `resolve` block.

use pretty_assertions::assert_eq;
use resolve_core::{
    ColorMode, ResolveAction, ResolveArgs, ToolResult, render_resolve_call, render_resolve_result,
};
use serde_json::{Value, json};

use super::common::strip_ansi;

const AST_LABEL: &str = "AST Edit: 2 replacements in 1 file";

fn applied() -> Value {
    json!({
        "action": "apply",
        "reason": "Rename is safe.",
        "sourceToolName": "ast_edit",
        "label": AST_LABEL
    })
}

fn plain(details: Option<&Value>, is_error: bool, width: usize) -> String {
    render_resolve_result(details, is_error, width, ColorMode::Plain)
}

/// Line `n` of the plain block of the successful `details` at `width`, without trailing spaces.
fn plain_line(details: &Value, width: usize, n: usize) -> String {
    let out = plain(Some(details), false, width);
    out.lines().nth(n).unwrap().trim_end().to_owned()
}

/// The plain or colored call line of `resolve` with `action` and `reason`.
fn call_line(action: ResolveAction, reason: impl Into<String>, mode: ColorMode) -> String {
    render_resolve_call(&ResolveArgs::new(action, reason), mode)
}

#[test]
fn applied_result_shows_accept_summary_badge_and_reason_but_not_the_result_text() {
    let result = ToolResult::text("Applied 2 replacements in 1 file.").with_details(applied());
    let out = render_resolve_result(result.details.as_ref(), false, 90, ColorMode::Ansi);
    let visible = strip_ansi(&out);
    assert!(
        visible.contains("Accept: 2 replacements in 1 file"),
        "{visible}"
    );
    assert!(visible.contains("AST Edit"), "{visible}");
    assert!(visible.contains("Rename is safe."), "{visible}");
    assert!(!visible.contains(&result.text), "{visible}");
    assert!(!visible.contains("Decision"), "{visible}");
    for corner in ['╭', '╮', '╰', '╯'] {
        assert!(!visible.contains(corner), "{visible}");
    }
}

#[test]
fn applied_result_renders_the_exact_five_line_plain_block() {
    let out = plain(Some(&applied()), false, 60);
    let expected = [
        String::new(),
        " ✓ Accept: 2 replacements in 1 file ⟦AST Edit⟧".to_owned(),
        String::new(),
        " Rename is safe.".to_owned(),
        String::new(),
    ]
    .map(|line| format!("{line:<60}"))
    .join("\n");
    assert_eq!(out, expected);
}

#[test]
fn every_ansi_line_has_exactly_one_foreground_reset() {
    for (details, is_error) in [
        (Some(applied()), false),
        (Some(applied()), true),
        (Some(json!({"action": "discard", "reason": "No."})), false),
        (None, true),
    ] {
        let out = render_resolve_result(details.as_ref(), is_error, 90, ColorMode::Ansi);
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines.len(), 5);
        for line in lines {
            assert_eq!(line.matches("\x1b[39m").count(), 1, "{line:?}");
        }
    }
}

#[test]
fn plain_mode_has_no_escape_codes() {
    for (details, is_error) in [
        (Some(applied()), false),
        (Some(json!({"action": "discard", "reason": "No."})), true),
        (None, true),
    ] {
        let out = plain(details.as_ref(), is_error, 40);
        assert!(!out.contains('\x1b'), "{out:?}");
    }
    let args = ResolveArgs::new(ResolveAction::Apply, "Fine.");
    assert!(!render_resolve_call(&args, ColorMode::Plain).contains('\x1b'));
}

#[test]
fn discard_result_renders_discard_with_the_default_label_fallback_when_unlabelled() {
    let nothing = json!({"action": "discard", "reason": "Abandoning the staged edit."});
    let out = plain(Some(&nothing), false, 60);
    let title = out.lines().nth(1).unwrap();
    assert_eq!(title.trim_end(), " ✘ Discard: pending action");
    assert!(out.contains("Abandoning the staged edit."));
}

#[test]
fn discard_of_a_labelled_action_shows_its_badge() {
    let details = json!({"action": "discard", "reason": "Wrong.", "label": AST_LABEL});
    assert_eq!(
        plain_line(&details, 70, 1),
        " ✘ Discard: 2 replacements in 1 file ⟦AST Edit⟧"
    );
}

#[test]
fn thrown_error_with_empty_details_renders_failed_pending_action_without_reason() {
    let failure = ToolResult::from_error(&resolve_core::Error::ApplyFailed("disk full".into()));
    let out = plain(failure.details.as_ref(), true, 60);
    let lines: Vec<&str> = out.lines().map(str::trim_end).collect();
    assert_eq!(lines[1], " ✘ Failed: pending action");
    assert_eq!(lines[3], " No reason provided");
    assert!(!out.contains("disk full"));
}

#[test]
fn blank_reason_renders_no_reason_provided() {
    let details = json!({"action": "apply", "reason": "   ", "label": "Write: a.txt"});
    assert_eq!(plain_line(&details, 50, 3), " No reason provided");
}

#[test]
fn label_without_a_source_prefix_gets_no_badge() {
    for label in ["Plan ready for approval", ": leading separator"] {
        let details = json!({"action": "apply", "reason": "ok", "label": label});
        let out = plain(Some(&details), false, 60);
        let title = out.lines().nth(1).unwrap().trim_end().to_owned();
        assert_eq!(title, format!(" ✓ Accept: {label}"));
        assert!(!out.contains('⟦'));
    }
}

#[test]
fn every_line_is_exactly_width_visible_columns_even_when_truncated() {
    let long = json!({
        "action": "apply",
        "reason": "A very long reason that certainly does not fit in a narrow terminal at all.",
        "label": "AST Edit: 1234 replacements in 567 files across the whole workspace tree"
    });
    for width in [12, 30, 47, 90] {
        for mode in [ColorMode::Ansi, ColorMode::Plain] {
            let out = render_resolve_result(Some(&long), false, width, mode);
            for line in out.split('\n') {
                assert_eq!(
                    strip_ansi(line).chars().count(),
                    width,
                    "{mode:?} width {width}: {line:?}"
                );
            }
        }
    }
    let narrow = plain(Some(&long), false, 20);
    assert_eq!(narrow.lines().nth(1).unwrap(), " ✓ Accept: 1234 rep ");
}

#[test]
fn call_line_shows_action_badge_and_reason_cut_to_72_columns() {
    let reason = format!("  {}  ", "x".repeat(100));
    let apply = call_line(ResolveAction::Apply, reason, ColorMode::Plain);
    assert_eq!(
        apply,
        format!("… Resolve apply proposed -> resolved {}", "x".repeat(72))
    );
    let discard = call_line(ResolveAction::Discard, "  ", ColorMode::Plain);
    assert_eq!(discard, "… Resolve discard proposed -> rejected");
}

#[test]
fn empty_label_falls_back_to_pending_action() {
    let details = json!({"action": "apply", "reason": "ok", "label": ""});
    assert_eq!(plain_line(&details, 60, 1), " ✓ Accept: pending action");
}

#[test]
fn label_with_line_breaks_stays_one_full_width_line() {
    let details = json!({"action": "apply", "reason": "ok", "label": "Write: odd\nname\r.txt"});
    for mode in [ColorMode::Ansi, ColorMode::Plain] {
        let out = render_resolve_result(Some(&details), false, 50, mode);
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines.len(), 5, "{out:?}");
        for line in &lines {
            assert_eq!(strip_ansi(line).chars().count(), 50, "{line:?}");
            assert!(!line.contains('\r'), "{line:?}");
        }
        assert_eq!(
            strip_ansi(lines[1]).trim_end(),
            " ✓ Accept: odd name .txt ⟦Write⟧"
        );
    }
}

/// The display width of a rendered line, escape codes removed.
fn columns(line: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(strip_ansi(line).as_str())
}

// Issue #36, item 2: lines are measured in display columns, so CJK and emoji (two columns
// each) neither widen a bar past the terminal nor leave it short.
#[test]
fn wide_characters_are_cut_and_padded_by_display_columns() {
    let wide = json!({
        "action": "apply",
        "reason": "変更は安全です 🎉 すべてのテストが通りました",
        "label": "AST Edit: 置換 2 件、ファイル 1 個 ✨"
    });
    for width in [9, 10, 11, 20, 33, 80] {
        for mode in [ColorMode::Ansi, ColorMode::Plain] {
            let out = render_resolve_result(Some(&wide), false, width, mode);
            let lines: Vec<&str> = out.split('\n').collect();
            assert_eq!(lines.len(), 5);
            for line in lines {
                assert_eq!(columns(line), width, "{mode:?} width {width}: {line:?}");
            }
        }
    }
    // A wide character that would straddle the last column is left out, and a space pads.
    let straddling = plain(Some(&wide), false, 13);
    assert_eq!(straddling.lines().nth(1).unwrap(), " ✓ Accept:   ");
    let exact = plain(Some(&wide), false, 16);
    assert_eq!(exact.lines().nth(3).unwrap(), " 変更は安全です ");
    let roomy = plain(Some(&wide), false, 60);
    assert_eq!(
        roomy.lines().nth(1).unwrap().trim_end(),
        " ✓ Accept: 置換 2 件、ファイル 1 個 ✨ ⟦AST Edit⟧"
    );
}

#[test]
fn call_line_cuts_a_wide_reason_at_72_columns() {
    let reason = "界".repeat(50);
    let line = call_line(ResolveAction::Apply, reason, ColorMode::Plain);
    assert_eq!(
        line,
        format!("… Resolve apply proposed -> resolved {}", "界".repeat(36))
    );
}

// Issue #36, item 5: each state's background. Accept is green, Discard yellow
// (red when the result is an error), Failed red; every line of the block carries the color.
#[test]
fn each_state_renders_on_its_own_color() {
    const GREEN: &str = "\x1b[7m\x1b[32m";
    const YELLOW: &str = "\x1b[7m\x1b[33m";
    const RED: &str = "\x1b[7m\x1b[31m";
    let discard = json!({"action": "discard", "reason": "No.", "label": AST_LABEL});
    for (details, is_error, verb, color) in [
        (Some(applied()), false, "Accept:", GREEN),
        (Some(discard.clone()), false, "Discard:", YELLOW),
        (Some(discard), true, "Discard:", RED),
        (Some(applied()), true, "Failed:", RED),
        (None, true, "Failed:", RED),
    ] {
        let out = render_resolve_result(details.as_ref(), is_error, 60, ColorMode::Ansi);
        assert!(strip_ansi(&out).contains(verb), "{out:?}");
        for line in out.split('\n') {
            assert!(line.starts_with(color), "{verb} error={is_error}: {line:?}");
            assert!(line.ends_with("\x1b[39m\x1b[27m"), "{line:?}");
        }
    }
}

#[test]
fn the_call_line_badge_is_green_for_apply_and_yellow_for_discard() {
    let apply = call_line(ResolveAction::Apply, "ok", ColorMode::Ansi);
    assert!(
        apply.contains("\x1b[32mproposed -> resolved\x1b[39m"),
        "{apply:?}"
    );
    let discard = call_line(ResolveAction::Discard, "no", ColorMode::Ansi);
    assert!(
        discard.contains("\x1b[33mproposed -> rejected\x1b[39m"),
        "{discard:?}"
    );
}
