//! The user's secrets (`wright secrets set/ls/rm`): values kept outside every repository,
//! in `$XDG_DATA_HOME/wright/secrets/secrets.json` (by default under `~/.local/share`),
//! a file only its owner may read (0600) in a directory only its owner may enter (0700).
//!
//! The file is written whole to a new 0600 file beside it and renamed over the old one, so
//! it is never seen half-written nor, even for a moment, with wider permissions. A file or
//! directory that others could read, that belongs to another user, or that is a link is
//! refused, never read: the secrets in it may already have leaked, and the user must
//! decide.
//!
//! Why no OS keyring: on Linux the `keyring` crate reaches either the Secret Service over
//! D-Bus (libdbus or the zbus stack: a large dependency tree, and no service answers on
//! a headless machine or server, where wright mostly runs) or the kernel's keyutils (kept
//! only until logout or reboot, so not a store). A file with owner-only permissions works
//! everywhere, and is what `~/.ssh`, `~/.netrc` and `~/.docker/config.json` rely on too.

use serde::Deserialize;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::path::PathBuf;

const FILE: &str = "secrets.json";

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("'{0}' is not a valid secret name: use an environment variable's name (letters, digits and _, not starting with a digit)")]
    InvalidName(String),
    #[error("there is no secret named {name}{}", if known.is_empty() { "; none is stored (wright secrets set NAME)".to_string() } else { format!("; stored: {}", known.join(", ")) })]
    Unknown { name: String, known: Vec<String> },
    #[error("the value of the secret {0} is empty")]
    Empty(String),
    #[error("{path} can be read by others (mode {mode:o}): wright does not use secrets that may have leaked; check who could read it, then `chmod {fix:o} {path}` (or remove it)")]
    Exposed { path: String, mode: u32, fix: u32 },
    #[error(
        "{path} belongs to another user (uid {owner}): wright only reads secrets its user stored"
    )]
    NotOwned { path: String, owner: u32 },
    #[error(
        "{path} is a link: wright reads its secrets only from a plain file in a plain directory"
    )]
    Link { path: String },
    #[error("cannot read the secrets in {path}: {message}")]
    Parse { path: String, message: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    version: u32,
    #[serde(default)]
    secrets: BTreeMap<String, String>,
}

/// Whether `name` can be an environment variable's name: `[A-Za-z_][A-Za-z0-9_]*`.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The store of secrets in one directory.
#[derive(Debug, Clone)]
pub struct SecretStore {
    dir: PathBuf,
}

impl SecretStore {
    /// `$XDG_DATA_HOME/wright/secrets` (or under `~/.local/share`).
    pub fn default_location() -> Self {
        let dir = std::env::var_os("XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
            .unwrap_or_else(|| PathBuf::from(".wright-data"))
            .join("wright")
            .join("secrets");
        Self { dir }
    }

    pub fn at(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
        }
    }

    pub fn file(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    /// The names stored, sorted.
    pub fn names(&self) -> Result<Vec<String>, SecretError> {
        Ok(self.read()?.secrets.into_keys().collect())
    }

    /// The values of `names`, in that order; a name not stored is an error.
    pub fn values(&self, names: &[String]) -> Result<Vec<(String, String)>, SecretError> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let record = self.read()?;
        names
            .iter()
            .map(|name| match record.secrets.get(name) {
                Some(value) => Ok((name.clone(), value.clone())),
                None if !valid_name(name) => Err(SecretError::InvalidName(name.clone())),
                None => Err(SecretError::Unknown {
                    name: name.clone(),
                    known: record.secrets.keys().cloned().collect(),
                }),
            })
            .collect()
    }

    /// Stores `value` under `name` (replacing any).
    pub fn set(&self, name: &str, value: &str) -> Result<(), SecretError> {
        if !valid_name(name) {
            return Err(SecretError::InvalidName(name.to_string()));
        }
        if value.is_empty() {
            return Err(SecretError::Empty(name.to_string()));
        }
        let mut record = self.read()?;
        record.secrets.insert(name.to_string(), value.to_string());
        self.write(&record)
    }

    /// Forgets `name`; whether it was stored.
    pub fn remove(&self, name: &str) -> Result<bool, SecretError> {
        if !valid_name(name) {
            return Err(SecretError::InvalidName(name.to_string()));
        }
        let mut record = self.read()?;
        let removed = record.secrets.remove(name).is_some();
        if removed {
            self.write(&record)?;
        }
        Ok(removed)
    }

    fn read(&self) -> Result<Record, SecretError> {
        match std::fs::symlink_metadata(&self.dir) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Record::default()),
            Err(source) => return Err(io(&self.dir, source)),
            Ok(meta) => check(&self.dir, &meta, 0o700)?,
        }
        let path = self.file();
        let file = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc_o_nofollow())
            .open(&path)
        {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Record::default()),
            Err(source) => {
                // O_NOFOLLOW on a link fails with ELOOP: say what it is.
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err(SecretError::Link {
                        path: path.display().to_string(),
                    });
                }
                return Err(io(&path, source));
            }
            Ok(file) => file,
        };
        let meta = file.metadata().map_err(|source| io(&path, source))?;
        check(&path, &meta, 0o600)?;
        let record: Record =
            serde_json::from_reader(std::io::BufReader::new(file)).map_err(|err| {
                SecretError::Parse {
                    path: path.display().to_string(),
                    message: err.to_string(),
                }
            })?;
        Ok(record)
    }

    fn write(&self, record: &Record) -> Result<(), SecretError> {
        if let Some(parent) = self.dir.parent() {
            std::fs::create_dir_all(parent).map_err(|source| io(parent, source))?;
        }
        match std::fs::DirBuilder::new().mode(0o700).create(&self.dir) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(source) => return Err(io(&self.dir, source)),
        }
        let meta = std::fs::symlink_metadata(&self.dir).map_err(|source| io(&self.dir, source))?;
        check(&self.dir, &meta, 0o700)?;
        let record = Record {
            version: 1,
            secrets: record.secrets.clone(),
        };
        let text = serde_json::to_vec_pretty(&record).map_err(|err| SecretError::Parse {
            path: self.file().display().to_string(),
            message: err.to_string(),
        })?;
        let temporary = self.dir.join(format!(".{FILE}.{}.new", std::process::id()));
        let _ = std::fs::remove_file(&temporary);
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc_o_nofollow())
            .open(&temporary)
            .and_then(|mut file| {
                file.write_all(&text)?;
                file.sync_all()
            })
            .and_then(|()| std::fs::rename(&temporary, self.file()));
        if let Err(source) = written {
            let _ = std::fs::remove_file(&temporary);
            return Err(io(&self.file(), source));
        }
        Ok(())
    }
}

/// Refuses a link, another user's file, or one others may read or write.
fn check(path: &Path, meta: &std::fs::Metadata, fix: u32) -> Result<(), SecretError> {
    let shown = path.display().to_string();
    if meta.file_type().is_symlink() {
        return Err(SecretError::Link { path: shown });
    }
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(SecretError::NotOwned {
            path: shown,
            owner: meta.uid(),
        });
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(SecretError::Exposed {
            path: shown,
            mode,
            fix,
        });
    }
    Ok(())
}

fn io(path: &Path, source: std::io::Error) -> SecretError {
    SecretError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn libc_o_nofollow() -> i32 {
    nix::fcntl::OFlag::O_NOFOLLOW.bits()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn set_list_get_and_remove() {
        let home = tempfile::tempdir().unwrap();
        let store = SecretStore::at(&home.path().join("wright/secrets"));
        assert_eq!(store.names().unwrap(), Vec::<String>::new());
        store.set("TOKEN", "v1").unwrap();
        store.set("API_KEY", "v2").unwrap();
        store.set("TOKEN", "v3").unwrap();
        assert_eq!(store.names().unwrap(), vec!["API_KEY", "TOKEN"]);
        assert_eq!(
            store.values(&["TOKEN".into()]).unwrap(),
            vec![("TOKEN".to_string(), "v3".to_string())]
        );
        let dir_mode = std::fs::metadata(home.path().join("wright/secrets"))
            .unwrap()
            .permissions()
            .mode();
        let file_mode = std::fs::metadata(store.file())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!((dir_mode & 0o777, file_mode & 0o777), (0o700, 0o600));
        assert!(store.remove("TOKEN").unwrap());
        assert!(!store.remove("TOKEN").unwrap());
        let err = store.values(&["TOKEN".into()]).unwrap_err().to_string();
        assert_eq!(err, "there is no secret named TOKEN; stored: API_KEY");
    }

    #[test]
    fn bad_names_and_empty_values_are_refused() {
        let home = tempfile::tempdir().unwrap();
        let store = SecretStore::at(&home.path().join("s"));
        for name in ["", "1A", "A-B", "A B", "É"] {
            assert!(
                matches!(store.set(name, "v"), Err(SecretError::InvalidName(_))),
                "{name}"
            );
        }
        assert!(matches!(store.set("A", ""), Err(SecretError::Empty(_))));
        assert!(valid_name("_A1"));
    }

    #[test]
    fn a_file_others_can_read_is_refused() {
        let home = tempfile::tempdir().unwrap();
        let store = SecretStore::at(&home.path().join("s"));
        store.set("TOKEN", "v").unwrap();
        std::fs::set_permissions(store.file(), std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = store.names().unwrap_err();
        assert!(
            matches!(err, SecretError::Exposed { mode: 0o644, .. }),
            "{err}"
        );
        std::fs::set_permissions(store.file(), std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(
            home.path().join("s"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        assert!(matches!(store.names(), Err(SecretError::Exposed { .. })));
    }

    #[test]
    fn a_link_is_refused() {
        let home = tempfile::tempdir().unwrap();
        let store = SecretStore::at(&home.path().join("s"));
        store.set("TOKEN", "v").unwrap();
        let elsewhere = home.path().join("elsewhere.json");
        std::fs::rename(store.file(), &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, store.file()).unwrap();
        assert!(matches!(store.names(), Err(SecretError::Link { .. })));
    }
}
