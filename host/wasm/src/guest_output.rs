//! A guest's stdout and stderr: kept up to a fixed size per call (writes past it are accepted
//! and dropped, so a chatty guest neither traps nor grows the host), then forwarded to
//! `tracing` under target `rho::wasm::guest`.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// Bytes of stdout and of stderr kept per call.
pub const GUEST_OUTPUT_MAX_BYTES: usize = 64 * 1024;

/// The most a single `check-write` permits (WASI streams write in chunks of at most this).
const WRITE_PERMIT: usize = 64 * 1024;

#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    dropped: u64,
}

/// One captured stream; clones share the buffer.
#[derive(Clone, Default)]
pub(crate) struct CapturedOutput(Arc<Mutex<Captured>>);

impl CapturedOutput {
    fn push(&self, bytes: &[u8]) {
        let mut captured = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let room = GUEST_OUTPUT_MAX_BYTES.saturating_sub(captured.bytes.len());
        let kept = bytes.len().min(room);
        captured.bytes.extend_from_slice(&bytes[..kept]);
        let dropped = u64::try_from(bytes.len() - kept).unwrap_or(u64::MAX);
        captured.dropped = captured.dropped.saturating_add(dropped);
    }

    /// What was kept, as text, and how many bytes were dropped.
    pub(crate) fn take(&self) -> (String, u64) {
        let mut captured = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let bytes = std::mem::take(&mut captured.bytes);
        (
            String::from_utf8_lossy(&bytes).into_owned(),
            std::mem::take(&mut captured.dropped),
        )
    }
}

/// Logs what a guest wrote, one event per stream, attributed to the component.
pub(crate) fn forward(component: &str, stream: &'static str, output: &CapturedOutput) -> String {
    let (text, dropped) = output.take();
    if !text.is_empty() {
        let text = text.trim_end();
        if stream == "stderr" {
            tracing::info!(target: "rho::wasm::guest", component, stream, dropped, "{text}");
        } else {
            tracing::debug!(target: "rho::wasm::guest", component, stream, dropped, "{text}");
        }
    }
    text
}

impl IsTerminal for CapturedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CapturedOutput {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }

    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CapturedOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for CapturedOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_PERMIT)
    }
}

impl tokio::io::AsyncWrite for CapturedOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_past_the_cap_is_dropped_and_counted() {
        let mut out = CapturedOutput::default();
        out.write(Bytes::from(vec![b'a'; GUEST_OUTPUT_MAX_BYTES - 1]))
            .unwrap();
        out.write(Bytes::from_static(b"bcd")).unwrap();
        let (text, dropped) = out.take();
        assert_eq!(text.len(), GUEST_OUTPUT_MAX_BYTES);
        assert!(text.ends_with("ab"));
        assert_eq!(dropped, 2);
        assert_eq!(out.take(), (String::new(), 0));
    }
}
