//! A user's secrets, with `--database`: set, listed (names only) and removed by the user
//! through the server's API, given to that user's conversations only. Every statement
//! names the user, so no call reads or changes another's. Values are kept as given, under
//! the database's access control (`docs/users.md` says why they are not encrypted here);
//! nothing here ever returns a value but to give it to a conversation.

use crate::Store;
use crate::StoreError;

/// The rule for a secret's name: an environment variable's (as `wright secrets set`'s).
pub fn valid_secret_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.len() <= 128
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Store {
    /// Sets user `user`'s secret `name` to `value` (replacing what it was).
    pub async fn set_secret(&self, user: i64, name: &str, value: &str) -> Result<(), StoreError> {
        if !valid_secret_name(name) {
            return Err(StoreError::BadSecretName(name.to_string()));
        }
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO user_secrets (user_id, name, value) VALUES ($1, $2, $3)
                 ON CONFLICT (user_id, name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()",
                &[&user, &name, &value],
            )
            .await?;
        Ok(())
    }

    /// The names of user `user`'s secrets, in order.
    pub async fn secret_names(&self, user: i64) -> Result<Vec<String>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT name FROM user_secrets WHERE user_id = $1 ORDER BY name",
                &[&user],
            )
            .await?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }

    /// Removes user `user`'s secret `name`; `false` when they had none of that name.
    pub async fn remove_secret(&self, user: i64, name: &str) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let removed = client
            .execute(
                "DELETE FROM user_secrets WHERE user_id = $1 AND name = $2",
                &[&user, &name],
            )
            .await?;
        Ok(removed > 0)
    }

    /// The values of user `user`'s secrets `names`, in that order; a name they have not
    /// stored is an error naming those they have.
    pub async fn secret_values(
        &self,
        user: i64,
        names: &[String],
    ) -> Result<Vec<(String, String)>, StoreError> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT name, value FROM user_secrets WHERE user_id = $1 AND name = ANY($2)",
                &[&user, &names],
            )
            .await?;
        let found: Vec<(String, String)> =
            rows.iter().map(|row| (row.get(0), row.get(1))).collect();
        let mut values = Vec::with_capacity(names.len());
        for name in names {
            match found.iter().find(|(stored, _)| stored == name) {
                Some(pair) => values.push(pair.clone()),
                None => {
                    return Err(StoreError::NoSecret {
                        name: name.clone(),
                        stored: self.secret_names(user).await?,
                    })
                }
            }
        }
        Ok(values)
    }
}
