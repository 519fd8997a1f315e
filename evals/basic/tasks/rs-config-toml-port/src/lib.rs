//! The status server's settings, read from `config.toml` (a small subset of TOML:
//! `[section]` headers and `key = value` lines, strings in double quotes).

use std::collections::HashMap;

/// `section.key` → value (quotes removed) for every setting of `text`.
pub fn parse(text: &str) -> HashMap<String, String> {
    let mut section = String::new();
    let mut values = HashMap::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.trim().to_string();
        } else if let Some((key, value)) = line.split_once('=') {
            let value = value.trim().trim_matches('"').to_string();
            values.insert(format!("{section}.{}", key.trim()), value);
        }
    }
    values
}

/// Where the server listens.
pub struct Listen {
    pub host: String,
    pub port: u16,
}

impl Listen {
    pub fn from_config(values: &HashMap<String, String>) -> Listen {
        Listen {
            host: values.get("server.host").cloned().unwrap_or_else(|| "127.0.0.1".into()),
            port: values.get("server.port").and_then(|p| p.parse().ok()).unwrap_or(8000),
        }
    }
}
