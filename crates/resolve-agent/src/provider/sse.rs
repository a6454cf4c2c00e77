//! Server-sent events read from a response body that arrives in chunks split anywhere, with
//! bounds a model server cannot push past: one line at most [`ResponseLimit::SseLine`], one
//! event's data at most [`ResponseLimit::SseEvent`], the whole stream at most
//! [`ResponseLimit::Stream`]. Each chunk is scanned once (only its new bytes), so a line that
//! never ends costs linear time and bounded memory, and the caller can check for cancellation
//! between chunks.
//!
//! The event format follows the HTML standard's `text/event-stream`: lines end in CRLF, LF or
//! CR; a leading BOM is dropped; `:` starts a comment; `data` lines are joined with `\n`; a blank
//! line dispatches an event (none when it has no data); the type defaults to `message`; a
//! partial event at the end of the stream is dropped.
//!
//! Owned here: splitting bytes into events. Not owned: what the events mean (`openai`,
//! `anthropic`), the transport (`http`), the reading loop and cancellation (the parent module).

use crate::ResponseLimit;

/// The UTF-8 byte-order mark, as bytes.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SseEvent {
    /// The event type (`message` when the server named none).
    pub event: String,
    /// The data lines, joined with `\n`.
    pub data: String,
}

/// Why the bytes could not be read as events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SseError {
    /// The server broke a bound.
    Limit(ResponseLimit),
    /// A line is not UTF-8.
    NotUtf8,
}

/// The parser's state between chunks.
#[derive(Debug, Default)]
pub(super) struct SseParser {
    /// The bytes of the line not yet ended.
    line: Vec<u8>,
    /// The last line ended in CR: a LF right after it belongs to that line end.
    skip_lf: bool,
    /// Whether the first line was seen (a BOM can only lead it).
    started: bool,
    /// Bytes received so far.
    received: usize,
    /// The event being built.
    event: String,
    data: String,
}

impl SseParser {
    /// Read `bytes`, appending every event they complete to `events`. On an error the events
    /// before the offending bytes are already in `events`, so the outcome does not depend on
    /// where the body was split.
    pub(super) fn feed(
        &mut self,
        bytes: &[u8],
        events: &mut Vec<SseEvent>,
    ) -> Result<(), SseError> {
        let allowed = ResponseLimit::Stream.bytes() - self.received;
        let (mut bytes, over) = bytes.split_at(bytes.len().min(allowed));
        self.received += bytes.len();
        while let Some((&first, rest)) = bytes.split_first() {
            if std::mem::take(&mut self.skip_lf) && first == b'\n' {
                bytes = rest;
                continue;
            }
            let Some(end) = memchr::memchr2(b'\n', b'\r', bytes) else {
                self.extend_line(bytes)?;
                break;
            };
            self.extend_line(&bytes[..end])?;
            self.skip_lf = bytes[end] == b'\r';
            bytes = &bytes[end + 1..];
            self.end_line(events)?;
        }
        if over.is_empty() {
            Ok(())
        } else {
            Err(SseError::Limit(ResponseLimit::Stream))
        }
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + bytes.len() > ResponseLimit::SseLine.bytes() {
            return Err(SseError::Limit(ResponseLimit::SseLine));
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// Interpret the line just ended.
    fn end_line(&mut self, events: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let line = std::mem::take(&mut self.line);
        let result = self.interpret(&line, events);
        // Keep the allocation for the next line.
        self.line = line;
        self.line.clear();
        result
    }

    fn interpret(&mut self, line: &[u8], events: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut line = line;
        if !std::mem::replace(&mut self.started, true) {
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        let line = std::str::from_utf8(line).map_err(|_| SseError::NotUtf8)?;
        if line.is_empty() {
            self.dispatch(events);
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => {
                if self.data.len() + value.len() + 1 > ResponseLimit::SseEvent.bytes() {
                    return Err(SseError::Limit(ResponseLimit::SseEvent));
                }
                self.data.push_str(value);
                self.data.push('\n');
            }
            // `id` and `retry` matter to reconnecting clients only; others are ignored.
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, events: &mut Vec<SseEvent>) {
        let event = std::mem::take(&mut self.event);
        let mut data = std::mem::take(&mut self.data);
        if data.is_empty() {
            return;
        }
        data.pop();
        events.push(SseEvent {
            event: if event.is_empty() {
                "message".to_owned()
            } else {
                event
            },
            data,
        });
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn events_of(pieces: &[&[u8]]) -> (Vec<SseEvent>, Result<(), SseError>) {
        let mut parser = SseParser::default();
        let mut events = Vec::new();
        for piece in pieces {
            if let Err(error) = parser.feed(piece, &mut events) {
                return (events, Err(error));
            }
        }
        (events, Ok(()))
    }

    fn event(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_are_the_same_however_the_body_is_split() {
        let body = "\u{feff}: hello\r\nevent: ping\r\ndata: {}\r\n\r\ndata:a\rdata: b\r\rid: 1\n\ndata\n\nevent: x\n\ndata: cut off";
        let whole = events_of(&[body.as_bytes()]);
        assert_eq!(
            whole,
            (
                vec![
                    event("ping", "{}"),
                    event("message", "a\nb"),
                    event("message", "")
                ],
                Ok(())
            )
        );
        for size in 1..body.len() {
            let pieces: Vec<&[u8]> = body.as_bytes().chunks(size).collect();
            assert_eq!(events_of(&pieces), whole, "in pieces of {size}");
        }
    }

    #[test]
    fn a_line_past_the_bound_fails_after_the_events_before_it() {
        let mut parser = SseParser::default();
        let mut events = Vec::new();
        parser.feed(b"data: 1\n\ndata: ", &mut events).unwrap();
        let filler = vec![b'x'; 1024 * 1024];
        let mut result = Ok(());
        for _ in 0..9 {
            result = parser.feed(&filler, &mut events);
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(SseError::Limit(ResponseLimit::SseLine)));
        assert_eq!(events, vec![event("message", "1")]);
        assert!(parser.line.len() <= ResponseLimit::SseLine.bytes());
    }

    #[test]
    fn an_event_past_the_bound_fails() {
        let mut parser = SseParser::default();
        let mut events = Vec::new();
        let line = format!("data: {}\n", "y".repeat(1024 * 1024 - 7));
        let result = (0..40).try_for_each(|_| parser.feed(line.as_bytes(), &mut events));
        assert_eq!(result, Err(SseError::Limit(ResponseLimit::SseEvent)));
        assert!(events.is_empty());
    }

    #[test]
    fn a_line_that_is_not_utf8_fails() {
        assert_eq!(
            events_of(&[b"data: 1\n\ndata: \xff\n\n"]),
            (vec![event("message", "1")], Err(SseError::NotUtf8))
        );
    }
}
