//! Plan files under `<root>/.resolve/plans/`: which paths name one, reading, writing and
//! listing them ([`PlanFiles`]), and finding the plan an `apply` submits ([`locate`]).
//!
//! Owned here: the accepted plan paths and the plan-file texts. Not owned: titles (`title`),
//! when a plan may be written (`write`) or approved (`approval`).

use std::path::{Component, Path, PathBuf};

use resolve_edit::{
    FileContent, PLANS_DIR, STATE_DIR, StateLayout, StoreError, normalize_lexically,
};

use super::PLAN_DIR;
use super::title::{normalize_plan_title, plan_file_for, plan_slug, resolve_plan_title};

/// `.resolve/plans/<name>`.
pub(super) fn display_path(name: &str) -> String {
    format!("{PLAN_DIR}/{name}")
}

/// Reading and writing plan files under `<root>/.resolve/plans/`.
#[derive(Debug, Clone)]
pub(super) struct PlanFiles {
    /// The canonical workspace root.
    root: PathBuf,
}

impl PlanFiles {
    /// The plan files of the workspace at `root` (canonical).
    pub(super) fn new(root: PathBuf) -> Self {
        Self { root }
    }

    fn dir(&self) -> PathBuf {
        StateLayout::under(&self.root).plans_dir()
    }

    /// The plan file name `path` designates, if it is an accepted plan path.
    pub(super) fn file_name(&self, path: &str) -> Option<String> {
        let given = Path::new(path);
        let normalized = normalize_lexically(given)?;
        let relative = if given.is_absolute() {
            normalized.strip_prefix(&self.root).ok()?.to_path_buf()
        } else {
            normalized
        };
        let parts: Vec<&str> = relative
            .components()
            .map(|component| match component {
                Component::Normal(name) => name.to_str(),
                Component::Prefix(_)
                | Component::RootDir
                | Component::CurDir
                | Component::ParentDir => None,
            })
            .collect::<Option<_>>()?;
        match parts.as_slice() {
            [state, plans, name]
                if *state == STATE_DIR
                    && *plans == PLANS_DIR
                    && name.len() > ".md".len()
                    && name.ends_with(".md")
                    && !name.starts_with('.') =>
            {
                Some((*name).to_owned())
            }
            _ => None,
        }
    }

    /// The plan directory, created if missing, checked to be where it should be (not a
    /// symlink leading elsewhere).
    fn checked_dir(&self, create: bool) -> Result<Option<PathBuf>, String> {
        let dir = self.dir();
        if create {
            resolve_edit::create_dir_all(&dir).map_err(|error| {
                let cause = match error {
                    StoreError::Io { source, .. } => source.to_string(),
                    other => other.to_string(),
                };
                format!("Could not create `{PLAN_DIR}`: {cause}.")
            })?;
        }
        match dir.canonicalize() {
            Ok(real) if real == dir => Ok(Some(dir)),
            Ok(real) => Err(format!(
                "`{PLAN_DIR}` leads to `{}`, outside the workspace's state directory; remove that link so plans stay in the workspace.",
                real.display()
            )),
            Err(_) if !create => Ok(None),
            Err(error) => Err(format!("Could not open `{PLAN_DIR}`: {error}.")),
        }
    }

    pub(super) fn write(&self, name: &str, content: &str) -> Result<(), String> {
        let Some(dir) = self.checked_dir(true)? else {
            return Err(format!("Could not create `{PLAN_DIR}`."));
        };
        resolve_edit::atomic_write(&dir.join(name), content.as_bytes())
            .map_err(|error| error.to_string())
    }

    /// The text of plan file `name`; `None` when it does not exist.
    fn read(&self, name: &str) -> Result<Option<String>, String> {
        let Some(dir) = self.checked_dir(false)? else {
            return Ok(None);
        };
        let path = dir.join(name);
        if path
            .canonicalize()
            .is_ok_and(|real| real.parent() != Some(dir.as_path()))
        {
            return Err(format!(
                "`{}` is a link leading out of `{PLAN_DIR}`; write the plan as a regular file.",
                display_path(name)
            ));
        }
        match resolve_edit::read_content(&path).map_err(|error| error.to_string())? {
            None => Ok(None),
            Some(FileContent::Text(text)) => Ok(Some(text)),
            Some(FileContent::Binary(_)) => Err(format!(
                "`{}` is not UTF-8 text; write the plan as Markdown text.",
                display_path(name)
            )),
        }
    }

    /// The most recently modified plan file, if any.
    fn newest(&self) -> Result<Option<String>, String> {
        let Some(dir) = self.checked_dir(false)? else {
            return Ok(None);
        };
        let entries = std::fs::read_dir(&dir)
            .map_err(|error| format!("Could not list `{PLAN_DIR}`: {error}."))?;
        let newest = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let metadata = entry.metadata().ok()?;
                let accepted =
                    name.ends_with(".md") && !name.starts_with('.') && metadata.is_file();
                accepted.then(|| (metadata.modified().ok(), name))
            })
            .max();
        Ok(newest.map(|(_, name)| name))
    }
}

/// The plan that `apply` found.
#[derive(Debug)]
pub(super) struct LocatedPlan {
    /// The plan file's name in the plan directory.
    pub(super) name: String,
    /// The plan's title.
    pub(super) title: String,
    /// The plan's text.
    pub(super) content: String,
}

/// Find the plan for an `apply` (see the `plan` module docs for the order).
pub(super) fn locate(
    files: &PlanFiles,
    supplied: Option<&str>,
    last_written: Option<&str>,
) -> Result<LocatedPlan, String> {
    let slug = supplied
        .map(|title| normalize_plan_title(title).map(|title| plan_slug(&title)))
        .transpose()
        .map_err(|error| error.to_string())?;
    let by_title = slug.as_deref().map(plan_file_for);
    let mut candidates: Vec<String> = by_title.iter().cloned().collect();
    candidates.extend(last_written.map(str::to_owned));
    for name in candidates.into_iter().chain(files.newest()?) {
        if let Some(content) = files.read(&name)? {
            let title =
                resolve_plan_title(slug.as_deref(), &content, &name).map_err(|e| e.to_string())?;
            return Ok(LocatedPlan {
                name,
                title,
                content,
            });
        }
    }
    let target = display_path(by_title.as_deref().or(last_written).unwrap_or("plan.md"));
    Err(format!(
        "Plan file not found at {target}. Write the finalized plan to {target} before requesting approval."
    ))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn files() -> (tempfile::TempDir, PlanFiles) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, PlanFiles { root })
    }

    #[test]
    fn plan_paths_are_accepted_relative_dotted_or_absolute_inside_the_root() {
        let (_dir, files) = files();
        let name = Some("words-counter-plan.md".to_owned());
        assert_eq!(
            files.file_name(".resolve/plans/words-counter-plan.md"),
            name
        );
        assert_eq!(
            files.file_name("./.resolve/plans/words-counter-plan.md"),
            name
        );
        assert_eq!(
            files.file_name("src/../.resolve/plans/words-counter-plan.md"),
            name
        );
        let absolute = files.root.join(".resolve/plans/words-counter-plan.md");
        assert_eq!(files.file_name(absolute.to_str().unwrap()), name);
    }

    #[test]
    fn the_plan_directory_is_the_state_layouts() {
        let (_dir, files) = files();
        assert_eq!(files.dir(), files.root.join(PLAN_DIR));
        assert_eq!(PLAN_DIR, format!("{STATE_DIR}/{PLANS_DIR}"));
    }

    #[test]
    fn other_paths_are_not_plan_paths() {
        let (_dir, files) = files();
        for path in [
            "a.txt",
            "plans/x.md",
            ".resolve/plans/x.txt",
            ".resolve/plans/.md",
            ".resolve/plans/.hidden.md",
            ".resolve/plans/sub/x.md",
            ".resolve/plans/../pending/1.json",
            ".resolve/plans/../../src/x.md",
            "../.resolve/plans/x.md",
            "/etc/.resolve/plans/x.md",
        ] {
            assert_eq!(files.file_name(path), None, "{path}");
        }
    }

    #[test]
    fn a_plan_is_found_by_title_then_last_written_then_newest() {
        let (_dir, files) = files();
        files.write("words-counter-plan.md", "# Words\n").unwrap();
        let found = locate(&files, Some("words-counter"), None).unwrap();
        assert_eq!(
            (found.name.as_str(), found.title.as_str()),
            ("words-counter-plan.md", "words-counter")
        );

        files.write("other-plan.md", "# Other Thing\n").unwrap();
        let found = locate(&files, Some("ghost"), Some("other-plan.md")).unwrap();
        assert_eq!(found.name, "other-plan.md");
        assert_eq!(found.title, "ghost", "the supplied title still names it");

        let found = locate(&files, None, None).unwrap();
        assert!(
            ["words-counter-plan.md", "other-plan.md"].contains(&found.name.as_str()),
            "{found:?}"
        );
        let found = locate(&files, None, Some("words-counter-plan.md")).unwrap();
        assert_eq!(found.title, "Words", "from the heading");
    }

    #[test]
    fn a_missing_plan_names_where_to_write_it() {
        let (_dir, files) = files();
        assert_eq!(
            locate(&files, Some("ghost"), None).unwrap_err(),
            "Plan file not found at .resolve/plans/ghost-plan.md. Write the finalized plan to .resolve/plans/ghost-plan.md before requesting approval."
        );
        assert_eq!(
            locate(&files, None, None).unwrap_err(),
            "Plan file not found at .resolve/plans/plan.md. Write the finalized plan to .resolve/plans/plan.md before requesting approval."
        );
        assert_eq!(
            locate(&files, Some("!!"), None).unwrap_err(),
            "Plan title must contain at least one letter, number, underscore, or hyphen after sanitization."
        );
    }

    #[test]
    fn a_plan_directory_linked_outside_the_workspace_is_refused() {
        let (_dir, files) = files();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(files.root.join(".resolve")).unwrap();
        std::os::unix::fs::symlink(outside.path(), files.root.join(PLAN_DIR)).unwrap();
        let error = files.write("x-plan.md", "# X\n").unwrap_err();
        assert!(error.contains("outside the workspace"), "{error}");
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
    }
}
