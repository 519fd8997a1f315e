//! Where things are, from the environment: the store's directory and the base URL that
//! catalog downloads are fetched under.
//!
//! What it guarantees: empty variables count as unset; the environment is read through a
//! lookup function, so tests check the order of precedence without touching the process's
//! own variables.

use std::ffi::OsString;
use std::path::PathBuf;

/// The Hugging Face host catalog files are downloaded from.
pub const DEFAULT_BASE_URL: &str = "https://huggingface.co";

/// Names the store's directory outright.
pub const MODELS_DIR_VAR: &str = "WRIGHT_MODELS_DIR";

/// Replaces [`DEFAULT_BASE_URL`] (a mirror, or a local server in tests), as
/// `HF_ENDPOINT` does for Hugging Face's own tools.
pub const BASE_URL_VAR: &str = "WRIGHT_MODELS_BASE_URL";

/// `WRIGHT_MODELS_DIR`, else `$XDG_CACHE_HOME/wright/models`, else
/// `~/.cache/wright/models`; `None` when none of these variables is set.
pub fn models_dir_from(lookup: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let var = |name: &str| lookup(name).filter(|value| !value.is_empty());
    if let Some(dir) = var(MODELS_DIR_VAR) {
        return Some(PathBuf::from(dir));
    }
    let cache = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(cache.join("wright").join("models"))
}

/// The store's directory from the process's environment.
pub fn models_dir() -> Option<PathBuf> {
    models_dir_from(|name| std::env::var_os(name))
}

/// `WRIGHT_MODELS_BASE_URL` without a trailing slash, else [`DEFAULT_BASE_URL`].
pub fn base_url_from(lookup: impl Fn(&str) -> Option<OsString>) -> String {
    lookup(BASE_URL_VAR)
        .and_then(|value| value.into_string().ok())
        .map(|value| value.trim().trim_end_matches('/').to_string())
        .filter(|value| !value.is_empty())
        .unwrap_or_else(|| DEFAULT_BASE_URL.to_string())
}

/// The base URL from the process's environment.
pub fn base_url() -> String {
    base_url_from(|name| std::env::var_os(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn the_models_dir_prefers_its_own_variable_then_xdg_then_home() {
        let all = [
            ("WRIGHT_MODELS_DIR", "/m"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(models_dir_from(env(&all)), Some(PathBuf::from("/m")));
        assert_eq!(
            models_dir_from(env(&all[1..])),
            Some(PathBuf::from("/x/wright/models"))
        );
        assert_eq!(
            models_dir_from(env(&all[2..])),
            Some(PathBuf::from("/h/.cache/wright/models"))
        );
        assert_eq!(models_dir_from(env(&[])), None);
    }

    #[test]
    fn empty_variables_count_as_unset() {
        let lookup = env(&[
            ("WRIGHT_MODELS_DIR", ""),
            ("XDG_CACHE_HOME", ""),
            ("HOME", "/h"),
        ]);
        assert_eq!(
            models_dir_from(lookup),
            Some(PathBuf::from("/h/.cache/wright/models"))
        );
    }

    #[test]
    fn the_base_url_can_be_overridden_and_loses_its_trailing_slash() {
        assert_eq!(base_url_from(env(&[])), "https://huggingface.co");
        assert_eq!(
            base_url_from(env(&[("WRIGHT_MODELS_BASE_URL", "http://127.0.0.1:9/")])),
            "http://127.0.0.1:9"
        );
        assert_eq!(
            base_url_from(env(&[("WRIGHT_MODELS_BASE_URL", " ")])),
            "https://huggingface.co"
        );
    }
}
