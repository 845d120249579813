//! Where protocol lines come from and go to. The dispatcher only sees a [`Transport`]: a
//! receiver of inbound lines (closed on EOF) and a sender of outbound lines. [`stdio`] wires
//! it to the process (a reader thread with a line cap, one writer task so lines never
//! interleave); [`channel`] gives tests both ends, so they decide when each message becomes
//! readable.

use std::io::{BufRead, Write};

use tokio::sync::mpsc;

use crate::jsonrpc::MAX_LINE_BYTES;

/// Lines waiting for the peer to read them, at most.
pub const OUTGOING_LINES: usize = 256;

/// One inbound unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inbound {
    /// A line without its newline.
    Line(Vec<u8>),
    /// A line longer than [`MAX_LINE_BYTES`] was skipped.
    Oversized,
}

/// Both directions of a protocol connection.
#[derive(Debug)]
pub struct Transport {
    /// Inbound lines; `None` from `recv` means the peer closed its side (EOF).
    pub incoming: mpsc::Receiver<Inbound>,
    /// Outbound lines (without newline). Bounded: a peer that reads slowly makes rho wait
    /// (nothing is dropped, nothing grows without limit).
    pub outgoing: mpsc::Sender<String>,
}

/// The test side of a [`channel`] transport.
#[derive(Debug)]
pub struct Peer {
    /// Lines sent to rho; drop it to signal EOF.
    pub to_rho: mpsc::Sender<Inbound>,
    /// Lines rho wrote.
    pub from_rho: mpsc::Receiver<String>,
}

/// An in-process transport and its peer.
pub fn channel() -> (Transport, Peer) {
    let (to_rho, incoming) = mpsc::channel(64);
    let (outgoing, from_rho) = mpsc::channel(OUTGOING_LINES);
    (Transport { incoming, outgoing }, Peer { to_rho, from_rho })
}

/// The process's stdin and stdout. Returns the transport and the writer's handle, which
/// finishes when every sender is gone (or stdout is closed by the reader).
pub fn stdio() -> (Transport, tokio::task::JoinHandle<()>) {
    let (to_rho, incoming) = mpsc::channel(64);
    // A thread, not a task: reading stdin blocks.
    let spawned = std::thread::Builder::new()
        .name("rho-rpc-stdin".into())
        .spawn(move || read_lines(std::io::stdin().lock(), &to_rho));
    if let Err(e) = spawned {
        tracing::error!("cannot start the stdin reader: {e}");
    }
    let (outgoing, writer) = stdout_lines();
    (Transport { incoming, outgoing }, writer)
}

/// Lines (without newline) for stdout, written in order by one blocking thread, so a peer
/// that reads slowly holds up the senders (at most [`OUTGOING_LINES`] wait) and never a
/// runtime thread. The handle finishes when every sender is gone, or when the reader closed
/// stdout (further lines are dropped).
pub fn stdout_lines() -> (mpsc::Sender<String>, tokio::task::JoinHandle<()>) {
    let (outgoing, mut lines) = mpsc::channel::<String>(OUTGOING_LINES);
    let writer = tokio::task::spawn_blocking(move || {
        let stdout = std::io::stdout();
        while let Some(line) = lines.blocking_recv() {
            // A person may read the lines on a terminal: no control or invisible character
            // goes out raw (the JSON means the same).
            let line = rho_component::terminal_safe_json(&line);
            let mut out = stdout.lock();
            let written = out
                .write_all(line.as_bytes())
                .and_then(|()| out.write_all(b"\n"))
                .and_then(|()| out.flush());
            if written.is_err() {
                // The reader closed stdout: nobody hears us any more.
                tracing::debug!("stdout closed; dropping further output");
                return;
            }
        }
    });
    (outgoing, writer)
}

/// Splits `input` into lines of at most [`MAX_LINE_BYTES`]; longer lines are reported as
/// [`Inbound::Oversized`] and skipped up to their newline without buffering them.
pub fn read_lines(mut input: impl BufRead, to_rho: &mpsc::Sender<Inbound>) {
    let mut line = Vec::new();
    let mut oversized = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok([]) => break,
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let (part, newline) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], Some(i)),
            None => (chunk, None),
        };
        if !oversized {
            if line.len() + part.len() > MAX_LINE_BYTES {
                oversized = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(part);
            }
        }
        let used = newline.map_or(chunk.len(), |i| i + 1);
        input.consume(used);
        if newline.is_some() {
            let unit = if oversized {
                Inbound::Oversized
            } else {
                Inbound::Line(std::mem::take(&mut line))
            };
            oversized = false;
            if to_rho.blocking_send(unit).is_err() {
                return;
            }
        }
    }
    if oversized {
        let _ = to_rho.blocking_send(Inbound::Oversized);
    } else if !line.is_empty() {
        let _ = to_rho.blocking_send(Inbound::Line(line));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn long_lines_are_skipped_to_the_next_newline() {
        let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
        input.extend_from_slice(b"\nok\nlast");
        let (tx, mut rx) = mpsc::channel(8);
        read_lines(std::io::BufReader::with_capacity(4096, &input[..]), &tx);
        drop(tx);
        assert_eq!(rx.blocking_recv(), Some(Inbound::Oversized));
        assert_eq!(rx.blocking_recv(), Some(Inbound::Line(b"ok".to_vec())));
        assert_eq!(rx.blocking_recv(), Some(Inbound::Line(b"last".to_vec())));
        assert_eq!(rx.blocking_recv(), None);
    }
}
