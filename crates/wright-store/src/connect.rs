//! Where the database is and how to log in: a `postgres://` URL (or PostgreSQL's
//! `key=value` form) that must not hold the password, which comes from `PGPASSWORD` or a
//! file instead — a command line and a configuration file are readable by others.

use crate::StoreError;
use std::path::Path;
use std::str::FromStr;

/// A database to connect to.
#[derive(Clone)]
pub struct Database {
    config: tokio_postgres::Config,
    shown: String,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Database({})", self.shown)
    }
}

/// Where the password comes from.
pub enum Password<'a> {
    /// Taken as given (the caller read `PGPASSWORD`).
    Given(String),
    /// Read from this file (its first line).
    File(&'a Path),
    /// None: the server trusts the connection (a local socket, a certificate).
    None,
}

impl Database {
    /// The database at `url`, logged into with `password`. A URL holding a password is
    /// refused, whatever the password given.
    pub fn new(url: &str, password: Password<'_>) -> Result<Self, StoreError> {
        let mut config = tokio_postgres::Config::from_str(url)
            .map_err(|err| StoreError::BadUrl(err.to_string()))?;
        if config.get_password().is_some() {
            return Err(StoreError::PasswordInUrl);
        }
        match password {
            Password::Given(text) => {
                config.password(text);
            }
            Password::File(path) => {
                let text =
                    std::fs::read_to_string(path).map_err(|source| StoreError::PasswordFile {
                        path: path.display().to_string(),
                        source,
                    })?;
                let line = text.lines().next().unwrap_or_default();
                if line.is_empty() {
                    return Err(StoreError::EmptyPasswordFile(path.display().to_string()));
                }
                config.password(line);
            }
            Password::None => {}
        }
        config.application_name("wright");
        Ok(Self {
            config,
            shown: url.to_string(),
        })
    }

    /// The URL as given (it holds no password).
    pub fn shown(&self) -> &str {
        &self.shown
    }

    pub(crate) fn config(&self) -> &tokio_postgres::Config {
        &self.config
    }
}
