//! Following a list's pages (`tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list`) with the guards rmcp's `list_all_*` lacks: a budget per page, at
//! most [`MAX_LIST_PAGES`] pages, and a stop when a server repeats a cursor.

use std::collections::HashSet;
use std::future::Future;
use std::time::Duration;

use rmcp::model::PaginatedRequestParams;
use rmcp::service::ServiceError;

/// At most this many pages of one list are followed (a server repeating a cursor forever
/// would otherwise hang discovery).
pub const MAX_LIST_PAGES: usize = 100;

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
