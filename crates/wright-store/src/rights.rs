//! What the admin lets a user: the directories on the server their conversations may work
//! under (`roots`), and how many of their runs may go at once (`max_running`). Both are
//! the admin's to set (`wright user allow|disallow|limit`); a user reads neither of
//! another's. A root is kept as given, which the command line makes absolute and
//! canonical first; whether a workspace is under one is decided by the server on the
//! workspace's own canonical path (`wright-server`'s `tenancy`).

use crate::Store;
use crate::StoreError;
use crate::User;

/// A user with what the admin lets them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rights {
    pub user: User,
    /// Absolute, canonical directories, by name.
    pub roots: Vec<String>,
    /// How many of their runs may hold a lease at once (`None`: no limit).
    pub max_running: Option<i32>,
}

impl Store {
    /// The user named `name`, with their rights.
    pub async fn rights(&self, name: &str) -> Result<Rights, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT id, max_running FROM users WHERE name = $1",
                &[&name],
            )
            .await?
            .ok_or_else(|| StoreError::NoUser(name.to_string()))?;
        let id: i64 = row.get(0);
        let max_running: Option<i32> = row.get(1);
        let roots = self.roots(id).await?;
        Ok(Rights {
            user: User {
                id,
                name: name.to_string(),
            },
            roots,
            max_running,
        })
    }

    /// The roots of user `id`, by name.
    pub async fn roots(&self, id: i64) -> Result<Vec<String>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT root FROM user_roots WHERE user_id = $1 ORDER BY root",
                &[&id],
            )
            .await?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }

    /// Lets user `name` work under `root` (absolute); allowing it twice is once.
    pub async fn allow_root(&self, name: &str, root: &str) -> Result<(), StoreError> {
        if !root.starts_with('/') {
            return Err(StoreError::BadRoot(root.to_string()));
        }
        let client = self.client().await?;
        let added = client
            .execute(
                "INSERT INTO user_roots (user_id, root) SELECT id, $2 FROM users WHERE name = $1
                 ON CONFLICT DO NOTHING",
                &[&name, &root],
            )
            .await?;
        if added == 0 {
            // Nothing added: no such user, or the root was theirs already.
            self.rights(name).await?;
        }
        Ok(())
    }

    /// Takes `root` from user `name`; `false` when it was not theirs. Conversations
    /// made under it are theirs still; no new one is.
    pub async fn disallow_root(&self, name: &str, root: &str) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let removed = client
            .execute(
                "DELETE FROM user_roots USING users
                 WHERE users.id = user_roots.user_id AND users.name = $1 AND user_roots.root = $2",
                &[&name, &root],
            )
            .await?;
        if removed == 0 {
            self.rights(name).await?;
        }
        Ok(removed > 0)
    }

    /// Sets how many runs of user `name` may go at once (`None`: no limit).
    pub async fn set_max_running(&self, name: &str, limit: Option<i32>) -> Result<(), StoreError> {
        if limit.is_some_and(|n| n < 0) {
            return Err(StoreError::Database("a limit is 0 or more".into()));
        }
        let client = self.client().await?;
        let changed = client
            .execute(
                "UPDATE users SET max_running = $2 WHERE name = $1",
                &[&name, &limit],
            )
            .await?;
        if changed == 0 {
            return Err(StoreError::NoUser(name.to_string()));
        }
        Ok(())
    }
}
