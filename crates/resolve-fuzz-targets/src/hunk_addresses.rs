//! The `hunk_addresses` target: the addresses a person types after `--only`, `--except` and
//! `resolve amend`, and a model sends in `resolve`'s `only`/`except` arguments.

use resolve_edit::{HunkAddress, MAX_HUNK_NUMBER, Selection};

/// Parse every line of the input as a hunk address, then all of them as one selection.
///
/// Input: text (bytes that are not UTF-8 are replaced), one address per line.
///
/// Invariants: no panic and no unbounded allocation (a range is capped); an accepted address
/// names ascending, distinct hunks from 1 to [`MAX_HUNK_NUMBER`] of a file with a non-empty
/// name, and prints as text that parses back to the same address; a refusal quotes the
/// address; a selection is accepted exactly when every line is.
pub fn hunk_addresses(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let lines: Vec<&str> = text.lines().collect();
    let mut all_accepted = true;
    for line in &lines {
        match HunkAddress::parse(line) {
            Ok(address) => {
                if !address.is_whole_file() {
                    assert!(!address.path.is_empty(), "{line:?} names no file");
                    assert!(address.hunks.windows(2).all(|pair| pair[0] < pair[1]));
                    assert!(
                        address
                            .hunks
                            .iter()
                            .all(|hunk| (1..=MAX_HUNK_NUMBER).contains(hunk)),
                        "{line:?}"
                    );
                }
                let printed = address.to_string();
                assert_eq!(
                    HunkAddress::parse(&printed).ok().as_ref(),
                    Some(&address),
                    "{line:?} printed as {printed:?}"
                );
            }
            Err(error) => {
                all_accepted = false;
                assert!(error.to_string().contains(line), "{line:?}: {error}");
            }
        }
    }
    assert_eq!(Selection::only(&lines).is_ok(), all_accepted);
}
