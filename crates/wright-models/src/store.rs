//! The store: a directory of GGUF files, named by their file names, with the catalog's
//! models under the catalog's file names. Listing, looking a model up and removing one.
//!
//! What it guarantees: only complete files carry a `.gguf` name — an import is copied
//! under a hidden temporary name and renamed, a download grows as `FILE.part` until it is
//! verified — so whatever [`Store::list`] and [`Store::resolve`] return is whole. Names
//! given by the user never reach outside the directory (no separators, no leading dot).

use crate::catalog;
use crate::catalog::CatalogEntry;
use crate::digest;
use crate::error::StoreError;
use crate::gguf;
use crate::location;
use serde::Serialize;
use std::path::Path;
use std::path::PathBuf;

/// The extension every stored model has.
pub const EXTENSION: &str = ".gguf";

/// The extension of a download in progress.
pub const PART_EXTENSION: &str = ".part";

/// A directory of model files, and the catalog its files are compared with.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
    catalog: &'static [CatalogEntry],
}

/// One model file in the store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoredModel {
    /// What [`Store::resolve`] takes for it: the catalog's name for a file stored under
    /// the catalog's file name, else the file name.
    pub name: String,
    pub file: String,
    pub path: PathBuf,
    pub size: u64,
    pub catalog: CatalogMatch,
}

/// How a stored file compares with the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "entry", rename_all = "snake_case")]
pub enum CatalogMatch {
    /// Not a catalog model (as far as its name and recorded digest tell).
    NotInCatalog,
    /// Its recorded sha256 is this entry's (whatever the file is called).
    Verified(&'static CatalogEntry),
    /// Named as this entry's file and of its size, but no digest was recorded for it (it
    /// was put there by hand, or changed since), so its contents are unchecked.
    Unchecked(&'static CatalogEntry),
    /// Named as this entry's file, but its size or recorded digest is not the entry's.
    Differs(&'static CatalogEntry),
}

/// What [`Store::remove`] deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Removed {
    pub file: String,
    /// Bytes freed: the model, and the part of an unfinished download of it.
    pub freed: u64,
}

impl Store {
    /// The store in `dir`, created if missing, compared with the built-in catalog.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, StoreError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(StoreError::io("create", &dir))?;
        Ok(Store {
            dir,
            catalog: catalog::CATALOG,
        })
    }

    /// The store where the environment puts it: `WRIGHT_MODELS_DIR`, else
    /// `$XDG_CACHE_HOME/wright/models`, else `~/.cache/wright/models`.
    pub fn default_location() -> Result<Self, StoreError> {
        Store::open(location::models_dir().ok_or(StoreError::NoLocation)?)
    }

    /// The same store compared with another catalog (tests, mirrors with their own files).
    pub fn with_catalog(mut self, catalog: &'static [CatalogEntry]) -> Self {
        self.catalog = catalog;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn catalog(&self) -> &'static [CatalogEntry] {
        self.catalog
    }

    /// Every model file in the store, by file name. Unfinished downloads, temporary files
    /// and digest records are not models and are not listed.
    pub fn list(&self) -> Result<Vec<StoredModel>, StoreError> {
        let entries = std::fs::read_dir(&self.dir).map_err(StoreError::io("list", &self.dir))?;
        let mut models = Vec::new();
        for entry in entries {
            let entry = entry.map_err(StoreError::io("list", &self.dir))?;
            let Some(file) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if file.starts_with('.') || !file.ends_with(EXTENSION) {
                continue;
            }
            let is_file = entry.file_type().map(|t| t.is_file()).unwrap_or(false);
            if is_file {
                models.push(self.describe(&file)?);
            }
        }
        models.sort_by(|a, b| a.file.cmp(&b.file));
        Ok(models)
    }

    /// The file of a model: a catalog name whose file is in the store (under the
    /// catalog's file name, or any name with the catalog's recorded digest), a stored
    /// file's name (with or without `.gguf`), or the path of a GGUF file anywhere. An argument
    /// with a `/` in it is always a path; otherwise the store is asked first.
    pub fn resolve(&self, name_or_path: &str) -> Result<PathBuf, StoreError> {
        let looks_like_path = name_or_path.contains('/') || name_or_path.contains('\\');
        if !looks_like_path {
            if let Some(entry) = catalog::find(self.catalog, name_or_path) {
                let path = self.dir.join(entry.file);
                if path.is_file() {
                    return Ok(path);
                }
                // The same file added under a name of the user's choosing.
                let copy = self
                    .list()?
                    .into_iter()
                    .find(|model| model.catalog == CatalogMatch::Verified(entry));
                return match copy {
                    Some(model) => Ok(model.path),
                    None => Err(StoreError::NotDownloaded {
                        name: entry.name.to_string(),
                        dir: self.dir.clone(),
                    }),
                };
            }
            if let Ok(file) = stored_file_name(name_or_path) {
                let path = self.dir.join(file);
                if path.is_file() {
                    return Ok(path);
                }
            }
        }
        let path = PathBuf::from(name_or_path);
        if path.is_file() {
            gguf::check_file(&path)?;
            return Ok(path);
        }
        Err(self.not_found(name_or_path))
    }

    /// Deletes a stored model (by catalog name or file name), its digest record and any
    /// unfinished download of it.
    pub fn remove(&self, name: &str) -> Result<Removed, StoreError> {
        let file = match catalog::find(self.catalog, name) {
            Some(entry) => entry.file.to_string(),
            None => stored_file_name(name)?,
        };
        let path = self.dir.join(&file);
        let part = self.part_path(&file);
        let mut freed = 0;
        let mut found = false;
        for doomed in [&path, &part] {
            let size = match std::fs::metadata(doomed) {
                Ok(meta) => meta.len(),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                Err(err) => return Err(StoreError::io("read", doomed.as_path())(err)),
            };
            std::fs::remove_file(doomed).map_err(StoreError::io("remove", doomed.as_path()))?;
            freed += size;
            found = true;
        }
        if !found {
            return Err(self.not_found(name));
        }
        digest::forget(&path)?;
        Ok(Removed { file, freed })
    }

    /// Where the unfinished download of `file` grows.
    pub fn part_path(&self, file: &str) -> PathBuf {
        self.dir.join(format!("{file}{PART_EXTENSION}"))
    }

    /// The listing entry of the stored `file`.
    pub(crate) fn describe(&self, file: &str) -> Result<StoredModel, StoreError> {
        let path = self.dir.join(file);
        let size = std::fs::metadata(&path)
            .map_err(StoreError::io("read", &path))?
            .len();
        let recorded = digest::recorded(&path);
        let by_digest = recorded
            .as_deref()
            .and_then(|sha| catalog::find_by_sha256(self.catalog, sha));
        let by_name = self.catalog.iter().find(|entry| entry.file == file);
        let catalog = match (by_digest, by_name) {
            (Some(entry), _) => CatalogMatch::Verified(entry),
            (None, Some(entry)) if entry.size == size && recorded.is_none() => {
                CatalogMatch::Unchecked(entry)
            }
            (None, Some(entry)) => CatalogMatch::Differs(entry),
            (None, None) => CatalogMatch::NotInCatalog,
        };
        let name = match by_name {
            Some(entry) => entry.name.to_string(),
            None => file.to_string(),
        };
        Ok(StoredModel {
            name,
            file: file.to_string(),
            path,
            size,
            catalog,
        })
    }

    fn not_found(&self, name: &str) -> StoreError {
        StoreError::NotFound {
            name: name.to_string(),
            dir: self.dir.clone(),
            stored: self
                .list()
                .map(|models| models.into_iter().map(|m| m.name).collect())
                .unwrap_or_default(),
        }
    }
}

/// The file name a model called `name` has in the store: `name` itself, with `.gguf`
/// added when it lacks it; refused when it could point outside the store or hide.
pub(crate) fn stored_file_name(name: &str) -> Result<String, StoreError> {
    let bad = |reason| StoreError::BadName {
        name: name.to_string(),
        reason,
    };
    if name.trim().is_empty() {
        return Err(bad("it is empty"));
    }
    if name.contains(['/', '\\', '\0']) {
        return Err(bad("a name cannot contain a path separator"));
    }
    if name.starts_with('.') {
        return Err(bad("a name cannot start with a dot"));
    }
    let file = if name.ends_with(EXTENSION) {
        name.to_string()
    } else {
        format!("{name}{EXTENSION}")
    };
    // Most file systems stop at 255 bytes.
    if file.len() > 255 {
        return Err(bad("it is longer than a file name can be"));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn names_gain_the_extension_and_stay_inside_the_store() {
        assert_eq!(stored_file_name("mine").ok(), Some("mine.gguf".to_string()));
        assert_eq!(
            stored_file_name("mine.gguf").ok(),
            Some("mine.gguf".to_string())
        );
        for bad in ["", " ", "../up", "a/b", ".hidden", "a\\b"] {
            assert!(
                matches!(stored_file_name(bad), Err(StoreError::BadName { .. })),
                "{bad:?}"
            );
        }
    }
}
