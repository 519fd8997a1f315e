//! An incremental Server-Sent Events decoder: bytes in, `data` payloads out.
//!
//! It follows the SSE rules that matter for chat streams: lines end with `\n`, `\r\n` or
//! `\r`; `data:` lines of one event are joined with `\n`; a blank line ends the event;
//! comments (`:`) and other fields are ignored. Bytes may be split anywhere, including in
//! the middle of a UTF-8 character, and the result is the same.

#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    data: Option<String>,
    /// The previous byte was `\r`, so a following `\n` belongs to the same line end.
    after_cr: bool,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the data payloads of the events they completed.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        for &byte in bytes {
            if self.after_cr {
                self.after_cr = false;
                if byte == b'\n' {
                    continue;
                }
            }
            match byte {
                b'\n' => self.end_line(&mut out),
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(&mut out);
                }
                _ => self.line.push(byte),
            }
        }
        out
    }

    /// Ends the stream: an event whose blank line never came is still delivered.
    pub fn finish(&mut self) -> Option<String> {
        if !self.line.is_empty() {
            let mut out = Vec::new();
            self.end_line(&mut out);
            if let Some(data) = out.pop() {
                return Some(data);
            }
        }
        self.data.take()
    }

    fn end_line(&mut self, out: &mut Vec<String>) {
        let line = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                out.push(data);
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        if field == "data" {
            match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(input: &[u8], piece: usize) -> Vec<String> {
        let mut decoder = SseDecoder::new();
        let mut out = Vec::new();
        for chunk in input.chunks(piece) {
            out.extend(decoder.push(chunk));
        }
        out.extend(decoder.finish());
        out
    }

    #[test]
    fn same_events_whatever_the_split() {
        let input = "data: {\"a\":\"é\"}\r\n\r\n: keep-alive\n\ndata: one\ndata: two\n\nevent: x\ndata: [DONE]\n\n"
            .as_bytes();
        let expected = vec!["{\"a\":\"é\"}", "one\ntwo", "[DONE]"];
        for piece in 1..input.len() {
            assert_eq!(
                decode_in_pieces(input, piece),
                expected,
                "piece size {piece}"
            );
        }
    }

    #[test]
    fn unterminated_last_event_is_delivered() {
        assert_eq!(decode_in_pieces(b"data: x", 3), vec!["x"]);
        assert_eq!(decode_in_pieces(b"data: x\n", 3), vec!["x"]);
    }
}
