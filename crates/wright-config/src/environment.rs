//! The environment variables wright reads, and the keys they set (at the environment's
//! precedence: above every file, below every flag) — except `OLLAMA_HOST`, which is often
//! set for the Ollama server itself (`0.0.0.0` to listen everywhere) and so only counts
//! when nothing else names a server.

use crate::Config;
use crate::Origin;

/// Variable → key, in rising precedence where two set the same key.
pub const VARIABLES: &[(&str, &str)] = &[
    ("OPENAI_BASE_URL", "base_url"),
    ("OPENAI_MODEL", "model"),
    ("WRIGHT_MODEL_FILE", "model_file"),
    ("OPENAI_API_KEY", "api_key"),
    ("WRIGHT_PROFILE", "profile"),
    ("WRIGHT_DOCKER_IMAGE", "sandbox.docker_image"),
    ("DOCKER_HOST", "sandbox.docker_host"),
];

/// `OLLAMA_HOST` as a client reaches it: the scheme and Ollama's port when not given, and
/// a listen-everywhere address as this machine.
pub fn ollama_host_url(raw: &str) -> String {
    let raw = raw.trim().trim_end_matches('/');
    let (scheme, rest) = match raw.split_once("://") {
        Some((scheme, rest)) => (scheme, rest),
        None => ("http", raw),
    };
    let (authority, path) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let (host, port) = match authority.rsplit_once(':') {
        // "[::1]:11434" or "host:11434", not the colons inside a bare IPv6 address.
        Some((host, port))
            if !port.is_empty()
                && port.chars().all(|c| c.is_ascii_digit())
                && !host.ends_with(':') =>
        {
            (host, port.to_string())
        }
        // Ollama's own client: 443 behind https, else its port.
        _ if scheme == "https" => (authority, "443".to_string()),
        _ => (authority, "11434".to_string()),
    };
    let host = match host {
        "" | "0.0.0.0" | "[::]" | "::" => "127.0.0.1",
        host => host,
    };
    format!("{scheme}://{host}:{port}{path}")
}

impl Config {
    /// Adds the variables `get` finds set (and not empty).
    pub fn with_environment(mut self, get: impl Fn(&str) -> Option<String>) -> Self {
        if let Some(host) = get("OLLAMA_HOST").filter(|v| !v.trim().is_empty()) {
            self = self.with(
                "base_url",
                toml::Value::String(ollama_host_url(&host)),
                Origin::EnvFallback("OLLAMA_HOST".to_string()),
            );
        }
        for (variable, key) in VARIABLES {
            if let Some(value) = get(variable).filter(|v| !v.is_empty()) {
                self = self.with(
                    key,
                    toml::Value::String(value),
                    Origin::Env((*variable).to_string()),
                );
            }
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ollama_host_forms() {
        for (raw, url) in [
            ("0.0.0.0", "http://127.0.0.1:11434"),
            ("0.0.0.0:11434", "http://127.0.0.1:11434"),
            ("gpu-box", "http://gpu-box:11434"),
            ("gpu-box:8080", "http://gpu-box:8080"),
            ("https://ollama.example", "https://ollama.example:443"),
            ("http://[::]:11434", "http://127.0.0.1:11434"),
            ("[::1]:11500", "http://[::1]:11500"),
        ] {
            assert_eq!(ollama_host_url(raw), url, "{raw}");
        }
        // Below the user's own file, above nothing.
        let config = Config::default()
            .with(
                "base_url",
                toml::Value::String("http://127.0.0.1:8080/v1".into()),
                Origin::UserFile {
                    path: "/c".into(),
                    line: 1,
                },
            )
            .with_environment(|name| (name == "OLLAMA_HOST").then(|| "0.0.0.0".to_string()));
        assert_eq!(config.str("base_url"), Some("http://127.0.0.1:8080/v1"));
    }
}
