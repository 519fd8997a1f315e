//! What the user allowed, in one record outside every repository
//! (`$XDG_DATA_HOME/wright/consent.json`, which the sandbox cannot reach): a repository's
//! configuration file, keyed by the repository and the SHA-256 of the exact content
//! approved — so a file the agent changed (and that was applied) asks again.

use serde::Deserialize;
use serde::Serialize;
use sha2::Digest;
use std::path::Path;
use std::path::PathBuf;

/// What can be allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A repository's `.wright/config.toml` asking for more than the defaults.
    RepoConfig,
}

impl Kind {
    pub fn as_str(&self) -> &'static str {
        match self {
            Kind::RepoConfig => "repo-config",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grant {
    pub kind: Kind,
    /// The repository (its top level) it is for.
    pub repo: PathBuf,
    /// SHA-256 of the content allowed, in hex.
    pub sha256: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    #[serde(default)]
    grants: Vec<Grant>,
}

/// The record of grants, at `path`.
pub struct Consent {
    path: PathBuf,
    record: Record,
}

pub fn sha256(content: &[u8]) -> String {
    sha2::Sha256::digest(content)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

impl Consent {
    /// `$XDG_DATA_HOME/wright/consent.json` (or under `~/.local/share`).
    pub fn default_path() -> PathBuf {
        std::env::var_os("XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
            .unwrap_or_else(|| PathBuf::from(".wright-data"))
            .join("wright")
            .join("consent.json")
    }

    pub fn open(path: &Path) -> Result<Self, crate::ConfigError> {
        let record = match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|err| crate::ConfigError::Parse {
                file: path.display().to_string(),
                message: err.to_string(),
            })?,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Record::default(),
            Err(source) => {
                return Err(crate::ConfigError::Io {
                    path: path.display().to_string(),
                    source,
                })
            }
        };
        Ok(Self {
            path: path.to_path_buf(),
            record,
        })
    }

    pub fn allows(&self, kind: Kind, repo: &Path, content: &[u8]) -> bool {
        let hash = sha256(content);
        self.record
            .grants
            .iter()
            .any(|g| g.kind == kind && g.repo == repo && g.sha256 == hash)
    }

    /// Allows this content (replacing an earlier grant of the same kind for the repo).
    pub fn allow(
        &mut self,
        kind: Kind,
        repo: &Path,
        content: &[u8],
    ) -> Result<(), crate::ConfigError> {
        self.deny(kind, repo);
        self.record.grants.push(Grant {
            kind,
            repo: repo.to_path_buf(),
            sha256: sha256(content),
        });
        self.save()
    }

    /// Forgets every grant of this kind for the repository.
    pub fn deny(&mut self, kind: Kind, repo: &Path) {
        self.record
            .grants
            .retain(|g| !(g.kind == kind && g.repo == repo));
    }

    pub fn remove(&mut self, kind: Kind, repo: &Path) -> Result<(), crate::ConfigError> {
        self.deny(kind, repo);
        self.save()
    }

    pub fn grants(&self) -> &[Grant] {
        &self.record.grants
    }

    fn save(&self) -> Result<(), crate::ConfigError> {
        let io = |source| crate::ConfigError::Io {
            path: self.path.display().to_string(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let text = serde_json::to_string_pretty(&self.record).unwrap_or_default();
        // Written whole, then renamed over: never half a record.
        let temporary = self.path.with_extension("json.new");
        std::fs::write(&temporary, text).map_err(io)?;
        std::fs::rename(&temporary, &self.path).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_follow_the_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("consent.json");
        let repo = Path::new("/work/repo");
        let mut consent = Consent::open(&path).unwrap();
        assert!(!consent.allows(Kind::RepoConfig, repo, b"network = true"));
        consent
            .allow(Kind::RepoConfig, repo, b"network = true")
            .unwrap();
        let consent = Consent::open(&path).unwrap();
        assert!(consent.allows(Kind::RepoConfig, repo, b"network = true"));
        assert!(!consent.allows(Kind::RepoConfig, repo, b"network = true\n# changed"));
        assert!(!consent.allows(Kind::RepoConfig, Path::new("/other"), b"network = true"));
        let mut consent = Consent::open(&path).unwrap();
        consent.remove(Kind::RepoConfig, repo).unwrap();
        assert!(!Consent::open(&path)
            .unwrap()
            .allows(Kind::RepoConfig, repo, b"network = true"));
    }
}
