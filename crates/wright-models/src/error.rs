//! The store's errors: each one names the file or directory concerned and what would fix it.
//!
//! What it guarantees: no error is a bare I/O message; every one says what wright was doing
//! and on which path.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no directory for models: set WRIGHT_MODELS_DIR, XDG_CACHE_HOME or HOME")]
    NoLocation,

    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{} is not a GGUF model file: {reason}", path.display())]
    NotGguf { path: PathBuf, reason: NotGguf },

    #[error(
        "{} is GGUF version {version}, which wright does not read (versions 2 and 3 are)",
        path.display()
    )]
    UnsupportedGgufVersion { path: PathBuf, version: u32 },

    #[error("{} is not a file", path.display())]
    NotAFile { path: PathBuf },

    #[error("'{name}' cannot name a model in the store: {reason}")]
    BadName { name: String, reason: &'static str },

    #[error(
        "a different file named {file} is already in the store ({}); remove it or replace it",
        dir.display()
    )]
    Exists { file: String, dir: PathBuf },

    #[error("model '{name}' is in the catalog but not in the store ({}): download it first", dir.display())]
    NotDownloaded { name: String, dir: PathBuf },

    #[error("no model '{name}' in the store ({}){}", dir.display(), stored_list(stored))]
    NotFound {
        name: String,
        dir: PathBuf,
        stored: Vec<String>,
    },
}

/// Why a file was taken for something other than a GGUF model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotGguf {
    #[error("it is shorter than a GGUF header")]
    TooShort,
    /// What `git clone` of a Hugging Face repository gives without Git LFS.
    #[error("it is a Git LFS pointer, not the model; download the file itself (a /resolve/ URL)")]
    LfsPointer,
    /// What a server sends for a login or error page.
    #[error("it is an HTML page, not the model")]
    Html,
    #[error("it does not start with the bytes GGUF")]
    OtherContent,
}

fn stored_list(stored: &[String]) -> String {
    if stored.is_empty() {
        "; the store is empty".to_string()
    } else {
        format!("; stored: {}", stored.join(", "))
    }
}

impl StoreError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| StoreError::Io {
            action,
            path,
            source,
        }
    }
}
