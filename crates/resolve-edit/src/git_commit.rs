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

use resolve_store::{CommitFact, HistoryRecord, atomic_write, default_decider, read_regular_file};

use crate::selection::HunkRejection;

/// Why no commit was made, as the person and the model read it.
type Why = String;

/// Commit the files `record` applied in the git repository around `root`, with the hunks a
/// person left out (`rejections`) named in the message. Never fails the apply: any reason
/// not to commit comes back as [`CommitFact::NotCommitted`].
pub fn commit_applied(
    root: &Path,
    record: &HistoryRecord,
    rejections: &[HunkRejection],
) -> CommitFact {
    match commit(root, record, rejections) {
        Ok(commit) => CommitFact::Committed { commit },
        Err(reason) => CommitFact::NotCommitted { reason },
    }
}

/// The message of the commit for `record`: the label as subject, the reason as body, what was
/// left out, and the `Resolve-*` trailers.
pub fn commit_message(record: &HistoryRecord, rejections: &[HunkRejection]) -> String {
    let mut message = format!(
        "{}\n\n{}\n",
        one_line(&record.action.label),
        record.reason.trim()
    );
    let mut left_out: Vec<String> = rejections
        .iter()
        .map(|rejection| format!("- {}: {}", rejection.address, one_line(&rejection.reason)))
        .collect();
    left_out.extend(
        record
            .dropped_files
            .iter()
            .map(|path| format!("- {path}: not selected")),
    );
    if !left_out.is_empty() {
        message.push_str("\nNot taken:\n");
        message.push_str(&left_out.join("\n"));
        message.push('\n');
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

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The repository around `root`: its top directory and the prefix of `root` inside it.
struct Repository {
    top: PathBuf,
    prefix: String,
}

fn commit(
    root: &Path,
    record: &HistoryRecord,
    rejections: &[HunkRejection],
) -> Result<String, Why> {
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
    let mut add = vec!["update-index", "--add", "--remove", "--"];
    add.extend(paths.iter().map(String::as_str));
    succeed(&repository.top, temp, &add, None, "git update-index")?;
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
            return Err(
                "the applied files hold what HEAD already has; there is nothing to commit"
                    .to_owned(),
            );
        }
    }
    hook(&repository.top, temp, "pre-commit", &[])?;
    let message_file = scratch.path().join("COMMIT_EDITMSG");
    atomic_write(&message_file, commit_message(record, rejections).as_bytes())
        .map_err(|error| format!("the commit message could not be written ({error})"))?;
    let message_arg = message_file.to_string_lossy().into_owned();
    hook(&repository.top, temp, "commit-msg", &[message_arg.as_str()])?;
    let message = read_regular_file(&message_file)
        .ok()
        .flatten()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_else(|| commit_message(record, rejections));
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
            return Err(format!(
                "git has no user identity (set `git config user.name` and `git config user.email`): {}",
                one_line(&stderr)
            ));
        }
        return Err(format!("`git commit-tree` failed: {}", one_line(&stderr)));
    }
    let new_head = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let reflog = format!("resolve: {}", one_line(&record.action.label));
    let expected = old_head.clone().unwrap_or_default();
    succeed(
        &repository.top,
        None,
        &["update-ref", "-m", &reflog, "HEAD", &new_head, &expected],
        None,
        "git update-ref (HEAD moved meanwhile?)",
    )?;
    refresh_index(&repository.top, temp, old_head.as_deref(), &paths);
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

/// Point the person's own index at the new commit for each committed path they had not
/// staged anything for (their entry equals the old HEAD's); a path they staged differently
/// keeps their staged version. Best effort: the commit stands either way.
fn refresh_index(top: &Path, temp: Option<&Path>, old_head: Option<&str>, paths: &[String]) {
    let mut lines = String::new();
    for path in paths {
        let staged = entry(top, None, &["ls-files", "-s", "--", path]);
        let before = match old_head {
            Some(head) => entry(top, None, &["ls-tree", head, "--", path]),
            None => Some(None),
        };
        let (Some(staged), Some(before)) = (staged, before) else {
            continue;
        };
        if staged != before {
            continue;
        }
        match entry(top, temp, &["ls-files", "-s", "--", path]) {
            Some(Some((mode, id))) => lines.push_str(&format!("{mode} {id}\t{path}\n")),
            Some(None) => {
                if let Some((_, id)) = staged {
                    lines.push_str(&format!("0 {}\t{path}\n", "0".repeat(id.len())));
                }
            }
            None => {}
        }
    }
    if !lines.is_empty() {
        let _ = git(
            top,
            None,
            &["update-index", "--index-info"],
            Some(lines.as_bytes()),
        );
    }
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
