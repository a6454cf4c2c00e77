//! Work on many items at once, with the results handed back in the items' order: what lets a
//! preview stream each file's result out as it comes, in path order, instead of collecting all
//! of them and sorting at the end. At most [`WINDOW`] items are handed out ahead of the result
//! the sink waits for, so what is held does not grow with the number of items.
//!
//! The calling thread advances the items (walks the tree) and runs the sink; worker threads
//! run the work. Items go out in runs of consecutive ones, and a run's results come back
//! together: one item per message woke a thread once per file, which cost a search of 100 000
//! files, most of which cannot match, more than the search itself. Runs start at one item and
//! grow to [`CHUNK`] as items are handed out: with runs of [`CHUNK`] from the start, the two
//! dozen files a selective search parses, when they lie close together, all went to one thread
//! while the others had nothing to do.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Mutex, PoisonError};

/// How many items may be handed out ahead of the one whose result the sink waits for.
pub(crate) const WINDOW: usize = 1024;

/// The most consecutive items a worker takes at once.
const CHUNK: usize = 32;

/// How many items each thread is handed, in growing runs, before a run of `n + 1` items.
const RAMP: usize = 4;

/// How many items the run handed out after `handed_out` items holds, on `threads` threads:
/// one at first, one more for every [`RAMP`] items per thread handed out, at most [`CHUNK`].
fn run_len(handed_out: usize, threads: usize) -> usize {
    (handed_out / (RAMP * threads.max(1))).clamp(1, CHUNK)
}

/// The threads to work on: one per core, at most 12 (as `ignore` chooses for its walker).
pub(crate) fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(12)
}

/// A run of consecutive items, or of their results, and the index of its first.
type Run<T> = (usize, Vec<T>);

/// Call `work` on every item of `items`, on `threads` threads, and hand each result to `sink`
/// in the order of `items`. `items` is advanced on the calling thread (so walking a tree can
/// be the iterator), never more than [`WINDOW`] items ahead of `sink`. Once `sink` breaks, no
/// further item is handed out and results still in flight are dropped. A panic in `work` or
/// in `sink` stops the other threads and is raised here.
pub(crate) fn map_in_order<I, R>(
    items: I,
    threads: usize,
    work: impl Fn(I::Item) -> R + Sync,
    mut sink: impl FnMut(R) -> ControlFlow<()>,
) where
    I: Iterator,
    I::Item: Send,
    R: Send,
{
    let (runs, jobs) = mpsc::channel::<Run<I::Item>>();
    let jobs = Mutex::new(jobs);
    // `None` says a worker panicked: its run's results will never come.
    let (sender, results) = mpsc::channel::<Option<Run<R>>>();
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            let (jobs, work, sender) = (&jobs, &work, sender.clone());
            scope.spawn(move || run_worker(jobs, work, &sender));
        }
        drop(sender);
        deliver_in_order(items, threads, runs, &results, &mut sink);
        // Whatever is still queued is not wanted (the sink broke, or a worker panicked): the
        // workers are let go without it.
        let queued = jobs.lock().unwrap_or_else(PoisonError::into_inner);
        while queued.try_recv().is_ok() {}
    });
}

/// The calling thread's part of [`map_in_order`]: hand out runs of items while the window has
/// room, and give the results to `sink` in order as they come back. Returns once every result
/// is delivered, the sink broke, or a worker panicked; `runs` is dropped then, so the workers
/// stop.
fn deliver_in_order<I: Iterator, R>(
    items: I,
    threads: usize,
    runs: Sender<Run<I::Item>>,
    results: &Receiver<Option<Run<R>>>,
    sink: &mut impl FnMut(R) -> ControlFlow<()>,
) {
    let mut items = items.fuse();
    // `None` once the items ran out.
    let mut runs = Some(runs);
    let (mut handed_out, mut delivered) = (0, 0);
    // Runs of results that came in ahead of the one expected next, by their first index.
    let mut early = BTreeMap::new();
    loop {
        while let Some(sending) = &runs
            && handed_out < delivered + WINDOW
        {
            let run: Vec<I::Item> = items
                .by_ref()
                .take((delivered + WINDOW - handed_out).min(run_len(handed_out, threads)))
                .collect();
            let len = run.len();
            if len == 0 || sending.send((handed_out, run)).is_err() {
                runs = None;
            } else {
                handed_out += len;
            }
        }
        if delivered == handed_out && runs.is_none() {
            return;
        }
        // `None` (or no sender left) means a worker panicked; the scope raises its panic.
        let Ok(Some((first, done))) = results.recv() else {
            return;
        };
        early.insert(first, done);
        while let Some(done) = early.remove(&delivered) {
            delivered += done.len();
            if done.into_iter().any(|result| sink(result).is_break()) {
                return;
            }
        }
    }
}

/// A worker: run the work on each run of items until there are no more, and send the results.
fn run_worker<T, R>(
    jobs: &Mutex<Receiver<Run<T>>>,
    work: impl Fn(T) -> R,
    sender: &Sender<Option<Run<R>>>,
) {
    let _reports = ReportPanic(sender);
    loop {
        let job = jobs.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok((first, run)) = job else { return };
        let done = run.into_iter().map(&work).collect();
        if sender.send(Some((first, done))).is_err() {
            return;
        }
    }
}

/// Tells the calling thread that a worker unwinds, so it stops waiting for a result that will
/// never come.
struct ReportPanic<'a, R>(&'a Sender<Option<R>>);

impl<R> Drop for ReportPanic<'_, R> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = self.0.send(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn results_come_back_in_the_order_of_the_items_however_long_each_takes() {
        let mut seen = Vec::new();
        map_in_order(
            0..2000_u64,
            4,
            |item| {
                if item % 97 == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                item * 2
            },
            |result| {
                seen.push(result);
                ControlFlow::Continue(())
            },
        );
        assert_eq!(seen, (0..2000).map(|item| item * 2).collect::<Vec<_>>());
    }

    #[test]
    fn a_few_items_are_spread_over_every_thread() {
        // Each item waits (up to 10 s) until two have started: on two threads the first two
        // items start at once; handed to one thread together, the first waits out the 10 s.
        let started = AtomicUsize::new(0);
        let threads_used = Mutex::new(std::collections::HashSet::new());
        let mut seen = Vec::new();
        map_in_order(
            0..8_u64,
            2,
            |item| {
                threads_used
                    .lock()
                    .unwrap()
                    .insert(std::thread::current().id());
                started.fetch_add(1, Ordering::SeqCst);
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
                while started.load(Ordering::SeqCst) < 2 && std::time::Instant::now() < deadline {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                item
            },
            |result| {
                seen.push(result);
                ControlFlow::Continue(())
            },
        );
        assert_eq!(seen, (0..8).collect::<Vec<_>>());
        assert_eq!(threads_used.into_inner().unwrap().len(), 2);
    }

    #[test]
    fn runs_grow_from_one_item_to_a_chunk() {
        assert_eq!(run_len(0, 2), 1);
        assert_eq!(run_len(2 * RAMP - 1, 2), 1);
        assert_eq!(run_len(4 * RAMP, 2), 2);
        assert_eq!(run_len(1_000_000, 2), CHUNK);
        assert_eq!(run_len(5, 0), 1);
    }

    #[test]
    fn no_item_starts_more_than_a_window_ahead_of_the_sink() {
        let started = AtomicUsize::new(0);
        let mut delivered = 0;
        map_in_order(
            0..(4 * WINDOW),
            3,
            |item| {
                started.fetch_add(1, Ordering::SeqCst);
                item
            },
            |_| {
                delivered += 1;
                let ahead = started.load(Ordering::SeqCst) - delivered;
                assert!(ahead < WINDOW, "{ahead} items started ahead");
                ControlFlow::Continue(())
            },
        );
        assert_eq!(delivered, 4 * WINDOW);
    }

    #[test]
    fn a_sink_that_breaks_stops_the_work() {
        let started = AtomicUsize::new(0);
        let mut seen = Vec::new();
        map_in_order(
            0..100_000,
            2,
            |item| {
                started.fetch_add(1, Ordering::SeqCst);
                item
            },
            |result| {
                seen.push(result);
                if result == 9 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        assert!(started.load(Ordering::SeqCst) <= 10 + WINDOW);
    }

    #[test]
    fn a_panic_in_the_sink_is_raised_instead_of_hanging() {
        let outcome = std::panic::catch_unwind(|| {
            map_in_order(
                0..(100 * WINDOW),
                2,
                |item| item,
                |item| {
                    assert!(item != 5, "the sink fails at item 5");
                    ControlFlow::Continue(())
                },
            );
        });
        assert!(outcome.is_err());
    }

    #[test]
    fn a_panic_in_the_work_is_raised_instead_of_hanging() {
        let outcome = std::panic::catch_unwind(|| {
            map_in_order(
                0..10_000,
                2,
                |item| {
                    assert!(item != 5, "item 5 is broken");
                    item
                },
                |_| ControlFlow::Continue(()),
            );
        });
        assert!(outcome.is_err());
    }
}
