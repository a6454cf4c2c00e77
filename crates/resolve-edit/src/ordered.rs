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
//!
//! The work may come in two steps ([`map_in_order_screened`]): a quick look at each item that
//! gives its result or sets it aside with a weight, and the full work on what was set aside,
//! which a thread takes up only when no run waits, the heaviest first. A search of a tree that
//! is walked faster than its files are screened thereby screens every file first and then
//! parses the few that can match spread over the threads; handed out in path order, the last
//! one found was parsed alone while the other threads had nothing left. A tree walked slower
//! than its files are screened gives the threads nothing to screen while they wait, so they
//! parse what was set aside as it comes.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::ops::ControlFlow;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

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

/// What the first look at an item found.
pub(crate) enum Screened<L, R> {
    /// The item's result.
    Done(R),
    /// The item needs the full work, on `later`; `weight` orders what is set aside (the
    /// heaviest is worked on first).
    Later { later: L, weight: u64 },
}

impl<L, R> Screened<L, R> {
    /// The same, with a result made into another.
    pub(crate) fn map_done<S>(self, into: impl FnOnce(R) -> S) -> Screened<L, S> {
        match self {
            Self::Done(result) => Screened::Done(into(result)),
            Self::Later { later, weight } => Screened::Later { later, weight },
        }
    }
}

/// A run of consecutive items, and the index of its first.
type Run<T> = (usize, Vec<T>);

/// Results as a worker sends them back.
enum Piece<R> {
    /// A run's results from its first index on; `None` for each item set aside.
    Run(usize, Vec<Option<R>>),
    /// The result of the item at this index, set aside before.
    One(usize, R),
}

/// Call `work` on every item of `items`, on `threads` threads, and hand each result to `sink`
/// in the order of `items`. `items` is advanced on the calling thread (so walking a tree can
/// be the iterator), never more than [`WINDOW`] items ahead of `sink`. Once `sink` breaks, no
/// further item is handed out and results still in flight are dropped. A panic in `work` or
/// in `sink` stops the other threads and is raised here.
pub(crate) fn map_in_order<I, R>(
    items: I,
    threads: usize,
    work: impl Fn(I::Item) -> R + Sync,
    sink: impl FnMut(R) -> ControlFlow<()>,
) where
    I: Iterator,
    I::Item: Send,
    R: Send,
{
    map_in_order_screened(
        items,
        threads,
        |item| Screened::<I::Item, R>::Done(work(item)),
        &work,
        sink,
    );
}

/// [`map_in_order`] with the work in two steps: `screen` on every item, then `finish` on what
/// it set aside (see the module doc). The results still reach `sink` in the items' order.
pub(crate) fn map_in_order_screened<I, L, R>(
    items: I,
    threads: usize,
    screen: impl Fn(I::Item) -> Screened<L, R> + Sync,
    finish: impl Fn(L) -> R + Sync,
    mut sink: impl FnMut(R) -> ControlFlow<()>,
) where
    I: Iterator,
    I::Item: Send,
    L: Send,
    R: Send,
{
    let jobs = Jobs::new();
    // `None` says a worker panicked: its results will never come.
    let (sender, results) = mpsc::channel::<Option<Piece<R>>>();
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            let (jobs, screen, finish, sender) = (&jobs, &screen, &finish, sender.clone());
            scope.spawn(move || run_worker(jobs, screen, finish, &sender));
        }
        drop(sender);
        // Whatever is still queued when the sink is done (it broke, it panicked, or a worker
        // panicked) is not wanted: the workers are let go without it.
        let _let_go = LetGo(&jobs);
        deliver_in_order(items, threads, &jobs, &results, &mut sink);
    });
}

/// The calling thread's part of [`map_in_order_screened`]: hand out runs of items while the
/// window has room, and give the results to `sink` in order as they come back. Returns once
/// every result is delivered, the sink broke, or a worker panicked.
fn deliver_in_order<I: Iterator, L, R>(
    items: I,
    threads: usize,
    jobs: &Jobs<I::Item, L>,
    results: &Receiver<Option<Piece<R>>>,
    sink: &mut impl FnMut(R) -> ControlFlow<()>,
) {
    let mut items = items.fuse();
    let mut items_left = true;
    let (mut handed_out, mut delivered) = (0, 0);
    // Runs of results not yet all delivered, by their first index, each with how many of its
    // results went to the sink; `None` while an item set aside is being worked on.
    let mut held: BTreeMap<usize, (usize, Vec<Option<R>>)> = BTreeMap::new();
    loop {
        while items_left && handed_out < delivered + WINDOW {
            let run: Vec<I::Item> = items
                .by_ref()
                .take((delivered + WINDOW - handed_out).min(run_len(handed_out, threads)))
                .collect();
            let len = run.len();
            if len == 0 {
                items_left = false;
                jobs.close();
            } else {
                jobs.push((handed_out, run));
                handed_out += len;
            }
        }
        if delivered == handed_out && !items_left {
            return;
        }
        // `None` (or no sender left) means a worker panicked; the scope raises its panic.
        let Ok(Some(piece)) = results.recv() else {
            return;
        };
        match piece {
            Piece::Run(first, run) => {
                held.insert(first, (0, run));
            }
            // Its run came back before it was set aside.
            Piece::One(index, result) => {
                if let Some((first, (_, run))) = held.range_mut(..=index).next_back()
                    && let Some(slot) = run.get_mut(index - first)
                {
                    *slot = Some(result);
                }
            }
        }
        // The first run held starts at or before the next result due, unless it is still out.
        while let Some(mut entry) = held.first_entry()
            && *entry.key() <= delivered
        {
            let (sent, run) = entry.get_mut();
            let Some(result) = run.get_mut(*sent).and_then(Option::take) else {
                break;
            };
            *sent += 1;
            if *sent == run.len() {
                entry.remove();
            }
            delivered += 1;
            if sink(result).is_break() {
                return;
            }
        }
    }
}

/// A worker: screen each run handed out and finish what was set aside, until there is nothing
/// more to do, sending the results back.
fn run_worker<T, L, R>(
    jobs: &Jobs<T, L>,
    screen: impl Fn(T) -> Screened<L, R>,
    finish: impl Fn(L) -> R,
    sender: &Sender<Option<Piece<R>>>,
) {
    let _reports = ReportPanic(sender);
    while let Some(job) = jobs.next() {
        match job {
            Job::Screen((first, run)) => {
                let mut set_aside = Vec::new();
                let results = (first..)
                    .zip(run)
                    .map(|(index, item)| match screen(item) {
                        Screened::Done(result) => Some(result),
                        Screened::Later { later, weight } => {
                            set_aside.push(SetAside {
                                weight,
                                index,
                                later,
                            });
                            None
                        }
                    })
                    .collect();
                // The run's holes are sent before anyone can fill them.
                if sender.send(Some(Piece::Run(first, results))).is_err() {
                    return;
                }
                jobs.set_aside(set_aside);
            }
            Job::Finish(index, later) => {
                if sender.send(Some(Piece::One(index, finish(later)))).is_err() {
                    return;
                }
            }
        }
    }
}

/// What a worker does next.
enum Job<T, L> {
    /// Screen a run of items.
    Screen(Run<T>),
    /// Finish the item at this index.
    Finish(usize, L),
}

/// The work waiting for a thread: runs handed out, and items set aside.
struct Jobs<T, L> {
    state: Mutex<JobState<T, L>>,
    /// Workers sleep here while there is nothing to do.
    wake: Condvar,
}

/// See [`Jobs`].
struct JobState<T, L> {
    runs: VecDeque<Run<T>>,
    set_aside: BinaryHeap<SetAside<L>>,
    /// No run will come any more.
    closed: bool,
    /// How many workers sleep on `wake` (signalled only then: a signal is a system call).
    sleeping: usize,
}

/// An item set aside for the full work.
struct SetAside<L> {
    weight: u64,
    index: usize,
    later: L,
}

impl<L> SetAside<L> {
    /// The heavier first, then the earlier.
    fn rank(&self) -> (u64, std::cmp::Reverse<usize>) {
        (self.weight, std::cmp::Reverse(self.index))
    }
}

impl<L> PartialEq for SetAside<L> {
    fn eq(&self, other: &Self) -> bool {
        self.rank() == other.rank()
    }
}

impl<L> Eq for SetAside<L> {}

impl<L> PartialOrd for SetAside<L> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<L> Ord for SetAside<L> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl<T, L> Jobs<T, L> {
    fn new() -> Self {
        Self {
            state: Mutex::new(JobState {
                runs: VecDeque::new(),
                set_aside: BinaryHeap::new(),
                closed: false,
                sleeping: 0,
            }),
            wake: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, JobState<T, L>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queue a run for screening.
    fn push(&self, run: Run<T>) {
        let mut state = self.lock();
        state.runs.push_back(run);
        if state.sleeping > 0 {
            self.wake.notify_one();
        }
    }

    /// Queue items set aside for the full work.
    fn set_aside(&self, items: Vec<SetAside<L>>) {
        if items.is_empty() {
            return;
        }
        let mut state = self.lock();
        state.set_aside.extend(items);
        if state.sleeping > 0 {
            self.wake.notify_all();
        }
    }

    /// No more runs: workers stop once the queues are empty.
    fn close(&self) {
        self.lock().closed = true;
        self.wake.notify_all();
    }

    /// The next job: a run to screen first, else the heaviest item set aside; `None` once
    /// closed with nothing left.
    fn next(&self) -> Option<Job<T, L>> {
        let mut state = self.lock();
        loop {
            if let Some(run) = state.runs.pop_front() {
                return Some(Job::Screen(run));
            }
            if let Some(item) = state.set_aside.pop() {
                return Some(Job::Finish(item.index, item.later));
            }
            if state.closed {
                return None;
            }
            state.sleeping += 1;
            state = self
                .wake
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            state.sleeping -= 1;
        }
    }
}

/// Drops whatever work is still queued and closes the queue when the calling thread leaves
/// [`map_in_order_screened`] (also by a panic), so the workers end and the scope can join them.
struct LetGo<'a, T, L>(&'a Jobs<T, L>);

impl<T, L> Drop for LetGo<'_, T, L> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.runs.clear();
        state.set_aside.clear();
        state.closed = true;
        drop(state);
        self.0.wake.notify_all();
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

    /// Items divisible by 3 are set aside weighing themselves; the others are done at once.
    fn screen_thirds(item: u64) -> Screened<u64, u64> {
        if item.is_multiple_of(3) {
            Screened::Later {
                later: item,
                weight: item,
            }
        } else {
            Screened::Done(item * 2)
        }
    }

    /// The second step of [`screen_thirds`]'s items: the item doubled, counted in `finished`.
    fn doubled_counting(item: u64, finished: &AtomicUsize) -> u64 {
        finished.fetch_add(1, Ordering::SeqCst);
        item * 2
    }

    #[test]
    fn items_set_aside_are_finished_once_and_delivered_in_the_order_of_the_items() {
        let finished = AtomicUsize::new(0);
        let mut seen = Vec::new();
        map_in_order_screened(
            0..(3 * WINDOW as u64),
            3,
            screen_thirds,
            |item| doubled_counting(item, &finished),
            |result| {
                seen.push(result);
                ControlFlow::Continue(())
            },
        );
        assert_eq!(
            seen,
            (0..3 * WINDOW as u64)
                .map(|item| item * 2)
                .collect::<Vec<_>>()
        );
        assert_eq!(finished.load(Ordering::SeqCst), WINDOW);
    }

    #[test]
    fn runs_are_screened_before_what_was_set_aside_and_the_heaviest_is_finished_first() {
        let jobs = Jobs::new();
        jobs.push((0, vec![10_u64, 11]));
        jobs.set_aside(
            [(1, 5), (2, 50), (3, 50), (4, 7)]
                .into_iter()
                .map(|(index, weight)| SetAside {
                    weight,
                    index,
                    later: index,
                })
                .collect(),
        );
        jobs.push((2, vec![12]));
        jobs.close();
        let mut order = Vec::new();
        while let Some(job) = jobs.next() {
            order.push(match job {
                Job::Screen((first, run)) => format!("screen {first} {run:?}"),
                Job::Finish(index, _) => format!("finish {index}"),
            });
        }
        assert_eq!(
            order,
            [
                "screen 0 [10, 11]",
                "screen 2 [12]",
                "finish 2",
                "finish 3",
                "finish 4",
                "finish 1"
            ]
        );
    }

    #[test]
    fn a_sink_that_breaks_with_items_set_aside_stops_the_work() {
        let finished = AtomicUsize::new(0);
        let mut seen = Vec::new();
        map_in_order_screened(
            0..100_000,
            2,
            screen_thirds,
            |item| doubled_counting(item, &finished),
            |result| {
                seen.push(result);
                if result == 18 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
        assert_eq!(seen, (0..10).map(|item| item * 2).collect::<Vec<_>>());
        assert!(finished.load(Ordering::SeqCst) <= (10 + WINDOW) / 3 + 1);
    }

    #[test]
    fn a_panic_in_the_finishing_work_is_raised_instead_of_hanging() {
        let outcome = std::panic::catch_unwind(|| {
            map_in_order_screened(
                0..10_000,
                2,
                screen_thirds,
                |item| {
                    assert!(item != 300, "item 300 is broken");
                    item
                },
                |_| ControlFlow::Continue(()),
            );
        });
        assert!(outcome.is_err());
    }
}
