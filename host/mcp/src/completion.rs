//! Argument suggestions for a prompt (`completion/complete`): never an error, never more than
//! one request in flight per server, answers reused from a bounded cache, and the latest
//! question wins, so typing fast costs one request per reply rather than one per keystroke
//! (`docs/mcp.md`, "Argument suggestions").

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model::CompletionContext;

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
        if !self.summary.completions {
            return Vec::new();
        }
        let state = &self.completions;
        let key: Key = (prompt.into(), argument.into(), value.into(), context);
        if let Some(hit) = state.cached(&key) {
            return hit;
        }
        let mine = state.latest.fetch_add(1, Ordering::SeqCst).wrapping_add(1);
        let _flight = state.flight.lock().await;
        // The request just finished may have answered exactly this.
        if let Some(hit) = state.cached(&key) {
            return hit;
        }
        if state.latest.load(Ordering::SeqCst) != mine {
            return Vec::new();
        }
        let context = (!key.3.is_empty())
            .then(|| CompletionContext::with_arguments(key.3.clone().into_iter().collect()));
        let asked = self
            .service
            .complete_prompt_argument(prompt, argument, value, context);
        let values = match tokio::time::timeout(COMPLETION_TIMEOUT, asked).await {
            Ok(Ok(info)) => bounded(info.values),
            Ok(Err(e)) => {
                tracing::debug!(target: "rho::mcp", server = self.spec.id.as_str(), "completion/complete failed: {e}");
                return Vec::new();
            }
            Err(_) => {
                tracing::debug!(target: "rho::mcp", server = self.spec.id.as_str(), "completion/complete got no answer in time");
                return Vec::new();
            }
        };
        if let Ok(mut cache) = state.cache.lock() {
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

    #[test]
    fn values_are_capped_and_deduplicated() {
        let values: Vec<String> = (0..300).map(|n| (n % 150).to_string()).collect();
        let kept = bounded(values);
        assert_eq!(kept.len(), MAX_COMPLETION_VALUES);
        assert_eq!(kept[0], "0");
    }
}
