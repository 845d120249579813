//! Fuzzes the provider stream's SSE parser: never a panic, and (by its design, bytes in chunks
//! of any size) feeding the input in two or three chunks gives the same events and the same
//! refusal as feeding it whole. The first byte picks the cuts, the second the event cap; the
//! stream cap is out of reach, since a stream refusal depends on the chunk sizes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rho_core::provider::fuzzing::sse_events;

fuzz_target!(|data: &[u8]| {
    let [cut, cap, body @ ..] = data else {
        return;
    };
    let max_event = 16 + usize::from(*cap) * 16;
    let whole = sse_events(&[body], max_event, usize::MAX);
    let first = usize::from(*cut) % (body.len() + 1);
    let (a, rest) = body.split_at(first);
    let two = sse_events(&[a, rest], max_event, usize::MAX);
    assert_eq!(whole, two, "split at {first}");
    let (b, c) = rest.split_at(rest.len() / 2);
    let three = sse_events(&[a, b"", b, c], max_event, usize::MAX);
    assert_eq!(whole, three, "split at {first} and {}", first + b.len());
    let bytes: usize = whole.0.iter().map(|(e, d)| e.len() + d.len()).sum();
    // Lossy decoding may grow a byte to three; the output stays bounded by the input.
    assert!(bytes <= 3 * body.len(), "more output than input");
    // A small stream cap only refuses, never panics.
    let _ = sse_events(&[body], max_event, body.len() / 2);
});
