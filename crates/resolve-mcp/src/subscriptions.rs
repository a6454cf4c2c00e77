//! Resource subscriptions: `resources/subscribe` (protocol 2025-11-25) and the resource URIs of
//! `subscriptions/listen` streams (2026-07-28), and `notifications/resources/updated` when a
//! watched resource changes: a pending preview applied, discarded, amended, or gone stale
//! because a file it changes was edited (by any process). Also the `list_changed` fan-out to
//! listen streams.
//!
//! Changes are found by comparing each watched resource's state with the state it had at the
//! last check: after every tool call of this connection, and every [`POLL_INTERVAL`] while
//! anything is watched (other processes change files and the store too).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use resolve_edit::{Store, StoreError, StoredAction, TaskDied, run_blocking};
use rmcp::RoleServer;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, SubscriptionSink};

use crate::resources::{HISTORY_URI_PREFIX, PENDING_URI_PREFIX};

/// How often watched resources are checked while nothing else happens on the connection.
pub(crate) const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The subscriptions of one connection and what their resources looked like last.
#[derive(Debug)]
pub(crate) struct Watches {
    store: Store,
    /// Where `resources/subscribe` notifications go (the legacy session's peer).
    peer: Mutex<Option<Peer<RoleServer>>>,
    /// URIs subscribed with `resources/subscribe`.
    subscribed: Mutex<HashSet<String>>,
    /// Live `subscriptions/listen` streams.
    sinks: Mutex<Vec<SubscriptionSink>>,
    /// Each watched URI's state at the last check.
    last: Mutex<HashMap<String, String>>,
    /// Whether the poller runs.
    polling: AtomicBool,
}

impl Watches {
    /// No subscriptions yet, over `store`.
    pub(crate) fn new(store: Store) -> Self {
        Self {
            store,
            peer: Mutex::new(None),
            subscribed: Mutex::new(HashSet::new()),
            sinks: Mutex::new(Vec::new()),
            last: Mutex::new(HashMap::new()),
            polling: AtomicBool::new(false),
        }
    }

    /// Whether `uri` names one of our resources (pending or history).
    pub(crate) fn is_ours(uri: &str) -> bool {
        uri.starts_with(PENDING_URI_PREFIX) || uri.starts_with(HISTORY_URI_PREFIX)
    }

    /// `resources/subscribe` to `uri` from `peer`.
    pub(crate) async fn subscribe(self: &Arc<Self>, uri: String, peer: Peer<RoleServer>) {
        *lock(&self.peer) = Some(peer);
        lock(&self.subscribed).insert(uri.clone());
        self.remember(vec![uri]).await;
        self.start_polling();
    }

    /// `resources/unsubscribe` from `uri`.
    pub(crate) fn unsubscribe(&self, uri: &str) {
        lock(&self.subscribed).remove(uri);
    }

    /// A `subscriptions/listen` stream opened; its accepted resource URIs are watched.
    pub(crate) async fn add_sink(self: &Arc<Self>, sink: SubscriptionSink) {
        let uris = sink
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        lock(&self.sinks).push(sink);
        if !uris.is_empty() {
            // Their state was taken when the stream was accepted (see
            // [`Watches::remember_accepted`]); only a URI missed then is read now.
            let missed: Vec<String> = {
                let last = lock(&self.last);
                uris.into_iter()
                    .filter(|uri| !last.contains_key(uri))
                    .collect()
            };
            self.remember(missed).await;
            self.start_polling();
        }
    }

    /// Record the current state of the URIs a `subscriptions/listen` stream is about to be
    /// told are honored, before the client hears it: a change the client makes right after
    /// that answer is then a change, not the starting state. Reads the store on the calling
    /// thread (a few small files).
    pub(crate) fn remember_accepted(&self, uris: &[String]) {
        let states: Vec<(String, String)> = uris
            .iter()
            .map(|uri| (uri.clone(), state_of(&self.store, uri)))
            .collect();
        lock(&self.last).extend(states);
    }

    /// The stream `sink` ended.
    pub(crate) fn remove_sink(&self, sink: &SubscriptionSink) {
        lock(&self.sinks).retain(|live| live.id() != sink.id());
    }

    /// The live listen streams.
    pub(crate) fn sinks(&self) -> Vec<SubscriptionSink> {
        lock(&self.sinks).clone()
    }

    /// Every watched URI: subscribed, or accepted by a live stream.
    fn watched(&self) -> HashSet<String> {
        let mut watched = lock(&self.subscribed).clone();
        for sink in lock(&self.sinks).iter() {
            watched.extend(
                sink.accepted()
                    .resource_subscriptions
                    .iter()
                    .flatten()
                    .cloned(),
            );
        }
        watched
    }

    /// Each of `uris` with its current state, read off the store by the blocking task `task`.
    async fn states_of(
        &self,
        task: &'static str,
        uris: Vec<String>,
    ) -> Result<Vec<(String, String)>, TaskDied> {
        let store = self.store.clone();
        run_blocking(task, move || {
            uris.into_iter()
                .map(|uri| {
                    let state = state_of(&store, &uri);
                    (uri, state)
                })
                .collect()
        })
        .await
    }

    /// Record the current state of `uris` (so only later changes are notified).
    async fn remember(&self, uris: Vec<String>) {
        let states = self
            .states_of("resource state", uris)
            .await
            .unwrap_or_default();
        lock(&self.last).extend(states);
    }

    /// Check every watched resource and send `notifications/resources/updated` for each one
    /// whose state changed since the last check. Returns whether anything is still watched.
    pub(crate) async fn check(&self) -> bool {
        let watched = self.watched();
        if watched.is_empty() {
            lock(&self.last).clear();
            return false;
        }
        let uris: Vec<String> = watched.iter().cloned().collect();
        let Ok(states) = self.states_of("resource states", uris).await else {
            return true;
        };
        let changed: Vec<String> = {
            let mut last = lock(&self.last);
            last.retain(|uri, _| watched.contains(uri));
            states
                .into_iter()
                .filter_map(|(uri, state)| {
                    let before = last.insert(uri.clone(), state.clone());
                    (before.is_some_and(|before| before != state)).then_some(uri)
                })
                .collect()
        };
        for uri in changed {
            self.notify_updated(&uri).await;
        }
        true
    }

    async fn notify_updated(&self, uri: &str) {
        let peer = lock(&self.peer).clone();
        if let Some(peer) = peer
            && lock(&self.subscribed).contains(uri)
            && let Err(error) = peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
        {
            tracing::debug!(%error, "could not send notifications/resources/updated");
        }
        for sink in self.sinks() {
            let accepted = sink
                .accepted()
                .resource_subscriptions
                .as_ref()
                .is_some_and(|uris| uris.iter().any(|accepted| accepted == uri));
            if accepted && let Err(error) = sink.notify_resource_updated(uri).await {
                tracing::debug!(%error, "could not notify a resource subscription");
            }
        }
    }

    /// Start the poller unless it runs. It ends when nothing is watched any more or the
    /// connection is gone.
    fn start_polling(self: &Arc<Self>) {
        if self.polling.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak: Weak<Self> = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(POLL_INTERVAL).await;
                let Some(watches) = weak.upgrade() else {
                    return;
                };
                if !watches.check().await {
                    watches.polling.store(false, Ordering::SeqCst);
                    return;
                }
            }
        });
    }
}

/// A resource's state, compared between checks: for a pending preview its change set, preview
/// and which files went stale; for a resolved one its outcome; or that it is unknown.
fn state_of(store: &Store, uri: &str) -> String {
    let id = uri
        .strip_prefix(PENDING_URI_PREFIX)
        .or_else(|| uri.strip_prefix(HISTORY_URI_PREFIX))
        .unwrap_or(uri);
    match store.get(id) {
        Ok(StoredAction::Pending(record)) => {
            let stale = store.stale_files(&record).map_or_else(
                |error| format!("unknown ({error})"),
                |files| files.join(","),
            );
            format!(
                "pending {} {:?} stale: {stale}",
                record.fingerprint, record.preview_text
            )
        }
        Ok(StoredAction::Resolved(entry)) => {
            format!("{:?} undone: {}", entry.outcome, entry.undone)
        }
        Err(StoreError::UnknownAction { .. }) => "unknown".to_owned(),
        Err(error) => format!("unreadable: {error}"),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
