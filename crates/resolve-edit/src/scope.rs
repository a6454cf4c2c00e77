//! Which files a request covers. Each entry of `paths` is a file, a directory or a glob, relative
//! to the root and confined by [`Workspace::resolve`]. Directories and globs are walked with
//! `ignore` in parallel: `.gitignore` (also outside a git repository), `.ignore` and the
//! hidden-file rule apply, symlinks are not followed, and `.resolve/` is never entered. A file
//! named explicitly is always visited. Globs are anchored at the root, shell style: `*` stays
//! within one directory and `**` crosses directories.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{WalkBuilder, WalkState};

use crate::{EditError, Workspace};

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

/// The files, directories and globs of one request, resolved and confined.
#[derive(Debug)]
pub(crate) struct Scope {
    files: Vec<ScopedFile>,
    walks: Vec<Walk>,
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
        };
        for path in paths {
            let resolved = workspace.resolve(path)?;
            let metadata = std::fs::metadata(&resolved.absolute).ok();
            match metadata {
                Some(metadata) if metadata.is_dir() => scope.walks.push(Walk {
                    start: resolved.absolute,
                    glob: None,
                }),
                Some(_) => scope.files.push(ScopedFile {
                    relative: resolved.relative,
                    absolute: resolved.absolute,
                    explicit: true,
                }),
                None if is_glob(path) => scope.walks.push(glob_walk(workspace, path)?),
                None => {
                    return Err(EditError::NotFound { path: path.clone() });
                }
            }
        }
        Ok(scope)
    }

    /// Call `visit` once for every file of the scope: the explicit files first (on this
    /// thread), then the walked ones (in parallel). A file reached twice is visited once.
    pub(crate) fn visit<F>(&self, workspace: &Workspace, visit: F)
    where
        F: Fn(ScopedFile) + Sync,
    {
        // Only a scope of several parts can reach a file twice; one walk (the common case)
        // keeps no set of every path it visited.
        let overlapping = self.files.len() + self.walks.len() > 1;
        let seen = Mutex::new(HashSet::new());
        let first_time = |relative: &str| {
            !overlapping
                || seen
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(relative.to_owned())
        };
        for file in &self.files {
            if first_time(&file.relative) {
                visit(file.clone());
            }
        }
        for walk in &self.walks {
            let state_dir = workspace.state_dir();
            let mut builder = WalkBuilder::new(&walk.start);
            builder
                .hidden(true)
                .ignore(true)
                .git_ignore(true)
                .git_exclude(true)
                .git_global(true)
                .parents(true)
                .require_git(false)
                .follow_links(false)
                .threads(0)
                .filter_entry(move |entry| entry.path() != state_dir);
            builder.build_parallel().run(|| {
                Box::new(|entry| {
                    let Ok(entry) = entry else {
                        return WalkState::Continue;
                    };
                    if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                        return WalkState::Continue;
                    }
                    if let Some(glob) = &walk.glob
                        && !glob.matched(entry.path(), false).is_ignore()
                    {
                        return WalkState::Continue;
                    }
                    let Some(relative) = workspace.relative_name(entry.path()) else {
                        return WalkState::Continue;
                    };
                    if first_time(&relative) {
                        visit(ScopedFile {
                            relative,
                            absolute: entry.into_path(),
                            explicit: false,
                        });
                    }
                    WalkState::Continue
                })
            });
        }
    }
}

/// Whether `path` contains glob syntax.
fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '[', '{'])
}

/// A walk of the glob's literal prefix directory, keeping the files the glob matches.
fn glob_walk(workspace: &Workspace, path: &str) -> Result<Walk, EditError> {
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
        return Err(EditError::OutsideWorkspace {
            path: path.to_owned(),
            root: workspace.root().to_path_buf(),
        });
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
    Ok(Walk {
        start: start.absolute,
        glob: Some(glob),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        let workspace = Workspace::open(dir.path()).unwrap();
        (dir, workspace)
    }

    fn visited(workspace: &Workspace, paths: &[&str]) -> Vec<(String, bool)> {
        let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
        let scope = Scope::resolve(workspace, &paths).unwrap();
        let out = Mutex::new(Vec::new());
        scope.visit(workspace, |file| {
            out.lock().unwrap().push((file.relative, file.explicit));
        });
        let mut out = out.into_inner().unwrap();
        out.sort();
        out
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
    fn missing_paths_and_escaping_globs_are_errors() {
        let (_dir, ws) = tree(&["a.rs"]);
        let missing = Scope::resolve(&ws, &["nope.rs".to_owned()]).unwrap_err();
        assert!(matches!(missing, EditError::NotFound { .. }), "{missing}");
        let escape = Scope::resolve(&ws, &["../**/*.rs".to_owned()]).unwrap_err();
        assert!(
            matches!(escape, EditError::OutsideWorkspace { .. }),
            "{escape}"
        );
        let state = Scope::resolve(&ws, &[".resolve/**".to_owned()]).unwrap_err();
        assert!(matches!(state, EditError::StateDir { .. }), "{state}");
    }
}
