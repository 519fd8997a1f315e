//! Importing a GGUF file the user already has (downloaded by hand, built locally) into
//! the store.
//!
//! What it guarantees: the source is checked to be GGUF before a byte is copied; the copy
//! is written under a hidden temporary name in the store's own directory (so the final
//! rename is atomic) and deleted if anything fails, so the store never holds half a model;
//! a different file already stored under the same name is kept unless the caller asks
//! for it to be replaced; the same file imported twice is not an error.

use crate::catalog;
use crate::digest;
use crate::error::StoreError;
use crate::gguf;
use crate::store::stored_file_name;
use crate::store::Store;
use crate::store::StoredModel;
use serde::Serialize;
use sha2::Digest;
use sha2::Sha256;
use std::io::Read;
use std::io::Write;
use std::path::Path;

/// What to do when the store already has a different file under the name being added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnConflict {
    /// Keep the stored file; the import fails with [`StoreError::Exists`].
    Refuse,
    /// Put the new file in its place.
    Replace,
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Added {
    pub model: StoredModel,
    pub sha256: String,
    pub outcome: AddOutcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AddOutcome {
    /// The file is now in the store.
    Copied,
    /// A different file had the name; it was replaced.
    Replaced,
    /// The store already held this very file under this name; nothing was copied.
    AlreadyPresent,
}

impl Store {
    /// Copies the GGUF file at `source` into the store, as `name` (a catalog name stores
    /// it under the catalog's file name; any other name gains `.gguf`) or, without a name,
    /// under the catalog's file name when it is a catalog file, else under its own file
    /// name. Refuses to replace a different stored file.
    pub fn add(&self, source: &Path, name: Option<&str>) -> Result<Added, StoreError> {
        self.add_with(source, name, OnConflict::Refuse)
    }

    /// [`Store::add`], choosing what happens to a different file stored under the name.
    pub fn add_with(
        &self,
        source: &Path,
        name: Option<&str>,
        on_conflict: OnConflict,
    ) -> Result<Added, StoreError> {
        let meta = std::fs::metadata(source).map_err(StoreError::io("read", source))?;
        if !meta.is_file() {
            return Err(StoreError::NotAFile {
                path: source.to_path_buf(),
            });
        }
        gguf::check_file(source)?;
        let mut file = self.target_file(source, name)?;
        if name.is_none() {
            // A catalog model saved under another name (a browser's "(1)", a renamed copy)
            // goes under the catalog's file name, where its catalog name finds it. Only a
            // file of a catalog size is read an extra time to find out.
            if let Some(entry) = self.catalog().iter().find(|e| e.size == meta.len()) {
                if digest::sha256_file(source)? == entry.sha256 {
                    file = entry.file.to_string();
                }
            }
        }
        let dest = self.dir().join(&file);

        // Importing the stored file onto itself: nothing to copy, only to record.
        if same_file(source, &dest) {
            let sha256 = digest::recorded(&dest).map_or_else(|| digest::sha256_file(&dest), Ok)?;
            digest::record(&dest, &sha256);
            return self.added(&file, sha256, AddOutcome::AlreadyPresent);
        }
        let existing = std::fs::metadata(&dest).ok().map(|m| m.len());
        // A different size is a different file: no need to copy gigabytes to find out.
        if on_conflict == OnConflict::Refuse && existing.is_some_and(|size| size != meta.len()) {
            return Err(self.exists(&file));
        }

        let (temp, sha256) = self.copy_to_temp(source)?;
        let outcome = match existing {
            None => AddOutcome::Copied,
            Some(_) => {
                let stored =
                    digest::recorded(&dest).map_or_else(|| digest::sha256_file(&dest), Ok)?;
                if stored == sha256 {
                    // `temp` is deleted when dropped.
                    digest::record(&dest, &sha256);
                    return self.added(&file, sha256, AddOutcome::AlreadyPresent);
                }
                match on_conflict {
                    OnConflict::Refuse => return Err(self.exists(&file)),
                    OnConflict::Replace => AddOutcome::Replaced,
                }
            }
        };
        let persisted = match outcome {
            // No-clobber even here: another import may have taken the name meanwhile.
            AddOutcome::Copied => temp.persist_noclobber(&dest),
            AddOutcome::Replaced | AddOutcome::AlreadyPresent => temp.persist(&dest),
        };
        if let Err(err) = persisted {
            // The temporary file is deleted when `err.file` drops.
            return Err(match err.error.kind() {
                std::io::ErrorKind::AlreadyExists => self.exists(&file),
                _ => StoreError::io("move into place", &dest)(err.error),
            });
        }
        digest::forget(&dest)?;
        digest::record(&dest, &sha256);
        self.added(&file, sha256, outcome)
    }

    fn target_file(&self, source: &Path, name: Option<&str>) -> Result<String, StoreError> {
        let name = match name {
            Some(name) => name.to_string(),
            None => source
                .file_name()
                .and_then(|n| n.to_str())
                .map(str::to_string)
                .ok_or_else(|| StoreError::BadName {
                    name: source.display().to_string(),
                    reason: "the file name is not UTF-8; give a name",
                })?,
        };
        match catalog::find(self.catalog(), &name) {
            Some(entry) => Ok(entry.file.to_string()),
            None => stored_file_name(&name),
        }
    }

    /// Copies `source` to a hidden temporary file in the store, hashing as it goes.
    fn copy_to_temp(&self, source: &Path) -> Result<(tempfile::NamedTempFile, String), StoreError> {
        let mut input = std::fs::File::open(source).map_err(StoreError::io("open", source))?;
        let mut temp = tempfile::Builder::new()
            .prefix(".import-")
            .suffix(".tmp")
            .tempfile_in(self.dir())
            .map_err(StoreError::io("create a temporary file in", self.dir()))?;
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 1 << 20];
        loop {
            let read = input
                .read(&mut buffer)
                .map_err(StoreError::io("read", source))?;
            if read == 0 {
                break;
            }
            hasher.update(&buffer[..read]);
            temp.write_all(&buffer[..read])
                .map_err(StoreError::io("write", temp.path()))?;
        }
        // On disk before the rename makes it visible under its real name.
        temp.as_file()
            .sync_all()
            .map_err(StoreError::io("write", temp.path()))?;
        Ok((temp, digest::hex(hasher)))
    }

    fn added(&self, file: &str, sha256: String, outcome: AddOutcome) -> Result<Added, StoreError> {
        Ok(Added {
            model: self.describe(file)?,
            sha256,
            outcome,
        })
    }

    fn exists(&self, file: &str) -> StoreError {
        StoreError::Exists {
            file: file.to_string(),
            dir: self.dir().to_path_buf(),
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
