//! Bounded capture of a command's output stream: head and tail kept, the middle counted.
//!
//! A command that prints gigabytes costs a fixed amount of memory.

use std::collections::VecDeque;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Bytes kept from the start of a stream.
const HEAD_BYTES: usize = 32 * 1024;
/// Bytes kept from the end of a stream (errors tend to come last).
const TAIL_BYTES: usize = 32 * 1024;
/// The read buffer size.
const CHUNK_BYTES: usize = 8 * 1024;

/// What was kept of one stream, and how much it produced in all.
#[derive(Debug, Default)]
pub(crate) struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capture {
    /// An empty capture.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Records `bytes`: into the head while it has room, then into the rolling tail.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total = self.total.saturating_add(bytes.len() as u64);
        let room = HEAD_BYTES.saturating_sub(self.head.len());
        if room > 0 {
            let take = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= TAIL_BYTES {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - TAIL_BYTES..]);
            return;
        }
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(TAIL_BYTES);
        self.tail.drain(..excess);
    }

    /// Bytes produced but not kept.
    pub(crate) fn omitted(&self) -> u64 {
        self.total
            .saturating_sub((self.head.len() + self.tail.len()) as u64)
    }

    /// Whether nothing was produced.
    pub(crate) fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The kept text (invalid UTF-8 replaced), with a marker where bytes were left out.
    pub(crate) fn render(&self) -> String {
        let (front, back) = self.tail.as_slices();
        let mut tail = Vec::with_capacity(self.tail.len());
        tail.extend_from_slice(front);
        tail.extend_from_slice(back);
        let omitted = self.omitted();
        if omitted == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        format!(
            "{}\n[... {omitted} bytes omitted; {} bytes in all ...]\n{}",
            String::from_utf8_lossy(&self.head),
            self.total,
            String::from_utf8_lossy(&tail)
        )
    }
}

/// Reads `reader` to its end into `capture`. A read error ends the stream: what was captured
/// stays.
pub(crate) async fn drain<R: AsyncRead + Unpin>(reader: Option<R>, capture: &mut Capture) {
    let Some(mut reader) = reader else {
        return;
    };
    let mut buffer = vec![0u8; CHUNK_BYTES];
    loop {
        match reader.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => capture.push(&buffer[..n]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_streams_are_kept_whole() {
        let mut capture = Capture::new();
        assert!(capture.is_empty());
        capture.push(b"hello ");
        capture.push(b"world");
        assert_eq!(capture.render(), "hello world");
        assert_eq!(capture.omitted(), 0);
    }

    #[test]
    fn large_streams_keep_head_and_tail() {
        let mut capture = Capture::new();
        capture.push(&vec![b'a'; HEAD_BYTES]);
        for _ in 0..100 {
            capture.push(&vec![b'b'; 10_000]);
        }
        capture.push(&[b'c'; 100]);
        let total = (HEAD_BYTES + 1_000_000 + 100) as u64;
        assert_eq!(capture.omitted(), total - (HEAD_BYTES + TAIL_BYTES) as u64);
        let text = capture.render();
        assert!(text.starts_with(&"a".repeat(HEAD_BYTES)));
        assert!(text.ends_with(&format!(
            "{}{}",
            "b".repeat(TAIL_BYTES - 100),
            "c".repeat(100)
        )));
        assert!(text.contains(&format!("bytes omitted; {total} bytes in all")));
        assert!(text.len() < HEAD_BYTES + TAIL_BYTES + 100);
    }

    #[test]
    fn one_huge_push_is_bounded_too() {
        let mut capture = Capture::new();
        capture.push(&vec![b'x'; 1_000_000]);
        assert_eq!(capture.head.len(), HEAD_BYTES);
        assert_eq!(capture.tail.len(), TAIL_BYTES);
        assert_eq!(
            capture.omitted(),
            1_000_000 - (HEAD_BYTES + TAIL_BYTES) as u64
        );
    }
}
