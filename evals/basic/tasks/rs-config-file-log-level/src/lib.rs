//! Reads the application's settings from `app.conf` (`key = value` lines).

use std::collections::HashMap;

/// The `key = value` pairs of a config file's text; `#` starts a comment line.
pub fn parse(text: &str) -> HashMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_once('='))
        .map(|(key, value)| (key.trim().to_string(), value.trim().to_string()))
        .collect()
}

/// The application's settings.
#[derive(Debug, PartialEq)]
pub struct Settings {
    pub name: String,
    pub log_level: String,
}

impl Settings {
    /// From the text of `app.conf`.
    pub fn from_conf(text: &str) -> Settings {
        let values = parse(text);
        Settings {
            name: values.get("name").cloned().unwrap_or_else(|| "app".into()),
            log_level: values.get("log_level").cloned().unwrap_or_else(|| "info".into()),
        }
    }
}
