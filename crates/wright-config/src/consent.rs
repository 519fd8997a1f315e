//! What the user allowed, in one record outside every repository
//! (`$XDG_DATA_HOME/wright/consent.json`, which the sandbox cannot reach): a repository's
//! configuration file, keyed by the repository and the SHA-256 of the exact content
//! approved — so a file the agent changed (and that was applied) asks again — and the
//! servers off this machine a repository's code may be sent to.

use serde::Deserialize;
use serde::Serialize;
use sha2::Digest;
use std::path::Path;
use std::path::PathBuf;

/// What can be allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A repository's `.wright/config.toml` asking for more than the defaults (the
    /// subject is the SHA-256 of its content).
    RepoConfig,
    /// Sending a repository's code to a server not on this machine (the subject is the
    /// server's host and port).
    Egress,
    /// A repository's hooks and setup script running in the sandbox (the subject is the
    /// SHA-256 of their files' paths and contents together).
    RepoHooks,
    /// A repository's MCP servers (`.wright/mcp.json`, `.mcp.json`) starting, in the
    /// sandbox (the subject is the SHA-256 of their files' paths and contents together).
    RepoMcp,
    /// A repository's `.wright/automations.toml`, read from its automations branch (the
    /// subject is the SHA-256 of its content).
    RepoAutomations,
}

impl Kind {
    pub fn as_str(&self) -> &'static str {
        match self {
            Kind::RepoConfig => "repo-config",
            Kind::Egress => "egress",
            Kind::RepoHooks => "repo-hooks",
            Kind::RepoMcp => "repo-mcp",
            Kind::RepoAutomations => "repo-automations",
        }
    }

    pub fn parse(word: &str) -> Option<Self> {
        [
            Kind::RepoConfig,
            Kind::Egress,
            Kind::RepoHooks,
            Kind::RepoMcp,
            Kind::RepoAutomations,
        ]
        .into_iter()
        .find(|kind| kind.as_str() == word)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grant {
    pub kind: Kind,
    /// The repository (its top level) it is for.
    pub repo: PathBuf,
    /// What exactly is allowed: a content's SHA-256 in hex, or a host.
    pub subject: String,
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

    pub fn allows(&self, kind: Kind, repo: &Path, subject: &str) -> bool {
        self.record
            .grants
            .iter()
            .any(|g| g.kind == kind && g.repo == repo && g.subject == subject)
    }

    /// Allows `subject` for the repository and saves the record. A configuration file's
    /// (or the hooks') new content replaces the one allowed before; hosts add up.
    pub fn allow(
        &mut self,
        kind: Kind,
        repo: &Path,
        subject: &str,
    ) -> Result<(), crate::ConfigError> {
        if matches!(
            kind,
            Kind::RepoConfig | Kind::RepoHooks | Kind::RepoAutomations
        ) {
            self.forget(kind, repo, None);
        } else {
            self.forget(kind, repo, Some(subject));
        }
        self.record.grants.push(Grant {
            kind,
            repo: repo.to_path_buf(),
            subject: subject.to_string(),
        });
        self.save()
    }

    /// Forgets the grants of this kind for the repository (only `subject`'s, if given)
    /// and saves the record; returns how many there were.
    pub fn remove(
        &mut self,
        kind: Kind,
        repo: &Path,
        subject: Option<&str>,
    ) -> Result<usize, crate::ConfigError> {
        let removed = self.forget(kind, repo, subject);
        self.save()?;
        Ok(removed)
    }

    fn forget(&mut self, kind: Kind, repo: &Path, subject: Option<&str>) -> usize {
        let before = self.record.grants.len();
        self.record.grants.retain(|g| {
            !(g.kind == kind && g.repo == repo && subject.is_none_or(|s| g.subject == s))
        });
        before - self.record.grants.len()
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
        let (first, changed) = (
            sha256(b"network = true"),
            sha256(b"network = true\n# changed"),
        );
        let mut consent = Consent::open(&path).unwrap();
        assert!(!consent.allows(Kind::RepoConfig, repo, &first));
        consent.allow(Kind::RepoConfig, repo, &first).unwrap();
        let mut consent = Consent::open(&path).unwrap();
        assert!(consent.allows(Kind::RepoConfig, repo, &first));
        assert!(!consent.allows(Kind::RepoConfig, repo, &changed));
        assert!(!consent.allows(Kind::RepoConfig, Path::new("/other"), &first));
        // A new content replaces the old; hosts add up.
        consent.allow(Kind::RepoConfig, repo, &changed).unwrap();
        consent.allow(Kind::Egress, repo, "a.example:443").unwrap();
        consent.allow(Kind::Egress, repo, "b.example:443").unwrap();
        let mut consent = Consent::open(&path).unwrap();
        assert!(!consent.allows(Kind::RepoConfig, repo, &first));
        assert!(consent.allows(Kind::Egress, repo, "a.example:443"));
        assert_eq!(consent.grants().len(), 3);
        assert_eq!(
            consent
                .remove(Kind::Egress, repo, Some("a.example:443"))
                .unwrap(),
            1
        );
        assert_eq!(consent.remove(Kind::RepoConfig, repo, None).unwrap(), 1);
        let consent = Consent::open(&path).unwrap();
        assert!(!consent.allows(Kind::RepoConfig, repo, &changed));
        assert!(consent.allows(Kind::Egress, repo, "b.example:443"));
    }
}
