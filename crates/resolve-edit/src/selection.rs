//! Naming parts of a preview: a [`HunkAddress`] is a file (`src/a.rs`) or some of its hunks
//! (`src/a.rs#1,3`, `src/a.rs#2-4`), and a [`Selection`] says which parts of a pending action
//! land: all of it, only the named parts, or all but the named parts. Rejection reasons attach
//! to addresses too ([`HunkRejection`]).

use std::fmt;
use std::str::FromStr;

use crate::error::EditError;

/// The highest hunk number an address may name: a range is expanded into its numbers, so
/// `a.rs#1-99999999999` must not take all memory (no preview has this many hunks in a file).
pub const MAX_HUNK_NUMBER: usize = 100_000;

/// A file of a preview, or some of its hunks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HunkAddress {
    /// The file, relative to the root, as the preview names it.
    pub path: String,
    /// Hunk numbers (from 1), ascending and distinct; empty for the whole file.
    pub hunks: Vec<usize>,
}

impl HunkAddress {
    /// The whole file `path`.
    pub fn file(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            hunks: Vec::new(),
        }
    }

    /// Hunk `number` of `path`.
    pub fn hunk(path: impl Into<String>, number: usize) -> Self {
        Self {
            path: path.into(),
            hunks: vec![number],
        }
    }

    /// Whether it names the whole file.
    pub fn is_whole_file(&self) -> bool {
        self.hunks.is_empty()
    }

    /// Parse `src/a.rs`, `src/a.rs#2`, `src/a.rs#1,3` or `src/a.rs#2-4`. A `#` followed by
    /// anything but hunk numbers is part of the file name; `#` with nothing after it or
    /// nothing before it (`./` is nothing), hunk 0 and hunks past [`MAX_HUNK_NUMBER`] are
    /// errors.
    pub fn parse(text: &str) -> Result<Self, EditError> {
        let invalid = |reason: &str| EditError::InvalidHunkAddress {
            address: text.to_owned(),
            reason: reason.to_owned(),
        };
        let normalize = |path: &str| path.trim_start_matches("./").to_owned();
        let Some((path, numbers)) = text.rsplit_once('#') else {
            return Ok(Self::file(normalize(text)));
        };
        if numbers.is_empty() {
            return Err(invalid(
                "name hunks after `#`, like `src/a.rs#2` or `src/a.rs#1,3`",
            ));
        }
        if !numbers
            .bytes()
            .all(|byte| byte.is_ascii_digit() || byte == b',' || byte == b'-')
        {
            return Ok(Self::file(normalize(text)));
        }
        let path = normalize(path);
        if path.is_empty() {
            return Err(invalid("name the file before `#`"));
        }
        let number = |digits: &str| -> Result<usize, EditError> {
            if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
                return Err(invalid("expected hunk numbers like `1,3` or `2-4`"));
            }
            match digits.parse::<usize>() {
                Ok(0) => Err(invalid("hunks are numbered from 1")),
                Ok(number) if number <= MAX_HUNK_NUMBER => Ok(number),
                // Past the limit, or too many digits for any number.
                _ => Err(invalid(&format!("hunk numbers go up to {MAX_HUNK_NUMBER}"))),
            }
        };
        let mut hunks = Vec::new();
        for part in numbers.split(',') {
            match part.split_once('-') {
                Some((first, last)) => {
                    let (first, last) = (number(first)?, number(last)?);
                    if first > last {
                        return Err(invalid("a range goes from the lower number to the higher"));
                    }
                    hunks.extend(first..=last);
                }
                None => hunks.push(number(part)?),
            }
        }
        hunks.sort_unstable();
        hunks.dedup();
        Ok(Self { path, hunks })
    }

    /// Whether it names hunk `number` (a whole-file address names every hunk).
    pub fn names(&self, number: usize) -> bool {
        self.is_whole_file() || self.hunks.contains(&number)
    }
}

impl FromStr for HunkAddress {
    type Err = EditError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

impl fmt::Display for HunkAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path)?;
        for (index, hunk) in self.hunks.iter().enumerate() {
            f.write_str(if index == 0 { "#" } else { "," })?;
            write!(f, "{hunk}")?;
        }
        Ok(())
    }
}

/// Which parts of a pending action land.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Selection {
    /// All of it.
    #[default]
    All,
    /// Only the named files and hunks; files not named are dropped.
    Only(Vec<HunkAddress>),
    /// All but the named files and hunks.
    Except(Vec<HunkAddress>),
}

impl Selection {
    /// `Only` of the parsed `addresses`.
    pub fn only<S: AsRef<str>>(addresses: &[S]) -> Result<Self, EditError> {
        parse_all(addresses).map(Self::Only)
    }

    /// `Except` of the parsed `addresses`.
    pub fn except<S: AsRef<str>>(addresses: &[S]) -> Result<Self, EditError> {
        parse_all(addresses).map(Self::Except)
    }

    /// Whether some address names hunks (not only whole files).
    pub fn names_hunks(&self) -> bool {
        match self {
            Self::All => false,
            Self::Only(addresses) | Self::Except(addresses) => {
                addresses.iter().any(|address| !address.is_whole_file())
            }
        }
    }
}

/// A reviewer's reason for leaving out a file or some of its hunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkRejection {
    /// What is left out.
    pub address: HunkAddress,
    /// Why.
    pub reason: String,
}

fn parse_all<S: AsRef<str>>(addresses: &[S]) -> Result<Vec<HunkAddress>, EditError> {
    addresses
        .iter()
        .map(|address| HunkAddress::parse(address.as_ref()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_name_a_file_or_its_hunks() {
        assert_eq!(
            HunkAddress::parse("src/a.rs").unwrap(),
            HunkAddress::file("src/a.rs")
        );
        assert_eq!(
            HunkAddress::parse("./src/a.rs#3,1,3").unwrap(),
            HunkAddress {
                path: "src/a.rs".into(),
                hunks: vec![1, 3]
            }
        );
        assert_eq!(HunkAddress::parse("a.rs#2-4").unwrap().hunks, [2, 3, 4]);
        assert_eq!(
            HunkAddress::parse("notes#draft.md").unwrap(),
            HunkAddress::file("notes#draft.md")
        );
        assert_eq!(
            HunkAddress::parse("src/a.rs#1,3").unwrap().to_string(),
            "src/a.rs#1,3"
        );
    }

    #[test]
    fn bad_addresses_are_refused_with_the_reason() {
        for (text, reason) in [
            ("a.rs#", "name hunks after `#`"),
            ("a.rs#0", "numbered from 1"),
            ("a.rs#3-1", "lower number to the higher"),
            ("a.rs#1,,2", "expected hunk numbers"),
            ("#2", "name the file"),
            ("./#2", "name the file"),
            ("a.rs#1-100001", "go up to 100000"),
            ("a.rs#99999999999999999999999", "go up to 100000"),
        ] {
            let error = HunkAddress::parse(text).unwrap_err().to_string();
            assert!(error.contains(reason), "{text}: {error}");
            assert!(error.contains(text), "{text}: {error}");
        }
    }

    #[test]
    fn a_selection_knows_whether_it_names_hunks() {
        assert!(!Selection::only(&["a.rs", "b.rs"]).unwrap().names_hunks());
        assert!(Selection::except(&["a.rs#2"]).unwrap().names_hunks());
        assert!(!Selection::All.names_hunks());
    }
}
