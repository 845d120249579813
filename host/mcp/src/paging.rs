//! Following a list's pages (`tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list`) with the guards rmcp's `list_all_*` lacks: a budget per page, at
//! most [`MAX_LIST_PAGES`] pages, no page followed once [`MAX_LISTED_ITEMS`] items are in, and
//! a stop when a server repeats a cursor. Then [`keep_first`] keeps the first of each name, up
//! to a cap, in one pass that gives the runtime back as it goes (so the startup budget's timer
//! fires whatever the server sent).

use std::collections::HashSet;
use std::future::Future;
use std::hash::Hash;
use std::time::Duration;

use rmcp::model::PaginatedRequestParams;
use rmcp::service::ServiceError;

/// At most this many pages of one list are followed (a server repeating a cursor forever
/// would otherwise hang discovery).
pub const MAX_LIST_PAGES: usize = 100;

/// No further page of a list is fetched once this many items were listed (one page can still
/// hold more, up to the 16 MiB message cap).
pub const MAX_LISTED_ITEMS: usize = 100_000;

/// A loop over listed items gives the runtime back every this many items.
const YIELD_EVERY: usize = 256;

/// One page: its items and the cursor of the next page.
pub(crate) type Page<T> = (Vec<T>, Option<String>);

/// Every item of every page of the list `what`, fetched by `fetch` (each page within
/// `page_budget`). A repeated cursor or the page limit stops paging with a warning and keeps
/// what was listed; a failed page fails the listing with a message naming `what`.
pub(crate) async fn all_pages<T, F, Fut>(
    server: &str,
    what: &str,
    page_budget: Duration,
    mut fetch: F,
) -> Result<Vec<T>, String>
where
    F: FnMut(Option<PaginatedRequestParams>) -> Fut,
    Fut: Future<Output = Result<Page<T>, ServiceError>>,
{
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..MAX_LIST_PAGES {
        let params = cursor.take().map(|c| {
            let mut p = PaginatedRequestParams::default();
            p.cursor = Some(c);
            p
        });
        let (page, next) = tokio::time::timeout(page_budget, fetch(params))
            .await
            .map_err(|_| format!("{what} got no answer within the call budget"))?
            .map_err(|e| format!("{what} failed: {e}"))?;
        items.extend(page);
        if items.len() >= MAX_LISTED_ITEMS && next.is_some() {
            tracing::warn!(target: "rho::mcp", server, items = items.len(), "{what} item limit reached; stopped paging");
            return Ok(items);
        }
        match next {
            Some(next) if seen.insert(next.clone()) => cursor = Some(next),
            Some(_) => {
                tracing::warn!(target: "rho::mcp", server, "{what} repeated a cursor; stopped paging");
                return Ok(items);
            }
            None => return Ok(items),
        }
    }
    tracing::warn!(target: "rho::mcp", server, pages = MAX_LIST_PAGES, "{what} page limit reached");
    Ok(items)
}

/// What [`keep_first`] kept.
#[derive(Debug)]
pub(crate) struct Kept<T> {
    /// The items kept, in the server's order.
    pub items: Vec<T>,
    /// Distinct wanted items beyond the cap, not kept.
    pub left_out: usize,
    /// Items that repeated an earlier one's key (the first is kept).
    pub duplicates: usize,
}

/// The first `cap` wanted items of `listed` with distinct keys, in order, each turned into a
/// `T` by `make` (an item it refuses is dropped). `key` says whether an item is wanted (`None`:
/// skipped, not counted) and what makes it distinct. One pass, a hash set of keys, and a yield
/// to the runtime every few hundred items, so a timeout around it can fire; only kept items
/// are turned into `T`.
pub(crate) async fn keep_first<R, K, T>(
    listed: Vec<R>,
    cap: usize,
    mut key: impl FnMut(&R) -> Option<K>,
    mut make: impl FnMut(R) -> Option<T>,
) -> Kept<T>
where
    K: Hash + Eq,
{
    let mut seen = HashSet::new();
    let mut kept = Kept {
        items: Vec::new(),
        left_out: 0,
        duplicates: 0,
    };
    for (n, item) in listed.into_iter().enumerate() {
        if n % YIELD_EVERY == YIELD_EVERY - 1 {
            tokio::task::yield_now().await;
        }
        let Some(k) = key(&item) else { continue };
        if !seen.insert(k) {
            kept.duplicates += 1;
        } else if kept.items.len() >= cap {
            kept.left_out += 1;
        } else if let Some(made) = make(item) {
            kept.items.push(made);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn a_repeated_cursor_stops_paging_and_keeps_what_was_listed() {
        let mut calls = 0;
        let items = all_pages("s", "x/list", Duration::from_secs(1), |_params| {
            calls += 1;
            let n = calls;
            async move { Ok((vec![n], Some("same".to_owned()))) }
        })
        .await
        .unwrap();
        assert_eq!(items, vec![1, 2]);
    }

    #[tokio::test]
    async fn paging_ends_at_the_page_limit() {
        let mut calls = 0;
        let items = all_pages("s", "x/list", Duration::from_secs(1), |_params| {
            calls += 1;
            let n = calls;
            async move { Ok((vec![n], Some(format!("c{n}")))) }
        })
        .await
        .unwrap();
        assert_eq!(items.len(), MAX_LIST_PAGES);
    }

    #[tokio::test]
    async fn paging_stops_once_the_item_limit_is_reached() {
        let mut calls = 0;
        let items = all_pages("s", "x/list", Duration::from_secs(1), |_params| {
            calls += 1;
            let n = calls;
            async move { Ok((vec![0u8; MAX_LISTED_ITEMS / 4], Some(format!("c{n}")))) }
        })
        .await
        .unwrap();
        assert_eq!(items.len(), MAX_LISTED_ITEMS);
    }

    #[tokio::test]
    async fn the_first_of_each_key_is_kept_up_to_the_cap_and_the_rest_counted() {
        let listed = vec!["a", "b", "a", "skip", "c", "d", "c", "e"];
        let kept = keep_first(
            listed,
            3,
            |s| (*s != "skip").then(|| s.to_string()),
            |s| Some(s.to_uppercase()),
        )
        .await;
        assert_eq!(kept.items, ["A", "B", "C"]);
        assert_eq!(kept.left_out, 2, "d and e");
        assert_eq!(kept.duplicates, 2);
    }

    #[tokio::test]
    async fn a_hundred_thousand_items_are_kept_in_one_pass() {
        let listed: Vec<String> = (0..100_000).map(|n| format!("t{n}")).collect();
        let kept = keep_first(listed, usize::MAX, |s| Some(s.clone()), Some).await;
        assert_eq!(kept.items.len(), 100_000);
        assert_eq!(kept.duplicates, 0);
    }

    /// On a single-threaded runtime the spawned task runs only if `keep_first` gives the
    /// thread back before it is done.
    #[tokio::test(flavor = "current_thread")]
    async fn a_long_listing_gives_the_runtime_back() {
        let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = ran.clone();
        tokio::spawn(async move { flag.store(true, std::sync::atomic::Ordering::SeqCst) });
        let listed: Vec<u32> = (0..10_000).collect();
        let kept = keep_first(listed, 10, |n| Some(*n), Some).await;
        assert_eq!(kept.left_out, 9_990);
        assert!(ran.load(std::sync::atomic::Ordering::SeqCst));
    }

    #[tokio::test]
    async fn a_failed_page_names_the_list() {
        let result: Result<Vec<u8>, _> = all_pages(
            "s",
            "prompts/list",
            Duration::from_secs(1),
            |_params| async { Err(ServiceError::TransportClosed) },
        )
        .await;
        assert!(result.unwrap_err().starts_with("prompts/list failed"));
    }
}
