//! Many `resolve` processes on one root at once: eight workers stage, apply and discard in
//! loops for five seconds, racing for the same actions and the same files. Afterwards the
//! store is consistent, every action was consumed at most once (and exactly the ones some
//! process reported consuming), and every file holds what a serial sequence of whole applies
//! produces.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use resolve_edit::{Outcome, Store, Workspace as EditWorkspace, content_hash};
use serde_json::Value;

use super::common::Workspace;

const WORKERS: u64 = 8;
const DURATION: Duration = Duration::from_secs(5);
const FILES: &[&str] = &["f0.txt", "f1.txt", "f2.txt", "f3.txt"];
const MULTI: &[&str] = &["m1.rs", "m2.rs"];

/// A small deterministic generator (xorshift), one per worker.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// What one worker saw: actions it consumed, and how many calls ended how.
#[derive(Debug, Default)]
struct Report {
    consumed: Vec<String>,
    calls: usize,
    failures: BTreeMap<String, usize>,
}

fn initial() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = FILES
        .iter()
        .map(|file| ((*file).to_owned(), format!("initial {file}\n")))
        .collect();
    for file in MULTI {
        files.push(((*file).to_owned(), "fn f() {\n    v(0);\n}\n".to_owned()));
    }
    files
}

fn work(workspace: &Workspace, worker: u64, deadline: Instant) -> Report {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (worker + 1).wrapping_mul(0x2545_f491_4f6c_dd1d));
    let mut report = Report::default();
    let mut step = 0;
    while Instant::now() < deadline {
        step += 1;
        let choice = rng.below(10);
        let (args, consumes): (Vec<String>, Option<String>) = match choice {
            0..=3 => {
                let file = FILES[rng.below(FILES.len() as u64) as usize];
                let content = format!("written by worker {worker} at step {step}\n");
                (
                    ["write", file, "--content", &content]
                        .map(str::to_owned)
                        .to_vec(),
                    None,
                )
            }
            4 => (
                [
                    "ast-edit",
                    "-p",
                    "v($A)",
                    "-r",
                    "v($A + 1)",
                    "--lang",
                    "rust",
                ]
                .iter()
                .chain(MULTI)
                .map(|arg| (*arg).to_owned())
                .collect(),
                None,
            ),
            _ => {
                let listed = workspace.run(&["pending", "--json"]);
                report.calls += 1;
                if listed.code != 0 {
                    *report
                        .failures
                        .entry(first_line(&listed.stderr))
                        .or_default() += 1;
                    continue;
                }
                let ids = pending(&listed.stdout);
                if ids.is_empty() {
                    continue;
                }
                let id = ids[rng.below(ids.len() as u64) as usize].clone();
                let verb = if choice <= 7 { "apply" } else { "discard" };
                (
                    [verb, "--id", &id, "--reason", "race"]
                        .map(str::to_owned)
                        .to_vec(),
                    Some(id),
                )
            }
        };
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = workspace.run(&args);
        report.calls += 1;
        match (run.code, consumes) {
            (0, Some(id)) => report.consumed.push(id),
            (0, None) => {}
            (1, _) => *report.failures.entry(first_line(&run.stderr)).or_default() += 1,
            (code, _) => panic!("`{args:?}` exited {code}: {}", run.stderr),
        }
    }
    report
}

fn pending(stdout: &str) -> Vec<String> {
    let value: Value = serde_json::from_str(stdout.trim()).unwrap();
    value["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|record| record["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The kind of a failure, for the tally: its first line with quoted paths and ids elided.
fn first_line(stderr: &str) -> String {
    let line = stderr.lines().next().unwrap_or_default();
    line.split('`')
        .enumerate()
        .map(|(index, part)| if index % 2 == 1 { "…" } else { part })
        .collect::<Vec<_>>()
        .join("`")
}

#[test]
fn parallel_processes_consume_each_action_at_most_once_and_leave_serial_file_states() {
    let files = initial();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let workspace = Workspace::with(&refs);
    let deadline = Instant::now() + DURATION;
    let reports: Vec<Report> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..WORKERS)
            .map(|worker| {
                let workspace = &workspace;
                scope.spawn(move || work(workspace, worker, deadline))
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .collect()
    });

    // The store reads cleanly and nothing is left in flight.
    workspace.run_ok(&["pending", "--json"]);
    workspace.run_ok(&["log", "--json"]);
    let journal = workspace.path(".resolve/journal");
    assert!(
        std::fs::read_dir(&journal).map_or(true, |mut entries| entries.next().is_none()),
        "a transaction is left in flight"
    );

    // Consumed at most once, and exactly what the processes reported.
    let mut consumed: Vec<String> = reports.iter().flat_map(|r| r.consumed.clone()).collect();
    consumed.sort();
    let unique: BTreeSet<String> = consumed.iter().cloned().collect();
    assert_eq!(
        consumed.len(),
        unique.len(),
        "an action was consumed twice: {consumed:?}"
    );
    let key = resolve_edit::RecordKey::load_or_create(&workspace.user_dir()).unwrap();
    let store = Store::open(EditWorkspace::open(workspace.root()).unwrap()).with_record_key(key);
    let history = store.history().unwrap();
    let pending_now = store.pending().unwrap();
    let history_ids: BTreeSet<String> = history.iter().map(|r| r.action.id.clone()).collect();
    assert_eq!(
        history_ids.len(),
        history.len(),
        "duplicate ids in the history"
    );
    for record in &pending_now {
        assert!(
            !history_ids.contains(&record.id),
            "{} is pending and resolved",
            record.id
        );
    }
    assert_eq!(
        history_ids, unique,
        "the history and the reported consumptions differ"
    );

    // Replaying the applies in the order they were resolved gives every file's content, and
    // each one started from the content the previous one left.
    let mut expected: BTreeMap<String, Option<String>> = files
        .iter()
        .map(|(p, c)| (p.clone(), Some(c.clone())))
        .collect();
    let mut applied: Vec<_> = history
        .iter()
        .filter(|record| record.outcome == Outcome::Applied)
        .collect();
    applied.sort_by_key(|record| record.action.order);
    for record in &applied {
        for path in &record.applied_files {
            let change = record.action.change_set.get(path).unwrap();
            let current = expected.get(path).cloned().flatten();
            assert_eq!(
                change.base_hash().map(str::to_owned),
                current.as_deref().map(|text| content_hash(text.as_bytes())),
                "{} was applied to `{path}` over content it was not previewed on",
                record.action.id
            );
            let written = change.new_content().map(|content| {
                String::from_utf8(store.blobs().read(content).unwrap().into_owned()).unwrap()
            });
            expected.insert(path.clone(), written);
        }
    }
    for (path, content) in &expected {
        let actual = std::fs::read_to_string(workspace.path(path)).ok();
        assert_eq!(
            &actual, content,
            "`{path}` is in a state no serial apply order gives"
        );
    }

    let calls: usize = reports.iter().map(|r| r.calls).sum();
    let mut failures: BTreeMap<String, usize> = BTreeMap::new();
    for report in &reports {
        for (kind, count) in &report.failures {
            *failures.entry(kind.clone()).or_default() += count;
        }
    }
    eprintln!(
        "{calls} calls by {WORKERS} processes; {} applied, {} discarded, {} still pending; failures: {failures:?}",
        applied.len(),
        history.len() - applied.len(),
        pending_now.len()
    );
    assert!(applied.len() >= 5, "too little happened to mean anything");
}
