//! Which files a request covers, in path order. Each entry of `paths` is a file, a directory or
//! a glob, relative to the root and confined by [`Workspace::resolve`]. Directories and globs
//! are walked by [`SortedWalk`], each directory's entries sorted by name: the ignore files
//! (`.gitignore` also outside a git repository, `.ignore`, git's excludes) and the hidden-file
//! rule apply, symlinks are not followed, and `.resolve/` and `.git/` (any case) are never
//! entered. A file named explicitly is always included. Globs are anchored at the root, shell
//! style: `*` stays within one directory and `**` crosses directories.
//!
//! The parts are merged into one sequence in [`path_order`], which is the order a sorted walk
//! yields, so a file reached by two parts is met twice in a row and given once: the scope
//! keeps no set of the paths it has seen, and the files come out one at a time as the walks go.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use resolve_store::{StoreError, Workspace, path_order};

use crate::error::EditError;
use crate::sorted_walk::{SortedWalk, WalkRules};
use crate::text_file::{read_bytes, read_bytes_into, read_listed_bytes, read_listed_bytes_into};

/// One file of a scope.
#[derive(Debug, Clone)]
pub(crate) struct ScopedFile {
    /// Root-relative, `/`-separated.
    pub relative: String,
    /// Absolute (through the canonical root).
    pub absolute: PathBuf,
    /// Named explicitly in `paths` (not found by a walk).
    pub explicit: bool,
}

impl ScopedFile {
    /// Its bytes. A walked file was listed as a regular file, so only the opened file is
    /// looked at; a named one is looked at before it is opened too.
    pub(crate) fn read(&self) -> Result<Vec<u8>, EditError> {
        if self.explicit {
            read_bytes(&self.absolute)
        } else {
            read_listed_bytes(&self.absolute)
        }
    }

    /// [`ScopedFile::read`] into `room`, a buffer kept between reads: the bytes are the slice
    /// given.
    pub(crate) fn read_into<'r>(&self, room: &'r mut Vec<u8>) -> Result<&'r [u8], EditError> {
        if self.explicit {
            read_bytes_into(&self.absolute, room)
        } else {
            read_listed_bytes_into(&self.absolute, room)
        }
    }
}

/// The files, directories and globs of one request, resolved and confined.
#[derive(Debug)]
pub(crate) struct Scope {
    files: Vec<ScopedFile>,
    walks: Vec<Walk>,
    /// Each entry of `paths` relative to the root (`.` for the root itself), in request order.
    shown: Vec<String>,
}

#[derive(Debug)]
struct Walk {
    start: PathBuf,
    glob: Option<Gitignore>,
}

impl Scope {
    /// Resolve every entry of `paths`; a missing path or one outside the root is an error.
    pub(crate) fn resolve(workspace: &Workspace, paths: &[String]) -> Result<Self, EditError> {
        let mut scope = Self {
            files: Vec::new(),
            walks: Vec::new(),
            shown: Vec::new(),
        };
        for path in paths {
            let resolved = workspace.resolve(path)?;
            let metadata = std::fs::metadata(&resolved.absolute).ok();
            match metadata {
                Some(metadata) if metadata.is_dir() => {
                    scope.shown.push(resolved.relative);
                    scope.walks.push(Walk {
                        start: resolved.absolute,
                        glob: None,
                    });
                }
                Some(_) => {
                    scope.shown.push(resolved.relative.clone());
                    scope.files.push(ScopedFile {
                        relative: resolved.relative,
                        absolute: resolved.absolute,
                        explicit: true,
                    });
                }
                None if is_glob(path) => {
                    let (walk, shown) = glob_walk(workspace, path)?;
                    scope.shown.push(shown);
                    scope.walks.push(walk);
                }
                None => {
                    return Err(EditError::NotFound { path: path.clone() });
                }
            }
        }
        Ok(scope)
    }

    /// The scope as a person reads it: each entry of `paths` relative to the root (`.` for the
    /// root, a glob anchored at the root), joined with `, ` (`src, tests/**/*.rs`).
    pub(crate) fn display(&self) -> String {
        self.shown.join(", ")
    }

    /// Every file of the scope once, in [`path_order`]; a file both named and walked to counts
    /// as named.
    pub(crate) fn files<'a>(
        &'a self,
        workspace: &'a Workspace,
    ) -> impl Iterator<Item = ScopedFile> + 'a {
        let mut named = self.files.clone();
        named.sort_by(|a, b| path_order(&a.relative, &b.relative));
        named.dedup_by(|later, earlier| later.relative == earlier.relative);
        let mut parts: Vec<Part<'a>> = vec![Box::new(named.into_iter())];
        parts.extend(
            self.walks
                .iter()
                .map(|walk| Box::new(walk.files(workspace)) as Part<'a>),
        );
        let heads = parts.iter_mut().map(Iterator::next).collect();
        Merged { heads, parts }
    }
}

/// The files of one part of a scope, in path order.
type Part<'a> = Box<dyn Iterator<Item = ScopedFile> + 'a>;

/// The parts of a scope merged into one sequence in path order, each file once.
struct Merged<'a> {
    /// The next file of each part.
    heads: Vec<Option<ScopedFile>>,
    parts: Vec<Part<'a>>,
}

impl Iterator for Merged<'_> {
    type Item = ScopedFile;

    fn next(&mut self) -> Option<ScopedFile> {
        // The first in path order; on a tie (`min_by` keeps the first) the earlier part, so a
        // named file wins.
        let first = self
            .heads
            .iter()
            .enumerate()
            .filter_map(|(index, head)| Some((index, head.as_ref()?)))
            .min_by(|(_, a), (_, b)| path_order(&a.relative, &b.relative))
            .map(|(index, _)| index)?;
        let file = std::mem::replace(&mut self.heads[first], self.parts[first].next())?;
        // The same file reached by another part is that part's next one.
        for (head, part) in self.heads.iter_mut().zip(&mut self.parts) {
            if head
                .as_ref()
                .is_some_and(|other| other.relative == file.relative)
            {
                *head = part.next();
            }
        }
        Some(file)
    }
}

impl Walk {
    /// The files this walk reaches, in path order.
    fn files<'a>(&'a self, workspace: &'a Workspace) -> impl Iterator<Item = ScopedFile> + 'a {
        let state_dir = workspace.state_dir();
        // Neither resolve's state nor git's is ever walked (the names compared as a
        // case-folding file system would).
        let keep = move |path: &Path, name: &OsStr| {
            path != state_dir && !name.eq_ignore_ascii_case(".git")
        };
        let rules = WalkRules {
            ignore_files: true,
            hidden: true,
        };
        SortedWalk::new(&self.start, rules, keep).filter_map(move |entry| {
            if !entry.kind.is_file() {
                return None;
            }
            if let Some(glob) = &self.glob
                && !glob.matched(&entry.path, false).is_ignore()
            {
                return None;
            }
            let relative = workspace.relative_name(&entry.path)?;
            Some(ScopedFile {
                relative,
                absolute: entry.path,
                explicit: false,
            })
        })
    }
}

/// Whether `path` contains glob syntax.
fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '[', '{'])
}

/// A walk of the glob's literal prefix directory, keeping the files the glob matches, and the
/// glob relative to the root.
fn glob_walk(workspace: &Workspace, path: &str) -> Result<(Walk, String), EditError> {
    let components: Vec<&str> = path.split('/').collect();
    let first_glob = components
        .iter()
        .position(|component| is_glob(component))
        .unwrap_or(components.len());
    let mut prefix = components[..first_glob].join("/");
    if prefix.is_empty() {
        prefix = if path.starts_with('/') { "/" } else { "." }.to_owned();
    }
    let rest: Vec<&str> = components[first_glob..]
        .iter()
        .copied()
        .filter(|component| !component.is_empty() && *component != ".")
        .collect();
    if rest.contains(&"..") {
        return Err(StoreError::OutsideWorkspace {
            path: path.to_owned(),
            root: workspace.root().to_path_buf(),
        }
        .into());
    }
    let start = workspace.resolve(&prefix)?;
    if !start.absolute.is_dir() {
        return Err(EditError::NotFound {
            path: path.to_owned(),
        });
    }
    let anchored = if start.relative == "." {
        format!("/{}", rest.join("/"))
    } else {
        format!("/{}/{}", start.relative, rest.join("/"))
    };
    let invalid = |error: ignore::Error| EditError::InvalidGlob {
        glob: path.to_owned(),
        reason: error.to_string(),
    };
    let mut builder = GitignoreBuilder::new(workspace.root());
    builder.add_line(None, &anchored).map_err(invalid)?;
    let glob = builder.build().map_err(invalid)?;
    let shown = anchored.trim_start_matches('/').to_owned();
    Ok((
        Walk {
            start: start.absolute,
            glob: Some(glob),
        },
        shown,
    ))
}

#[cfg(test)]
mod tests {
    use resolve_test_support::TestDir;

    use super::*;
    use crate::test_support::workspace_holding;

    /// A temporary workspace holding `files`, each with the content `x`.
    fn tree(files: &[&str]) -> (TestDir, Workspace) {
        let holding: Vec<(&str, &[u8])> =
            files.iter().map(|file| (*file, b"x".as_slice())).collect();
        workspace_holding(&holding)
    }

    fn visited(workspace: &Workspace, paths: &[&str]) -> Vec<(String, bool)> {
        let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
        let scope = Scope::resolve(workspace, &paths).unwrap();
        scope
            .files(workspace)
            .map(|file| (file.relative, file.explicit))
            .collect()
    }

    #[test]
    fn a_directory_walk_honors_gitignore_without_git_and_skips_hidden_and_state() {
        let (dir, ws) = tree(&[
            "src/a.rs",
            "target/gen.rs",
            ".hidden/h.rs",
            ".resolve/pending/p.rs",
            "ignored.rs",
        ]);
        std::fs::write(dir.path().join(".gitignore"), "target/\nignored.rs\n").unwrap();
        assert_eq!(visited(&ws, &["."]), vec![("src/a.rs".to_owned(), false)]);
    }

    #[test]
    fn globs_are_anchored_at_the_root_shell_style() {
        let (_dir, ws) = tree(&["a.ts", "src/b.ts", "src/deep/c.ts", "src/d.js"]);
        assert_eq!(visited(&ws, &["*.ts"]), vec![("a.ts".to_owned(), false)]);
        assert_eq!(
            visited(&ws, &["src/**/*.ts"]),
            vec![
                ("src/b.ts".to_owned(), false),
                ("src/deep/c.ts".to_owned(), false)
            ]
        );
    }

    #[test]
    fn explicit_files_are_visited_even_when_ignored_and_only_once() {
        let (dir, ws) = tree(&["gen/out.rs"]);
        std::fs::write(dir.path().join(".gitignore"), "gen/\n").unwrap();
        assert_eq!(
            visited(&ws, &["gen/out.rs", "./gen/out.rs", "."]),
            vec![("gen/out.rs".to_owned(), true)]
        );
    }

    #[test]
    fn parts_are_merged_in_path_order_each_file_once() {
        let (_dir, ws) = tree(&["a.rs", "a/b.rs", "a-c.rs", "z/y.rs", "z/x.rs", "m.rs"]);
        assert_eq!(
            visited(&ws, &["z", "m.rs", ".", "a/b.rs"]),
            vec![
                ("a/b.rs".to_owned(), true),
                ("a-c.rs".to_owned(), false),
                ("a.rs".to_owned(), false),
                ("m.rs".to_owned(), true),
                ("z/x.rs".to_owned(), false),
                ("z/y.rs".to_owned(), false),
            ]
        );
    }

    #[test]
    fn missing_paths_and_escaping_globs_are_errors() {
        let (_dir, ws) = tree(&["a.rs"]);
        let missing = Scope::resolve(&ws, &["nope.rs".to_owned()]).unwrap_err();
        assert!(matches!(missing, EditError::NotFound { .. }), "{missing}");
        let escape = Scope::resolve(&ws, &["../**/*.rs".to_owned()]).unwrap_err();
        assert!(
            matches!(
                escape,
                EditError::Store(StoreError::OutsideWorkspace { .. })
            ),
            "{escape}"
        );
        let state = Scope::resolve(&ws, &[".resolve/**".to_owned()]).unwrap_err();
        assert!(
            matches!(state, EditError::Store(StoreError::StateDir { .. })),
            "{state}"
        );
    }
}
