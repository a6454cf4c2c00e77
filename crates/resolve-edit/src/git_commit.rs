//! A commit per apply (`resolve apply --commit`, `commit = true`): after an apply landed, one
//! git commit holding exactly the action's files, built through the `git` binary from a
//! temporary index so the person's own index (what they staged) is neither committed nor lost.
//!
//! Owned here: the plumbing (`read-tree`, `update-index`, `write-tree`, the `pre-commit` and
//! `commit-msg` hooks, `commit-tree`, a compare-and-swap `update-ref`, and refreshing the real
//! index for committed paths nothing was staged for) and the commit message. Not owned: when a
//! commit is asked for (the store carries the request, [`crate::approval::land`] makes it) nor
//! where the outcome is recorded (the history, through the store).
//!
//! The `git` binary, not a library: hooks, `core.hooksPath`, filters and identity behave
//! exactly as the person's own git, and no heavy dependency is added.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use resolve_store::{
    CommitFact, Content, HistoryRecord, Store, atomic_write, default_decider, read_regular_file,
};

/// Why no commit was made, as the person and the model read it.
type Why = String;

/// Commit the files `record` applied (through `store`) in the git repository around its root,
/// with what was left out named in the message. Never fails the apply: any reason
/// not to commit comes back as [`CommitFact::NotCommitted`].
pub fn commit_applied(store: &Store, record: &HistoryRecord) -> CommitFact {
    let mut attempt = 1;
    loop {
        match commit(store, record) {
            Ok(commit) => return CommitFact::Committed { commit },
            // Another commit landed between reading HEAD and moving it: start again from it.
            Err(reason) if reason.starts_with(HEAD_MOVED) && attempt < ATTEMPTS => attempt += 1,
            Err(reason) => return CommitFact::NotCommitted { reason },
        }
    }
}

/// How many times a commit is built when `HEAD` keeps moving under it.
const ATTEMPTS: usize = 3;

/// The start of the reason when `HEAD` moved while the commit was built.
const HEAD_MOVED: &str = "HEAD moved while the commit was made";

/// The message of the commit for `record`: the label as subject, the reason as body, what was
/// left out, and the `Resolve-*` trailers.
pub fn commit_message(record: &HistoryRecord) -> String {
    message_with(record, &[])
}

/// [`commit_message`], naming the applied files left out of the commit because git ignores
/// them.
fn message_with(record: &HistoryRecord, ignored: &[String]) -> String {
    let mut message = format!(
        "{}\n\n{}\n",
        one_line(&record.action.label),
        record.reason.trim()
    );
    let left_out = not_taken(record);
    if !left_out.is_empty() {
        message.push_str("\nNot taken:\n");
        message.push_str(&left_out.join("\n"));
        message.push('\n');
    }
    if !ignored.is_empty() {
        message.push_str("\nApplied but not committed (git ignores them):\n");
        for path in ignored {
            message.push_str(&format!("- {path}\n"));
        }
    }
    let decided_by = record
        .decided_by
        .unwrap_or_else(|| default_decider(record.resolved_by.as_ref()));
    let decided_by = serde_json::to_value(decided_by)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default();
    message.push_str(&format!(
        "\nResolve-Id: {}\nResolve-Origin: {}\nResolve-Decided-By: {decided_by}\n",
        record.action.id, record.action.origin
    ));
    message
}

/// The line saying what came of the commit asked for after an apply (`Committed 1a2b3c4.`,
/// `Not committed: <why>.`); `None` when none was asked for.
pub fn commit_line(record: &HistoryRecord) -> Option<String> {
    if let Some(commit) = &record.commit {
        return Some(format!("Committed {}.", short_id(commit)));
    }
    record
        .not_committed
        .as_ref()
        .map(|why| format!("Not committed: {}.", why.trim_end_matches('.')))
}

/// The first seven characters of a commit id, as `git log --oneline` shows it.
pub fn short_id(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}

/// One line per hunk and file of `record` that did not land, with the reason given.
fn not_taken(record: &HistoryRecord) -> Vec<String> {
    let mut lines = Vec::new();
    let review = record.review.clone().unwrap_or_default();
    for file in &review.hunks {
        for hunk in &file.rejected {
            let reason = hunk.reason.as_deref().map_or("left out".into(), one_line);
            lines.push(format!("- {}: {reason}", file.address(hunk.hunk)));
        }
    }
    for path in &record.dropped_files {
        let reason = review
            .rejected_files
            .iter()
            .find(|file| &file.path == path)
            .map_or("left out".into(), |file| one_line(&file.reason));
        lines.push(format!("- {path}: {reason}"));
    }
    lines
}

/// `text` on one line, its runs of white space made single spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The repository around `root`: its top directory and the prefix of `root` inside it.
struct Repository {
    top: PathBuf,
    prefix: String,
}

/// Make the commit of [`commit_applied`]: its id, or why there is none.
fn commit(store: &Store, record: &HistoryRecord) -> Result<String, Why> {
    let root = store.workspace().root();
    if record.applied_files.is_empty() {
        return Err("the apply wrote no file".to_owned());
    }
    let repository = repository(root)?;
    let paths: Vec<String> = record
        .applied_files
        .iter()
        .map(|path| format!("{}{path}", repository.prefix))
        .collect();
    let old_head = text_of(&git(
        &repository.top,
        None,
        &["rev-parse", "--verify", "-q", "HEAD^{commit}"],
        None,
    )?)
    .filter(|head| !head.is_empty());
    let scratch = tempfile::Builder::new()
        .prefix("resolve-commit-")
        .tempdir()
        .map_err(|error| format!("no temporary directory for the commit's index ({error})"))?;
    let index = scratch.path().join("index");
    let temp = Some(index.as_path());
    let seed = match &old_head {
        Some(head) => vec!["read-tree", head.as_str()],
        None => vec!["read-tree", "--empty"],
    };
    succeed(&repository.top, temp, &seed, None, "git read-tree")?;
    let git_dir = Git {
        top: &repository.top,
        scratch: scratch.path(),
    };
    let mut ignored = Vec::new();
    for (path, in_repo) in record.applied_files.iter().zip(&paths) {
        if !git_dir.stage(store, record, path, in_repo, old_head.as_deref(), &index)? {
            ignored.push(path.clone());
        }
    }
    let tree = succeed(
        &repository.top,
        temp,
        &["write-tree"],
        None,
        "git write-tree",
    )?;
    if let Some(head) = &old_head {
        let head_tree = succeed(
            &repository.top,
            None,
            &["rev-parse", &format!("{head}^{{tree}}")],
            None,
            "git rev-parse",
        )?;
        if head_tree == tree {
            return Err(if ignored.len() == record.applied_files.len() {
                "git ignores the applied files (`.gitignore`); there is nothing to commit"
            } else {
                "the applied files hold what HEAD already has; there is nothing to commit"
            }
            .to_owned());
        }
    }
    hook(&repository.top, temp, "pre-commit", &[])?;
    let message_file = scratch.path().join("COMMIT_EDITMSG");
    atomic_write(&message_file, message_with(record, &ignored).as_bytes())
        .map_err(|error| format!("the commit message could not be written ({error})"))?;
    let message_arg = message_file.to_string_lossy().into_owned();
    hook(&repository.top, temp, "commit-msg", &[message_arg.as_str()])?;
    let message = read_regular_file(&message_file)
        .ok()
        .flatten()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_else(|| message_with(record, &ignored));
    let mut commit_tree = vec!["commit-tree", tree.as_str()];
    if let Some(head) = &old_head {
        commit_tree.extend(["-p", head.as_str()]);
    }
    let output = git(
        &repository.top,
        None,
        &commit_tree,
        Some(message.as_bytes()),
    )?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("ident") || stderr.contains("user.email") || stderr.contains("user.name")
        {
            let fatal = stderr
                .lines()
                .rev()
                .find(|line| line.starts_with("fatal:"))
                .unwrap_or("");
            return Err(format!(
                "git has no user identity (set `git config user.name` and `git config user.email`) {}",
                one_line(fatal)
            )
            .trim_end()
            .to_owned());
        }
        return Err(format!("`git commit-tree` failed: {}", one_line(&stderr)));
    }
    let new_head = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let reflog = format!("resolve: {}", one_line(&record.action.label));
    let expected = old_head.clone().unwrap_or_default();
    let args = ["update-ref", "-m", &reflog, "HEAD", &new_head, &expected];
    let moved = git(&repository.top, None, &args, None)?;
    if !moved.status.success() {
        return Err(format!(
            "{HEAD_MOVED} (`git update-ref` refused: {})",
            one_line(&String::from_utf8_lossy(&moved.stderr))
        ));
    }
    git_dir.refresh_index(&index, old_head.as_deref(), &paths);
    Ok(new_head)
}

/// Find the repository around `root`.
fn repository(root: &Path) -> Result<Repository, Why> {
    let output = git(
        root,
        None,
        &["rev-parse", "--show-toplevel", "--show-prefix"],
        None,
    )?;
    if !output.status.success() {
        return Err(format!(
            "`{}` is not in a git repository (or it has no work tree)",
            root.display()
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut lines = text.lines();
    let top = lines
        .next()
        .filter(|top| !top.is_empty())
        .ok_or_else(|| "git did not name the repository's top directory".to_owned())?;
    let prefix = lines.next().unwrap_or("").to_owned();
    Ok(Repository {
        top: PathBuf::from(top),
        prefix,
    })
}

/// Run a hook of the repository as `git commit` would (through `git hook run`, which honours
/// `core.hooksPath`); a missing hook passes, a failing one means no commit.
fn hook(top: &Path, index: Option<&Path>, name: &str, args: &[&str]) -> Result<(), Why> {
    let mut command = vec!["hook", "run", "--ignore-missing", name];
    if !args.is_empty() {
        command.push("--");
        command.extend(args);
    }
    let output = git(top, index, &command, None)?;
    if output.status.success() {
        return Ok(());
    }
    let said = one_line(&format!(
        "{} {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ));
    let status = output.status.code().map_or_else(
        || "by a signal".to_owned(),
        |code| format!("with exit status {code}"),
    );
    Err(if said.is_empty() {
        format!("the {name} hook failed ({status})")
    } else {
        format!("the {name} hook failed ({status}): {said}")
    })
}

/// The (mode, object id) one line of `ls-files -s` or `ls-tree` names; `Some(None)` when
/// there is no entry, `None` when git failed.
fn entry(top: &Path, index: Option<&Path>, args: &[&str]) -> Option<Option<(String, String)>> {
    let output = git(top, index, args, None).ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(line) = text.lines().next() else {
        return Some(None);
    };
    let mut fields = line.split_whitespace();
    let mode = fields.next()?.to_owned();
    let second = fields.next()?;
    // `ls-tree` says `mode type id`, `ls-files -s` says `mode id stage`.
    let id = if second == "blob" || second == "commit" || second == "tree" {
        fields.next()?
    } else {
        second
    };
    Some(Some((mode, id.to_owned())))
}

/// Run `git args` in `dir` (with `index` as its index when given, `stdin` fed when given).
fn git(
    dir: &Path,
    index: Option<&Path>,
    args: &[&str],
    stdin: Option<&[u8]>,
) -> Result<Output, Why> {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_LITERAL_PATHSPECS", "1")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(index) = index {
        command.env("GIT_INDEX_FILE", index);
    }
    let mut child = command.spawn().map_err(|error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            "git was not found on PATH".to_owned()
        } else {
            format!("git could not be started ({error})")
        }
    })?;
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(bytes)
            .map_err(|error| format!("git's input could not be written ({error})"))?;
    }
    child
        .wait_with_output()
        .map_err(|error| format!("git did not finish ({error})"))
}

/// Run `git args` and give its trimmed output, or why it failed (`what` names the step).
fn succeed(
    dir: &Path,
    index: Option<&Path>,
    args: &[&str],
    stdin: Option<&[u8]>,
    what: &str,
) -> Result<String, Why> {
    let output = git(dir, index, args, stdin)?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    } else {
        Err(format!(
            "`{what}` failed: {}",
            one_line(&String::from_utf8_lossy(&output.stderr))
        ))
    }
}

/// The trimmed standard output of a run that may fail (`None` then).
fn text_of(output: &Output) -> Option<String> {
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// The repository's top directory and a scratch directory for the files git reads.
struct Git<'a> {
    top: &'a Path,
    scratch: &'a Path,
}

/// The mode and blob id of one index or tree entry.
type Entry = (String, String);

impl Git<'_> {
    /// Put into the temporary `index` what the commit holds for the applied file `path`
    /// (`in_repo` in the repository): the old HEAD's version with the action's change alone,
    /// so changes of the person's own in that file (staged or not) stay out of the commit.
    /// `false` when the file stays out: untracked and ignored by git.
    fn stage(
        &self,
        store: &Store,
        record: &HistoryRecord,
        path: &str,
        in_repo: &str,
        old_head: Option<&str>,
        index: &Path,
    ) -> Result<bool, Why> {
        let temp = Some(index);
        let change = record
            .action
            .change_set
            .get(path)
            .ok_or_else(|| format!("`{path}` is not in the applied change set"))?;
        let Some(after) = change.new_content() else {
            let args = ["update-index", "--force-remove", "--", in_repo];
            succeed(self.top, temp, &args, None, "git update-index")?;
            return Ok(true);
        };
        let head = match old_head {
            Some(head) => entry(self.top, None, &["ls-tree", head, "--", in_repo])
                .ok_or_else(|| format!("git could not list `{in_repo}` in HEAD"))?,
            None => None,
        };
        if head.is_none() && self.ignored(in_repo) {
            // Untracked and ignored (`.gitignore`): `git add` would refuse it too.
            return Ok(false);
        }
        let (Some((mode, head_id)), Some(base)) = (head, record.original(path).flatten()) else {
            // New to git: the file as it landed.
            let args = ["update-index", "--add", "--", in_repo];
            succeed(self.top, temp, &args, None, "git update-index")?;
            return Ok(true);
        };
        let base_id = self.hash_content(store, &base, in_repo, "base")?;
        let after_id = self.hash_content(store, after, in_repo, "after")?;
        let id = if base_id == head_id {
            after_id
        } else {
            self.merge(&head_id, &base_id, &after_id)?.ok_or_else(|| {
                format!(
                    "`{in_repo}` held changes of yours (staged or not) that the applied change overlaps, so no commit could hold the applied change alone"
                )
            })?
        };
        let cacheinfo = format!("{mode},{id},{in_repo}");
        let args = ["update-index", "--add", "--cacheinfo", &cacheinfo];
        succeed(self.top, temp, &args, None, "git update-index")?;
        Ok(true)
    }

    /// Whether git ignores `in_repo` (`.gitignore`, `info/exclude`, `core.excludesFile`).
    fn ignored(&self, in_repo: &str) -> bool {
        // `check-ignore` takes plain paths (it refuses `GIT_LITERAL_PATHSPECS`).
        Command::new("git")
            .arg("-C")
            .arg(self.top)
            .args(["check-ignore", "-q", "--", in_repo])
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    }

    /// Write `content` of `store` as a git blob, cleaned as git cleans `in_repo`; its id.
    fn hash_content(
        &self,
        store: &Store,
        content: &Content,
        in_repo: &str,
        name: &str,
    ) -> Result<String, Why> {
        let bytes = store.blobs().read(content).map_err(|error| {
            format!("the applied content of `{in_repo}` could not be read ({error})")
        })?;
        let file = self.scratch.join(name);
        atomic_write(&file, &bytes)
            .map_err(|error| format!("a scratch file could not be written ({error})"))?;
        let file = file.to_string_lossy().into_owned();
        let path = format!("--path={in_repo}");
        let args = ["hash-object", "-w", &path, &file];
        succeed(self.top, None, &args, None, "git hash-object")
    }

    /// The blob of `ours` with the changes from `base` to `theirs` merged in, written; `None`
    /// when they conflict.
    fn merge(&self, ours: &str, base: &str, theirs: &str) -> Result<Option<String>, Why> {
        let mut files = Vec::new();
        for (name, id) in [("ours", ours), ("base", base), ("theirs", theirs)] {
            let output = git(self.top, None, &["cat-file", "blob", id], None)?;
            if !output.status.success() {
                return Err(format!("git could not read the blob {id}"));
            }
            let file = self.scratch.join(name);
            atomic_write(&file, &output.stdout)
                .map_err(|error| format!("a scratch file could not be written ({error})"))?;
            files.push(file.to_string_lossy().into_owned());
        }
        let mut args = vec!["merge-file", "-p", "-q"];
        args.extend(files.iter().map(String::as_str));
        let merged = git(self.top, None, &args, None)?;
        match merged.status.code() {
            Some(0) => {}
            Some(code) if code > 0 && code < 128 => return Ok(None),
            _ => {
                return Err(format!(
                    "`git merge-file` failed: {}",
                    one_line(&String::from_utf8_lossy(&merged.stderr))
                ));
            }
        }
        let args = ["hash-object", "-w", "--no-filters", "--stdin"];
        succeed(
            self.top,
            None,
            &args,
            Some(&merged.stdout),
            "git hash-object",
        )
        .map(Some)
    }

    /// Bring the person's own index along with the new commit for each committed path: an
    /// entry nothing was staged for (it equals the old HEAD's) becomes the commit's; a staged
    /// one keeps what they staged, with the applied change merged in when it merges cleanly
    /// (so `git diff --cached` still shows exactly their change). Best effort: the commit
    /// stands either way.
    fn refresh_index(&self, index: &Path, old_head: Option<&str>, paths: &[String]) {
        let mut lines = String::new();
        for path in paths {
            let staged = entry(self.top, None, &["ls-files", "-s", "--", path]);
            let before = match old_head {
                Some(head) => entry(self.top, None, &["ls-tree", head, "--", path]),
                None => Some(None),
            };
            let committed = entry(self.top, Some(index), &["ls-files", "-s", "--", path]);
            let (Some(staged), Some(before), Some(committed)) = (staged, before, committed) else {
                continue;
            };
            if let Some(line) = self.index_line(path, staged, before, committed) {
                lines.push_str(&line);
            }
        }
        if !lines.is_empty() {
            let args = ["update-index", "--index-info"];
            let _ = git(self.top, None, &args, Some(lines.as_bytes()));
        }
    }

    /// The `--index-info` line that brings the person's entry of `path` along, if any.
    fn index_line(
        &self,
        path: &str,
        staged: Option<Entry>,
        before: Option<Entry>,
        committed: Option<Entry>,
    ) -> Option<String> {
        if staged == before {
            return match (committed, staged) {
                (Some((mode, id)), _) => Some(format!("{mode} {id}\t{path}\n")),
                (None, Some((_, id))) => Some(format!("0 {}\t{path}\n", "0".repeat(id.len()))),
                (None, None) => None,
            };
        }
        let ((mode, ours), (_, base), (_, theirs)) = (staged?, before?, committed?);
        let merged = self.merge(&ours, &base, &theirs).ok()??;
        Some(format!("{mode} {merged}\t{path}\n"))
    }
}
