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
//! parse what was set aside as it comes. Items set aside heavier than a bound the caller gives
//! are finished by the first thread only, the others taking lighter ones: two large files
//! parsed at once held both trees, and the allocator keeps each thread's room for the largest
//! tree it ever built, so the peak memory of a preview was about one large tree per thread. The
//! first thread ends only once no run is being screened any more, since another thread's last
//! run may still set a heavy item aside.

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
        u64::MAX,
        sink,
    );
}

/// [`map_in_order`] with the work in two steps: `screen` on every item, then `finish` on what
/// it set aside (see the module doc), on items heavier than `one_at_a_time_above` by the
/// first thread only (so one at a time). The results still reach `sink` in the items' order.
pub(crate) fn map_in_order_screened<I, L, R>(
    items: I,
    threads: usize,
    screen: impl Fn(I::Item) -> Screened<L, R> + Sync,
    finish: impl Fn(L) -> R + Sync,
    one_at_a_time_above: u64,
    mut sink: impl FnMut(R) -> ControlFlow<()>,
) where
    I: Iterator,
    I::Item: Send,
    L: Send,
    R: Send,
{
    let jobs = Jobs::new(one_at_a_time_above);
    // `None` says a worker panicked: its results will never come.
    let (sender, results) = mpsc::channel::<Option<Piece<R>>>();
    std::thread::scope(|scope| {
        for worker in 0..threads.max(1) {
            let (jobs, screen, finish, sender) = (&jobs, &screen, &finish, sender.clone());
            scope.spawn(move || run_worker(worker == 0, jobs, screen, finish, &sender));
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
        let piece = match results.recv() {
            Ok(Some(piece)) => piece,
            // A worker panicked; the scope raises its panic.
            Ok(None) => return,
            // Every worker ended, none by a panic (that is reported first), with results still
            // due: one was lost, which is a bug in the queue, never an outcome.
            Err(_) => {
                debug_assert_eq!(delivered, handed_out, "the workers ended with results due");
                return;
            }
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
    takes_heavy: bool,
    jobs: &Jobs<T, L>,
    screen: impl Fn(T) -> Screened<L, R>,
    finish: impl Fn(L) -> R,
    sender: &Sender<Option<Piece<R>>>,
) {
    let _reports = ReportPanic(sender);
    while let Some(job) = jobs.next(takes_heavy) {
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
                jobs.screened(set_aside);
            }
            Job::Finish(item) => {
                let result = finish(item.later);
                if sender.send(Some(Piece::One(item.index, result))).is_err() {
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
    /// Finish an item set aside.
    Finish(SetAside<L>),
}

/// The work waiting for a thread: runs handed out, and items set aside.
struct Jobs<T, L> {
    state: Mutex<JobState<T, L>>,
    /// Workers sleep here while there is nothing to do.
    wake: Condvar,
    /// Items set aside heavier than this are finished by the first worker only (so one at a
    /// time).
    one_at_a_time_above: u64,
}

/// See [`Jobs`].
struct JobState<T, L> {
    runs: VecDeque<Run<T>>,
    /// Items set aside no heavier than [`Jobs::one_at_a_time_above`].
    set_aside: BinaryHeap<SetAside<L>>,
    /// Items set aside heavier than that, for the first worker only.
    heavy: BinaryHeap<SetAside<L>>,
    /// How many runs are being screened: each may still set heavy items aside, so the first
    /// worker stays while any is.
    screening: usize,
    /// No run will come any more.
    closed: bool,
    /// The calling thread left: no result is wanted any more, every worker ends.
    abandoned: bool,
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
    fn new(one_at_a_time_above: u64) -> Self {
        Self {
            state: Mutex::new(JobState {
                runs: VecDeque::new(),
                set_aside: BinaryHeap::new(),
                heavy: BinaryHeap::new(),
                screening: 0,
                closed: false,
                abandoned: false,
                sleeping: 0,
            }),
            wake: Condvar::new(),
            one_at_a_time_above,
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

    /// A run handed out by [`Jobs::next`] is screened: queue what it set aside for the full
    /// work.
    fn screened(&self, items: Vec<SetAside<L>>) {
        let mut state = self.lock();
        state.screening -= 1;
        // The first worker may sleep only because this run was still being screened.
        let wake = !items.is_empty() || (state.closed && state.screening == 0);
        for item in items {
            if item.weight > self.one_at_a_time_above {
                state.heavy.push(item);
            } else {
                state.set_aside.push(item);
            }
        }
        if wake && state.sleeping > 0 {
            self.wake.notify_all();
        }
    }

    /// No more runs: workers stop once the queues are empty.
    fn close(&self) {
        self.lock().closed = true;
        self.wake.notify_all();
    }

    /// The next job for a worker: a run to screen first (the worker then reports it with
    /// [`Jobs::screened`]), else the heaviest item set aside it may take (a heavy one only
    /// when it `takes_heavy`); `None` once closed with nothing left for it. The worker that
    /// `takes_heavy` is the only one that can finish what a run still being screened sets
    /// aside heavy, so it ends only once no run is.
    fn next(&self, takes_heavy: bool) -> Option<Job<T, L>> {
        let mut state = self.lock();
        loop {
            if state.abandoned {
                return None;
            }
            if let Some(run) = state.runs.pop_front() {
                state.screening += 1;
                return Some(Job::Screen(run));
            }
            if takes_heavy && let Some(item) = state.heavy.pop() {
                return Some(Job::Finish(item));
            }
            if let Some(item) = state.set_aside.pop() {
                return Some(Job::Finish(item));
            }
            if state.closed && (!takes_heavy || state.screening == 0) {
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
        state.heavy.clear();
        state.closed = true;
        state.abandoned = true;
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
            u64::MAX,
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

    /// Items set aside, each weighing as given, each its index as the work to finish.
    fn set_aside_weighing(weights: &[(usize, u64)]) -> Vec<SetAside<usize>> {
        weights
            .iter()
            .map(|&(index, weight)| SetAside {
                weight,
                index,
                later: index,
            })
            .collect()
    }

    /// What `next` handed out, said in words.
    fn job_in_words(job: Job<u64, usize>) -> String {
        match job {
            Job::Screen((first, run)) => format!("screen {first} {run:?}"),
            Job::Finish(item) => format!("finish {}", item.index),
        }
    }

    #[test]
    fn runs_are_screened_before_what_was_set_aside_and_the_heaviest_is_finished_first() {
        let jobs = Jobs::new(u64::MAX);
        jobs.push((0, vec![10_u64, 11]));
        let mut order = vec![job_in_words(jobs.next(true).unwrap())];
        jobs.push((2, vec![12]));
        jobs.screened(set_aside_weighing(&[(1, 5), (2, 50), (3, 50), (4, 7)]));
        jobs.close();
        while let Some(job) = jobs.next(true) {
            let screening = matches!(job, Job::Screen(_));
            order.push(job_in_words(job));
            if screening {
                jobs.screened(Vec::new());
            }
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
    fn heavy_items_go_to_the_first_worker_only_and_the_heaviest_first() {
        let jobs: Jobs<u64, usize> = Jobs::new(20);
        jobs.push((0, vec![0]));
        assert!(matches!(jobs.next(false), Some(Job::Screen(_))));
        jobs.screened(set_aside_weighing(&[(1, 5), (2, 50), (3, 60), (4, 7)]));
        jobs.close();
        let next_index = |takes_heavy| match jobs.next(takes_heavy) {
            Some(Job::Finish(item)) => Some(item.index),
            Some(Job::Screen(_)) => unreachable!("no other run was pushed"),
            None => None,
        };
        assert_eq!(next_index(false), Some(4));
        assert_eq!(next_index(true), Some(3));
        assert_eq!(next_index(false), Some(1));
        // Only heavy items are left: the other workers are done.
        assert_eq!(next_index(false), None);
        assert_eq!(next_index(true), Some(2));
        assert_eq!(next_index(true), None);
    }

    /// What the first worker is handed when another worker screens the last run, which then
    /// sets `set_aside` aside (after the first worker had 50 ms to end too early).
    fn first_worker_while_the_last_run_sets_aside(set_aside: &[(usize, u64)]) -> Option<String> {
        let jobs: Jobs<u64, usize> = Jobs::new(20);
        jobs.push((0, vec![0]));
        // Another worker takes the last run; then no run will come any more.
        assert!(matches!(jobs.next(false), Some(Job::Screen(_))));
        jobs.close();
        std::thread::scope(|scope| {
            let first = scope.spawn(|| jobs.next(true).map(job_in_words));
            std::thread::sleep(std::time::Duration::from_millis(50));
            jobs.screened(set_aside_weighing(set_aside));
            first.join().unwrap()
        })
    }

    #[test]
    fn the_first_worker_stays_while_another_screens_a_run_that_may_set_heavy_items_aside() {
        // Ending early would leave the heavy item with no one to finish it.
        assert_eq!(
            first_worker_while_the_last_run_sets_aside(&[(0, 50)]).as_deref(),
            Some("finish 0")
        );
    }

    #[test]
    fn the_first_worker_ends_once_the_last_run_screened_sets_nothing_aside() {
        assert_eq!(first_worker_while_the_last_run_sets_aside(&[]), None);
    }

    #[test]
    fn heavy_items_set_aside_by_the_last_runs_on_other_threads_are_all_finished() {
        // The last items are heavy and slow to screen, so other workers still screen them when
        // the first worker runs out of runs.
        for _ in 0..20 {
            let mut seen = Vec::new();
            map_in_order_screened(
                0..64_u64,
                4,
                |item| {
                    if item < 56 {
                        return Screened::Done(item);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(2));
                    Screened::Later {
                        later: item,
                        weight: 1000,
                    }
                },
                |item| item,
                100,
                |result| {
                    seen.push(result);
                    ControlFlow::Continue(())
                },
            );
            assert_eq!(seen, (0..64).collect::<Vec<_>>());
        }
    }

    #[test]
    fn heavy_items_are_all_finished_on_one_thread_and_every_result_comes_back_in_order() {
        let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let heavy_threads = Mutex::new(std::collections::HashSet::new());
        let mut seen = Vec::new();
        map_in_order_screened(
            0..600_u64,
            4,
            |item| {
                if item % 3 == 0 {
                    Screened::Later {
                        later: item,
                        weight: item,
                    }
                } else {
                    Screened::Done(item)
                }
            },
            |item| {
                let heavy = item > 300;
                if heavy {
                    heavy_threads
                        .lock()
                        .unwrap()
                        .insert(std::thread::current().id());
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_micros(200));
                    running.fetch_sub(1, Ordering::SeqCst);
                }
                item
            },
            300,
            |result| {
                seen.push(result);
                ControlFlow::Continue(())
            },
        );
        assert_eq!(seen, (0..600).collect::<Vec<_>>());
        assert_eq!(most.load(Ordering::SeqCst), 1);
        assert_eq!(heavy_threads.lock().unwrap().len(), 1);
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
            u64::MAX,
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
                u64::MAX,
                |_| ControlFlow::Continue(()),
            );
        });
        assert!(outcome.is_err());
    }
}
