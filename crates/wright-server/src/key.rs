//! The server key: generated from the kernel's random source at start (or given by the
//! user), and compared in constant time — SHA-256 of both sides, then every byte of the
//! digests, so neither the content nor the length of the right key leaks through timing.

use sha2::Digest;
use sha2::Sha256;
use std::io::Read;

/// Shortest key a user may set.
pub const MIN_KEY: usize = 32;

/// The key every request must carry.
#[derive(Clone)]
pub struct ServerKey {
    text: String,
    digest: [u8; 32],
    generated: bool,
}

impl std::fmt::Debug for ServerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerKey(..)")
    }
}

impl ServerKey {
    /// 32 random bytes, as 64 hexadecimal digits.
    pub fn generate() -> std::io::Result<Self> {
        let mut bytes = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
        let text: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Self::new(text, true))
    }

    /// The user's key (`WRIGHT_SERVER_KEY`), refused when short or not a header value.
    pub fn given(text: &str) -> Result<Self, crate::StartError> {
        let usable = text.len() >= MIN_KEY && text.bytes().all(|b| b.is_ascii_graphic());
        if !usable {
            return Err(crate::StartError::WeakKey { min: MIN_KEY });
        }
        Ok(Self::new(text.to_string(), false))
    }

    fn new(text: String, generated: bool) -> Self {
        let digest = Sha256::digest(text.as_bytes()).into();
        Self {
            text,
            digest,
            generated,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether it was generated at start (so the front end prints it).
    pub fn generated(&self) -> bool {
        self.generated
    }

    /// Whether `presented` is the key, in time that depends on neither.
    pub fn matches(&self, presented: &[u8]) -> bool {
        let other: [u8; 32] = Sha256::digest(presented).into();
        let difference = self
            .digest
            .iter()
            .zip(other.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        // Read through a volatile-like barrier so the fold is not cut short.
        std::hint::black_box(difference) == 0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_key_matches_itself_only() {
        let key = ServerKey::generate().unwrap();
        assert_eq!(key.as_str().len(), 64);
        assert!(key.matches(key.as_str().as_bytes()));
        assert!(!key.matches(b""));
        assert!(!key.matches(&key.as_str().as_bytes()[..63]));
        let other = ServerKey::generate().unwrap();
        assert!(!key.matches(other.as_str().as_bytes()));
        assert!(ServerKey::given("short").is_err());
        assert!(ServerKey::given(&"a b".repeat(20)).is_err());
        assert!(ServerKey::given(&"k".repeat(32))
            .unwrap()
            .matches(&[b'k'; 32]));
    }
}
