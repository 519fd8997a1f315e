//! Masking granted secrets out of everything that leaves a command: its output before it
//! is saved, shown or sent to the model, and every event before it is logged. A secret is
//! found as its exact value and in the encodings a command commonly prints it in —
//! base64 (standard and URL-safe, with and without padding, of the value alone or
//! followed by a newline as `echo` gives it, at any alignment within longer data), hex
//! (lower and upper case) and URL encoding — an encoding also when a tool wrapped it over
//! lines (`base64` every 76 characters, `xxd -p` every 60). Each occurrence becomes
//! `<secret:NAME>`.
//!
//! This is best effort against an agent that transforms a value on purpose (reverses it,
//! encrypts it, prints every other character): what it guarantees is only that those
//! forms never pass. `MaskStream` keeps the guarantee across the chunks a stream arrives
//! in, holding back the few bytes that could still be the start of a secret.

use regex::bytes::Regex;
use regex::bytes::RegexBuilder;
use std::ops::Range;
use std::sync::Arc;

/// Shortest base64 core (of a value seen at an unknown alignment) worth masking: shorter
/// ones would match innocent text.
const MIN_CORE: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum MaskError {
    #[error("the secret {0} is empty")]
    Empty(String),
    #[error("cannot build the mask of the secret {name}: {message}")]
    Pattern { name: String, message: String },
}

/// One secret: its name (shown in its place) and what finds it.
#[derive(Debug)]
struct Secret {
    replacement: Vec<u8>,
    pattern: Regex,
    /// Longest text a match can span, in bytes (line breaks inside included).
    longest: usize,
}

/// The masks of the secrets a conversation was granted. An empty masker changes nothing.
#[derive(Debug, Default)]
pub struct Masker {
    secrets: Vec<Secret>,
    longest: usize,
}

impl Masker {
    /// A masker for `(name, value)` pairs.
    pub fn new(secrets: &[(String, String)]) -> Result<Self, MaskError> {
        let mut built = Vec::new();
        for (name, value) in secrets {
            if value.is_empty() {
                return Err(MaskError::Empty(name.clone()));
            }
            let (pattern, longest) = pattern_of(value.as_bytes());
            let pattern = RegexBuilder::new(&pattern)
                .unicode(false)
                .size_limit(64 << 20)
                .build()
                .map_err(|err| MaskError::Pattern {
                    name: name.clone(),
                    message: err.to_string(),
                })?;
            built.push(Secret {
                replacement: format!("<secret:{name}>").into_bytes(),
                pattern,
                longest,
            });
        }
        let longest = built.iter().map(|s| s.longest).max().unwrap_or(0);
        Ok(Self {
            secrets: built,
            longest,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every secret masked.
    pub fn mask(&self, text: &str) -> String {
        if self.is_empty() {
            return text.to_string();
        }
        let masked = self.mask_bytes(text.as_bytes());
        // Only whole ASCII runs are replaced by ASCII, except where a match cut a
        // multi-byte character (a value starting or ending inside one).
        String::from_utf8(masked)
            .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
    }

    /// `bytes` with every secret masked.
    pub fn mask_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        let found = self.find(bytes);
        masked(self, bytes, &found, bytes.len())
    }

    /// Every occurrence in `bytes`, in order, without overlaps (the earliest, then the
    /// longest, wins): where it is and which secret.
    fn find(&self, bytes: &[u8]) -> Vec<(Range<usize>, usize)> {
        let mut all: Vec<(Range<usize>, usize)> = Vec::new();
        for (n, secret) in self.secrets.iter().enumerate() {
            all.extend(secret.pattern.find_iter(bytes).map(|m| (m.range(), n)));
        }
        all.sort_by(|a, b| a.0.start.cmp(&b.0.start).then(b.0.end.cmp(&a.0.end)));
        let mut kept: Vec<(Range<usize>, usize)> = Vec::new();
        for (range, n) in all {
            if kept.last().is_none_or(|(last, _)| range.start >= last.end) {
                kept.push((range, n));
            }
        }
        kept
    }

    fn replacement(&self, n: usize) -> &[u8] {
        self.secrets.get(n).map_or(b"<secret>", |s| &s.replacement)
    }
}

/// Masks a stream that arrives in chunks: what `push` returns is masked and final; a tail
/// that could still begin a secret waits for the next chunk, or `finish`.
pub struct MaskStream {
    masker: Option<Arc<Masker>>,
    pending: Vec<u8>,
}

impl MaskStream {
    pub fn new(masker: Option<Arc<Masker>>) -> Self {
        Self {
            masker: masker.filter(|m| !m.is_empty()),
            pending: Vec::new(),
        }
    }

    /// Adds a chunk; returns what can be passed on now.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.push_cut(chunk, false)
    }

    /// Adds a piece of text (a model's reply as it streams); returns what can be passed
    /// on now, cut between characters.
    pub fn push_text(&mut self, text: &str) -> String {
        lossy(self.push_cut(text.as_bytes(), true))
    }

    /// The rest of a text stream, masked.
    pub fn finish_text(&mut self) -> String {
        lossy(self.finish())
    }

    fn push_cut(&mut self, chunk: &[u8], whole_chars: bool) -> Vec<u8> {
        let Some(masker) = &self.masker else {
            return chunk.to_vec();
        };
        self.pending.extend_from_slice(chunk);
        let found = masker.find(&self.pending);
        // A match starting within the last `longest - 1` bytes may not be whole yet; one
        // starting before them is whole, and decides where the cut goes if it crosses it.
        let mut cut = self
            .pending
            .len()
            .saturating_sub(masker.longest.saturating_sub(1));
        let mut done = Vec::new();
        for (range, n) in found {
            if range.start >= cut {
                break;
            }
            cut = cut.max(range.end);
            done.push((range, n));
        }
        // Past the bytes that continue a character (no secret starts inside one).
        while whole_chars && self.pending.get(cut).is_some_and(|b| b & 0xC0 == 0x80) {
            cut += 1;
        }
        let out = masked(masker, &self.pending, &done, cut);
        self.pending.drain(..cut);
        out
    }

    /// Bytes held back, not yet passed on.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Drops the last `n` held-back bytes (a terminal's prompt marker); returns how many
    /// were dropped.
    pub fn discard_last(&mut self, n: usize) -> usize {
        let n = n.min(self.pending.len());
        self.pending.truncate(self.pending.len() - n);
        n
    }

    /// The rest, masked: the stream is over.
    pub fn finish(&mut self) -> Vec<u8> {
        let rest = std::mem::take(&mut self.pending);
        match &self.masker {
            Some(masker) => masker.mask_bytes(&rest),
            None => rest,
        }
    }
}

fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

/// `bytes[..upto]` with the `found` ranges (all within it) replaced by their names.
fn masked(masker: &Masker, bytes: &[u8], found: &[(Range<usize>, usize)], upto: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(upto);
    let mut at = 0;
    for (range, n) in found {
        out.extend_from_slice(&bytes[at..range.start]);
        out.extend_from_slice(masker.replacement(*n));
        at = range.end;
    }
    out.extend_from_slice(&bytes[at..upto]);
    out
}

/// The regular expression that finds `value` and its encodings, and the longest text it
/// can match.
fn pattern_of(value: &[u8]) -> (String, usize) {
    // Forms printed without line breaks, and encodings that may be wrapped.
    let mut plain: Vec<Vec<u8>> = vec![value.to_vec()];
    let mut wrapped: Vec<Vec<u8>> = Vec::new();
    let mut echoed = value.to_vec();
    echoed.push(b'\n');
    for payload in [value, echoed.as_slice()] {
        for alphabet in [STANDARD, URL_SAFE] {
            let encoded = base64(payload, alphabet);
            let unpadded = encoded.trim_end_matches('=').to_string();
            wrapped.push(encoded.into_bytes());
            wrapped.push(unpadded.into_bytes());
        }
    }
    // The value within longer data starts one or two bytes into a group of three: the
    // characters that depend on its bytes alone.
    for offset in 1..=2usize {
        let mut shifted = vec![0u8; offset];
        shifted.extend_from_slice(value);
        let whole_groups = shifted.len() / 3;
        if whole_groups < 2 {
            continue;
        }
        for alphabet in [STANDARD, URL_SAFE] {
            let encoded = base64(&shifted[..whole_groups * 3], alphabet);
            let core = &encoded.as_bytes()[4..];
            if core.len() >= MIN_CORE {
                wrapped.push(core.to_vec());
            }
        }
    }
    let hex_lower: String = value.iter().map(|b| format!("{b:02x}")).collect();
    wrapped.push(hex_lower.to_ascii_uppercase().into_bytes());
    wrapped.push(hex_lower.into_bytes());
    for upper in [true, false] {
        for form in [false, true] {
            plain.push(url_encoded(value, upper, form).into_bytes());
        }
    }
    let mut alternatives: Vec<(usize, String)> = Vec::new();
    for form in plain {
        alternatives.push((form.len(), literal(&form)));
    }
    for form in wrapped {
        // A line break (\n or \r\n) may come after any character but the last.
        let longest = form.len() + 2 * form.len().saturating_sub(1);
        let parts: Vec<String> = form.iter().map(|b| literal(&[*b])).collect();
        alternatives.push((longest, parts.join("(?:\\r?\\n)?")));
    }
    // Longer forms first: at one place the longest form is masked whole.
    alternatives.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    alternatives.dedup();
    let longest = alternatives.iter().map(|a| a.0).max().unwrap_or(0);
    let joined: Vec<String> = alternatives.into_iter().map(|a| a.1).collect();
    (joined.join("|"), longest)
}

/// A regular expression matching exactly `bytes`.
fn literal(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("\\x{b:02x}")).collect()
}

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64 with padding.
fn base64(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let b = [
            group[0],
            group.get(1).copied().unwrap_or(0),
            group.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= group.len() {
                out.push(char::from(alphabet[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Percent-encoding of every byte but the unreserved ones (`A-Za-z0-9-._~`); `form`
/// writes a space as `+`, as HTML forms do.
fn url_encoded(bytes: &[u8], upper: bool, form: bool) -> String {
    let mut out = String::new();
    for &b in bytes {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(char::from(b))
            }
            b' ' if form => out.push('+'),
            _ if upper => out.push_str(&format!("%{b:02X}")),
            _ => out.push_str(&format!("%{b:02x}")),
        }
    }
    out
}

#[cfg(test)]
#[path = "mask_tests.rs"]
mod tests;
