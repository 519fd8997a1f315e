//! The files where probes' answers are kept (`$XDG_CACHE_HOME/wright/NAME.json`): a JSON
//! object of entries by key. An entry that does not read as the current format (an older
//! one's, a damaged one) is left out, so that server is probed again; losing a file only
//! costs one more probe.

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::BTreeMap;

/// The entries of the cache file `name`.
pub fn read<T: DeserializeOwned>(name: &str) -> BTreeMap<String, T> {
    let path = crate::tool_mode::cache_dir().join(name);
    let entries: BTreeMap<String, serde_json::Value> = std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    entries
        .into_iter()
        .filter_map(|(key, value)| Some((key, serde_json::from_value(value).ok()?)))
        .collect()
}

/// Writes the cache file `name` whole.
pub fn write<T: Serialize>(name: &str, entries: &BTreeMap<String, T>) {
    let dir = crate::tool_mode::cache_dir();
    let _ = std::fs::create_dir_all(&dir);
    if let Ok(bytes) = serde_json::to_vec_pretty(entries) {
        let _ = std::fs::write(dir.join(name), bytes);
    }
}
