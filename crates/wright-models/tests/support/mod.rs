//! Test fixtures: a fake GGUF file, a catalog describing it, and a fake Hugging Face
//! that serves it over HTTP on 127.0.0.1 (see `hub`).

pub mod hub;

use sha2::Digest;
use wright_models::CatalogEntry;
use wright_models::Store;

/// The catalog name, repository and file of the fake model.
pub const NAME: &str = "tiny";
pub const REPO: &str = "wright/Tiny-GGUF";
pub const FILE: &str = "tiny-q4.gguf";

/// A GGUF header (version 3) and `len - 8` bytes of deterministic noise: several chunks
/// of a response, so progress and resumption have something to cut.
pub fn fake_gguf(len: usize) -> Vec<u8> {
    let mut bytes = b"GGUF\x03\x00\x00\x00".to_vec();
    let mut state: u32 = 0x1234_5678;
    while bytes.len() < len {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        bytes.push((state >> 24) as u8);
    }
    bytes.truncate(len);
    bytes
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A one-entry catalog for `body`, with `sha256` as its digest (the real one, or a
/// wrong one to test the mismatch).
pub fn catalog_for(body: &[u8], sha256: String) -> &'static [CatalogEntry] {
    let entry = CatalogEntry {
        name: NAME,
        repo: REPO,
        file: FILE,
        size: body.len() as u64,
        sha256: Box::leak(sha256.into_boxed_str()),
        description: "a fake model for tests",
        license: "MIT",
        approx_ram_bytes: 1 << 20,
    };
    Box::leak(vec![entry].into_boxed_slice())
}

/// A store in a fresh temporary directory whose catalog knows `body` as `tiny`.
pub fn store_for(body: &[u8]) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path().join("models"))
        .expect("open store")
        .with_catalog(catalog_for(body, sha256_hex(body)));
    (dir, store)
}

/// The names in a directory, sorted (to see what a failure left behind).
pub fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
