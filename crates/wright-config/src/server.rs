//! The server's own keys of the user's file (`[server]`): where `wright serve` and the
//! database commands find the database when no `--database` is given. Only the URL: one
//! holding a password is refused where it is used (`wright_store::Database`), since a
//! configuration file is readable by more than its owner's processes; the password comes
//! from `PGPASSWORD` or a password file. A repository's file cannot set it (`UserOnly`).

use crate::file;
use crate::ConfigError;
use std::path::Path;

/// The `server.database` URL of the user's file at `path`, if it sets one.
pub fn database(path: &Path) -> Result<Option<String>, ConfigError> {
    setting(path, "database")
}

/// The `server.git_store` directory of the user's file at `path`, if it names one.
pub fn git_store(path: &Path) -> Result<Option<std::path::PathBuf>, ConfigError> {
    Ok(setting(path, "git_store")?.map(std::path::PathBuf::from))
}

/// The repository whose `.wright/automations.toml` defines automations too
/// (`server.automations_repository`), and the branch it is read from
/// (`server.automations_branch`, default `main`).
pub fn automations_repository(
    path: &Path,
) -> Result<Option<(std::path::PathBuf, String)>, ConfigError> {
    let Some(repository) = setting(path, "automations_repository")? else {
        return Ok(None);
    };
    let branch = setting(path, "automations_branch")?.unwrap_or_else(|| "main".to_string());
    Ok(Some((std::path::PathBuf::from(repository), branch)))
}

fn setting(path: &Path, key: &str) -> Result<Option<String>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Io {
                path: path.display().to_string(),
                source,
            })
        }
    };
    Ok(file::parse(&text, &path.display().to_string())?
        .into_iter()
        .find(|setting| setting.path == ["server", key])
        .and_then(|setting| setting.value.as_str().map(str::to_string)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_is_read_and_a_missing_file_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        assert_eq!(database(&path).unwrap(), None);
        std::fs::write(
            &path,
            "[server]\ndatabase = \"postgres://wright@db/wright\"\n",
        )
        .unwrap();
        assert_eq!(
            database(&path).unwrap().as_deref(),
            Some("postgres://wright@db/wright")
        );
        std::fs::write(&path, "[server]\ndatabse = \"x\"\n").unwrap();
        let refused = database(&path).unwrap_err().to_string();
        assert!(refused.contains("server.database"), "{refused}");
    }
}
