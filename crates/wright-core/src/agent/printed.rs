//! What a call printed while it ran, kept for when it does not finish (Ctrl-C, the time
//! limit): the observation of an interrupted call says what the command had printed, not
//! only that it stopped. Bounded: the first and the last bytes, with the whole counted.

use wright_protocol::count;

/// Bytes kept from the start of the output.
const HEAD: usize = 4 << 10;
/// Bytes kept from its end (where a command says how far it got).
const TAIL: usize = 12 << 10;

/// The printed bytes (already masked, as shown), its two ends kept.
#[derive(Debug, Default)]
pub(super) struct Printed {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    total: u64,
}

impl Printed {
    pub(super) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = HEAD - self.head.len();
        if room > 0 {
            let (first, rest) = bytes.split_at(room.min(bytes.len()));
            self.head.extend_from_slice(first);
            bytes = rest;
        }
        self.tail.extend(bytes);
        let over = self.tail.len().saturating_sub(TAIL);
        self.tail.drain(..over);
    }

    /// For the observation: nothing when nothing was printed.
    pub(super) fn text(&self) -> Option<String> {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let head = wright_tools::clean_terminal_output(&self.head);
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail = wright_tools::clean_terminal_output(&tail);
        let text = if kept < self.total {
            // The tail's first line is cut: from the next one.
            let tail = tail.split_once('\n').map_or("", |(_, rest)| rest);
            format!(
                "{}\n[... the middle is omitted; it printed {} in all ...]\n{}",
                head.trim_end(),
                count(self.total, "byte"),
                tail
            )
        } else {
            format!("{head}{tail}")
        };
        let text = text.trim_end();
        (!text.trim().is_empty()).then(|| text.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ends_are_kept_and_the_whole_counted() {
        let mut printed = Printed::default();
        assert_eq!(printed.text(), None);
        let first = b"\x1b[1mstep 1\x1b[0m\r\n";
        printed.push(first);
        assert_eq!(printed.text().as_deref(), Some("step 1"));
        let mut total = first.len();
        for n in 2..=5000 {
            let line = format!("step {n}\n");
            total += line.len();
            printed.push(line.as_bytes());
        }
        let text = printed.text().unwrap();
        assert!(text.starts_with("step 1\nstep 2\n"), "{text}");
        assert!(text.ends_with("step 4999\nstep 5000"), "{text}");
        assert!(
            text.contains(&format!(
                "[... the middle is omitted; it printed {total} bytes in all ...]"
            )),
            "{text}"
        );
        assert!(text.len() < HEAD + TAIL + 100);
    }
}
