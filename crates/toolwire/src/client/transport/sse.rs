//! An incremental Server-Sent Events parser: bytes in, the `data` of each
//! event out.
//!
//! Follows the event-stream rules of the HTML standard that matter here:
//! lines end in CR, LF or CRLF; `data:` lines of one event are joined with
//! LF; one space after the colon is dropped; lines starting with `:` are
//! comments (keep-alives) and ignored; an empty line ends the event. `push`
//! skips events whose type is not `message`; `push_typed` keeps them.
//!
//! Spec: basic/transports/streamable-http.mdx#receiving-messages

/// The SSE decoder state.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    /// The current line, not yet terminated.
    line: Vec<u8>,
    /// Whether the previous byte was a CR, so that an LF right after it
    /// does not end a second line.
    after_cr: bool,
    /// `data` of the event being built.
    data: Vec<u8>,
    has_data: bool,
    /// `event` of the event being built, if set.
    event: Option<String>,
    /// The largest event accepted, in bytes.
    limit: usize,
    /// The last `id` seen: where a legacy stream resumes (`Last-Event-ID`).
    last_id: Option<String>,
}

/// One event: its type (`None` is `message`) and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub(crate) event: Option<String>,
    pub(crate) data: Vec<u8>,
}

/// Why the stream cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an SSE event is larger than {0} bytes")]
pub(crate) struct SseTooLarge(pub(crate) usize);

impl SseParser {
    /// A parser that refuses events larger than `limit` bytes.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            ..Self::default()
        }
    }

    /// The last event id the stream gave, if any.
    pub(crate) fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// Feeds bytes; returns the data of every `message` event they
    /// complete.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, SseTooLarge> {
        Ok(self
            .push_typed(bytes)?
            .into_iter()
            .filter(|e| e.event.as_deref().is_none_or(|t| t == "message"))
            .map(|e| e.data)
            .collect())
    }

    /// Feeds bytes; returns every event with data they complete, whatever
    /// its type (the 2024-11-05 transport opens with an `endpoint` event).
    pub(crate) fn push_typed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, SseTooLarge> {
        let mut events = Vec::new();
        for &b in bytes {
            match b {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    if let Some(event) = self.end_line() {
                        events.push(event);
                    }
                }
                _ => {
                    self.after_cr = false;
                    if self.line.len() + self.data.len() >= self.limit {
                        return Err(SseTooLarge(self.limit));
                    }
                    self.line.push(b);
                }
            }
        }
        Ok(events)
    }

    /// Processes a complete line; returns an event when the line is empty
    /// and ends one.
    fn end_line(&mut self) -> Option<SseEvent> {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            let data = std::mem::take(&mut self.data);
            let has_data = std::mem::replace(&mut self.has_data, false);
            let event = self.event.take();
            return has_data.then_some(SseEvent { event, data });
        }
        if line[0] == b':' {
            return None;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &[][..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            // Streams are not resumable at 2026-07-28, but legacy ones are.
            // An id containing NUL is ignored (HTML event-stream rules).
            b"id" if !value.contains(&0) => {
                self.last_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            // `retry` does not matter.
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<String> {
        let mut p = SseParser::new(1 << 20);
        let mut out = Vec::new();
        for c in chunks {
            for e in p.push(c).expect("within limit") {
                out.push(String::from_utf8(e).expect("utf8"));
            }
        }
        out
    }

    #[test]
    fn events_split_across_chunks_and_line_endings() {
        let got = parse_all(&[
            b"data: {\"a\"",
            b":1}\r",
            b"\n\r\ndata:x\rdata: y\r\r",
            b"\n\n",
        ]);
        assert_eq!(got, ["{\"a\":1}", "x\ny"]);
    }

    #[test]
    fn comments_other_events_and_empty_events_are_skipped() {
        let got = parse_all(&[
            b": keep-alive\n\n",
            b"event: ping\ndata: no\n\n",
            b"id: 7\nretry: 10\n\n",
            b"event: message\ndata: yes\n\n",
        ]);
        assert_eq!(got, ["yes"]);
    }

    #[test]
    fn the_last_event_id_is_kept() {
        let mut p = SseParser::new(1 << 20);
        assert_eq!(p.last_event_id(), None);
        p.push(b"id: 1\ndata: a\n\nid: 2\ndata: b\n\n").expect("ok");
        assert_eq!(p.last_event_id(), Some("2"));
        p.push(b"id: x\0y\ndata: c\n\n").expect("ok");
        assert_eq!(p.last_event_id(), Some("2"));
    }

    #[test]
    fn typed_events_keep_their_type() {
        let mut p = SseParser::new(1 << 20);
        let events = p
            .push(b"event: endpoint\ndata: /messages?sessionId=1\n\ndata: {}\n\n")
            .expect("ok");
        assert_eq!(events, [b"{}".to_vec()]);
        let mut p = SseParser::new(1 << 20);
        let events = p
            .push_typed(b"event: endpoint\ndata: /messages?sessionId=1\n\ndata: {}\n\n")
            .expect("ok");
        assert_eq!(events[0].event.as_deref(), Some("endpoint"));
        assert_eq!(events[0].data, b"/messages?sessionId=1");
        assert_eq!(events[1].event, None);
    }

    #[test]
    fn an_unterminated_event_is_not_emitted() {
        assert!(parse_all(&[b"data: half"]).is_empty());
    }

    #[test]
    fn oversized_event_is_refused() {
        let mut p = SseParser::new(8);
        assert!(p.push(b"data: 0123456789\n\n").is_err());
    }
}
