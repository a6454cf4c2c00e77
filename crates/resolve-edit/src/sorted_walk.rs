//! A walk of a directory tree in path order that keeps the `ignore` crate's rules but reads each
//! directory once. With [`WalkRules::ignore_files`] the rules are those of the crate's walker
//! with its standard filters: `.ignore`, `.gitignore` (also outside a repository), a
//! repository's `info/exclude`, git's global excludes file and the ignore files of every
//! directory above the start; with [`WalkRules::hidden`], a name starting with `.` is skipped
//! unless a rule keeps it. Where the crate's sorted walker asks the file system for `.git`,
//! `.ignore`, `.gitignore` and `.git/info/exclude` by name in every directory (four failed
//! lookups in a tree that has none), this walk finds them in the listing it reads anyway; the
//! crate still parses and matches the files. The tests check the walk against the crate's own
//! walker on generated trees.
//!
//! Entries come out depth first, a directory before its entries, each directory's entries
//! sorted by name, as the crate's sorted walker yields them; no symbolic link is followed, and
//! a directory that cannot be read is passed over. Memory holds the listings of the open
//! directories, not the tree. Both walks of the project use it: a request's scope (its files)
//! and a check's copy of the tree (every entry).

use std::ffi::{OsStr, OsString};
use std::fs::{self, FileType};
use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Which rules a walk keeps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WalkRules {
    /// Skip what ignore files and git's global excludes file ignore.
    pub(crate) ignore_files: bool,
    /// Skip names starting with `.` that no rule keeps.
    pub(crate) hidden: bool,
}

/// One entry a walk visits.
#[derive(Debug)]
pub(crate) struct WalkEntry {
    /// The start joined with the entry's names.
    pub(crate) path: PathBuf,
    /// Its type, not following a link.
    pub(crate) kind: FileType,
}

/// The entries under a directory, in path order, the rules applied.
pub(crate) struct SortedWalk<F> {
    /// The start, as given.
    start: PathBuf,
    rules: WalkRules,
    /// The directories being walked, the start first, each with the entries not yet visited.
    open: Vec<OpenDir>,
    /// The rules of the directories above the start, nearest first (only those that have some).
    above: Vec<DirRules>,
    /// The start with its links resolved, against which the rules above it match, when that
    /// is not the start as given.
    canonical_start: Option<PathBuf>,
    /// Git's global excludes file, matched relative to the current directory.
    global: Gitignore,
    /// Whether an entry (its path and name) may be visited at all.
    keep: F,
}

/// A directory being walked.
struct OpenDir {
    path: PathBuf,
    /// Its own ignore files, when it has any.
    rules: Option<DirRules>,
    /// Its entries not yet visited, in name order.
    entries: std::vec::IntoIter<(OsString, FileType)>,
}

/// The ignore files of one directory, each a matcher rooted at the directory.
struct DirRules {
    /// `.ignore`.
    ignore: Gitignore,
    /// `.gitignore`.
    git_ignore: Gitignore,
    /// The repository's `info/exclude`, for a directory holding `.git`.
    git_exclude: Gitignore,
}

impl<F: FnMut(&Path, &OsStr) -> bool> SortedWalk<F> {
    /// A walk of `start` (a directory) under `rules`, visiting only entries for which `keep`
    /// holds (a directory it refuses is not entered).
    pub(crate) fn new(start: &Path, rules: WalkRules, keep: F) -> Self {
        let canonical_start = start.canonicalize().ok();
        let mut above = Vec::new();
        let mut global = Gitignore::empty();
        if rules.ignore_files {
            above = canonical_start
                .iter()
                .flat_map(|start| start.ancestors().skip(1))
                .filter_map(DirRules::probed)
                .collect();
            if let Ok(current) = std::env::current_dir() {
                global = GitignoreBuilder::new(current).build_global().0;
            }
        }
        Self {
            start: start.to_path_buf(),
            rules,
            open: OpenDir::read(start.to_path_buf(), rules)
                .into_iter()
                .collect(),
            above,
            canonical_start: canonical_start.filter(|canonical| canonical != start),
            global,
            keep,
        }
    }

    /// Whether the ignore rules skip `path` (named `name`), an entry of the innermost open
    /// directory. The first match decides within each kind of file, the nearest directory
    /// first; `.ignore` outranks `.gitignore`, which outranks `info/exclude`, which outranks
    /// the global file; with no match at all, a hidden name is skipped (when the walk skips
    /// hidden names).
    fn ignored(&self, path: &Path, name: &OsStr, is_dir: bool) -> bool {
        let mut found = [Match::None, Match::None, Match::None];
        for rules in self.open.iter().rev().filter_map(|dir| dir.rules.as_ref()) {
            rules.match_into(path, is_dir, &mut found);
        }
        if !self.above.is_empty() {
            let real = self
                .canonical_start
                .as_ref()
                .map(|canonical| canonical.join(path.strip_prefix(&self.start).unwrap_or(path)));
            for rules in &self.above {
                rules.match_into(real.as_deref().unwrap_or(path), is_dir, &mut found);
            }
        }
        let [ignore, git_ignore, git_exclude] = found;
        match ignore
            .or(git_ignore)
            .or(git_exclude)
            .or(self.global.matched(path, is_dir))
        {
            Match::Ignore(_) => true,
            Match::Whitelist(_) => false,
            Match::None => self.rules.hidden && name.as_encoded_bytes().starts_with(b"."),
        }
    }
}

impl<F: FnMut(&Path, &OsStr) -> bool> Iterator for SortedWalk<F> {
    type Item = WalkEntry;

    fn next(&mut self) -> Option<WalkEntry> {
        loop {
            let dir = self.open.last_mut()?;
            let Some((name, kind)) = dir.entries.next() else {
                self.open.pop();
                continue;
            };
            let path = dir.path.join(&name);
            if !(self.keep)(&path, &name) || self.ignored(&path, &name, kind.is_dir()) {
                continue;
            }
            if kind.is_dir()
                && let Some(dir) = OpenDir::read(path.clone(), self.rules)
            {
                self.open.push(dir);
            }
            return Some(WalkEntry { path, kind });
        }
    }
}

impl OpenDir {
    /// The directory at `path` with its entries sorted by name and, under `rules`, its ignore
    /// files read; `None` when it cannot be listed.
    fn read(path: PathBuf, rules: WalkRules) -> Option<Self> {
        let mut entries: Vec<(OsString, FileType)> = fs::read_dir(&path)
            .ok()?
            .filter_map(|entry| {
                let entry = entry.ok()?;
                Some((entry.file_name(), entry.file_type().ok()?))
            })
            .collect();
        entries.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
        let listed = |name: &str| entries.iter().any(|(entry, _)| entry == name);
        let rules = rules.ignore_files.then(|| {
            DirRules::read(
                &path,
                listed(".ignore"),
                listed(".gitignore"),
                listed(".git"),
            )
        });
        Some(Self {
            path,
            rules: rules.flatten(),
            entries: entries.into_iter(),
        })
    }
}

impl DirRules {
    /// The rules of `dir`, a directory above the start, asked for by name (a few directories).
    fn probed(dir: &Path) -> Option<Self> {
        let exists = |name: &str| dir.join(name).exists();
        Self::read(dir, exists(".ignore"), exists(".gitignore"), exists(".git"))
    }

    /// The rules of `dir` given which of its ignore files (and `.git`) it has; `None` when it
    /// has none.
    fn read(dir: &Path, has_ignore: bool, has_git_ignore: bool, has_git: bool) -> Option<Self> {
        if !(has_ignore || has_git_ignore || has_git) {
            return None;
        }
        let rules_in =
            |file: Option<PathBuf>| file.map_or_else(Gitignore::empty, |file| matcher(dir, &file));
        let exclude = has_git
            .then(|| git_common_dir(dir))
            .flatten()
            .map(|common| common.join("info/exclude"));
        Some(Self {
            ignore: rules_in(has_ignore.then(|| dir.join(".ignore"))),
            git_ignore: rules_in(has_git_ignore.then(|| dir.join(".gitignore"))),
            git_exclude: rules_in(exclude),
        })
    }

    /// Fill each still undecided slot of `found` (`.ignore`, `.gitignore`, `info/exclude`)
    /// with this directory's match for `path`.
    fn match_into<'a>(
        &'a self,
        path: &Path,
        is_dir: bool,
        found: &mut [Match<&'a ignore::gitignore::Glob>; 3],
    ) {
        for (slot, matcher) in
            found
                .iter_mut()
                .zip([&self.ignore, &self.git_ignore, &self.git_exclude])
        {
            if slot.is_none() {
                *slot = matcher.matched(path, is_dir);
            }
        }
    }
}

/// The rules of the ignore file `file`, rooted at `root`. A file that cannot be read, or a line
/// that is no valid glob, adds nothing, as in the crate's own walker.
fn matcher(root: &Path, file: &Path) -> Gitignore {
    let mut builder = GitignoreBuilder::new(root);
    let _unreadable = builder.add(file);
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// The directory holding `dir`'s repository's `info/exclude`: `dir/.git`, or for a worktree
/// (where `.git` is a file `gitdir: <path>`) the common directory that path's `commondir` names.
/// `None` for a `.git` file that names no readable common directory.
fn git_common_dir(dir: &Path) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    if !fs::metadata(&dot_git).is_ok_and(|metadata| metadata.is_file()) {
        return Some(dot_git);
    }
    let first_line = |path: &Path| -> Option<String> {
        let text = fs::read_to_string(path).ok()?;
        text.lines().next().map(str::to_owned)
    };
    let git_dir = PathBuf::from(first_line(&dot_git)?.strip_prefix("gitdir: ")?);
    let common = first_line(&git_dir.join("commondir"))?;
    Some(if common.starts_with('.') {
        git_dir.join(common)
    } else {
        PathBuf::from(common)
    })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use ignore::WalkBuilder;

    use super::{SortedWalk, WalkRules};

    /// What a walk visits: each entry's path and whether it is a file, a directory or a link.
    type Visited = Vec<(PathBuf, &'static str)>;

    fn kind_of(kind: std::fs::FileType) -> &'static str {
        if kind.is_dir() {
            "dir"
        } else if kind.is_symlink() {
            "link"
        } else {
            "file"
        }
    }

    /// The `ignore` crate's sorted walker with its standard filters or none, hidden names as
    /// `rules` say, links not followed: the oracle (the walker both walks used before).
    fn crate_walk(start: &Path, rules: WalkRules, state_dir: &Path) -> Visited {
        let state_dir = state_dir.to_path_buf();
        let mut builder = WalkBuilder::new(start);
        builder
            .standard_filters(rules.ignore_files)
            .hidden(rules.hidden)
            .require_git(false)
            .follow_links(false)
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(move |entry| {
                entry.path() != state_dir && !entry.file_name().eq_ignore_ascii_case(".git")
            });
        builder
            .build()
            .filter_map(Result::ok)
            .filter(|entry| entry.depth() > 0)
            .map(|entry| {
                (
                    entry.path().to_path_buf(),
                    kind_of(entry.file_type().unwrap()),
                )
            })
            .collect()
    }

    fn sorted_walk(start: &Path, rules: WalkRules, state_dir: &Path) -> Visited {
        SortedWalk::new(start, rules, |path: &Path, name: &std::ffi::OsStr| {
            path != state_dir && !name.eq_ignore_ascii_case(".git")
        })
        .map(|entry| (entry.path, kind_of(entry.kind)))
        .collect()
    }

    /// The three ways the project walks: a scope (ignore files, hidden names skipped) and a
    /// check's copy of the tree (hidden names kept, ignored paths skipped or not).
    const ALL_RULES: [WalkRules; 3] = [
        WalkRules {
            ignore_files: true,
            hidden: true,
        },
        WalkRules {
            ignore_files: true,
            hidden: false,
        },
        WalkRules {
            ignore_files: false,
            hidden: false,
        },
    ];

    /// A small deterministic generator (xorshift), so each case can be replayed by its seed.
    struct Picks(u64);

    impl Picks {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
        fn chance(&mut self, percent: usize) -> bool {
            self.below(100) < percent
        }
        fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
            from[self.below(from.len())]
        }
    }

    const DIRS: &[&str] = &["a", "b", "src", "target", "build", ".hidden", "deep", "B"];
    const FILES: &[&str] = &[
        "main.rs",
        "lib.rs",
        "x.log",
        "keep.log",
        "notes.txt",
        ".env",
        "a.tmp",
        "b",
        "Z.rs",
    ];
    const RULES: &[&str] = &[
        "*.log",
        "!keep.log",
        "target/",
        "/build",
        "b",
        "**/lib.rs",
        "!.env",
        "!.hidden",
        ".hidden",
        "!/a",
        "src/*.txt",
        "# a comment",
        "",
        "*.tmp",
        "!b/",
        "a/**/main.rs",
        "deep",
        "!deep/",
        "[",
        "*",
        "!*.rs",
        "Z.*",
    ];

    fn rules(picks: &mut Picks) -> String {
        (0..1 + picks.below(4))
            .map(|_| format!("{}\n", picks.pick(RULES)))
            .collect()
    }

    /// A tree under `dir`, `depth` levels more at most.
    fn grow(picks: &mut Picks, dir: &Path, depth: usize) {
        std::fs::create_dir_all(dir).unwrap();
        for _ in 0..picks.below(4) {
            std::fs::write(dir.join(picks.pick(FILES)), "x").unwrap();
        }
        for name in [".gitignore", ".ignore"] {
            if picks.chance(25) {
                std::fs::write(dir.join(name), rules(picks)).unwrap();
            }
        }
        if picks.chance(10) {
            let info = dir.join(".git/info");
            std::fs::create_dir_all(&info).unwrap();
            std::fs::write(info.join("exclude"), rules(picks)).unwrap();
        }
        if picks.chance(10) {
            std::os::unix::fs::symlink(dir.join("missing"), dir.join("link")).unwrap();
        }
        if picks.chance(10) {
            let _taken = std::os::unix::fs::symlink(dir, dir.join("loop"));
        }
        if depth > 0 {
            for _ in 0..picks.below(3) {
                let child = dir.join(picks.pick(DIRS));
                if !child.exists() {
                    grow(picks, &child, depth - 1);
                }
            }
        }
    }

    #[test]
    fn the_walk_yields_what_the_ignore_crates_sorted_walker_yields() {
        let mut compared = 0;
        for seed in 1..=400_u64 {
            let mut picks = Picks(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let temp = tempfile::tempdir().unwrap();
            let outer = temp.path().join("outer");
            std::fs::create_dir(&outer).unwrap();
            // Rules above the start (`parents`), a worktree's `.git` file naming a common
            // directory, and a walk that starts below the repository's root.
            if picks.chance(30) {
                std::fs::write(outer.join(".gitignore"), rules(&mut picks)).unwrap();
            }
            let repo = outer.join("repo");
            grow(&mut picks, &repo, 3);
            if picks.chance(15) && !repo.join(".git").exists() {
                let common = outer.join("common");
                let git_dir = common.join("worktrees/w");
                std::fs::create_dir_all(common.join("info")).unwrap();
                std::fs::create_dir_all(&git_dir).unwrap();
                std::fs::write(common.join("info/exclude"), rules(&mut picks)).unwrap();
                std::fs::write(git_dir.join("commondir"), "../..\n").unwrap();
                std::fs::write(
                    repo.join(".git"),
                    format!("gitdir: {}\n", git_dir.display()),
                )
                .unwrap();
            }
            std::fs::create_dir_all(repo.join(".resolve")).unwrap();
            std::fs::write(repo.join(".resolve/state.rs"), "x").unwrap();
            let start = match std::fs::read_dir(&repo)
                .unwrap()
                .filter_map(Result::ok)
                .find(|entry| entry.file_type().unwrap().is_dir() && entry.file_name() != ".git")
            {
                Some(child) if picks.chance(30) => child.path(),
                _ => repo.clone(),
            };
            let state_dir = repo.join(".resolve");
            for rules in ALL_RULES {
                let expected = crate_walk(&start, rules, &state_dir);
                assert_eq!(
                    sorted_walk(&start, rules, &state_dir),
                    expected,
                    "seed {seed}, walking {} with {rules:?}",
                    start.display()
                );
                compared += expected.len();
            }
        }
        // The generated trees are not all ignored away.
        assert!(compared > 2000, "only {compared} entries walked in all");
    }

    #[test]
    fn a_start_inside_a_linked_directory_matches_the_rules_above_its_real_place() {
        let temp = tempfile::tempdir().unwrap();
        let real = temp.path().join("real");
        std::fs::create_dir_all(real.join("inner")).unwrap();
        std::fs::write(real.join(".gitignore"), "/inner/skip.rs\n").unwrap();
        std::fs::write(real.join("inner/skip.rs"), "x").unwrap();
        std::fs::write(real.join("inner/keep.rs"), "x").unwrap();
        std::os::unix::fs::symlink(&real, temp.path().join("alias")).unwrap();
        let start = temp.path().join("alias/inner");
        let state_dir = temp.path().join(".resolve");
        let walked = sorted_walk(&start, ALL_RULES[0], &state_dir);
        assert_eq!(walked, vec![(start.join("keep.rs"), "file")]);
        assert_eq!(walked, crate_walk(&start, ALL_RULES[0], &state_dir));
    }
}
