//! Argument suggestions for a prompt (`completion/complete`): never an error, never more than
//! one request in flight per server, answers reused from a bounded cache, and the latest
//! question wins, so typing fast costs one request per reply rather than one per keystroke
//! (`docs/mcp.md`, "Argument suggestions").

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model::{ArgumentInfo, CompleteRequestParams, CompletionContext, Reference};

use crate::connection::Connection;

/// How long one suggestion request may take; a later answer is of no use to a person typing.
pub const COMPLETION_TIMEOUT: Duration = Duration::from_secs(5);
/// Answers kept per server.
pub const COMPLETION_CACHE_ENTRIES: usize = 256;
/// Values kept per answer (the protocol's own limit).
pub const MAX_COMPLETION_VALUES: usize = 100;

/// (prompt, argument, value, context) — what one answer depends on.
type Key = (String, String, String, BTreeMap<String, String>);

/// A connection's suggestion state.
#[derive(Default)]
pub(crate) struct Completions {
    cache: Mutex<Cache>,
    /// Held while a request is in flight: the next one waits for it.
    flight: tokio::sync::Mutex<()>,
    /// Bumped by every request: a waiting request that is no longer the latest gives up.
    latest: AtomicU64,
}

#[derive(Default)]
struct Cache {
    answers: HashMap<Key, Vec<String>>,
    /// Oldest first, for eviction.
    order: VecDeque<Key>,
}

impl Cache {
    fn get(&self, key: &Key) -> Option<Vec<String>> {
        self.answers.get(key).cloned()
    }

    fn put(&mut self, key: Key, values: Vec<String>) {
        if self.answers.insert(key.clone(), values).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > COMPLETION_CACHE_ENTRIES {
            if let Some(oldest) = self.order.pop_front() {
                self.answers.remove(&oldest);
            }
        }
    }
}

impl Completions {
    fn cached(&self, key: &Key) -> Option<Vec<String>> {
        self.cache.lock().ok().and_then(|c| c.get(key))
    }
}

impl Connection {
    /// Whether the server declared `completions` (only then is it ever asked).
    pub fn supports_completions(&self) -> bool {
        self.summary.completions
    }

    /// Suggestions for `argument` of `prompt` given what was typed so far (`value`) and the
    /// other arguments already filled in (`context`). Never fails: no capability, a failure,
    /// or no answer within 5 s gives no suggestions. A request that finds another in flight
    /// waits for it, and gives up (empty) if a newer request arrived meanwhile.
    pub async fn complete(
        &self,
        prompt: &str,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
    ) -> Vec<String> {
        let reference = Reference::for_prompt(prompt);
        let named = format!("prompt:{prompt}");
        self.complete_argument(reference, named, argument, value, context)
            .await
    }

    /// Suggestions for `argument` of the resource template `uri_template`, as
    /// [`Connection::complete`] gives them for a prompt's.
    pub async fn complete_template(
        &self,
        uri_template: &str,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
    ) -> Vec<String> {
        let reference = Reference::for_resource(uri_template);
        let named = format!("resource:{uri_template}");
        self.complete_argument(reference, named, argument, value, context)
            .await
    }

    /// Asks for suggestions of `argument` of `reference` (cached under `named`, which keeps
    /// prompts and templates apart: a prompt may be named like a template's URI).
    async fn complete_argument(
        &self,
        reference: Reference,
        named: String,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
    ) -> Vec<String> {
        if !self.summary.completions {
            return Vec::new();
        }
        let key: Key = (named, argument.into(), value.into(), context);
        let context = (!key.3.is_empty())
            .then(|| CompletionContext::with_arguments(key.3.clone().into_iter().collect()));
        let server = self.spec.id.as_str();
        let ask = || async move {
            let request = CompleteRequestParams::new(reference, ArgumentInfo::new(argument, value));
            let request = match context {
                Some(context) => request.with_context(context),
                None => request,
            };
            let asked = self.service.complete(request);
            match tokio::time::timeout(COMPLETION_TIMEOUT, asked).await {
                Ok(Ok(result)) => Some(result.completion.values),
                Ok(Err(e)) => {
                    tracing::debug!(target: "rho::mcp", server, "completion/complete failed: {e}");
                    None
                }
                Err(_) => {
                    tracing::debug!(target: "rho::mcp", server, "completion/complete got no answer in time");
                    None
                }
            }
        };
        self.completions.answer(key, ask).await
    }
}

impl Completions {
    /// The answer for `key`: from the cache, or from `ask` when this is still the latest
    /// request once the one in flight (if any) is done. `ask` gives `None` on failure.
    async fn answer<F, Fut>(&self, key: Key, ask: F) -> Vec<String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Option<Vec<String>>>,
    {
        if let Some(hit) = self.cached(&key) {
            return hit;
        }
        let mine = self.latest.fetch_add(1, Ordering::SeqCst).wrapping_add(1);
        let _flight = self.flight.lock().await;
        // The request just finished may have answered exactly this.
        if let Some(hit) = self.cached(&key) {
            return hit;
        }
        if self.latest.load(Ordering::SeqCst) != mine {
            return Vec::new();
        }
        let Some(values) = ask().await else {
            return Vec::new();
        };
        let values = bounded(values);
        if let Ok(mut cache) = self.cache.lock() {
            cache.put(key, values.clone());
        }
        values
    }
}

/// At most [`MAX_COMPLETION_VALUES`] distinct values, in the server's order.
fn bounded(values: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    values
        .into_iter()
        .filter(|v| seen.insert(v.clone()))
        .take(MAX_COMPLETION_VALUES)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: usize) -> Key {
        ("p".into(), "a".into(), n.to_string(), BTreeMap::new())
    }

    #[test]
    fn the_cache_is_bounded_and_evicts_the_oldest() {
        let mut cache = Cache::default();
        for n in 0..=COMPLETION_CACHE_ENTRIES {
            cache.put(key(n), vec![n.to_string()]);
        }
        assert_eq!(cache.answers.len(), COMPLETION_CACHE_ENTRIES);
        assert!(cache.get(&key(0)).is_none());
        assert_eq!(cache.get(&key(1)), Some(vec!["1".to_owned()]));
    }

    #[tokio::test]
    async fn one_request_in_flight_and_the_latest_waiting_one_wins() {
        let completions = std::sync::Arc::new(Completions::default());
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let first = tokio::spawn({
            let completions = completions.clone();
            async move {
                completions
                    .answer(key(1), || async move {
                        let _ = released.await;
                        Some(vec!["one".to_owned()])
                    })
                    .await
            }
        });
        // Let the first request take the flight before two more queue behind it.
        while completions.flight.try_lock().is_ok() {
            tokio::task::yield_now().await;
        }
        let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let queued = |n: usize| {
            let completions = completions.clone();
            let asked = asked.clone();
            tokio::spawn(async move {
                completions
                    .answer(key(n), || async move {
                        asked.fetch_add(1, Ordering::SeqCst);
                        Some(vec![n.to_string()])
                    })
                    .await
            })
        };
        let second = queued(2);
        while completions.latest.load(Ordering::SeqCst) < 2 {
            tokio::task::yield_now().await;
        }
        let third = queued(3);
        while completions.latest.load(Ordering::SeqCst) < 3 {
            tokio::task::yield_now().await;
        }
        let _ = release.send(());
        assert_eq!(first.await.unwrap_or_default(), ["one"]);
        assert!(
            second.await.unwrap_or_default().is_empty(),
            "overtaken: gives up unasked"
        );
        assert_eq!(third.await.unwrap_or_default(), ["3"]);
        assert_eq!(
            asked.load(Ordering::SeqCst),
            1,
            "only the latest waiting request asked"
        );
        // Cached now: answered without asking.
        let again = completions.answer(key(3), || async { None }).await;
        assert_eq!(again, ["3"]);
    }

    #[test]
    fn values_are_capped_and_deduplicated() {
        let values: Vec<String> = (0..300).map(|n| (n % 150).to_string()).collect();
        let kept = bounded(values);
        assert_eq!(kept.len(), MAX_COMPLETION_VALUES);
        assert_eq!(kept[0], "0");
    }
}
