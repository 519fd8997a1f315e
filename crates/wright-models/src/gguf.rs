//! The check that a file is a GGUF model before wright stores or loads it: the magic bytes
//! and a format version the engine reads.
//!
//! What it guarantees: only the first eight bytes are read, so the check is instant on a
//! file of any size; a file that is not GGUF is named for what it most likely is (a Git
//! LFS pointer, an HTML page) so the user knows what went wrong with the download.

use crate::error::NotGguf;
use crate::error::StoreError;
use std::io::Read;
use std::path::Path;

/// The first four bytes of every GGUF file.
pub const MAGIC: &[u8; 4] = b"GGUF";

/// The format versions llama.cpp-style engines read (version 1 was dropped long ago).
pub const SUPPORTED_VERSIONS: std::ops::RangeInclusive<u32> = 2..=3;

/// Reads the header of `path` and returns its GGUF version.
pub fn check_file(path: &Path) -> Result<u32, StoreError> {
    let mut file = std::fs::File::open(path).map_err(StoreError::io("open", path))?;
    // Enough of the start to recognise an LFS pointer or an HTML page, not just the header.
    let mut start = Vec::with_capacity(64);
    (&mut file)
        .take(64)
        .read_to_end(&mut start)
        .map_err(StoreError::io("read", path))?;
    check_header(&start).map_err(|reason| match reason {
        HeaderError::NotGguf(reason) => StoreError::NotGguf {
            path: path.to_path_buf(),
            reason,
        },
        HeaderError::Version(version) => StoreError::UnsupportedGgufVersion {
            path: path.to_path_buf(),
            version,
        },
    })
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum HeaderError {
    NotGguf(NotGguf),
    Version(u32),
}

/// The version in `start` (the file's first bytes), or why it is not a GGUF header.
pub(crate) fn check_header(start: &[u8]) -> Result<u32, HeaderError> {
    if start.starts_with(MAGIC) {
        let Some(version) = start.get(4..8) else {
            return Err(HeaderError::NotGguf(NotGguf::TooShort));
        };
        let version = u32::from_le_bytes([version[0], version[1], version[2], version[3]]);
        return if SUPPORTED_VERSIONS.contains(&version) {
            Ok(version)
        } else {
            Err(HeaderError::Version(version))
        };
    }
    let text = String::from_utf8_lossy(start);
    let text = text.trim_start();
    let reason = if start.len() < MAGIC.len() {
        NotGguf::TooShort
    } else if text.starts_with("version https://git-lfs") {
        NotGguf::LfsPointer
    } else if text.starts_with('<') {
        NotGguf::Html
    } else {
        NotGguf::OtherContent
    };
    Err(HeaderError::NotGguf(reason))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn versions_two_and_three_pass() {
        assert_eq!(check_header(b"GGUF\x03\x00\x00\x00rest"), Ok(3));
        assert_eq!(check_header(b"GGUF\x02\x00\x00\x00"), Ok(2));
    }

    #[test]
    fn other_versions_are_named() {
        assert_eq!(
            check_header(b"GGUF\x01\x00\x00\x00"),
            Err(HeaderError::Version(1))
        );
        assert_eq!(
            check_header(b"GGUF\x09\x00\x00\x00"),
            Err(HeaderError::Version(9))
        );
    }

    #[test]
    fn what_a_bad_download_usually_is_gets_its_name() {
        let not = |bytes: &[u8]| check_header(bytes).err();
        assert_eq!(
            not(b"version https://git-lfs.github.com/spec/v1\noid sha256:cc32"),
            Some(HeaderError::NotGguf(NotGguf::LfsPointer))
        );
        assert_eq!(
            not(b"\n<!DOCTYPE html><html>"),
            Some(HeaderError::NotGguf(NotGguf::Html))
        );
        assert_eq!(not(b"GGU"), Some(HeaderError::NotGguf(NotGguf::TooShort)));
        assert_eq!(
            not(b"GGUF\x03"),
            Some(HeaderError::NotGguf(NotGguf::TooShort))
        );
        assert_eq!(
            not(b"PK\x03\x04zip"),
            Some(HeaderError::NotGguf(NotGguf::OtherContent))
        );
    }
}
