//! The catalog: models wright knows by name, each pinned to one file of one Hugging Face
//! repository with its exact size and sha256.
//!
//! What it guarantees: every value below was checked before it was written here (how, per
//! entry, in the comment above it); a model whose file could not be checked is left out
//! rather than guessed. A download of a catalog model is kept only when its size and
//! sha256 are these.

use serde::Serialize;

/// One model wright can download by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CatalogEntry {
    /// What the user types: `wright model pull qwen2.5-coder-1.5b`.
    pub name: &'static str,
    /// The Hugging Face repository, `owner/name`.
    pub repo: &'static str,
    /// The exact file in that repository; also its name in the store.
    pub file: &'static str,
    /// The file's size in bytes.
    pub size: u64,
    /// The file's sha256, lowercase hex.
    pub sha256: &'static str,
    /// One line for a listing.
    pub description: &'static str,
    /// The licence of the weights, as the repository states it.
    pub license: &'static str,
    /// Roughly what running it takes: the weights, an 8k-token KV cache and the compute
    /// buffers, rounded up to a whole GiB.
    pub approx_ram_bytes: u64,
}

const GIB: u64 = 1 << 30;

/// The built-in catalog, smallest first.
pub const CATALOG: &[CatalogEntry] = &[
    // Size and sha256 as pinned, identically, by several independent public projects
    // (llama.cpp catalogs, Dockerfiles and download scripts, some pinned to revision
    // ebb2015119c9 of the repository and one read from the Hugging Face API); not
    // downloaded here.
    CatalogEntry {
        name: "qwen2.5-coder-0.5b",
        repo: "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
        file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size: 491_400_064,
        sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        description: "Qwen2.5-Coder 0.5B Instruct, Q4_K_M: the smallest; quick, for simple edits",
        license: "Apache-2.0",
        approx_ram_bytes: GIB,
    },
    // Checked against a copy downloaded from this repository: `sha256sum` of the local
    // file gives this digest and its size is this many bytes; the same values are
    // pinned by independent public projects.
    CatalogEntry {
        name: "qwen2.5-coder-1.5b",
        repo: "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
        file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size: 1_117_320_768,
        sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        description: "Qwen2.5-Coder 1.5B Instruct, Q4_K_M: small and fast on a laptop CPU",
        license: "Apache-2.0",
        approx_ram_bytes: 2 * GIB,
    },
    // As for 0.5B: several independent projects pin these values (some to revision
    // f74adce6aa16 of the repository); not downloaded here. Its weights are under the
    // Qwen Research licence, not Apache-2.0 like the others.
    CatalogEntry {
        name: "qwen2.5-coder-3b",
        repo: "Qwen/Qwen2.5-Coder-3B-Instruct-GGUF",
        file: "qwen2.5-coder-3b-instruct-q4_k_m.gguf",
        size: 2_104_932_800,
        sha256: "724fb256bec1ff062b2f65e4569e871ad2e95ab2a3989723d1769c54294730b7",
        description: "Qwen2.5-Coder 3B Instruct, Q4_K_M: steadier tool use (Qwen Research licence)",
        license: "Qwen Research License",
        approx_ram_bytes: 3 * GIB,
    },
    // As for 0.5B: several independent projects pin these values (some to revision
    // 13fb94bfda8c of the repository, one mirroring the API's `lfs.sha256`); not
    // downloaded here. The repository splits its larger quantizations into parts;
    // Q4_K_M is one file.
    CatalogEntry {
        name: "qwen2.5-coder-7b",
        repo: "Qwen/Qwen2.5-Coder-7B-Instruct-GGUF",
        file: "qwen2.5-coder-7b-instruct-q4_k_m.gguf",
        size: 4_683_073_536,
        sha256: "509287f78cb4d4cf6b3843734733b914b2c158e43e22a7f4bf5e963800894d3c",
        description:
            "Qwen2.5-Coder 7B Instruct, Q4_K_M: the strongest here, for 8 GB of RAM or more",
        license: "Apache-2.0",
        approx_ram_bytes: 6 * GIB,
    },
];

impl CatalogEntry {
    /// Where the file is downloaded from, under `base` (`https://huggingface.co`, or the
    /// `WRIGHT_MODELS_BASE_URL` mirror).
    pub fn url(&self, base: &str) -> String {
        format!(
            "{}/{}/resolve/main/{}",
            base.trim_end_matches('/'),
            self.repo,
            self.file
        )
    }
}

/// The entry called `name`, or whose file is `name`.
pub fn find<'c>(catalog: &'c [CatalogEntry], name: &str) -> Option<&'c CatalogEntry> {
    catalog
        .iter()
        .find(|entry| entry.name == name || entry.file == name)
}

/// The entry whose file has this sha256.
pub fn find_by_sha256<'c>(catalog: &'c [CatalogEntry], sha256: &str) -> Option<&'c CatalogEntry> {
    catalog.iter().find(|entry| entry.sha256 == sha256)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn urls_follow_the_hugging_face_resolve_form() {
        let entry = find(CATALOG, "qwen2.5-coder-1.5b").expect("in the catalog");
        assert_eq!(
            entry.url("https://huggingface.co/"),
            "https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
        );
    }

    #[test]
    fn names_files_and_digests_are_unique_and_well_formed() {
        for (i, entry) in CATALOG.iter().enumerate() {
            assert_eq!(entry.sha256.len(), 64, "{}", entry.name);
            assert!(
                entry
                    .sha256
                    .chars()
                    .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)),
                "{}",
                entry.name
            );
            assert!(entry.file.ends_with(".gguf"), "{}", entry.name);
            assert!(entry.approx_ram_bytes > entry.size, "{}", entry.name);
            for other in &CATALOG[i + 1..] {
                assert_ne!(entry.name, other.name);
                assert_ne!(entry.file, other.file);
                assert_ne!(entry.sha256, other.sha256);
            }
        }
    }

    #[test]
    fn a_model_is_found_by_its_name_or_its_file() {
        let by_name = find(CATALOG, "qwen2.5-coder-0.5b");
        let by_file = find(CATALOG, "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
        assert_eq!(by_name, by_file);
        assert!(by_name.is_some());
        assert_eq!(find(CATALOG, "qwen2.5-coder-0.5"), None);
    }
}
