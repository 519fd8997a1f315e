//! Users and their keys. A key is 32 random bytes from the kernel, shown once as 64 hex
//! digits when made; the database keeps only its SHA-256, so reading the database gives
//! no key. A key is looked up by that digest.

use crate::Store;
use crate::StoreError;
use sha2::Digest;
use std::io::Read;

/// A user of the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: i64,
    pub name: String,
}

/// A user just made, with the key to give them (shown once, kept nowhere).
pub struct NewUser {
    pub user: User,
    pub key: String,
}

impl std::fmt::Debug for NewUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NewUser({:?}, key ..)", self.user)
    }
}

impl Store {
    /// Makes user `name` with a new key.
    pub async fn add_user(&self, name: &str) -> Result<NewUser, StoreError> {
        if !valid_name(name) {
            return Err(StoreError::BadUserName(name.to_string()));
        }
        let key = random_key()?;
        let mut client = self.client().await?;
        let transaction = client.transaction().await?;
        let row = transaction
            .query_opt(
                "INSERT INTO users (name) VALUES ($1) ON CONFLICT (name) DO NOTHING RETURNING id",
                &[&name],
            )
            .await?
            .ok_or_else(|| StoreError::UserExists(name.to_string()))?;
        let id: i64 = row.get(0);
        transaction
            .execute(
                "INSERT INTO keys (digest, user_id) VALUES ($1, $2)",
                &[&digest(&key).as_slice(), &id],
            )
            .await?;
        transaction.commit().await?;
        Ok(NewUser {
            user: User {
                id,
                name: name.to_string(),
            },
            key,
        })
    }

    /// The user whose key is `key`, if any.
    pub async fn user_by_key(&self, key: &str) -> Result<Option<User>, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT users.id, users.name FROM keys JOIN users ON users.id = keys.user_id
                 WHERE keys.digest = $1",
                &[&digest(key).as_slice()],
            )
            .await?;
        Ok(row.map(|row| User {
            id: row.get(0),
            name: row.get(1),
        }))
    }

    /// Every user, by name.
    pub async fn users(&self) -> Result<Vec<User>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query("SELECT id, name FROM users ORDER BY name", &[])
            .await?;
        Ok(rows
            .iter()
            .map(|row| User {
                id: row.get(0),
                name: row.get(1),
            })
            .collect())
    }
}

/// The schema's rule for names, checked here first for a clear error.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn digest(key: &str) -> [u8; 32] {
    sha2::Sha256::digest(key.as_bytes()).into()
}

/// 32 random bytes, as 64 hexadecimal digits (as the server key is made).
fn random_key() -> Result<String, StoreError> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut file| file.read_exact(&mut bytes))
        .map_err(StoreError::Random)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
