//! sha256 of model files, and the small record of it kept beside each stored file
//! (`.FILE.sha256`), so listing the store does not re-read gigabytes.
//!
//! What it guarantees: a record is believed only while the file still has the size and
//! modification time it had when the record was written; a file replaced by hand reads as
//! unchecked, never as verified.

use crate::error::StoreError;
use sha2::Digest;
use sha2::Sha256;
use std::io::Read;
use std::path::Path;
use std::path::PathBuf;
use std::time::UNIX_EPOCH;

/// Lowercase hex of a finished hash.
pub(crate) fn hex(hasher: Sha256) -> String {
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The sha256 of the whole file at `path`.
pub fn sha256_file(path: &Path) -> Result<String, StoreError> {
    let mut file = std::fs::File::open(path).map_err(StoreError::io("open", path))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let read = file
            .read(&mut buffer)
            .map_err(StoreError::io("read", path))?;
        if read == 0 {
            return Ok(hex(hasher));
        }
        hasher.update(&buffer[..read]);
    }
}

/// [`sha256_file`] without holding up an async runtime's thread for the seconds a
/// large model takes.
pub(crate) async fn sha256_file_async(path: &Path) -> Result<String, StoreError> {
    use tokio::io::AsyncReadExt;
    let mut file = tokio::fs::File::open(path)
        .await
        .map_err(StoreError::io("open", path))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let read = file
            .read(&mut buffer)
            .await
            .map_err(StoreError::io("read", path))?;
        if read == 0 {
            return Ok(hex(hasher));
        }
        hasher.update(&buffer[..read]);
    }
}

/// Where the record of `model`'s digest lives: hidden, beside it.
fn record_path(model: &Path) -> Option<PathBuf> {
    let name = model.file_name()?.to_str()?;
    Some(model.with_file_name(format!(".{name}.sha256")))
}

/// What identifies the file's current contents cheaply: its size and mtime.
fn stamp(model: &Path) -> Option<(u64, u128)> {
    let meta = std::fs::metadata(model).ok()?;
    let mtime = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some((meta.len(), mtime.as_nanos()))
}

/// Notes `sha256` as the digest of `model` as it is now. Best effort: without the record
/// the file still works and reads as unchecked in a listing, so a failure to write it is
/// not worth failing an import or a download that did succeed.
pub(crate) fn record(model: &Path, sha256: &str) {
    let (Some(path), Some((size, mtime))) = (record_path(model), stamp(model)) else {
        return;
    };
    let _ = std::fs::write(path, format!("{sha256} {size} {mtime}\n"));
}

/// The recorded digest of `model`, if the record matches the file as it is now.
pub(crate) fn recorded(model: &Path) -> Option<String> {
    let text = std::fs::read_to_string(record_path(model)?).ok()?;
    let mut fields = text.split_whitespace();
    let sha256 = fields.next()?;
    let size: u64 = fields.next()?.parse().ok()?;
    let mtime: u128 = fields.next()?.parse().ok()?;
    (stamp(model)? == (size, mtime)).then(|| sha256.to_string())
}

/// Drops the record of `model` (when the model itself goes).
pub(crate) fn forget(model: &Path) -> Result<(), StoreError> {
    let Some(path) = record_path(model) else {
        return Ok(());
    };
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(StoreError::io("remove", path)(err)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_record_is_believed_until_the_file_changes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let model = dir.path().join("m.gguf");
        std::fs::write(&model, b"GGUF one").expect("write");
        let sha = sha256_file(&model).expect("hash");
        assert_eq!(recorded(&model), None);
        record(&model, &sha);
        assert_eq!(recorded(&model), Some(sha.clone()));
        std::fs::write(&model, b"GGUF two, longer").expect("rewrite");
        assert_eq!(recorded(&model), None);
        forget(&model).expect("forget");
        forget(&model).expect("forgetting twice is fine");
    }

    #[test]
    fn the_digest_is_sha256() {
        let dir = tempfile::tempdir().expect("tempdir");
        let model = dir.path().join("abc");
        std::fs::write(&model, b"abc").expect("write");
        assert_eq!(
            sha256_file(&model).expect("hash"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
