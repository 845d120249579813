//! An incremental Server-Sent Events parser (HTML Living Standard §9.2.6) with size caps.
//!
//! Bytes go in as they arrive, in chunks of any size; complete events come out. Lines end in
//! CRLF, LF or CR (a CRLF split across two chunks counts once), `:` lines are comments, `data`
//! lines of one event are joined with `\n`, and a blank line dispatches the event. Only `data`
//! and `event` are kept: chat completions use neither `id` nor `retry`.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event` field, empty when the server named none (the spec's `message`).
    pub event: String,
    /// The `data` lines joined with `\n`.
    pub data: String,
}

/// Why the stream was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SseError {
    /// One event (its data so far plus the line being read) grew past the cap.
    EventTooLarge(usize),
    /// The whole stream grew past the cap.
    StreamTooLarge(usize),
}

impl std::fmt::Display for SseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::EventTooLarge(cap) => write!(f, "a stream event exceeds {cap} bytes"),
            Self::StreamTooLarge(cap) => write!(f, "the stream exceeds {cap} bytes"),
        }
    }
}

/// The parser state between chunks.
#[derive(Debug)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    data: String,
    has_data: bool,
    event: String,
    /// The previous chunk ended in CR: a LF opening the next one belongs to that line end.
    after_cr: bool,
    total: usize,
    max_event: usize,
    max_total: usize,
}

impl SseParser {
    /// A parser refusing events over `max_event` bytes and streams over `max_total` bytes.
    pub(crate) fn new(max_event: usize, max_total: usize) -> Self {
        Self {
            line: Vec::new(),
            data: String::new(),
            has_data: false,
            event: String::new(),
            after_cr: false,
            total: 0,
            max_event,
            max_total,
        }
    }

    /// Feeds the next chunk; appends every event it completes to `out`.
    pub(crate) fn push(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        self.total = self.total.saturating_add(chunk.len());
        if self.total > self.max_total {
            return Err(SseError::StreamTooLarge(self.max_total));
        }
        let mut rest = chunk;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if let Some((b'\n', tail)) = rest.split_first() {
                rest = tail;
            }
        }
        while let Some(end) = rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
            let (line, tail) = rest.split_at(end);
            self.extend_line(line)?;
            // `tail` starts with the terminator.
            let mut after = tail.get(1..).unwrap_or_default();
            if tail.first() == Some(&b'\r') {
                match after.split_first() {
                    Some((b'\n', more)) => after = more,
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            rest = after;
            self.process_line(out);
        }
        self.extend_line(rest)
    }

    /// Ends the stream. Unlike the spec, which drops an unterminated last event, this
    /// dispatches it: some servers close right after `data: [DONE]` without a blank line.
    pub(crate) fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            self.process_line(out);
        }
        self.dispatch(out);
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + bytes.len() + self.data.len() > self.max_event {
            return Err(SseError::EventTooLarge(self.max_event));
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn process_line(&mut self, out: &mut Vec<SseEvent>) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.first() == Some(&b':') {
            return;
        }
        // Line ends never split a UTF-8 sequence, so each line decodes on its own.
        let text = String::from_utf8_lossy(&line);
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = value.to_owned(),
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = std::mem::take(&mut self.event);
        if !std::mem::take(&mut self.has_data) {
            return;
        }
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = ": keep-alive\r\n\
        data: {\"a\":1}\r\n\
        \r\n\
        event: message\n\
        data: line one\n\
        data: line two\n\
        \n\
        data:no-space\r\r\
        id: 7\n\
        retry: 100\n\
        \n\
        data: [DONE]\n\n";

    fn expected() -> Vec<SseEvent> {
        let ev = |event: &str, data: &str| SseEvent {
            event: event.into(),
            data: data.into(),
        };
        vec![
            ev("", "{\"a\":1}"),
            ev("message", "line one\nline two"),
            ev("", "no-space"),
            ev("", "[DONE]"),
        ]
    }

    fn parse_in_pieces(pieces: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::new(1 << 20, 1 << 20);
        let mut out = Vec::new();
        for piece in pieces {
            parser.push(piece, &mut out).unwrap();
        }
        parser.finish(&mut out);
        out
    }

    #[test]
    fn whole_stream_in_one_chunk() {
        assert_eq!(parse_in_pieces(&[SAMPLE.as_bytes()]), expected());
    }

    #[test]
    fn split_at_every_byte_boundary() {
        let bytes = SAMPLE.as_bytes();
        for cut in 0..=bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(parse_in_pieces(&[a, b]), expected(), "cut at {cut}");
        }
        for cut in 0..=bytes.len() {
            let (a, rest) = bytes.split_at(cut);
            // A second cut, and an empty chunk in between (reqwest may yield empty chunks).
            let (b, c) = rest.split_at(rest.len() / 2);
            assert_eq!(parse_in_pieces(&[a, b"", b, c]), expected(), "cut at {cut}");
        }
    }

    #[test]
    fn one_byte_at_a_time() {
        let pieces: Vec<&[u8]> = SAMPLE.as_bytes().chunks(1).collect();
        assert_eq!(parse_in_pieces(&pieces), expected());
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_end() {
        let out = parse_in_pieces(&[b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n"]);
        let data: Vec<&str> = out.iter().map(|e| e.data.as_str()).collect();
        assert_eq!(data, ["a", "b"]);
    }

    #[test]
    fn comments_and_unknown_fields_are_ignored() {
        let out = parse_in_pieces(&[b":comment\n: OPENROUTER PROCESSING\n\nfoo: bar\n\n"]);
        assert!(out.is_empty());
    }

    #[test]
    fn unterminated_last_event_is_dispatched() {
        let out = parse_in_pieces(&[b"data: x\n\ndata: [DONE]"]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].data, "[DONE]");
    }

    #[test]
    fn oversized_event_is_refused() {
        let mut parser = SseParser::new(64, 1 << 20);
        let mut out = Vec::new();
        parser.push(b"data: short\n\n", &mut out).unwrap();
        let long = format!("data: {}\n", "x".repeat(40));
        parser.push(long.as_bytes(), &mut out).unwrap();
        // The second data line of the same event pushes it over the cap, even in small pieces.
        let err = long
            .as_bytes()
            .chunks(3)
            .try_for_each(|piece| parser.push(piece, &mut out))
            .unwrap_err();
        assert_eq!(err, SseError::EventTooLarge(64));
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn oversized_line_without_terminator_is_refused() {
        let mut parser = SseParser::new(16, 1 << 20);
        let mut out = Vec::new();
        let err = parser.push(&[b'a'; 17], &mut out).unwrap_err();
        assert_eq!(err, SseError::EventTooLarge(16));
    }

    #[test]
    fn oversized_stream_is_refused() {
        let mut parser = SseParser::new(1 << 10, 100);
        let mut out = Vec::new();
        // 12 bytes each: eight fit in 100, the ninth does not.
        for _ in 0..8 {
            parser.push(b"data: 1234\n\n", &mut out).unwrap();
        }
        let err = parser.push(b"data: 1234\n\n", &mut out).unwrap_err();
        assert_eq!(err, SseError::StreamTooLarge(100));
    }
}
