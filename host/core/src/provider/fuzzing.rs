//! Entry point for the `sse_events` fuzz target in `fuzz/`: the provider stream's SSE parser
//! (`sse.rs`) behind a small public function. Not a stable API.

use super::sse::{SseEvent, SseParser};

/// Feeds `chunks` in order to a parser with the given caps and ends the stream.
///
/// Returns the dispatched events as `(event, data)` pairs and, when the stream was refused,
/// the refusal (the stream stops there, as the provider stops reading).
pub fn sse_events(
    chunks: &[&[u8]],
    max_event: usize,
    max_total: usize,
) -> (Vec<(String, String)>, Option<String>) {
    let mut parser = SseParser::new(max_event, max_total);
    let mut out = Vec::new();
    let mut refused = None;
    for chunk in chunks {
        if let Err(e) = parser.push(chunk, &mut out) {
            refused = Some(e.to_string());
            break;
        }
    }
    if refused.is_none() {
        parser.finish(&mut out);
    }
    let events = out
        .into_iter()
        .map(|SseEvent { event, data }| (event, data))
        .collect();
    (events, refused)
}
