//! Tools that need MCP tasks (`execution.taskSupport: "required"`, 2025-11-25 and later): rmcp's
//! tool model has no `execution`, so each `tools/list` answer is read for it as it arrives, before
//! rmcp decodes it (a stdio server's lines, the events of an HTTP answer's stream; a plain JSON
//! HTTP answer is asked for once more and read raw, `http.rs`).

use std::collections::HashSet;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use serde::Deserialize;
use tokio::io::{AsyncRead, ReadBuf};

/// The longest line read for the flag: rmcp drops longer messages anyway.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// The tools of one server that declared `execution.taskSupport: "required"` in its latest
/// listing of them. Shared by the connection's transport (which writes it) and its tool lists
/// (which read it when they build a [`crate::ServerTool`]).
#[derive(Clone, Default)]
pub(crate) struct TaskFlags(Arc<Mutex<HashSet<String>>>);

/// A `tools/list` answer, reduced to what the flag needs.
#[derive(Deserialize)]
struct Answer {
    result: Listing,
}

#[derive(Deserialize)]
struct Listing {
    tools: Vec<ListedTool>,
}

#[derive(Deserialize)]
struct ListedTool {
    name: String,
    #[serde(default)]
    execution: Option<Execution>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Execution {
    #[serde(default)]
    task_support: Option<serde_json::Value>,
}

impl TaskFlags {
    /// Whether the server's latest listing said `tool` needs task support.
    pub(crate) fn required(&self, tool: &str) -> bool {
        self.0.lock().is_ok_and(|set| set.contains(tool))
    }

    /// Reads one JSON-RPC message the server sent: when it is a `tools/list` answer, each
    /// tool it lists is recorded as needing tasks or not. Anything else is left alone; only a
    /// message holding the key `"tools"` is decoded at all.
    pub(crate) fn scan(&self, message: &[u8]) {
        if !contains(message, b"\"tools\"") {
            return;
        }
        let Ok(answer) = serde_json::from_slice::<Answer>(message) else {
            return;
        };
        let Ok(mut set) = self.0.lock() else {
            return;
        };
        for tool in answer.result.tools {
            let required = tool
                .execution
                .and_then(|e| e.task_support)
                .is_some_and(|s| s == "required");
            if required {
                set.insert(tool.name);
            } else {
                set.remove(&tool.name);
            }
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A stdio server's output, passed through unchanged, with each line scanned by [`TaskFlags`]
/// as it completes (before rmcp's decoder sees the bytes, so a listing's flags are recorded
/// before the listing returns).
pub(crate) struct Tapped<R> {
    inner: R,
    flags: TaskFlags,
    line: Vec<u8>,
    /// The current line grew past [`MAX_LINE`]: it is not scanned.
    overlong: bool,
}

impl<R> Tapped<R> {
    pub(crate) fn new(inner: R, flags: TaskFlags) -> Self {
        Self {
            inner,
            flags,
            line: Vec::new(),
            overlong: false,
        }
    }

    fn take(&mut self, mut bytes: &[u8]) {
        while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
            self.push(&bytes[..end]);
            if !self.overlong {
                self.flags.scan(&self.line);
            }
            self.line.clear();
            self.overlong = false;
            bytes = &bytes[end + 1..];
        }
        self.push(bytes);
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.overlong {
            return;
        }
        if self.line.len() + bytes.len() > MAX_LINE {
            self.overlong = true;
            self.line = Vec::new();
        } else {
            self.line.extend_from_slice(bytes);
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Tapped<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.take(&buf.filled()[before..]);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use tokio::io::AsyncReadExt;

    use super::*;

    const LISTING: &str = r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},{"name":"quick","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},{"name":"plain","inputSchema":{"type":"object"}}]}}"#;

    #[test]
    fn a_listing_records_required_tools_only() {
        let flags = TaskFlags::default();
        flags.scan(LISTING.as_bytes());
        assert!(flags.required("slow"));
        assert!(!flags.required("quick"));
        assert!(!flags.required("plain"));
    }

    #[test]
    fn a_later_listing_clears_the_flag_and_other_messages_change_nothing() {
        let flags = TaskFlags::default();
        flags.scan(LISTING.as_bytes());
        flags.scan(br#"{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"\"tools\""}]}}"#);
        assert!(flags.required("slow"));
        flags.scan(
            br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"slow","inputSchema":{}}]}}"#,
        );
        assert!(!flags.required("slow"));
    }

    #[tokio::test]
    async fn the_tap_passes_bytes_through_and_scans_split_lines() {
        let flags = TaskFlags::default();
        let text = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"x\"}}\n{LISTING}\n");
        let (mut writer, reader) = tokio::io::duplex(7);
        let sent = text.clone();
        let writing = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            writer.write_all(sent.as_bytes()).await.unwrap();
        });
        let mut tapped = Tapped::new(reader, flags.clone());
        let mut read = String::new();
        tapped.read_to_string(&mut read).await.unwrap();
        writing.await.unwrap();
        assert_eq!(read, text);
        assert!(flags.required("slow"));
    }
}
