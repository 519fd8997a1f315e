//! Whether a webhook's body was sent by the forge that knows the automation's secret,
//! checked on the raw bytes before anything parses them.
//!
//! - GitHub: `X-Hub-Signature-256: sha256=HEX`, HMAC-SHA256 of the body with the secret.
//! - Gitea and Forgejo: `X-Gitea-Signature` / `X-Forgejo-Signature: HEX`, the same HMAC
//!   without the prefix.
//! - GitLab: `X-Gitlab-Token: SECRET`, the secret itself.
//!
//! What it guarantees: every comparison takes a time that does not depend on where the
//! presented value differs (the HMAC through `Mac::verify_slice`, GitLab's token through
//! SHA-256 of both sides compared whole); a header given twice is refused, so a proxy
//! and a client can never disagree about which one counted.

use axum::http::HeaderMap;
use hmac::Mac;
use sha2::Digest;
use sha2::Sha256;
use wright_config::automations::Forge;

type HmacSha256 = hmac::Hmac<Sha256>;

/// Why a webhook's signature is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No signature header.
    Missing,
    /// The header twice, or not of the documented shape.
    Malformed,
    /// Of the documented shape, and wrong.
    Wrong,
}

impl Refusal {
    pub fn words(self) -> &'static str {
        match self {
            Refusal::Missing => "the request carries no signature",
            Refusal::Malformed => "the signature header is not of the forge's documented shape",
            Refusal::Wrong => "the signature does not match the body",
        }
    }
}

/// The one value of `name`, if given once.
fn single<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, Refusal> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(Refusal::Malformed);
    }
    first.to_str().map(Some).map_err(|_| Refusal::Malformed)
}

/// Checks `body` against the signature `forge` sends with it, for `secret`.
pub fn verify(forge: Forge, headers: &HeaderMap, body: &[u8], secret: &str) -> Result<(), Refusal> {
    match forge {
        Forge::Github => {
            let value = single(headers, "x-hub-signature-256")?.ok_or(Refusal::Missing)?;
            let hex = value.strip_prefix("sha256=").ok_or(Refusal::Malformed)?;
            check_hmac(hex, body, secret)
        }
        Forge::Gitea => {
            let forgejo = single(headers, "x-forgejo-signature")?;
            let gitea = single(headers, "x-gitea-signature")?;
            // Forgejo sends both; either, when both are there, must be the same.
            match (forgejo, gitea) {
                (Some(a), Some(b)) if a != b => Err(Refusal::Malformed),
                (Some(hex), _) | (None, Some(hex)) => check_hmac(hex, body, secret),
                (None, None) => Err(Refusal::Missing),
            }
        }
        Forge::Gitlab => {
            let token = single(headers, "x-gitlab-token")?.ok_or(Refusal::Missing)?;
            let given: [u8; 32] = Sha256::digest(token.as_bytes()).into();
            let wanted: [u8; 32] = Sha256::digest(secret.as_bytes()).into();
            let difference = given
                .iter()
                .zip(wanted.iter())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b));
            match std::hint::black_box(difference) == 0 {
                true => Ok(()),
                false => Err(Refusal::Wrong),
            }
        }
    }
}

fn check_hmac(hex: &str, body: &[u8], secret: &str) -> Result<(), Refusal> {
    let presented = decode_hex(hex.trim()).ok_or(Refusal::Malformed)?;
    if presented.len() != 32 {
        return Err(Refusal::Malformed);
    }
    let mut mac = HmacSha256::new_from_slice(secret.as_bytes()).map_err(|_| Refusal::Wrong)?;
    mac.update(body);
    mac.verify_slice(&presented).map_err(|_| Refusal::Wrong)
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// HMAC-SHA256 of `body` with `secret`, in lower-case hex (what GitHub and Gitea send).
#[cfg(test)]
pub fn sign(body: &[u8], secret: &str) -> String {
    let Ok(mut mac) = HmacSha256::new_from_slice(secret.as_bytes()) else {
        return String::new();
    };
    mac.update(body);
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, value.parse().unwrap());
        }
        map
    }

    /// GitHub's documented example ("Validating webhook deliveries"): the secret "It's a
    /// Secret to Everybody" and the payload "Hello, World!" give this signature.
    #[test]
    fn githubs_documented_example_verifies() {
        let expected = "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        assert_eq!(
            sign(b"Hello, World!", "It's a Secret to Everybody"),
            expected
        );
        let good = headers(&[("x-hub-signature-256", &format!("sha256={expected}"))]);
        assert_eq!(
            verify(
                Forge::Github,
                &good,
                b"Hello, World!",
                "It's a Secret to Everybody"
            ),
            Ok(())
        );
        assert_eq!(
            verify(
                Forge::Github,
                &good,
                b"Hello, World?",
                "It's a Secret to Everybody"
            ),
            Err(Refusal::Wrong)
        );
        assert_eq!(
            verify(Forge::Github, &good, b"Hello, World!", "another secret"),
            Err(Refusal::Wrong)
        );
        assert_eq!(
            verify(Forge::Github, &HeaderMap::new(), b"x", "s"),
            Err(Refusal::Missing)
        );
        let bare = headers(&[("x-hub-signature-256", expected)]);
        assert_eq!(
            verify(
                Forge::Github,
                &bare,
                b"Hello, World!",
                "It's a Secret to Everybody"
            ),
            Err(Refusal::Malformed)
        );
        let twice = headers(&[
            ("x-hub-signature-256", &format!("sha256={expected}")),
            ("x-hub-signature-256", &format!("sha256={expected}")),
        ]);
        assert_eq!(
            verify(
                Forge::Github,
                &twice,
                b"Hello, World!",
                "It's a Secret to Everybody"
            ),
            Err(Refusal::Malformed)
        );
    }

    #[test]
    fn gitea_forgejo_and_gitlab() {
        let signature = sign(b"{}", "s3cret");
        for name in ["x-gitea-signature", "x-forgejo-signature"] {
            assert_eq!(
                verify(
                    Forge::Gitea,
                    &headers(&[(name, &signature)]),
                    b"{}",
                    "s3cret"
                ),
                Ok(())
            );
        }
        assert_eq!(
            verify(
                Forge::Gitea,
                &headers(&[
                    ("x-gitea-signature", &signature),
                    ("x-forgejo-signature", &sign(b"{}", "x"))
                ]),
                b"{}",
                "s3cret"
            ),
            Err(Refusal::Malformed)
        );
        assert_eq!(
            verify(
                Forge::Gitlab,
                &headers(&[("x-gitlab-token", "s3cret")]),
                b"{}",
                "s3cret"
            ),
            Ok(())
        );
        assert_eq!(
            verify(
                Forge::Gitlab,
                &headers(&[("x-gitlab-token", "s3creT")]),
                b"{}",
                "s3cret"
            ),
            Err(Refusal::Wrong)
        );
        // GitHub's header does not sign a GitLab hook.
        assert_eq!(
            verify(
                Forge::Gitlab,
                &headers(&[("x-hub-signature-256", "sha256=00")]),
                b"{}",
                "s"
            ),
            Err(Refusal::Missing)
        );
    }
}
